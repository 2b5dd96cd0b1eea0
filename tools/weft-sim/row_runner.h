// One row of weft-sim's study (or the whole of `weft-sim run`): a fresh
// simulated cluster from the world options, one collective run on it, the
// run's trace hash, and optionally its Perfetto trace written to a file.
// Each row has its own world, so a row reruns alone from its command line
// (study_table.h's reproduce_command) with the same hash.
#ifndef WEFT_TOOLS_WEFT_SIM_ROW_RUNNER_H_
#define WEFT_TOOLS_WEFT_SIM_ROW_RUNNER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/memory_estimate.h"
#include "sim/world.h"
#include "tools/weft-sim/study_table.h"

namespace weft::tools::weft_sim {

struct RowRequest {
  sim::WorldOptions world;  // keep_trace_events is set from trace_path
  std::string topology_name;
  harness::CollectiveSpec spec;
  GroupOptions group;
  uint32_t iterations = 1;
  TimeNs timeout_ns = 0;   // 0: the group's default
  std::string trace_path;  // empty: no trace file
};

// InvalidArgument (or the world's error) when the row cannot run as asked;
// otherwise the row, whatever its outcome. A trace file that cannot be
// written is an error too.
absl::StatusOr<StudyRow> run_row(const RowRequest& request);

// The row's memory estimate (harness/memory_estimate.h), or nullopt when
// the row cannot run at all (run_row() says why).
std::optional<harness::MemoryEstimate> row_memory_estimate(
    const RowRequest& request);

// ResourceExhausted (tools/cli/memory_check.h), one line naming `what`,
// when the row's memory estimate exceeds --max_memory or the machine's
// memory; InvalidArgument for a bad --max_memory. A row that cannot run
// at all passes: run_row() says why. With `announce`, a big row's estimate
// is printed on stderr first (announce_memory()).
absl::Status check_row_memory(const RowRequest& request,
                              const std::string& what, bool announce);

// FNV-1a over a sequence of 64-bit hashes (the study's one hash of all its
// rows' traces).
uint64_t fold_hash(uint64_t folded, uint64_t hash);
inline constexpr uint64_t kFoldHashStart = 0xcbf29ce484222325ull;
std::string hash_hex(uint64_t hash);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_ROW_RUNNER_H_
