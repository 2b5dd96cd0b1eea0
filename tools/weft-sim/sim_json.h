// weft-sim's results as JSON (--json=FILE, the FlagSet kJsonFlags) for
// study, run and sweep: what the command prints, as typed fields, in weft's
// shared JSON vocabulary (docs/json.md). The format is documented in
// docs/simulator.md ("JSON output"), sweep's in docs/faults.md;
// format_version changes when a field changes meaning or goes away.
//
//   study, run: {"format_version", "tool": "weft-sim", "command", "ranks",
//     "world",
//     "rows": [{"topology", "op", "bytes", "dtype", "algorithm", "time_us",
//               "algbw_gb_per_s", "busbw_gb_per_s" (null where the table
//               shows "-"), "frames", "faults_injected", "detected",
//               "outcome": {"verdict", "summary", "cause", "rank", "peer"},
//               "trace_hash"}],
//     "outcome_counts": {verdict: count}, "reproduce": [...],
//     "trace_hash"}
//   sweep: sweep_json.h.
#ifndef WEFT_TOOLS_WEFT_SIM_SIM_JSON_H_
#define WEFT_TOOLS_WEFT_SIM_SIM_JSON_H_

#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/outcome.h"
#include "nlohmann/json.hpp"
#include "tools/cli/flag_scope.h"
#include "tools/weft-sim/study_table.h"

namespace weft::tools::weft_sim {

// study and run: 2 since the shared vocabulary ("tool" added) and the
// verdict "time limit".
inline constexpr int kJsonFormatVersion = 2;

// --json.
extern const cli::FlagSet kJsonFlags;

// --json's path ("" when not given), checked writable before anything
// runs: InvalidArgument naming the flag when the directory is missing or
// not writable, or the file is not writable.
absl::StatusOr<std::string> json_path();

// The document's head: format_version, tool and command.
nlohmann::ordered_json json_document(const std::string& command,
                                     int format_version = kJsonFormatVersion);

// One row of the study's table.
nlohmann::ordered_json row_json(const StudyRow& row);

// An outcome: verdict, summary and, for a typed error, cause, rank and
// peer (null where none).
nlohmann::ordered_json outcome_json(const harness::Outcome& outcome);

// {"correct": n, "typed error": n, ...}: every verdict, in table order.
nlohmann::ordered_json verdict_counts_json(
    std::span<const uint64_t> by_verdict);

// Writes `doc` to `path` (indented, a newline at the end).
absl::Status write_json(const std::string& path,
                        const nlohmann::ordered_json& doc);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_SIM_JSON_H_
