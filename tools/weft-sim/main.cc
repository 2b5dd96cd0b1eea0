// weft-sim: the simulator's command-line tool. `weft-sim <command> [flags]`;
// with no command it runs the default one.
#include <algorithm>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/absl_compat.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/flag_parse.h"
#include "tools/cli/flag_scope.h"
#include "tools/cli/memory_check.h"
#include "tools/cli/progress.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-sim/collective_flags.h"
#include "tools/weft-sim/commands.h"
#include "tools/weft-sim/sim_json.h"
#include "tools/weft-sim/sweep_flags.h"

namespace weft::tools::weft_sim {
namespace {

// The sets each command accepts.
constexpr const cli::FlagSet* kStudySets[] = {
    &cli::kWorldFlags, &kStudyFlags, &cli::kMemoryFlags, &cli::kProgressFlags,
    &kJsonFlags};
constexpr const cli::FlagSet* kRunSets[] = {
    &cli::kWorldFlags, &kCollectiveFlags, &cli::kMemoryFlags, &kJsonFlags};
constexpr const cli::FlagSet* kP2pSets[] = {&cli::kWorldFlags, &kP2pFlags};
constexpr const cli::FlagSet* kSweepSets[] = {
    &kSweepFlags, &cli::kProgressFlags, &kJsonFlags};
constexpr const cli::FlagSet* kShrinkSets[] = {&kShrinkFlags};
constexpr const cli::FlagSet* kWiringSets[] = {&kWiringFlags};
#ifdef WEFT_HAVE_SIM_SERVER
constexpr const cli::FlagSet* kServeSets[] = {&cli::kWorldFlags, &kServeFlags};
constexpr const cli::FlagSet* kLaunchSets[] = {&cli::kWorldFlags, &kServeFlags,
                                               &kLaunchFlags};
#else
constexpr const cli::FlagSet* kLaunchSets[] = {&kWorldFlags, &kLaunchFlags};
#endif

// The dispatch table. The first entry is what `weft-sim` with no command
// (or with only flags) runs.
constexpr Command kCommands[] = {
    {"study",
     "every collective, mesh and ring, 4 KiB to 64 MiB, low-rate faults: one "
     "table, a trace, exit 0 if every outcome was allowed",
     kStudySets, run_study},
    {"run",
     "one collective (--op, --bytes, --dtype, --algorithm, ...) on any world, "
     "checked against a reference",
     kRunSets, run_collective},
    {"p2p",
     "point-to-point frame streams over every cabled pair, sequence-checked",
     kP2pSets, run_p2p},
    {"sweep",
     "swarm testing: --seeds N seeds, each its own world, collectives and "
     "faults, checked against the oracles; a table, replay lines, traces",
     kSweepSets, run_sweep},
    {"shrink",
     "a failing sweep seed's injected faults reduced to a minimal replayable "
     "fault plan (--seed S)",
     kShrinkSets, run_shrink},
    {"wiring",
     "the wiring sweep: --seeds N worlds whose true cabling differs from "
     "the device file; discovery must find the truth and the check name "
     "every difference",
     kWiringSets, run_wiring},
    {"trace-merge",
     "joins the per-rank timelines of a hardware run (WEFT_TRACE) into one "
     "Perfetto file on stdout: weft-sim trace-merge trace-*.json > all.json",
     {},
     run_trace_merge},
#ifdef WEFT_HAVE_SIM_SERVER
    {"serve",
     "the simulation server: one world whose ranks are processes of their "
     "own, running verbs programs over the simulated provider "
     "(WEFT_SIM_SERVER)",
     kServeSets, run_serve},
#endif
    {"launch",
     "starts N ranks of a program (--ranks=N -- PROGRAM ARGS), as mpirun "
     "does, over a simulation server (--fabric=sim, Linux; prints the trace "
     "hash) or over TCP on this machine (--fabric=tcp); prints each rank's "
     "exit",
     kLaunchSets, run_launch},
};

// Every set of every command, each once, in the table's order.
std::vector<const cli::FlagSet*> all_flag_sets() {
  std::vector<const cli::FlagSet*> out;
  for (const Command& c : kCommands) {
    for (const cli::FlagSet* set : c.flag_sets) {
      if (std::find(out.begin(), out.end(), set) == out.end())
        out.push_back(set);
    }
  }
  return out;
}

// The sets `command` accepts (none for a name not in the table).
cli::FlagSets flag_sets_of(std::string_view command) {
  for (const Command& c : kCommands) {
    if (c.name == command) return c.flag_sets;
  }
  return {};
}

// The commands that accept `set`: "study, run, p2p".
std::string users_of(const cli::FlagSet* set) {
  std::string out;
  for (const Command& c : kCommands) {
    if (std::find(c.flag_sets.begin(), c.flag_sets.end(), set) ==
        c.flag_sets.end()) {
      continue;
    }
    absl::StrAppend(&out, out.empty() ? "" : ", ", base::to_absl(c.name));
  }
  return out;
}

// The command named on the command line ("" when none was: the default
// command runs), set by dispatch().
std::string_view named;

// --help: the usage message, then every flag, set by set; after a command
// (weft-sim run --help), that command's summary and its own flags. Exits 0.
int print_help() {
  std::vector<const cli::FlagSet*> sets;
  if (named.empty()) {
    sets = all_flag_sets();
    std::printf("weft-sim: %s\n\n",
                std::string(absl::ProgramUsageMessage()).c_str());
  } else {
    for (const Command& c : kCommands) {
      if (c.name != named) continue;
      sets.assign(c.flag_sets.begin(), c.flag_sets.end());
      std::printf("weft-sim %.*s: %.*s\n\n", static_cast<int>(c.name.size()),
                  c.name.data(), static_cast<int>(c.summary.size()),
                  c.summary.data());
    }
  }
  std::vector<std::string> used_by;
  for (const cli::FlagSet* set : sets) used_by.push_back(users_of(set));
  std::printf("%s\n", cli::flags_help(sets, used_by).c_str());
  std::printf("--helpfull also lists absl's own flags (--flagfile, ...).\n");
  return cli::kExitOk;
}

std::string command_list() {
  std::string out;
  for (const Command& c : kCommands) {
    absl::StrAppend(&out, "  ", base::to_absl(c.name), "  ",
                    base::to_absl(c.summary), "\n");
  }
  return out;
}

void configure_usage() {
  absl::SetProgramUsageMessage(absl::StrCat(
      "deterministic RDMA fabric simulator\n\nusage: weft-sim [command] "
      "[--flag=value ...]\n"
      "commands (default: ",
      base::to_absl(kCommands[0].name), "):\n", command_list(),
      "flag names may use - or _ (--check-determinism, --check_determinism)"));
}

int dispatch(int argc, char** argv) {
  configure_usage();
  if (argc < 2 || argv[1][0] == '-') {
    return kCommands[0].run(argc, argv);
  }
  const std::string_view name = argv[1];
  for (const Command& c : kCommands) {
    if (c.name != name) continue;
    named = c.name;
    std::vector<char*> rest{argv[0]};
    rest.insert(rest.end(), argv + 2, argv + argc);
    rest.push_back(nullptr);
    return c.run(argc - 1, rest.data());
  }
  if (name == "help") {
    std::fputs(std::string(absl::ProgramUsageMessage()).c_str(), stdout);
    std::fputs("\n", stdout);
    return cli::kExitOk;
  }
  std::string names;
  for (const Command& c : kCommands) {
    absl::StrAppend(&names, names.empty() ? "" : ", ", base::to_absl(c.name));
  }
  return cli::bad_input(absl::StrCat("unknown command \"", base::to_absl(name),
                                     "\"; commands: ", names,
                                     " (weft-sim --help for flags)"));
}

}  // namespace

std::string_view named_command() { return named; }

CommandArgs parse_command_flags(int argc, char** argv,
                                std::string_view command) {
  absl::StatusOr<std::vector<std::string>> args =
      cli::normalise_flags(argc, argv);
  if (!args.ok()) return {.exit_code = cli::bad_input(args.status())};
  if (cli::wants_help(*args)) return {.exit_code = print_help()};
  if (cli::wants_version(*args)) {
    std::printf("%s\n", cli::version_line("weft-sim").c_str());
    return {.exit_code = cli::kExitOk};
  }
  CommandArgs out{.given = *args};
  cli::set_flags(*std::move(args));
  const std::vector<const cli::FlagSet*> all = all_flag_sets();
  const cli::FlagScope scope{"weft-sim", command, flag_sets_of(command), all};
  if (absl::Status s = cli::check_flag_scope(out.given, scope); !s.ok())
    return {.exit_code = cli::bad_input(s)};
  return out;
}

}  // namespace weft::tools::weft_sim

int main(int argc, char** argv) {
  return weft::tools::weft_sim::dispatch(argc, argv);
}
