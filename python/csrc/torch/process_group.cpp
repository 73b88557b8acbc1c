// ProcessGroupShoal: creation, reductions, broadcast, allgather, barrier.
#include "process_group.hpp"

#include <algorithm>
#include <cstring>

namespace shoal_torch {

using c10d::ReduceOp;

DoneWork::DoneWork(c10d::OpType type, std::vector<at::Tensor> outputs)
    : c10d::Work(-1, type), outputs_(std::move(outputs)) {
  future_ = c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  future_->markCompleted(c10::IValue(outputs_));
}

ProcessGroupShoal::ProcessGroupShoal(int rank, int size) : c10d::ProcessGroup(rank, size) {}

c10::intrusive_ptr<c10d::ProcessGroup> ProcessGroupShoal::create(const c10::intrusive_ptr<c10d::Store>&, int rank,
                                                                 int size, const std::chrono::duration<float>&) {
  ensure_started();
  if (rank != shmem_my_pe() || size != shmem_n_pes())
    throw ValueError("shoal backend: a process group spans every PE in PE order (rank " + std::to_string(rank) +
                     " of " + std::to_string(size) + " asked, this is PE " + std::to_string(shmem_my_pe()) + " of " +
                     std::to_string(shmem_n_pes()) + "); subgroups are not supported");
  ensure_staging();
  return c10::make_intrusive<ProcessGroupShoal>(rank, size);
}

void check_cpu_tensor(const at::Tensor& t, const char* call) {
  if (!t.defined()) throw ValueError(std::string("shoal backend ") + call + ": undefined tensor");
  if (t.device().type() != at::kCPU)
    throw ValueError(std::string("shoal backend ") + call + ": tensor on " + t.device().str() +
                     ", only CPU tensors are supported");
  if (t.layout() != at::kStrided)
    throw ValueError(std::string("shoal backend ") + call + ": only dense (strided) tensors are supported");
}

void check_one_tensor(const std::vector<at::Tensor>& v, const char* call) {
  if (v.size() != 1)
    throw ValueError(std::string("shoal backend ") + call + ": expects one tensor per call, got " +
                     std::to_string(v.size()));
  check_cpu_tensor(v[0], call);
}

namespace {

// The dtype data is reduced in: half types go through float32, bool through
// uint8 (where OR, AND and XOR are the logical forms).
at::ScalarType staged_type(at::ScalarType t) {
  if (t == at::kHalf || t == at::kBFloat16) return at::kFloat;
  if (t == at::kBool) return at::kByte;
  return t;
}

bool is_floating(at::ScalarType t) { return at::isFloatingType(t); }

ReduceOp::RedOpType checked_op(const ReduceOp& op, at::ScalarType t, const char* call) {
  const auto o = static_cast<ReduceOp::RedOpType>(op);
  const std::string where = std::string("shoal backend ") + call + ": ";
  switch (t) {
    case at::kFloat: case at::kDouble: case at::kHalf: case at::kBFloat16:
    case at::kChar: case at::kShort: case at::kInt: case at::kLong: case at::kByte: case at::kBool:
      break;
    default:
      throw ValueError(where + "dtype " + dtype_name(t) + " is not supported");
  }
  if (o == ReduceOp::PREMUL_SUM || o == ReduceOp::UNUSED)
    throw ValueError(where + "ReduceOp PREMUL_SUM is not supported on CPU tensors");
  if ((o == ReduceOp::BAND || o == ReduceOp::BOR || o == ReduceOp::BXOR) && is_floating(t))
    throw ValueError(where + "bitwise ReduceOp on floating dtype " + dtype_name(t));
  if (o == ReduceOp::AVG && !is_floating(t))
    throw ValueError(where + "ReduceOp AVG needs a floating dtype, got " + dtype_name(t));
  if (t == at::kBool) {  // logical forms on 0/1 bytes
    if (o == ReduceOp::SUM || o == ReduceOp::MAX) return ReduceOp::BOR;
    if (o == ReduceOp::PRODUCT || o == ReduceOp::MIN) return ReduceOp::BAND;
  }
  return o;
}

#define SHOAL_ARITH_CASES(OPN)                                                                  \
  case at::kFloat: shmem_float_##OPN##_reduce(team, (float*)b, (const float*)b, n); return;    \
  case at::kDouble: shmem_double_##OPN##_reduce(team, (double*)b, (const double*)b, n); return; \
  SHOAL_INT_CASES(OPN)
#define SHOAL_INT_CASES(OPN)                                                                    \
  case at::kChar: shmem_int8_##OPN##_reduce(team, (int8_t*)b, (const int8_t*)b, n); return;    \
  case at::kShort: shmem_int16_##OPN##_reduce(team, (int16_t*)b, (const int16_t*)b, n); return; \
  case at::kInt: shmem_int32_##OPN##_reduce(team, (int32_t*)b, (const int32_t*)b, n); return;  \
  case at::kLong: shmem_int64_##OPN##_reduce(team, (int64_t*)b, (const int64_t*)b, n); return; \
  case at::kByte: shmem_uint8_##OPN##_reduce(team, (uint8_t*)b, (const uint8_t*)b, n); return;

// In place on the symmetric buffer b (Shoal's reductions allow dest == source).
void reduce_in_place(ReduceOp::RedOpType op, at::ScalarType t, void* b, size_t n) {
  shmem_team_t team = SHMEM_TEAM_WORLD;
  switch (op) {
    case ReduceOp::SUM: case ReduceOp::AVG:
      switch (t) { SHOAL_ARITH_CASES(sum) default: break; }
      break;
    case ReduceOp::PRODUCT:
      switch (t) { SHOAL_ARITH_CASES(prod) default: break; }
      break;
    case ReduceOp::MIN:
      switch (t) { SHOAL_ARITH_CASES(min) default: break; }
      break;
    case ReduceOp::MAX:
      switch (t) { SHOAL_ARITH_CASES(max) default: break; }
      break;
    case ReduceOp::BAND:
      switch (t) { SHOAL_INT_CASES(and) default: break; }
      break;
    case ReduceOp::BOR:
      switch (t) { SHOAL_INT_CASES(or) default: break; }
      break;
    case ReduceOp::BXOR:
      switch (t) { SHOAL_INT_CASES(xor) default: break; }
      break;
    default:
      break;
  }
  throw std::logic_error("shoal backend: no reduction for this op and dtype");  // checked_op rules this out
}

// Copies between a tensor range and staging memory, converting dtypes.
void stage_in(void* dst, at::ScalarType st, const at::Tensor& flat, int64_t off, int64_t n) {
  if (st == flat.scalar_type()) {
    std::memcpy(dst, static_cast<const char*>(flat.data_ptr()) + off * flat.element_size(), n * flat.element_size());
  } else {
    at::from_blob(dst, {n}, at::TensorOptions().dtype(st)).copy_(flat.narrow(0, off, n));
  }
}
void stage_out(at::Tensor& flat, int64_t off, int64_t n, const void* src, at::ScalarType st) {
  if (st == flat.scalar_type()) {
    std::memcpy(static_cast<char*>(flat.data_ptr()) + off * flat.element_size(), src, n * flat.element_size());
  } else {
    flat.narrow(0, off, n).copy_(at::from_blob(const_cast<void*>(src), {n}, at::TensorOptions().dtype(st)));
  }
}

// Runs fn(flat) on a contiguous 1-D alias of t (a copy when t is strided),
// writing the result back into t when a copy was used.
template <typename Fn>
void with_flat(at::Tensor& t, bool write_back, Fn fn) {
  if (t.is_contiguous()) {
    at::Tensor flat = t.view({-1});
    fn(flat);
  } else {
    at::Tensor flat = t.contiguous().view({-1});
    fn(flat);
    if (write_back) t.copy_(flat.view(t.sizes()));
  }
}

// All PEs reduce t; the result lands in t on every PE (root < 0) or on root.
void reduce_tensor(at::Tensor& t, ReduceOp::RedOpType op, int root) {
  Staging& s = staging();
  const at::ScalarType st = staged_type(t.scalar_type());
  const int64_t chunk = static_cast<int64_t>(s.coll_bytes / c10::elementSize(st));
  const bool keep = root < 0 || root == shmem_my_pe();
  with_flat(t, keep, [&](at::Tensor& flat) {
    const int64_t n = flat.numel();
    for (int64_t off = 0; off < n; off += chunk) {
      const int64_t m = std::min(chunk, n - off);
      stage_in(s.coll, st, flat, off, m);
      reduce_in_place(op, st, s.coll, static_cast<size_t>(m));
      if (keep) stage_out(flat, off, m, s.coll, st);
    }
  });
  if (op == ReduceOp::AVG && keep) t.div_(shmem_n_pes());
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::allreduce(std::vector<at::Tensor>& tensors,
                                                            const c10d::AllreduceOptions& opts) {
  for (auto& t : tensors) check_cpu_tensor(t, "allreduce");
  std::vector<ReduceOp::RedOpType> ops;
  for (auto& t : tensors) ops.push_back(checked_op(opts.reduceOp, t.scalar_type(), "allreduce"));
  std::lock_guard<std::mutex> g(shmem_lock());
  for (size_t i = 0; i < tensors.size(); i++) reduce_tensor(tensors[i], ops[i], -1);
  return c10::make_intrusive<DoneWork>(c10d::OpType::ALLREDUCE, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                      const c10d::AllreduceCoalescedOptions& opts) {
  return allreduce(tensors, opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::reduce(std::vector<at::Tensor>& tensors,
                                                         const c10d::ReduceOptions& opts) {
  check_one_tensor(tensors, "reduce");
  if (opts.rootRank < 0 || opts.rootRank >= size_)
    throw ValueError("shoal backend reduce: root " + std::to_string(opts.rootRank) + " is not a rank (0.." +
                     std::to_string(size_ - 1) + ")");
  auto op = checked_op(opts.reduceOp, tensors[0].scalar_type(), "reduce");
  std::lock_guard<std::mutex> g(shmem_lock());
  reduce_tensor(tensors[0], op, static_cast<int>(opts.rootRank));
  return c10::make_intrusive<DoneWork>(c10d::OpType::REDUCE, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::broadcast(std::vector<at::Tensor>& tensors,
                                                            const c10d::BroadcastOptions& opts) {
  check_one_tensor(tensors, "broadcast");
  if (opts.rootRank < 0 || opts.rootRank >= size_)
    throw ValueError("shoal backend broadcast: root " + std::to_string(opts.rootRank) + " is not a rank (0.." +
                     std::to_string(size_ - 1) + ")");
  const int root = static_cast<int>(opts.rootRank);
  const bool is_root = root == rank_;
  std::lock_guard<std::mutex> g(shmem_lock());
  Staging& s = staging();
  if (s.all_local) {  // one copy in at the root, one copy out on each other PE
    with_flat(tensors[0], !is_root, [&](at::Tensor& flat) {
      const size_t es = flat.element_size();
      const int64_t chunk = static_cast<int64_t>(s.direct_half / es);
      const int64_t n = flat.numel();
      char* data = static_cast<char*>(flat.data_ptr());
      for (int64_t off = 0; off < n; off += chunk) {
        const int64_t m = std::min(chunk, n - off);
        char* mine = s.direct_step();
        if (is_root) std::memcpy(mine, data + off * es, m * es);
        shmem_barrier_all();
        if (!is_root) std::memcpy(data + off * es, s.peer_direct[root] + (mine - s.direct), m * es);
      }
    });
    return c10::make_intrusive<DoneWork>(c10d::OpType::BROADCAST, tensors);
  }
  // Source and destination halves: the root's dest is written too.
  const size_t half = s.coll_bytes / 2;
  char* src = s.coll;
  char* dst = s.coll + half;
  with_flat(tensors[0], !is_root, [&](at::Tensor& flat) {
    const size_t es = flat.element_size();
    const int64_t chunk = static_cast<int64_t>(half / es);
    const int64_t n = flat.numel();
    char* data = static_cast<char*>(flat.data_ptr());
    for (int64_t off = 0; off < n; off += chunk) {
      const int64_t m = std::min(chunk, n - off);
      if (is_root) std::memcpy(src, data + off * es, m * es);
      shmem_broadcastmem(SHMEM_TEAM_WORLD, dst, src, m * es, root);
      if (!is_root) std::memcpy(data + off * es, dst, m * es);
    }
  });
  return c10::make_intrusive<DoneWork>(c10d::OpType::BROADCAST, tensors);
}

namespace {
// outs[p] receives PE p's input; all the same dtype and element count.
void allgather_into(at::Tensor& input, std::vector<at::Tensor>& outs) {
  Staging& s = staging();
  const int npes = shmem_n_pes();
  at::Tensor in = input.contiguous().view({-1});
  std::vector<at::Tensor> flat(npes);
  for (int p = 0; p < npes; p++) flat[p] = outs[p].is_contiguous() ? outs[p].view({-1}) : outs[p].contiguous().view({-1});
  const size_t es = in.element_size();
  if (s.all_local) {  // each PE copies its input in once and every block out
    const int64_t chunk = static_cast<int64_t>(s.direct_half / es);
    const int64_t n = in.numel();
    for (int64_t off = 0; off < n; off += chunk) {
      const int64_t m = std::min(chunk, n - off);
      char* mine = s.direct_step();
      std::memcpy(mine, static_cast<const char*>(in.data_ptr()) + off * es, m * es);
      shmem_barrier_all();
      for (int k = 0; k < npes; k++) {
        const int p = (shmem_my_pe() + k) % npes;  // readers start at different PEs
        std::memcpy(static_cast<char*>(flat[p].data_ptr()) + off * es, s.peer_direct[p] + (mine - s.direct),
                    m * es);
      }
    }
    for (int p = 0; p < npes; p++)
      if (!outs[p].is_contiguous()) outs[p].copy_(flat[p].view(outs[p].sizes()));
    return;
  }
  // One source block and npes destination blocks of `chunk` elements.
  const int64_t chunk = static_cast<int64_t>(s.coll_bytes / (npes + 1) / es);
  char* src = s.coll;
  char* dst = s.coll + chunk * es;
  const int64_t n = in.numel();
  for (int64_t off = 0; off < n; off += chunk) {
    const int64_t m = std::min(chunk, n - off);
    std::memcpy(src, static_cast<const char*>(in.data_ptr()) + off * es, m * es);
    shmem_fcollectmem(SHMEM_TEAM_WORLD, dst, src, m * es);
    for (int p = 0; p < npes; p++)
      std::memcpy(static_cast<char*>(flat[p].data_ptr()) + off * es, dst + p * m * es, m * es);
  }
  for (int p = 0; p < npes; p++)
    if (!outs[p].is_contiguous()) outs[p].copy_(flat[p].view(outs[p].sizes()));
}

void check_gather_outputs(const at::Tensor& in, const std::vector<at::Tensor>& outs, int size, const char* call) {
  if (static_cast<int>(outs.size()) != size)
    throw ValueError(std::string("shoal backend ") + call + ": " + std::to_string(outs.size()) +
                     " output tensors for " + std::to_string(size) + " ranks");
  for (auto& o : outs) {
    check_cpu_tensor(o, call);
    if (o.scalar_type() != in.scalar_type() || o.numel() != in.numel())
      throw ValueError(std::string("shoal backend ") + call + ": an output tensor (" + dtype_name(o.scalar_type()) +
                       ", " + std::to_string(o.numel()) + " elements) does not match the input (" +
                       dtype_name(in.scalar_type()) + ", " + std::to_string(in.numel()) + " elements)");
  }
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllgatherOptions&) {
  check_one_tensor(inputs, "allgather");
  if (outputs.size() != 1) throw ValueError("shoal backend allgather: expects one output list");
  check_gather_outputs(inputs[0], outputs[0], size_, "allgather");
  std::lock_guard<std::mutex> g(shmem_lock());
  allgather_into(inputs[0], outputs[0]);
  return c10::make_intrusive<DoneWork>(c10d::OpType::ALLGATHER, outputs[0]);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                  const c10d::AllgatherOptions&) {
  check_cpu_tensor(input, "_allgather_base");
  check_cpu_tensor(output, "_allgather_base");
  if (output.numel() != input.numel() * size_ || output.scalar_type() != input.scalar_type() ||
      !output.is_contiguous())
    throw ValueError("shoal backend _allgather_base: output must be contiguous, of the input's dtype and " +
                     std::to_string(size_) + "x its elements");
  std::vector<at::Tensor> outs = output.view({-1}).chunk(size_);
  std::lock_guard<std::mutex> g(shmem_lock());
  allgather_into(input, outs);
  return c10::make_intrusive<DoneWork>(c10d::OpType::_ALLGATHER_BASE, std::vector<at::Tensor>{output});
}

namespace {
// ins[p] from every PE is reduced into `out` on PE p.
void reduce_scatter_into(at::Tensor& out, const std::vector<at::Tensor>& ins, ReduceOp::RedOpType op) {
  Staging& s = staging();
  const int npes = shmem_n_pes();
  const int me = shmem_my_pe();
  const at::ScalarType st = staged_type(out.scalar_type());
  const size_t es = c10::elementSize(st);
  const int64_t chunk = static_cast<int64_t>(s.coll_bytes / npes / es);
  std::vector<at::Tensor> flat_in(npes);
  for (int p = 0; p < npes; p++) flat_in[p] = ins[p].contiguous().view({-1});
  with_flat(out, true, [&](at::Tensor& flat) {
    const int64_t n = flat.numel();
    for (int64_t off = 0; off < n; off += chunk) {
      const int64_t m = std::min(chunk, n - off);
      for (int p = 0; p < npes; p++) stage_in(s.coll + p * m * es, st, flat_in[p], off, m);
      reduce_in_place(op, st, s.coll, static_cast<size_t>(m) * npes);
      stage_out(flat, off, m, s.coll + me * m * es, st);
    }
  });
  if (op == ReduceOp::AVG) out.div_(npes);
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                 std::vector<std::vector<at::Tensor>>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) {
  check_one_tensor(outputs, "reduce_scatter");
  if (inputs.size() != 1) throw ValueError("shoal backend reduce_scatter: expects one input list");
  check_gather_outputs(outputs[0], inputs[0], size_, "reduce_scatter");
  auto op = checked_op(opts.reduceOp, outputs[0].scalar_type(), "reduce_scatter");
  std::lock_guard<std::mutex> g(shmem_lock());
  reduce_scatter_into(outputs[0], inputs[0], op);
  return c10::make_intrusive<DoneWork>(c10d::OpType::REDUCE_SCATTER, outputs);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                       const c10d::ReduceScatterOptions& opts) {
  check_cpu_tensor(input, "_reduce_scatter_base");
  check_cpu_tensor(output, "_reduce_scatter_base");
  if (input.numel() != output.numel() * size_ || output.scalar_type() != input.scalar_type())
    throw ValueError("shoal backend _reduce_scatter_base: input must have the output's dtype and " +
                     std::to_string(size_) + "x its elements");
  auto op = checked_op(opts.reduceOp, output.scalar_type(), "_reduce_scatter_base");
  std::vector<at::Tensor> ins = input.contiguous().view({-1}).chunk(size_);
  std::lock_guard<std::mutex> g(shmem_lock());
  reduce_scatter_into(output, ins, op);
  return c10::make_intrusive<DoneWork>(c10d::OpType::_REDUCE_SCATTER_BASE, std::vector<at::Tensor>{output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::barrier(const c10d::BarrierOptions&) {
  std::lock_guard<std::mutex> g(shmem_lock());
  shmem_barrier_all();
  return c10::make_intrusive<DoneWork>(c10d::OpType::BARRIER, std::vector<at::Tensor>{});
}

}  // namespace shoal_torch
