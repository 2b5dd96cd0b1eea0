// The table weft-sim's study and `weft-sim run` print: one row per
// collective run with its topology, op, size, dtype, algorithm, simulated
// time, algorithm and bus bandwidth, frames, faults injected and detected,
// and outcome (README's "What the outputs mean" explains each column).
#ifndef WEFT_TOOLS_WEFT_SIM_STUDY_TABLE_H_
#define WEFT_TOOLS_WEFT_SIM_STUDY_TABLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/collective_spec.h"
#include "harness/sim_cluster.h"
#include "sim/world.h"

namespace weft::tools::weft_sim {

struct StudyRow {
  std::string topology;  // "mesh", "ring", or the device JSON path
  harness::CollectiveSpec spec;
  uint32_t iterations = 1;  // the time and bandwidths are per iteration
  harness::CaseRun run;
  uint64_t trace_hash = 0;
};

// "link tb5 (latency_ns=3793,...), faults loss=1e-05 ..., seed 1": the
// world every row of a table shares.
std::string world_summary(const sim::WorldOptions& world,
                          const std::string& link_name);

// A row's figures as the table shows them, before formatting: the
// simulated time per iteration, and the bandwidths (none where the table
// shows "-": the run was not correct or moved no bytes).
struct RowFigures {
  double time_us = 0;
  std::optional<double> algbw_gb_per_s;
  std::optional<double> busbw_gb_per_s;
};
RowFigures row_figures(const StudyRow& row);

// The header line and the units line under it.
std::string study_header();
std::string study_row_line(const StudyRow& row);

// The command line that reruns `row` alone: `weft-sim run`, the row's
// collective flags, then `world_args` (the world's flags, as given).
std::string reproduce_command(const StudyRow& row,
                              const std::string& world_args);

// The arguments of `args` (argv, argv[0] first) that `weft-sim run` takes
// from a study or a run for reproduce_command: the world's flags and the
// memory check, as given, but --trace (and --seed when `without_seed`, for
// lines that give each row's seed). The study's own flags (--max_bytes,
// --json, --progress) and the collective's are left out: run would refuse
// them, repeat them, or, for --json, overwrite the study's file.
std::string reproduce_world_args(const std::vector<std::string>& args,
                                 bool without_seed);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_STUDY_TABLE_H_
