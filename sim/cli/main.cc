// weft-sim: the simulator's command-line tool. `weft-sim <command> [flags]`;
// with no command it runs the default one.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "fabric/absl_compat.h"
#include "sim/cli/cli_common.h"
#include "sim/cli/commands.h"

namespace weft::sim::cli {
namespace {

// The dispatch table. The first entry is what `weft-sim` with no command
// (or with only flags) runs.
constexpr Command kCommands[] = {
    {"study",
     "every collective, mesh and ring, 4 KiB to 64 MiB, low-rate faults: one "
     "table, a trace, exit 0 if every outcome was allowed",
     run_study},
    {"run",
     "one collective (--op, --bytes, --dtype, --algorithm, ...) on any world, "
     "checked against a reference",
     run_collective},
    {"p2p",
     "point-to-point frame streams over every cabled pair, sequence-checked",
     run_p2p},
    {"sweep",
     "swarm testing: --seeds N seeds, each its own world, collectives and "
     "faults, checked against the oracles; a table, replay lines, traces",
     run_sweep},
    {"shrink",
     "a failing sweep seed's injected faults reduced to a minimal replayable "
     "fault plan (--seed S)",
     run_shrink},
};

std::string command_list() {
  std::string out;
  for (const Command& c : kCommands) {
    absl::StrAppend(&out, "  ", to_absl(c.name), "  ", to_absl(c.summary),
                    "\n");
  }
  return out;
}

void configure_usage() {
  absl::SetProgramUsageMessage(absl::StrCat(
      "deterministic RDMA fabric simulator\n\nusage: weft-sim [command] "
      "[--flag=value ...]\n"
      "commands (default: ",
      to_absl(kCommands[0].name), "):\n", command_list(),
      "flag names may use - or _ (--check-determinism, --check_determinism)"));
  absl::FlagsUsageConfig config;
  config.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "sim/cli/");
  };
  config.contains_helpshort_flags = config.contains_help_flags;
  config.normalize_filename = [](absl::string_view file) {
    const size_t at = file.rfind("sim/cli/");
    return std::string(at == absl::string_view::npos ? file : file.substr(at));
  };
  absl::SetFlagsUsageConfig(config);
}

int dispatch(int argc, char** argv) {
  configure_usage();
  if (argc < 2 || argv[1][0] == '-') {
    return kCommands[0].run(argc, argv);
  }
  const std::string_view name = argv[1];
  for (const Command& c : kCommands) {
    if (c.name != name) continue;
    std::vector<char*> rest{argv[0]};
    rest.insert(rest.end(), argv + 2, argv + argc);
    rest.push_back(nullptr);
    return c.run(argc - 1, rest.data());
  }
  if (name == "help") {
    std::fputs(std::string(absl::ProgramUsageMessage()).c_str(), stdout);
    std::fputs("\n", stdout);
    return kExitOk;
  }
  std::string names;
  for (const Command& c : kCommands) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", to_absl(c.name));
  }
  return bad_input(absl::StrCat("unknown command \"", to_absl(name),
                                "\"; commands: ", names,
                                " (weft-sim --help for flags)"));
}

}  // namespace
}  // namespace weft::sim::cli

int main(int argc, char** argv) { return weft::sim::cli::dispatch(argc, argv); }
