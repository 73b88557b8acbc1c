// cxx_consumer: a C++ program built with the installed oshc++. Puts, gets,
// atomics, barriers and the untyped shmem_wait/shmem_wait_until (real
// functions: C++ has no C11 generic macros), each result checked.
#include <shmem.h>

#include <cstdio>
#include <vector>

namespace {

const int kCount = 8;
long ring[kCount];  // written by the previous PE
long counter;       // fetch-added by every PE on PE 0
long arrived;       // set by the previous PE
long go;            // set by the previous PE after the barrier
long winners;       // PEs whose compare_swap succeeded, on PE 0
long failures;      // summed on PE 0

long value_of(int pe, int i) { return 1000L * (pe + 1) + i; }

class Check {
  public:
    explicit Check(int me) : me_(me) {}
    void expect(bool ok, const char *what, long got, long want)
    {
        if (ok) return;
        std::printf("PE %d: %s is %ld, expected %ld\n", me_, what, got, want);
        bad_++;
    }
    int bad() const { return bad_; }

  private:
    int me_;
    int bad_ = 0;
};

}  // namespace

int main()
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    Check check(me);

    std::vector<long> mine(kCount);
    for (int i = 0; i < kCount; i++) mine[i] = value_of(me, i);
    shmem_long_put(ring, mine.data(), kCount, next);
    shmem_barrier_all();
    for (int i = 0; i < kCount; i++)
        check.expect(ring[i] == value_of(prev, i), "ring[i] after put", ring[i], value_of(prev, i));

    std::vector<long> back(kCount);
    shmem_long_get(back.data(), ring, kCount, next);  // next's ring holds this PE's values
    for (int i = 0; i < kCount; i++) check.expect(back[i] == mine[i], "get of next's ring", back[i], mine[i]);

    const long total = (long)npes * (npes + 1) / 2;  // of the fetch_adds of me + 1
    long before = shmem_long_atomic_fetch_add(&counter, me + 1, 0);
    check.expect(before >= 0 && before < total, "fetch_add's old value", before, 0);
    shmem_long_atomic_set(&arrived, me + 1, next);
    shmem_wait_until(&arrived, SHMEM_CMP_EQ, prev + 1);
    check.expect(arrived == prev + 1, "arrived", arrived, prev + 1);
    shmem_barrier_all();
    if (me == 0) check.expect(counter == total, "counter", counter, total);
    shmem_barrier_all();  // PE 0 has read counter before anyone swaps it
    long swapped = shmem_long_atomic_compare_swap(&counter, total, -1, 0);  // one PE wins
    check.expect(swapped == total || swapped == -1, "compare_swap's old value", swapped, -1);
    shmem_long_atomic_add(&winners, swapped == total, 0);

    shmem_long_atomic_set(&go, 7, next);
    shmem_wait(&go, 0);  // until it is no longer 0
    check.expect(go == 7, "go", go, 7);
    shmem_barrier_all();
    if (me == 0) check.expect(counter == -1, "counter after compare_swap", counter, -1);
    if (me == 0) check.expect(winners == 1, "compare_swap winners", winners, 1);

    shmem_long_atomic_add(&failures, check.bad(), 0);
    shmem_barrier_all();
    if (me == 0 && failures == 0) std::printf("c++ consumer ok on %d PEs\n", npes);
    shmem_finalize();
    return check.bad() ? 1 : 0;
}
