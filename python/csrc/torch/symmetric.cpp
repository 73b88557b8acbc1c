// Tensors on the symmetric heap (shoal.torch.empty), views of a peer's copy
// (shoal.torch.peer), and when their memory goes back to the heap.
//
// shmem_free is collective and must see the same allocations in the same
// order on every PE, but a tensor's destructor runs whenever Python's
// garbage collector gets to it, at different times on different PEs. So a
// destructor only marks its allocation dead here; memory is returned at the
// next collective point (shoal.torch.empty, shoal.torch.free or
// shoal.torch.collect), and only allocations dead on every PE (an AND
// reduction of the marks) are freed, in allocation order.
#include "symmetric.hpp"

#include <algorithm>
#include <memory>

namespace shoal_torch {

namespace {
struct Allocation {
  uint64_t id;
  char* base;
  size_t bytes;
  bool dead;
};
// Same contents on every PE: rows are added by collective empty() calls and
// removed only by collect(), in the same order everywhere.
std::vector<Allocation> table;
uint64_t next_id = 1;
std::mutex table_mutex;

void mark_dead(uint64_t id) {
  std::lock_guard<std::mutex> g(table_mutex);
  for (auto& a : table)
    if (a.id == id) a.dead = true;
}

const Allocation* find_locked(const void* p) {
  auto* c = static_cast<const char*>(p);
  for (auto& a : table)
    if (c >= a.base && c < a.base + std::max<size_t>(a.bytes, 1)) return &a;
  return nullptr;
}

// Frees what is dead on every PE. Caller holds shmem_lock.
size_t collect_locked() {
  Control& ctl = control();
  std::lock_guard<std::mutex> g(table_mutex);
  std::vector<char> dead_everywhere(table.size(), 0);
  for (size_t at = 0; at < table.size(); at += ctl.words) {
    size_t n = std::min(ctl.words, table.size() - at);
    for (size_t i = 0; i < n; i++) ctl.src[i] = table[at + i].dead ? 1 : 0;
    shmem_int64_and_reduce(SHMEM_TEAM_WORLD, ctl.dst, ctl.src, n);
    for (size_t i = 0; i < n; i++) dead_everywhere[at + i] = ctl.dst[i] != 0;
  }
  size_t freed = 0;
  std::vector<Allocation> kept;
  for (size_t i = 0; i < table.size(); i++) {
    if (dead_everywhere[i]) {
      shmem_free(table[i].base);
      freed++;
    } else {
      kept.push_back(table[i]);
    }
  }
  table.swap(kept);
  return freed;
}
}  // namespace

size_t collect() {
  std::lock_guard<std::mutex> g(shmem_lock());
  return collect_locked();
}

at::Tensor empty(const std::vector<int64_t>& shape, at::ScalarType dtype) {
  size_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) throw ValueError("shoal.torch.empty: dimension " + std::to_string(d) + " is negative");
    count *= static_cast<size_t>(d);
  }
  const size_t bytes = count * c10::elementSize(dtype);
  char* base = nullptr;
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> g(shmem_lock());
    collect_locked();
    // shmem_malloc(0) may return NULL; one byte keeps every tensor symmetric.
    base = static_cast<char*>(shmem_malloc(std::max<size_t>(bytes, 1)));
    if (!base)
      throw std::runtime_error("shoal.torch.empty: " + std::to_string(bytes) +
                               " bytes do not fit the symmetric heap (raise SHMEM_SYMMETRIC_SIZE)");
    std::lock_guard<std::mutex> t(table_mutex);
    id = next_id++;
    table.push_back({id, base, bytes, false});
  }
  return at::from_blob(
      base, shape, [id](void*) { mark_dead(id); }, at::TensorOptions().dtype(dtype).device(at::kCPU));
}

void free_now(const at::Tensor& t) {
  const void* base = t.storage().data();
  {
    std::lock_guard<std::mutex> g(table_mutex);
    const Allocation* a = find_locked(base);
    if (!a || a->base != base)
      throw ValueError("shoal.torch.free: the tensor was not made by shoal.torch.empty (or is freed)");
    const_cast<Allocation*>(a)->dead = true;
  }
  collect();
}

bool is_symmetric(const at::Tensor& t) {
  if (!t.defined() || t.device().type() != at::kCPU || !t.has_storage()) return false;
  std::lock_guard<std::mutex> g(table_mutex);
  return find_locked(t.storage().data()) != nullptr;
}

at::Tensor peer(const at::Tensor& t, int64_t pe) {
  const int npes = shmem_n_pes();
  if (pe < 0 || pe >= npes)
    throw ValueError("shoal.torch.peer: PE " + std::to_string(pe) + " is not in 0.." + std::to_string(npes - 1));
  if (!is_symmetric(t))
    throw ValueError("shoal.torch.peer: the tensor is not on the symmetric heap (make it with shoal.torch.empty)");
  if (t.numel() == 0) return t.detach().clone();
  void* remote = shmem_ptr(t.data_ptr(), static_cast<int>(pe));
  if (!remote)
    throw ValueError("shoal.torch.peer: PE " + std::to_string(pe) + " is not reachable by load/store from PE " +
                     std::to_string(shmem_my_pe()) + " (another host, or a transport that is forced)");
  // The view keeps the local storage alive: the remote memory is the same
  // allocation on the peer, which lives as long as the collective rules say.
  c10::Storage keep = t.storage();
  return at::from_blob(
      remote, t.sizes(), t.strides(), [keep](void*) mutable { keep = c10::Storage(); },
      at::TensorOptions().dtype(t.scalar_type()).device(at::kCPU));
}

size_t live_allocations() {
  std::lock_guard<std::mutex> g(table_mutex);
  return table.size();
}

}  // namespace shoal_torch
