// weft-sim's subcommands. Each lives in its own file and is listed once in
// the table in main.cc, with the flag sets it accepts; a command gets argv
// with its own name removed (argv[0] stays the program) and returns the
// process exit code (cli_common.h: 0 ok, 1 the run found a problem, 2 bad
// input).
#ifndef WEFT_TOOLS_WEFT_SIM_COMMANDS_H_
#define WEFT_TOOLS_WEFT_SIM_COMMANDS_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tools/cli/flag_scope.h"

namespace weft::tools::weft_sim {

struct Command {
  std::string_view name;
  std::string_view summary;
  // The sets whose flags the command accepts; any other weft-sim flag is
  // bad input.
  cli::FlagSets flag_sets;
  int (*run)(int argc, char** argv);
};

// What parse_command_flags() came to: the arguments as given (normalised,
// argv[0] first, for reproduce lines), or the exit code to return at once.
struct CommandArgs {
  std::vector<std::string> given;
  std::optional<int> exit_code;
};

// Normalises and parses argv for `command` (cli_common.h). --help prints
// every command's flags, set by set, and exits 1 as absl's --help does; a
// flag in none of the sets main.cc lists for `command` is bad input (2).
CommandArgs parse_command_flags(int argc, char** argv,
                                std::string_view command);

// The command named on the command line ("study" in `weft-sim study`), or
// "" when none was and the default command runs.
std::string_view named_command();

// study_command.cc: --max_bytes.
extern const cli::FlagSet kStudyFlags;
// p2p_command.cc: --frames, --frame_bytes, --check_determinism.
extern const cli::FlagSet kP2pFlags;

// p2p_command.cc: point-to-point streams over every cabled pair.
int run_p2p(int argc, char** argv);
// study_command.cc: the default study (every collective, mesh and ring,
// faults on, one table).
int run_study(int argc, char** argv);
// run_command.cc: one collective, any op, size, dtype, algorithm and world.
int run_collective(int argc, char** argv);
// sweep_command.cc: swarm testing over many seeds against the oracles.
int run_sweep(int argc, char** argv);
// wiring_command.cc: --wiring_ranks, --wiring_cables, --max_loss (and
// sweep's --seeds, --first_seed).
extern const cli::FlagSet kWiringFlags;
// wiring_command.cc: the wiring sweep (discovery and the device file's
// check over random cablings).
int run_wiring(int argc, char** argv);
// shrink_command.cc: a failing sweep seed's faults reduced to a minimal
// scripted plan.
int run_shrink(int argc, char** argv);
// trace_merge_command.cc: per-rank hardware timelines joined into one.
int run_trace_merge(int argc, char** argv);

// launch_command.cc: --fabric, --host, -n, --timeout_s.
extern const cli::FlagSet kLaunchFlags;
// N ranks of a program, started as mpirun would, over the simulation
// server or TCP (launch.h).
int run_launch(int argc, char** argv);

#ifdef WEFT_HAVE_SIM_SERVER
// serve_command.cc (Linux): --socket, --on_deadlock, --on_crash,
// --connect_timeout_s.
extern const cli::FlagSet kServeFlags;
// The simulation server for verbs programs in processes of their own.
int run_serve(int argc, char** argv);
#endif

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_COMMANDS_H_
