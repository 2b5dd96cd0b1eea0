// weft-sim run: one collective (any op, size, dtype, algorithm) on a world
// built from the shared flags (any topology, link, faults, seed), checked
// against the reference, printed as one row of the study's table.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "harness/sim_cluster.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-sim/collective_flags.h"
#include "tools/weft-sim/commands.h"
#include "tools/weft-sim/row_runner.h"
#include "tools/weft-sim/sim_json.h"

namespace weft::tools::weft_sim {
namespace {

// Most ranks whose errors are listed one by one, and most characters of
// each (deadline errors list every outstanding frame).
constexpr uint32_t kMaxListedRanks = 16;
constexpr size_t kMaxErrorChars = 300;

void print_rank_errors(const harness::CaseRun& run) {
  uint32_t listed = 0;
  for (uint32_t r = 0; r < run.ranks.size() && listed < kMaxListedRanks; ++r) {
    const absl::Status& e = run.ranks[r].first_error;
    if (e.ok()) continue;
    std::string text(e.message());
    if (text.size() > kMaxErrorChars)
      text = text.substr(0, kMaxErrorChars) + "...";
    std::printf("  rank %u: %s: %s\n", r,
                absl::StatusCodeToString(e.code()).c_str(), text.c_str());
    ++listed;
  }
}

void print_row(const StudyRow& row, const cli::WorldFlags& flags,
               const std::vector<std::string>& args) {
  std::printf("weft-sim run: %u ranks, %s\n", flags.options.topology.ranks(),
              world_summary(flags.options, flags.link_name).c_str());
  std::fputs(study_header().c_str(), stdout);
  std::printf("%s\n", study_row_line(row).c_str());
  const harness::CaseRun& run = row.run;
  if (row.spec.in_place && row.iterations > 1) {
    std::printf(
        "output not checked: in place, each iteration overwrites "
        "the next one's input\n");
  }
  if (run.outcome.verdict != harness::Verdict::kCorrect) print_rank_errors(run);
  if (run.outcome.verdict == harness::Verdict::kHang ||
      run.outcome.verdict == harness::Verdict::kTimeLimit) {
    std::printf("%s\n", run.run.report.c_str());
  }
  if (!run.outcome.allowed()) {
    std::printf("reproduce: %s\n",
                reproduce_command(
                    row, reproduce_world_args(args, /*without_seed=*/false))
                    .c_str());
  }
  if (!flags.trace_path.empty()) {
    std::printf("trace written to %s (open it in ui.perfetto.dev)\n",
                flags.trace_path.c_str());
  }
  std::printf("trace hash: %s\n", hash_hex(row.trace_hash).c_str());
}

// The row as JSON: the same fields the printed row and footer hold.
nlohmann::ordered_json run_json(const StudyRow& row,
                                const cli::WorldFlags& flags,
                                const std::vector<std::string>& args) {
  nlohmann::ordered_json doc = json_document("run");
  doc["ranks"] = flags.options.topology.ranks();
  doc["world"] = world_summary(flags.options, flags.link_name);
  doc["rows"] = nlohmann::ordered_json::array({row_json(row)});
  uint64_t by_verdict[harness::kVerdictCount] = {};
  ++by_verdict[static_cast<size_t>(row.run.outcome.verdict)];
  doc["outcome_counts"] = verdict_counts_json(by_verdict);
  doc["reproduce"] = nlohmann::ordered_json::array();
  if (!row.run.outcome.allowed())
    doc["reproduce"].push_back(reproduce_command(
        row, reproduce_world_args(args, /*without_seed=*/false)));
  doc["trace_hash"] = hash_hex(row.trace_hash);
  return doc;
}

}  // namespace

int run_collective(int argc, char** argv) {
  const CommandArgs args = parse_command_flags(argc, argv, "run");
  if (args.exit_code) return *args.exit_code;
  absl::StatusOr<cli::WorldFlags> flags = cli::world_flags();
  if (!flags.ok()) return cli::bad_input(flags.status());
  absl::StatusOr<CollectiveFlags> collective = collective_flags();
  if (!collective.ok()) return cli::bad_input(collective.status());
  absl::StatusOr<std::string> json = json_path();
  if (!json.ok()) return cli::bad_input(json.status());
  RowRequest request;
  request.world = flags->options;
  request.topology_name = flags->topology_name;
  request.spec = collective->spec;
  request.group = collective->group;
  request.iterations = collective->iterations;
  request.timeout_ns = collective->timeout_ns;
  request.trace_path = flags->trace_path;
  if (absl::Status s =
          harness::check_collective(request.spec, request.world.topology,
                                    request.group, flags->wording());
      !s.ok()) {
    return cli::bad_input(s);
  }
  if (absl::Status s = check_row_memory(request, "this run", /*announce=*/true);
      !s.ok())
    return cli::bad_input(s);
  absl::StatusOr<StudyRow> row = run_row(request);
  if (!row.ok()) return cli::bad_input(row.status());
  print_row(*row, *flags, args.given);
  if (!json->empty()) {
    if (absl::Status s = write_json(*json, run_json(*row, *flags, args.given));
        !s.ok()) {
      return cli::bad_input(s);
    }
  }
  uint64_t by_verdict[harness::kVerdictCount] = {};
  ++by_verdict[static_cast<size_t>(row->run.outcome.verdict)];
  return cli::verdicts_exit_code(by_verdict);
}

}  // namespace weft::tools::weft_sim
