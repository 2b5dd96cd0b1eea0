// weft-sim launch: N rank processes of a program on one machine, the way
// mpirun or mlx.launch starts them, on the fabric --fabric names: the
// simulation server and the simulated verbs provider (serve_command.cc,
// Linux only), or real TCP over loopback (tcp_launch.cc, Linux and macOS).
// launch_command.cc reads the command line and calls one of them; both
// start and wait for their ranks through RankProcesses.
#ifndef WEFT_TOOLS_WEFT_SIM_LAUNCH_H_
#define WEFT_TOOLS_WEFT_SIM_LAUNCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/cli/world_flags.h"

namespace weft::tools::weft_sim {

struct LaunchRequest {
  // One program (every rank runs it) or one per rank, argv each.
  std::vector<std::vector<std::string>> programs;
  uint32_t ranks = 0;
  uint64_t timeout_s = 0;  // wall clock, from the first rank's start
  cli::WorldFlags world;   // --ranks, --cables, and the simulated world
  std::string host;        // TCP: the address every rank listens on

  const std::vector<std::string>& program_of(uint32_t rank) const {
    return programs.size() == 1 ? programs[0] : programs[rank];
  }
};

// The ranks as TCP processes: a hostfile of 127.0.0.1 (or --host) and free
// ports, a secret, no server. The exit code.
int launch_on_tcp(const LaunchRequest& request);

#ifdef WEFT_HAVE_SIM_SERVER
// The ranks as verbs programs of the simulation server. The exit code.
int launch_on_sim(const LaunchRequest& request);
#endif

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_LAUNCH_H_
