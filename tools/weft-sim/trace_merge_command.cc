// weft-sim trace-merge: joins the per-rank timelines a hardware run wrote
// (WEFT_TRACE, timeline/timeline_recorder.h) into one Perfetto file on
// stdout, one track per rank and per link direction and cable.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/text_file.h"
#include "timeline/timeline.h"
#include "tools/cli/cli_common.h"
#include "tools/weft-sim/commands.h"

namespace weft::tools::weft_sim {
namespace {

// Largest timeline file read (one rank's trace of a long run is hundreds
// of MiB; merging holds every file and the result in memory).
constexpr size_t kMaxTimelineBytes = size_t{1} << 30;

}  // namespace

int run_trace_merge(int argc, char** argv) {
  // The files are positional; only the rest (--help, or a flag that does
  // not belong here) goes through the flag parser.
  std::vector<char*> flags{argv[0]};
  std::vector<std::string> names;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-') {
      flags.push_back(argv[i]);
    } else {
      names.emplace_back(argv[i]);
    }
  }
  const int flag_count = static_cast<int>(flags.size());
  flags.push_back(nullptr);
  const CommandArgs args =
      parse_command_flags(flag_count, flags.data(), "trace-merge");
  if (args.exit_code.has_value()) return *args.exit_code;
  if (names.empty()) {
    return cli::bad_input(
        "trace-merge needs the timeline files to merge: weft-sim trace-merge "
        "trace-0.json trace-1.json > all.json");
  }
  std::vector<std::string> documents;
  for (const std::string& name : names) {
    absl::StatusOr<std::string> text =
        base::read_text_file(name, kMaxTimelineBytes, "timeline");
    if (!text.ok()) return cli::bad_input(text.status());
    documents.push_back(*std::move(text));
  }
  absl::StatusOr<std::string> merged =
      timeline::merge_timelines(names, documents);
  if (!merged.ok()) return cli::bad_input(merged.status());
  std::fwrite(merged->data(), 1, merged->size(), stdout);
  std::fputc('\n', stdout);
  return cli::kExitOk;
}

}  // namespace weft::tools::weft_sim
