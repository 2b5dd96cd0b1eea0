// What one seed of `weft-sim sweep` runs (swarm testing): every seed draws,
// from its own simulator PRNG, its own world (2..8 ranks, mesh or ring, one
// or two cables), group options (frame size, depth, ring directions), a mix
// of 1..3 collectives (any kind, dtype, reduction, root, size from 0 bytes
// to 256 KiB with odd element counts, in place or not, auto or an explicit
// algorithm valid for the topology) and its faults (rates in one of three
// bands, and rarely a crash, a dead link direction, a queue pair error or a
// stall). The same seed draws the same case with every compiler and
// standard library.
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_CASE_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_CASE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "collectives/group_options.h"
#include "fabric/clock.h"
#include "harness/collective_spec.h"
#include "sim/faults.h"
#include "sim/world.h"

namespace weft::sim::cli {

// Deadline of each operation of a sweep run, in virtual time: generous for
// every correct run (the largest mix takes well under a millisecond even at
// 5% loss with retransmission), short enough that a silent peer ends a run
// quickly. The world stops a run at twice this (a hang).
inline constexpr TimeNs kSweepDeadlineNs = 250 * kNsPerMs;

// Most collectives one seed runs one after another.
inline constexpr uint32_t kSweepMaxOps = 3;

struct SweepCase {
  uint64_t seed = 0;
  std::string topology_name;  // "mesh" or "ring"
  WorldOptions world;         // topology, link tb5, drawn faults, seed
  GroupOptions group;         // recovery.enabled left at its default
  std::vector<harness::CollectiveSpec> ops;
};

// Draws seed `seed`'s case. Deterministic in `seed` alone.
SweepCase draw_sweep_case(uint64_t seed);

// "5 ranks ring x2 cables, frames 16K depth 8, all_sum float32 1234B
// (ring), broadcast ...; loss=0.004 ...; crash rank=3 at_ns=120000": one
// line saying what the seed runs.
std::string describe_sweep_case(const SweepCase& c);

}  // namespace weft::sim::cli

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_CASE_H_
