// Start-up, the control block and the staging buffers of shoal._torch.
#include "common.hpp"

#include <cstdlib>
#include <cstring>

namespace shoal_torch {

namespace {
bool started_here = false;
Control control_block;
Staging staging_buffers;

size_t env_bytes(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  size_t mult = 1;
  if (end && (*end == 'k' || *end == 'K')) mult = 1024;
  if (end && (*end == 'm' || *end == 'M')) mult = 1024 * 1024;
  if (n == 0) throw ValueError(std::string(name) + "=" + v + ": expected a positive byte count");
  return static_cast<size_t>(n) * mult;
}
}  // namespace

std::mutex& shmem_lock() {
  static std::mutex m;
  return m;
}

bool ensure_started() {
  std::lock_guard<std::mutex> g(shmem_lock());
  if (!shmem_query_initialized()) {
    int provided = 0;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    started_here = true;
  }
  if (!control_block.src) {
    // Three words per peer and direction covers the alltoall exchange.
    control_block.words = 3 * static_cast<size_t>(shmem_n_pes()) + 8;
    auto* p = static_cast<int64_t*>(shmem_calloc(2 * control_block.words, sizeof(int64_t)));
    if (!p) throw std::runtime_error("shoal.torch: shmem_calloc of the control block failed");
    control_block.src = p;
    control_block.dst = p + control_block.words;
  }
  return started_here;
}

void stop_if_started_here() {
  std::lock_guard<std::mutex> g(shmem_lock());
  if (started_here && shmem_query_initialized()) shmem_finalize();
  started_here = false;
}

Control& control() { return control_block; }
Staging& staging() { return staging_buffers; }

void ensure_staging() {
  std::lock_guard<std::mutex> g(shmem_lock());
  Staging& s = staging_buffers;
  if (s.coll) return;
  const size_t npes = static_cast<size_t>(shmem_n_pes());
  // Sized so that a 1 MiB collective is one step; larger ones go in chunks.
  s.coll_bytes = env_bytes("SHOAL_TORCH_STAGING", size_t(8) << 20);
  s.slot_bytes = env_bytes("SHOAL_TORCH_SLOT", size_t(1) << 20);
  if (s.slot_bytes <= 64) throw ValueError("SHOAL_TORCH_SLOT must exceed 64 bytes");
  s.coll = static_cast<char*>(shmem_malloc(s.coll_bytes));
  s.slots = static_cast<char*>(shmem_malloc(npes * s.slot_bytes));
  auto* words = static_cast<uint64_t*>(shmem_calloc(2 * npes, sizeof(uint64_t)));
  if (!s.coll || !s.slots || !words)
    throw std::runtime_error("shoal.torch: the staging buffers (" + std::to_string(s.coll_bytes) + " + " +
                             std::to_string(npes * s.slot_bytes) +
                             " bytes) do not fit the symmetric heap; raise SHMEM_SYMMETRIC_SIZE "
                             "or lower SHOAL_TORCH_STAGING/SHOAL_TORCH_SLOT");
  s.direct = static_cast<char*>(shmem_malloc(s.coll_bytes));
  if (!s.direct) throw std::runtime_error("shoal.torch: the load/store buffer does not fit the symmetric heap");
  s.direct_half = s.coll_bytes / 2;
  const char* direct_env = std::getenv("SHOAL_TORCH_DIRECT");
  s.all_local = !(direct_env && std::strcmp(direct_env, "0") == 0);
  for (size_t p = 0; p < npes; p++) {
    s.peer_direct.push_back(static_cast<char*>(shmem_ptr(s.direct, static_cast<int>(p))));
    if (!s.peer_direct.back()) s.all_local = false;
  }
  // Every PE must choose the same path: agree on it (AND over the world).
  control_block.src[0] = s.all_local ? 1 : 0;
  shmem_int64_and_reduce(SHMEM_TEAM_WORLD, control_block.dst, control_block.src, 1);
  s.all_local = control_block.dst[0] != 0;
  s.ready = words;
  s.ack = words + npes;
  s.sent.assign(npes, 0);
  s.received.assign(npes, 0);
  shmem_barrier_all();  // every PE's zeroed words exist before anyone signals
}

int64_t world_broadcast_i64(int64_t value, int root) {
  std::lock_guard<std::mutex> g(shmem_lock());
  if (root < 0 || root >= shmem_n_pes())
    throw ValueError("shoal.torch: broadcast root " + std::to_string(root) + " is not a PE (0.." +
                     std::to_string(shmem_n_pes() - 1) + ")");
  Control& c = control_block;
  c.src[0] = value;
  shmem_broadcastmem(SHMEM_TEAM_WORLD, c.dst, c.src, sizeof(int64_t), root);
  // Before OpenSHMEM 1.5 the root's dest is not written; do not rely on it.
  return shmem_my_pe() == root ? value : c.dst[0];
}

std::string dtype_name(at::ScalarType t) { return c10::toString(t); }

}  // namespace shoal_torch
