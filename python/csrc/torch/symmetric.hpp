// Symmetric tensors: shoal.torch.empty/peer/free/collect.
#pragma once

#include "common.hpp"

namespace shoal_torch {

at::Tensor empty(const std::vector<int64_t>& shape, at::ScalarType dtype);  // collective
at::Tensor peer(const at::Tensor& t, int64_t pe);
void free_now(const at::Tensor& t);  // collective
size_t collect();                    // collective; returns how many were freed
bool is_symmetric(const at::Tensor& t);
size_t live_allocations();

}  // namespace shoal_torch
