// What one seed of `weft-sim sweep` runs (swarm testing, workload and
// faults both): every seed draws, from its own simulator PRNG, a world
// (2..64 ranks, small worlds common and large rare; mesh, ring or a partial
// mesh of 1..4 cables; a link model around tb5's latency, bandwidth and
// overhead), group options (frame size, depth, send queue, ring
// directions, mesh threshold, retransmission timers), a program of up to
// kSweepMaxOps collectives (every kind, dtype and reduction; sizes
// log-uniform with a rare tail to 16 MiB; in place or not; on the world or
// on sub-groups from split; some asynchronous, in flight together), and
// its faults: per-frame rates that stop at a drawn time (the liveness
// phase) and, rarely, a crash, a dead link direction, a queue pair error
// or a stall at any moment up to then, the linger after the last operation
// included. The same seed draws the same case with every compiler and
// standard library.
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_CASE_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_CASE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "fabric/clock.h"
#include "harness/program.h"
#include "sim/faults.h"
#include "sim/world.h"

namespace weft::tools::weft_sim {

// Deadline of each operation of a sweep run, in virtual time, at least:
// generous for every correct run, short enough that a silent peer ends a
// run quickly. A program expected to take longer gets more
// (SweepCase::deadline_ns).
inline constexpr TimeNs kSweepDeadlineNs = 250 * kNsPerMs;

// Most collectives one seed's program runs, and most ranks of its world.
inline constexpr uint32_t kSweepMaxOps = 30;
inline constexpr uint32_t kSweepMaxRanks = 64;

// How long the ranks keep serving their peers after the program's last
// operation ended (faults may strike then too).
inline constexpr TimeNs kSweepLingerNs = kNsPerMs;

struct SweepCase {
  uint64_t seed = 0;
  std::string topology_name;  // "mesh", "ring" or "partial mesh"
  sim::WorldOptions world;    // topology, link, drawn faults, seed
  GroupOptions group;         // recovery.enabled left at its default
  harness::Program program;
  // The program's virtual duration as drawn (link figures and sizes, no
  // faults): the scale of the fault times.
  TimeNs expected_ns = 0;
  TimeNs deadline_ns = kSweepDeadlineNs;  // of each operation
};

// Draws seed `seed`'s case. Deterministic in `seed` alone.
SweepCase draw_sweep_case(uint64_t seed);

// `c` with only the operations at `keep` (indices into its program, in
// order), the sub-groups they use, and its drawn faults. InvalidArgument
// for an index outside the program.
absl::StatusOr<SweepCase> keep_ops(const SweepCase& c,
                                   const std::vector<uint32_t>& keep);

// "5 ranks ring x2 cables, link latency_ns=..., frames 16K depth 8 ...;
// groups [0 1 2] ...; 7 ops: all_sum float32 1234B async, broadcast ...
// @1; loss=0.004 ... until_ns=...; crash rank=3 at_ns=120000": one line
// saying what the seed runs.
std::string describe_sweep_case(const SweepCase& c);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_CASE_H_
