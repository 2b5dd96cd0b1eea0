// weft-sim sweep's results as JSON (--json=FILE; docs/faults.md, "Sweep
// JSON"): every seed's case, outcome and faults by kind, then the tally
// the sweep prints (no wall time, so the same flags write the same file).
//
//   {"format_version", "tool": "weft-sim", "command": "sweep", "seeds",
//    "first_seed", "shard", "recovery", "cases": [{"seed", "case":
//      {"ranks", "topology", "cables", "max_frame_bytes", "depth",
//      "ring_directions", "send_queue_bytes", "mesh_exchange_max_bytes",
//      "recovery": {"min_rto_ns", "initial_rto_ns", "max_rto_ns",
//      "max_retries"}, "link", "subgroups": [[rank]], "ops": [{"op",
//      "bytes", "dtype", "algorithm", "root", "in_place", "group",
//      "async"}], "expected_ns", "deadline_ns", "faults": {"loss",
//      "duplicate", "reorder", "error", "until_ns", "scripted": [text]}},
//      "outcome": {"verdict", "summary"}, "ops_correct", "fatal", "end_ns",
//      "faults_by_kind", "failure" (null when it passed), "replay" (null
//      when it passed)}],
//    "outcome_counts", "ranks_disagree", "nondeterministic" (null unless
//    --check-determinism), "not_live", "liveness": {"seeds", "correct"},
//    "failed", "trace_hash"}
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_JSON_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_JSON_H_

#include <string>

#include "nlohmann/json.hpp"
#include "tools/weft-sim/sweep_case.h"
#include "tools/weft-sim/sweep_flags.h"
#include "tools/weft-sim/sweep_run.h"
#include "tools/weft-sim/sweep_tally.h"

namespace weft::tools::weft_sim {

// The sweep document's format_version (docs/json.md): 4 since the shared
// vocabulary, which folded the sweep's own "sweep_version" into it ("tool"
// added; the verdict "time limit" counted). Before, format_version was 1
// and sweep_version 3 since operations may run on registered buffers
// ("registered"), 2 since seeds draw programs (1: a list of at most three
// collectives, "ops_run" and "target").
inline constexpr int kSweepJsonFormatVersion = 4;

// One seed: its case, how it ended, and (when it failed an oracle, `why`
// not empty) why and the command that replays it.
nlohmann::ordered_json sweep_seed_json(const SweepCase& c, const SweepRun& run,
                                       const std::string& why,
                                       const std::string& replay);

// The whole sweep: the flags, `cases` (sweep_seed_json of each seed), the
// tally.
nlohmann::ordered_json sweep_json(const SweepFlags& flags,
                                  nlohmann::ordered_json cases,
                                  const SweepTally& tally);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_JSON_H_
