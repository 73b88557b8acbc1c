// ProcessGroupShoal: alltoall and send/recv.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "process_group.hpp"

namespace shoal_torch {

// Every PE stages its whole input in its collective buffer and tells each
// peer where that peer's block starts and how long it is (an alltoall of
// three words per pair, which also proves every peer has staged); then each
// PE gets its blocks from the peers, and a barrier keeps the buffers until
// all reads are done. Sizes are checked on both sides and a mismatch or an
// input larger than the buffer raises on every PE that sees it, after the
// barriers, so no PE is left waiting.
void alltoall_bytes(const char* in, const std::vector<size_t>& in_off, const std::vector<size_t>& in_bytes, char* out,
                    const std::vector<size_t>& out_off, const std::vector<size_t>& out_bytes) {
  Staging& s = staging();
  Control& c = control();
  const int npes = shmem_n_pes();
  const int me = shmem_my_pe();
  size_t total_in = 0;
  for (int d = 0; d < npes; d++) total_in = std::max(total_in, in_off[d] + in_bytes[d]);
  const bool fits = total_in <= s.coll_bytes;
  if (fits) std::memcpy(s.coll, in, total_in);
  for (int d = 0; d < npes; d++) {
    c.src[3 * d + 0] = static_cast<int64_t>(in_off[d]);
    c.src[3 * d + 1] = static_cast<int64_t>(in_bytes[d]);
    c.src[3 * d + 2] = static_cast<int64_t>(total_in);
  }
  shmem_alltoallmem(SHMEM_TEAM_WORLD, c.dst, c.src, 3 * sizeof(int64_t));
  std::string problem;
  for (int p = 0; p < npes && problem.empty(); p++) {
    const size_t their_total = static_cast<size_t>(c.dst[3 * p + 2]);
    if (their_total > s.coll_bytes)
      problem = "PE " + std::to_string(p) + " sends " + std::to_string(their_total) +
                " bytes, more than the staging buffer (" + std::to_string(s.coll_bytes) +
                " bytes; set SHOAL_TORCH_STAGING)";
    else if (static_cast<size_t>(c.dst[3 * p + 1]) != out_bytes[p])
      problem = "PE " + std::to_string(p) + " sends " + std::to_string(c.dst[3 * p + 1]) + " bytes to PE " +
                std::to_string(me) + ", which expects " + std::to_string(out_bytes[p]);
  }
  if (problem.empty()) {
    for (int k = 0; k < npes; k++) {
      const int p = (me + k) % npes;  // start at different peers
      const char* from = s.coll + c.dst[3 * p + 0];
      if (p == me)
        std::memcpy(out + out_off[p], from, out_bytes[p]);
      else if (out_bytes[p])
        shmem_getmem(out + out_off[p], from, out_bytes[p], p);
    }
  }
  shmem_barrier_all();
  if (!problem.empty()) throw ValueError("shoal backend alltoall: " + problem);
}

namespace {
std::vector<int64_t> splits_or_equal(const std::vector<int64_t>& splits, int64_t rows, int size, const char* which) {
  if (splits.empty()) {
    if (rows % size != 0)
      throw ValueError(std::string("shoal backend alltoall_base: ") + which + " has " + std::to_string(rows) +
                       " rows, not a multiple of " + std::to_string(size) + " ranks");
    return std::vector<int64_t>(size, rows / size);
  }
  if (static_cast<int>(splits.size()) != size)
    throw ValueError(std::string("shoal backend alltoall_base: ") + std::to_string(splits.size()) + " " + which +
                     " split sizes for " + std::to_string(size) + " ranks");
  int64_t sum = 0;
  for (int64_t v : splits) {
    if (v < 0) throw ValueError(std::string("shoal backend alltoall_base: negative ") + which + " split size");
    sum += v;
  }
  if (sum != rows)
    throw ValueError(std::string("shoal backend alltoall_base: ") + which + " split sizes add up to " +
                     std::to_string(sum) + ", the tensor has " + std::to_string(rows) + " rows");
  return splits;
}

void layout(const std::vector<int64_t>& rows, size_t row_bytes, std::vector<size_t>& off, std::vector<size_t>& bytes) {
  size_t at = 0;
  for (int64_t r : rows) {
    off.push_back(at);
    bytes.push_back(static_cast<size_t>(r) * row_bytes);
    at += static_cast<size_t>(r) * row_bytes;
  }
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                std::vector<int64_t>& outputSplits,
                                                                std::vector<int64_t>& inputSplits,
                                                                const c10d::AllToAllOptions&) {
  check_cpu_tensor(input, "alltoall_base");
  check_cpu_tensor(output, "alltoall_base");
  if (input.scalar_type() != output.scalar_type())
    throw ValueError("shoal backend alltoall_base: input and output dtypes differ");
  if (input.dim() == 0 || output.dim() == 0) throw ValueError("shoal backend alltoall_base: scalar tensors");
  const int64_t in_rows = input.size(0), out_rows = output.size(0);
  const size_t in_row = in_rows ? input.numel() / in_rows * input.element_size() : 0;
  const size_t out_row = out_rows ? output.numel() / out_rows * output.element_size() : 0;
  auto ins = splits_or_equal(inputSplits, in_rows, size_, "input");
  auto outs = splits_or_equal(outputSplits, out_rows, size_, "output");
  std::vector<size_t> in_off, in_bytes, out_off, out_bytes;
  layout(ins, in_row, in_off, in_bytes);
  layout(outs, out_row, out_off, out_bytes);
  at::Tensor in = input.contiguous();
  at::Tensor out = output.is_contiguous() ? output : at::empty_like(output, at::MemoryFormat::Contiguous);
  {
    std::lock_guard<std::mutex> g(shmem_lock());
    alltoall_bytes(static_cast<const char*>(in.data_ptr()), in_off, in_bytes, static_cast<char*>(out.data_ptr()),
                   out_off, out_bytes);
  }
  if (!output.is_contiguous()) output.copy_(out);
  return c10::make_intrusive<DoneWork>(c10d::OpType::ALLTOALL_BASE, std::vector<at::Tensor>{output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::alltoall(std::vector<at::Tensor>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllToAllOptions&) {
  if (static_cast<int>(inputs.size()) != size_ || static_cast<int>(outputs.size()) != size_)
    throw ValueError("shoal backend alltoall: expects " + std::to_string(size_) + " input and output tensors, got " +
                     std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  for (int p = 0; p < size_; p++) {
    check_cpu_tensor(inputs[p], "alltoall");
    check_cpu_tensor(outputs[p], "alltoall");
    if (inputs[p].scalar_type() != inputs[0].scalar_type() || outputs[p].scalar_type() != inputs[0].scalar_type())
      throw ValueError("shoal backend alltoall: every tensor must have the same dtype");
  }
  std::vector<at::Tensor> flat_in, flat_out;
  std::vector<size_t> in_off, in_bytes, out_off, out_bytes;
  size_t at_in = 0, at_out = 0;
  for (int p = 0; p < size_; p++) {
    flat_in.push_back(inputs[p].contiguous().view({-1}));
    in_off.push_back(at_in);
    in_bytes.push_back(inputs[p].nbytes());
    at_in += inputs[p].nbytes();
    out_off.push_back(at_out);
    out_bytes.push_back(outputs[p].nbytes());
    at_out += outputs[p].nbytes();
  }
  at::Tensor in = at::cat(flat_in);
  at::Tensor out = at::empty({static_cast<int64_t>(at_out / std::max<size_t>(inputs[0].element_size(), 1))},
                             inputs[0].options());
  {
    std::lock_guard<std::mutex> g(shmem_lock());
    alltoall_bytes(static_cast<const char*>(in.data_ptr()), in_off, in_bytes, static_cast<char*>(out.data_ptr()),
                   out_off, out_bytes);
  }
  int64_t pos = 0;
  for (int p = 0; p < size_; p++) {
    outputs[p].copy_(out.narrow(0, pos, outputs[p].numel()).view(outputs[p].sizes()));
    pos += outputs[p].numel();
  }
  return c10::make_intrusive<DoneWork>(c10d::OpType::ALLTOALL, outputs);
}

// send/recv: each PE holds one slot per source PE. A message moves in slot
// sized pieces; piece k of the stream src->dst carries sequence number k in
// dst's ready[src] (set by put-with-signal after the data), and dst answers
// by writing k into src's ack[dst] once it has copied the piece out, which
// lets src reuse the slot. A message that fits one slot therefore completes
// at once; a longer one completes when the receiver has taken all but the
// last piece. Messages between a pair are matched in order, and the tag and
// size must match the receive (checked; a mismatch raises).
namespace {
struct SlotHeader {
  int64_t tag;
  int64_t total;  // bytes of the whole message
};
constexpr size_t kHeader = 64;  // keeps slot data aligned
}  // namespace

void send_bytes(const char* data, size_t bytes, int dst, int tag) {
  Staging& s = staging();
  const int me = shmem_my_pe();
  const size_t room = s.slot_bytes - kHeader;
  char* slot = s.slots + static_cast<size_t>(me) * s.slot_bytes;  // my slot in dst's memory
  size_t off = 0;
  do {
    const size_t m = std::min(room, bytes - off);
    const uint64_t seq = ++s.sent[dst];
    shmem_uint64_wait_until(&s.ack[dst], SHMEM_CMP_GE, seq - 1);
    SlotHeader h{tag, static_cast<int64_t>(bytes)};
    shmem_putmem(slot, &h, sizeof h, dst);
    shmem_fence();  // the header lands before the signal that follows the data
    shmem_putmem_signal(slot + kHeader, data + off, m, &s.ready[me], seq, SHMEM_SIGNAL_SET, dst);
    off += m;
  } while (off < bytes);
  shmem_quiet();
}

void recv_bytes(char* data, size_t bytes, int src, int tag) {
  Staging& s = staging();
  const int me = shmem_my_pe();
  const size_t room = s.slot_bytes - kHeader;
  const char* slot = s.slots + static_cast<size_t>(src) * s.slot_bytes;
  size_t off = 0;
  do {
    const uint64_t seq = ++s.received[src];
    shmem_uint64_wait_until(&s.ready[src], SHMEM_CMP_GE, seq);
    SlotHeader h;
    std::memcpy(&h, slot, sizeof h);
    if (h.tag != tag || static_cast<size_t>(h.total) != bytes) {
      --s.received[src];  // leave the message for a matching receive
      throw ValueError("shoal backend recv: the next message from rank " + std::to_string(src) + " has tag " +
                       std::to_string(h.tag) + " and " + std::to_string(h.total) + " bytes, the receive asks tag " +
                       std::to_string(tag) + " and " + std::to_string(bytes) + " bytes");
    }
    const size_t m = std::min(room, bytes - off);
    std::memcpy(data + off, slot + kHeader, m);
    shmem_uint64_atomic_set(&s.ack[me], seq, src);
    off += m;
  } while (off < bytes);
}

namespace {
void check_peer(int peer, int size, int me, const char* call) {
  if (peer < 0 || peer >= size)
    throw ValueError(std::string("shoal backend ") + call + ": rank " + std::to_string(peer) + " is not in 0.." +
                     std::to_string(size - 1));
  if (peer == me) throw ValueError(std::string("shoal backend ") + call + ": rank " + std::to_string(peer) + " is this rank");
}
}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::send(std::vector<at::Tensor>& tensors, int dstRank, int tag) {
  check_one_tensor(tensors, "send");
  check_peer(dstRank, size_, rank_, "send");
  at::Tensor t = tensors[0].contiguous();
  std::lock_guard<std::mutex> g(shmem_lock());
  send_bytes(static_cast<const char*>(t.data_ptr()), t.nbytes(), dstRank, tag);
  return c10::make_intrusive<DoneWork>(c10d::OpType::SEND, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupShoal::recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) {
  check_one_tensor(tensors, "recv");
  check_peer(srcRank, size_, rank_, "recv");
  at::Tensor& dst = tensors[0];
  at::Tensor t = dst.is_contiguous() ? dst : at::empty_like(dst, at::MemoryFormat::Contiguous);
  {
    std::lock_guard<std::mutex> g(shmem_lock());
    recv_bytes(static_cast<char*>(t.data_ptr()), t.nbytes(), srcRank, tag);
  }
  if (!dst.is_contiguous()) dst.copy_(t);
  return c10::make_intrusive<DoneWork>(c10d::OpType::RECV, tensors);
}

}  // namespace shoal_torch
