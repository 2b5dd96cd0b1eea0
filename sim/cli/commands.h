// weft-sim's subcommands. Each lives in its own file and is listed once in
// the table in main.cc; a command gets argv with its own name removed
// (argv[0] stays the program) and returns the process exit code
// (cli_common.h: 0 ok, 1 the run found a problem, 2 bad input).
#ifndef WEFT_SIM_CLI_COMMANDS_H_
#define WEFT_SIM_CLI_COMMANDS_H_

#include <string_view>

namespace weft::sim::cli {

struct Command {
  std::string_view name;
  std::string_view summary;
  int (*run)(int argc, char** argv);
};

// p2p_command.cc: point-to-point streams over every cabled pair.
int run_p2p(int argc, char** argv);
// study_command.cc: the default study (every collective, mesh and ring,
// faults on, one table).
int run_study(int argc, char** argv);
// run_command.cc: one collective, any op, size, dtype, algorithm and world.
int run_collective(int argc, char** argv);
// sweep_command.cc: swarm testing over many seeds against the oracles.
int run_sweep(int argc, char** argv);
// shrink_command.cc: a failing sweep seed's faults reduced to a minimal
// scripted plan.
int run_shrink(int argc, char** argv);

}  // namespace weft::sim::cli

#endif  // WEFT_SIM_CLI_COMMANDS_H_
