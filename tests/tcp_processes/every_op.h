// The `every-op` scenario of tcp_rank: every call weft::Group offers (the
// four reductions through their own calls and all_reduce, all_gather,
// sum_scatter and reduce_scatter, broadcast and reduce from two roots,
// all_to_all, send/recv around the ring, barrier, and an all_sum in a
// split group), at 0, 1 and a multi-frame element count, out of place and in
// place, int32 and float32. Each rank computes what every other rank
// contributed from the rank and the index alone and checks every result
// element by element, printing one line per call.
#ifndef WEFT_TESTS_TCP_PROCESSES_EVERY_OP_H_
#define WEFT_TESTS_TCP_PROCESSES_EVERY_OP_H_

#include <cstdint>

#include "absl/status/status.h"
#include "collectives/group.h"

namespace weft::tcp_processes {

// Elements per block of the large size: over 2 MiB of int32 per rank's
// block, so every call spans several of the largest frames
// (GroupOptions::kMaxFrameBytes).
inline constexpr uint64_t kLargeCount = 600'000;

// What a run of checks found.
struct Tally {
  uint64_t correct = 0;
  uint64_t wrong = 0;   // results with a wrong element
  uint64_t errors = 0;  // calls that returned an error
};

// Runs every call above on `group` (every rank of the group runs it with
// the same `large_count`), printing "rank R: <call> <dtype> <count>
// <placement>: OK" or what was wrong. Stops at the first error.
Tally run_every_op(Group& group, uint64_t large_count = kLargeCount);

// An all_sum of `count` int32 elements in the `loop` scenario's pattern for
// `iteration`; true when every element is right. `status` gets the call's.
bool checked_all_sum(Group& group, uint64_t count, uint64_t iteration,
                     absl::Status* status);

}  // namespace weft::tcp_processes

#endif  // WEFT_TESTS_TCP_PROCESSES_EVERY_OP_H_
