// weft-sim launch: reads the command line (flags before "--", the programs
// after it, ':' between one rank's program and the next) and starts the
// ranks on the fabric --fabric names (launch.h).
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-sim/commands.h"
#include "tools/weft-sim/launch.h"
#include "tools/weft-sim/rank_processes.h"

ABSL_DECLARE_FLAG(std::string, ranks);
ABSL_DECLARE_FLAG(std::string, cables);

ABSL_FLAG(std::string, fabric, "sim",
          "launch: sim (the simulation server; the ranks run verbs programs "
          "over weft's simulated provider, with WEFT_FABRIC=verbs; Linux) or "
          "tcp (real TCP on this "
          "machine, no server; of the world flags only --ranks and --cables "
          "apply: each rank gets MLX_HOSTFILE, a JSON hostfile of --cables "
          "addresses per rank on --host, on ports free when chosen, in a "
          "temporary directory removed at exit; MLX_RANK; WEFT_COORDINATOR; "
          "WEFT_SECRET, 32 random bytes in hex, new each launch; and "
          "WEFT_FABRIC=tcp). A port another program takes between launch's "
          "choice and the rank's bind is reported by that rank, naming the "
          "address");
ABSL_FLAG(std::string, host, "127.0.0.1",
          "launch --fabric=tcp: the address every rank listens on, on this "
          "machine: 127.0.0.1 or ::1 (the side channel's WEFT_COORDINATOR is "
          "on 127.0.0.1 either way)");
ABSL_FLAG(std::string, n, "0",
          "launch: ranks to start (default: --ranks); each PROGRAM given "
          "after -- and separated by ':' is one rank, one PROGRAM is every "
          "rank");
ABSL_FLAG(std::string, timeout_s, "600",
          "launch: wall-clock seconds the ranks may run; then every rank "
          "still running is killed and launch exits 1 naming them "
          "(1..86400). With --fabric=tcp a rank that exits other than 0 "
          "ends the launch too: the others get 10 seconds to exit, then are "
          "killed");

namespace weft::tools::weft_sim {

const cli::FlagSet kLaunchFlags("launch", "process launcher", FLAGS_fabric,
                                FLAGS_host, FLAGS_n, FLAGS_timeout_s);

namespace {

// The world flags TCP ranks use; the rest describe a simulated world.
const cli::FlagSet kTcpWorldFlags("tcp world", "TCP ranks", FLAGS_ranks,
                                  FLAGS_cables);

// Bad input for a simulator-only flag given with --fabric=tcp.
absl::Status check_tcp_flags(const std::vector<std::string>& given) {
  for (size_t i = 1; i < given.size(); ++i) {
    const std::string name = cli::flag_name(given[i]);
    if (name.empty()) continue;
    const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr || kTcpWorldFlags.contains(*flag) ||
        kLaunchFlags.contains(*flag)) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is the simulator's: weft-sim launch --fabric=tcp takes --ranks, "
        "--cables, -n, --host and --timeout_s",
        given[i]));
  }
  return absl::OkStatus();
}

}  // namespace

int run_launch(int argc, char** argv) {
  int split = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      split = i;
      break;
    }
  }
  LaunchRequest request;
  request.programs.emplace_back();
  for (int i = split + 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == ":") {
      request.programs.emplace_back();
    } else {
      request.programs.back().push_back(argv[i]);
    }
  }
  CommandArgs args = parse_command_flags(split, argv, "launch");
  if (args.exit_code) return *args.exit_code;
  for (const auto& p : request.programs) {
    if (p.empty()) {
      return cli::bad_input(
          "give the program after --: weft-sim launch -n 2 -- PROGRAM ARGS "
          "(several programs, one per rank, separated by ':')");
    }
    if (absl::Status s = check_runnable(p[0]); !s.ok()) {
      return cli::bad_input(s);
    }
  }
  const std::string fabric = absl::GetFlag(FLAGS_fabric);
  if (fabric != "sim" && fabric != "tcp") {
    return cli::bad_input(
        absl::StrFormat("--fabric=%s is neither sim nor tcp", fabric));
  }
  if (fabric == "tcp") {
    if (absl::Status s = check_tcp_flags(args.given); !s.ok()) {
      return cli::bad_input(s);
    }
  }
  absl::StatusOr<cli::WorldFlags> world = cli::world_flags();
  if (!world.ok()) return cli::bad_input(world.status());
  const uint32_t world_ranks = world->options.topology.ranks();
  absl::StatusOr<uint64_t> n =
      cli::parse_uint("n", absl::GetFlag(FLAGS_n), 0, world_ranks);
  if (!n.ok()) return cli::bad_input(n.status());
  request.ranks = *n == 0 ? world_ranks : static_cast<uint32_t>(*n);
  if (request.programs.size() > 1 && request.programs.size() != request.ranks) {
    return cli::bad_input(absl::StrFormat(
        "%u programs separated by ':' for %u ranks: give one program, or "
        "one per rank",
        request.programs.size(), request.ranks));
  }
  absl::StatusOr<uint64_t> timeout =
      cli::parse_uint("timeout_s", absl::GetFlag(FLAGS_timeout_s), 1, 86400);
  if (!timeout.ok()) return cli::bad_input(timeout.status());
  request.timeout_s = *timeout;
  request.world = *std::move(world);
  request.host = absl::GetFlag(FLAGS_host);
  if (fabric == "tcp") return launch_on_tcp(request);
  if (request.host != "127.0.0.1") {
    return cli::bad_input(
        "--host is for --fabric=tcp; the simulation server's "
        "ranks meet on a Unix socket");
  }
#ifdef WEFT_HAVE_SIM_SERVER
  return launch_on_sim(request);
#else
  return cli::bad_input(
      "the simulation server (--fabric=sim, the default) is built on Linux "
      "only; here run the ranks over TCP: weft-sim launch --fabric=tcp");
#endif
}

}  // namespace weft::tools::weft_sim
