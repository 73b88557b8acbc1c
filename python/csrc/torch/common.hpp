// Shared state of the shoal._torch extension: the start-up of libshoal, the
// symmetric control block and staging buffers every process group uses, and
// the one lock that serialises this extension's calls into libshoal.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" {
#include <shmem.h>
}

namespace shoal_torch {

// Raised as Python's ValueError (pybind11 maps std::invalid_argument).
struct ValueError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Calls into libshoal from this extension hold this lock: DDP's autograd
// hooks and the Python thread may both issue collectives.
std::mutex& shmem_lock();

// shmem_init if nobody has (the shoal core may already have); true if this
// call started it. Allocates the control block (collective, like the init).
bool ensure_started();
void stop_if_started_here();

// A symmetric control block: small metadata exchanges (alltoall splits, the
// rendezvous port). Laid out as src and dst halves of `control_words` each.
struct Control {
  int64_t* src = nullptr;
  int64_t* dst = nullptr;
  size_t words = 0;
};
Control& control();

// Staging buffers on the symmetric heap, made once for the world process
// group (shmem_malloc is collective over the world; a subgroup's creation
// is not, so they are never reallocated or freed before finalize).
struct Staging {
  char* coll = nullptr;  // collectives: copied in, reduced in place, copied out
  size_t coll_bytes = 0;
  char* slots = nullptr;  // send/recv: one slot per source PE in each PE
  size_t slot_bytes = 0;  // per slot, header included
  uint64_t* ready = nullptr;  // ready[src]: sequence number of the slot's message
  uint64_t* ack = nullptr;  // ack[dst]: last of my messages dst has consumed
  std::vector<uint64_t> sent, received;  // per peer, local counters
  // Load/store path when every PE is on this host (shmem_ptr reaches all):
  // broadcast and allgather copy straight out of the peers' buffers. Two
  // halves used alternately, so one barrier per step is enough: a PE can
  // refill a half only after the next step's barrier, which every reader
  // of that half reaches after it has finished reading it.
  char* direct = nullptr;
  size_t direct_half = 0;
  std::vector<char*> peer_direct;  // each PE's `direct`, mapped here
  bool all_local = false;
  unsigned phase = 0;
  char* direct_step() { return direct + (phase++ & 1u) * direct_half; }
};
Staging& staging();
void ensure_staging();  // collective over the world; idempotent

// One int64 from `root` to every PE (collective over the world).
int64_t world_broadcast_i64(int64_t value, int root);

// Torch dtype -> a name for messages.
std::string dtype_name(at::ScalarType t);

}  // namespace shoal_torch
