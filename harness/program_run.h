// Runs a Program (program.h) on a SimCluster: one rank program per world
// rank starts the rank's operations in program order (skipping those of
// groups it is not in), keeps up to kMaxInFlight in flight where the
// program says async, checks each operation's output against its
// Reference as it ends, and frees the buffers. The verdict (outcome.h)
// covers the whole program: CORRUPT if any operation ended OK with wrong
// bytes on any rank; otherwise hang, untyped, typed error or correct, from
// each rank's first error in program order.
#ifndef WEFT_HARNESS_PROGRAM_RUN_H_
#define WEFT_HARNESS_PROGRAM_RUN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "harness/outcome.h"
#include "harness/program.h"
#include "harness/sim_cluster.h"
#include "sim/world.h"

namespace weft::harness {

struct ProgramRunOptions {
  // Operation i's inputs come from seed data_seed + i.
  uint64_t data_seed = 1;
  // Deadline of each operation; 0: the group's timeout_ns.
  TimeNs timeout_ns = 0;
  // Virtual time the ranks keep serving their peers after the last rank
  // ended (the linger: late acknowledgements, aborts landing).
  TimeNs linger_ns = kNsPerMs;
};

struct ProgramRun {
  sim::RunResult run;
  TimeNs end_ns = 0;  // virtual time when the last rank ended its part
  // Operations every member ended OK and correct.
  uint32_t ops_correct = 0;
  uint64_t wrong_elements = 0;  // over every operation that ended OK
  // Per world rank, over its operations (first_error in program order).
  std::vector<RankOutcome> ranks;
  Outcome outcome;
};

// check_program()'s errors and those of the splits; otherwise the run,
// whatever its outcome. Leaves the cluster's groups failed when the run
// did not end correct.
absl::StatusOr<ProgramRun> run_program(SimCluster& cluster,
                                       const Program& program,
                                       const ProgramRunOptions& options);

}  // namespace weft::harness

#endif  // WEFT_HARNESS_PROGRAM_RUN_H_
