// weft-sim serve and weft-sim launch: the simulation server for verbs
// programs in processes of their own (sim_server/fabric_server.h).
//
//   weft-sim serve --ranks=2 [world flags] [--socket=PATH]
//   weft-sim launch -n 2 [world flags] -- PROGRAM ARGS [: PROGRAM ARGS ...]
//
// `serve` listens and serves until every rank has come and gone; `launch`
// also starts the ranks, each with WEFT_SIM_SERVER, WEFT_SIM_RANK, a library
// path that loads the simulated provider as libibverbs.so.1, and JACCL's
// group variables (JACCL_RANK, JACCL_IBV_DEVICES with the world's device
// JSON, JACCL_COORDINATOR on loopback), the way mpirun starts an MPI job.
// Linux only, as the provider is.
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim_server/fabric_server.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-sim/commands.h"
#include "tools/weft-sim/free_ports.h"
#include "tools/weft-sim/launch.h"
#include "tools/weft-sim/rank_processes.h"
#include "tools/weft-sim/stop_signals.h"
#include "tools/weft-sim/temp_dir.h"

ABSL_FLAG(std::string, socket, "",
          "serve, launch: the socket to listen on (default: a new directory "
          "only this user can open, under $TMPDIR or /tmp)");
ABSL_FLAG(std::string, on_deadlock, "end",
          "serve, launch: when every rank waits and nothing is in flight, "
          "after the report: end (the ranks' processes exit 75) or leave "
          "(every wait returns at once, so programs' own timeouts fire)");
ABSL_FLAG(std::string, on_crash, "error",
          "serve, launch: a rank the fault plan crashes: error (its verbs "
          "calls fail from then on) or kill (SIGKILL to its process)");
ABSL_FLAG(std::string, connect_timeout_s, "60",
          "serve, launch: seconds the ranks have to connect, from the first "
          "connection (1..3600)");
ABSL_FLAG(std::string, hold_report_s, "5",
          "serve, launch: when ranks have waited on the fabric this many "
          "seconds of wall time while another rank holds virtual time back "
          "(it computes, sleeps, waits on something else or has not "
          "connected), name that rank and its last verbs call on stderr, "
          "once; the run is unchanged (0: never; 0..3600)");
namespace weft::tools::weft_sim {

const cli::FlagSet kServeFlags("serve", "simulation server", FLAGS_socket,
                               FLAGS_on_deadlock, FLAGS_on_crash,
                               FLAGS_connect_timeout_s, FLAGS_hold_report_s);

namespace {

using sim_server::FabricServer;
using sim_server::ServeResult;
using sim_server::ServerOptions;

absl::StatusOr<sim_server::ServerOptions> server_options(
    const cli::WorldFlags& world) {
  sim_server::ServerOptions o;
  o.world = world.options;
  o.world.keep_trace_events = !world.trace_path.empty();
  const std::string deadlock = absl::GetFlag(FLAGS_on_deadlock);
  if (deadlock == "end") {
    o.on_deadlock = ServerOptions::OnDeadlock::kEnd;
  } else if (deadlock == "leave") {
    o.on_deadlock = ServerOptions::OnDeadlock::kLeave;
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("--on_deadlock=%s is neither end nor leave", deadlock));
  }
  const std::string crash = absl::GetFlag(FLAGS_on_crash);
  if (crash == "error") {
    o.on_crash = ServerOptions::OnCrash::kError;
  } else if (crash == "kill") {
    o.on_crash = ServerOptions::OnCrash::kKill;
  } else {
    return absl::InvalidArgumentError(
        absl::StrFormat("--on_crash=%s is neither error nor kill", crash));
  }
  absl::StatusOr<uint64_t> timeout = cli::parse_uint(
      "connect_timeout_s", absl::GetFlag(FLAGS_connect_timeout_s), 1, 3600);
  if (!timeout.ok()) return timeout.status();
  o.connect_timeout = std::chrono::seconds(*timeout);
  absl::StatusOr<uint64_t> hold = cli::parse_uint(
      "hold_report_s", absl::GetFlag(FLAGS_hold_report_s), 0, 3600);
  if (!hold.ok()) return hold.status();
  o.hold_report = std::chrono::seconds(*hold);
  return o;
}

// Prints the end of a run (and writes the trace); the exit code. A run a
// signal stopped (`signal` not 0) ends "interrupted by SIGINT".
int finish(const FabricServer& server, const ServeResult& result,
           const cli::WorldFlags& world, int signal) {
  std::string outcome = "finished";
  if (result.outcome == ServeResult::Outcome::kDeadlock) outcome = "deadlock";
  if (result.outcome == ServeResult::Outcome::kTimeLimit) {
    outcome = "time limit";
  }
  if (result.outcome == ServeResult::Outcome::kStopped) outcome = "stopped";
  if (result.outcome == ServeResult::Outcome::kMissingRanks) {
    outcome = "ranks missing";
  }
  if (signal != 0) {
    outcome = absl::StrCat("interrupted by ", StopSignals::name(signal));
  }
  std::printf(
      "weft-sim: %s at virtual time %.3f us, %u faults injected, "
      "trace hash %s\n",
      outcome.c_str(), static_cast<double>(result.end_ns) / kNsPerUs,
      static_cast<unsigned>(server.world().injected_faults().size()),
      server.world().trace().hash_hex().c_str());
  if (!world.trace_path.empty()) {
    if (absl::Status s =
            server.world().trace().write_perfetto_json(world.trace_path);
        !s.ok()) {
      std::fprintf(stderr, "weft-sim: %s\n", std::string(s.message()).c_str());
      return cli::kExitFailed;
    }
    std::printf("trace written to %s\n", world.trace_path.c_str());
  }
  std::fflush(stdout);
  if (signal != 0) return StopSignals::exit_code();
  return result.outcome == ServeResult::Outcome::kFinished ? cli::kExitOk
                                                           : cli::kExitFailed;
}

// Where the drop-in libibverbs.so.1 lives: $WEFT_SIM_DROPIN_DIR, else the
// one that belongs with this weft-sim, found relative to it: an installed
// weft-sim's <libdir>/weft/dropin, a build tree's sim_verbs/dropin. Never
// another tree's: an installation must not run what a rebuild of the
// checkout it came from made.
std::optional<std::string> dropin_dir() {
  std::error_code ec;
  std::vector<std::filesystem::path> candidates;
  if (const char* dir = std::getenv("WEFT_SIM_DROPIN_DIR")) {
    candidates.emplace_back(dir);
  }
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(self.parent_path() / WEFT_DROPIN_INSTALLED_FROM_BIN);
#ifdef WEFT_DROPIN_BUILD_FROM_BIN
    candidates.push_back(self.parent_path() / WEFT_DROPIN_BUILD_FROM_BIN);
#endif
  }
  for (const std::filesystem::path& candidate : candidates) {
    if (std::filesystem::exists(candidate / "libibverbs.so.1", ec)) {
      return candidate.lexically_normal().string();
    }
  }
  return std::nullopt;
}

// What every rank gets besides its rank: the server's socket, the library
// path, and JACCL's group environment (device JSON of the world's
// topology, a coordinator on loopback) unless the caller set it.
struct LaunchEnv {
  std::string socket;
  std::string dropin;
  std::string devices_json;
  std::string coordinator;
  uint32_t ranks = 0;
};

std::vector<EnvSetting> rank_env(const LaunchEnv& env, uint32_t rank) {
  const std::string r = std::to_string(rank);
  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string path =
      old != nullptr && *old != '\0' ? env.dropin + ":" + old : env.dropin;
  // JACCL's and MLX's names for the same facts, as mpirun or mlx.launch
  // would set them (the rank always; the rest unless already set).
  return {{sim_server::kServerVariable, env.socket},
          {"WEFT_SIM_RANK", r},
          {"JACCL_RANK", r},
          {"MLX_RANK", r},
          {"JACCL_IBV_DEVICES", env.devices_json, true},
          {"MLX_IBV_DEVICES", env.devices_json, true},
          {"JACCL_COORDINATOR", env.coordinator, true},
          {"MLX_JACCL_COORDINATOR", env.coordinator, true},
          // The group's size, which a device variable of `auto` leaves to
          // the launcher (docs/wiring.md).
          {"WEFT_SIZE", std::to_string(env.ranks), true},
          {"LD_LIBRARY_PATH", path},
          {"WEFT_VERBS_LIBRARY", env.dropin + "/libibverbs.so.1"},
          // launch's word on the fabric, which weft's programs follow
          // (weft-bench, ProcessGroup, jaccl::init): verbs, over the
          // simulated provider.
          {"WEFT_FABRIC", "verbs"}};
}

// Ranks whose process ended before it made a verbs call: the run ends as
// "ranks missing", and one line says why (a program that does its RDMA
// other than through the simulated provider, or none at all).
void explain_missing(const ServeResult& result, const RankProcesses& ranks) {
  std::string ended;
  for (uint32_t missing : result.never_connected) {
    for (const RankProcess& r : ranks.ranks()) {
      if (r.rank != missing || !r.status) continue;
      absl::StrAppendFormat(&ended, "%s%u (%s)", ended.empty() ? "" : ", ",
                            r.rank, describe_status(*r.status));
    }
  }
  if (ended.empty()) return;
  std::fprintf(stderr,
               "weft-sim launch: rank(s) %s ended without a verbs call to "
               "the simulated world, so the run ends as ranks missing: under "
               "--fabric=sim every rank does its RDMA through weft's "
               "simulated provider (LD_LIBRARY_PATH, WEFT_VERBS_LIBRARY; weft "
               "programs follow WEFT_FABRIC=verbs)\n",
               ended.c_str());
}

}  // namespace

int run_serve(int argc, char** argv) {
  CommandArgs args = parse_command_flags(argc, argv, "serve");
  if (args.exit_code) return *args.exit_code;
  absl::StatusOr<cli::WorldFlags> world = cli::world_flags();
  if (!world.ok()) return cli::bad_input(world.status());
  absl::StatusOr<sim_server::ServerOptions> options = server_options(*world);
  if (!options.ok()) return cli::bad_input(options.status());
  std::optional<TempDir> dir;
  options->socket_path = absl::GetFlag(FLAGS_socket);
  if (options->socket_path.empty()) {
    absl::StatusOr<TempDir> made = TempDir::create();
    if (!made.ok()) return cli::bad_input(made.status());
    dir.emplace(*std::move(made));
    options->socket_path = dir->file("socket");
  }
  // A signal ends serving at once; the socket and its directory go.
  const StopSignals signals;
  options->wake_fd = signals.fd();
  options->tick = [] { return StopSignals::received() == 0; };
  absl::StatusOr<std::unique_ptr<sim_server::FabricServer>> server =
      FabricServer::create(*std::move(options));
  if (!server.ok()) return cli::bad_input(server.status());
  std::printf(
      "weft-sim serve: %u ranks; run each with %s=%s and "
      "WEFT_SIM_RANK=<rank>\n",
      (*server)->world().ranks(), sim_server::kServerVariable,
      (*server)->socket_path().c_str());
  std::fflush(stdout);
  const ServeResult result = (*server)->serve();
  if (StopSignals::quiet()) return StopSignals::exit_code();
  const int code = finish(**server, result, *world, StopSignals::received());
  // Stdout closed while the lines above went out: quietly, 141.
  return StopSignals::received() != 0 ? StopSignals::exit_code() : code;
}

int launch_on_sim(const LaunchRequest& request) {
  absl::StatusOr<sim_server::ServerOptions> options =
      server_options(request.world);
  if (!options.ok()) return cli::bad_input(options.status());
  const std::optional<std::string> dropin = dropin_dir();
  if (!dropin) {
    return cli::bad_input(
        "cannot find the simulated provider's drop-in directory (dropin/ "
        "with libibverbs.so.1) next to this weft-sim: build the "
        "weft_sim_verbs target or install weft");
  }
  absl::StatusOr<TempDir> dir = TempDir::create();
  if (!dir.ok()) return cli::bad_input(dir.status());
  // --socket as serve takes it (its directory must be the user's alone);
  // the device JSON stays in the temporary directory.
  options->socket_path = absl::GetFlag(FLAGS_socket);
  if (options->socket_path.empty()) options->socket_path = dir->file("socket");
  for (uint32_t r = 0; r < request.ranks; ++r) {
    options->expected_ranks.push_back(r);
  }
  RankProcesses ranks;
  const auto deadline =
      RankProcesses::Clock::now() + std::chrono::seconds(request.timeout_s);
  bool timed_out = false;
  sim_server::FabricServer* served = nullptr;
  // A signal stops serving at once; the ranks are then ended with it.
  const StopSignals signals;
  options->wake_fd = signals.fd();
  options->tick = [&]() {
    ranks.reap();
    for (const RankProcess& r : ranks.ranks()) {
      if (r.status && served != nullptr) served->rank_gone(r.rank);
    }
    timed_out = RankProcesses::Clock::now() > deadline;
    return !timed_out && StopSignals::received() == 0;
  };
  absl::StatusOr<std::unique_ptr<sim_server::FabricServer>> server =
      FabricServer::create(*std::move(options));
  if (!server.ok()) return cli::bad_input(server.status());
  served = server->get();
  LaunchEnv env;
  env.socket = served->socket_path();
  env.dropin = *dropin;
  absl::StatusOr<std::string> devices =
      dir->write("devices.json", request.world.options.topology.to_json());
  if (!devices.ok()) return cli::bad_input(devices.status());
  env.devices_json = *devices;
  absl::StatusOr<std::vector<uint16_t>> port = free_ports("127.0.0.1", 1);
  if (!port.ok()) return cli::bad_input(port.status());
  env.coordinator = absl::StrFormat("127.0.0.1:%u", (*port)[0]);
  env.ranks = request.world.options.topology.ranks();
  for (uint32_t r = 0; r < request.ranks; ++r) {
    if (absl::Status s =
            ranks.start(r, request.program_of(r), rank_env(env, r));
        !s.ok()) {
      std::fprintf(stderr, "weft-sim launch: %s\n",
                   std::string(s.message()).c_str());
      return cli::kExitFailed;  // ~RankProcesses kills the ones started
    }
  }
  const ServeResult result = served->serve();
  if (const int signal = StopSignals::received(); signal != 0) {
    // Ended as mpirun ends its job: the ranks get the signal (a closed
    // stdout: SIGTERM), then SIGKILL after the grace period.
    ranks.end(StopSignals::quiet() ? SIGTERM : signal, kExitGrace);
    if (StopSignals::quiet()) return StopSignals::exit_code();
    finish(*served, result, request.world, signal);
    ranks.print_exits();
    return StopSignals::exit_code();
  }
  explain_missing(result, ranks);
  // The ranks the server ended exit on their own; give them a moment, then
  // make sure none outlives the launcher.
  if (!timed_out) {
    ranks.wait_until(RankProcesses::Clock::now() + kExitGrace,
                     [] { return StopSignals::received() != 0; });
  }
  ranks.kill_all();
  if (timed_out) {
    std::fprintf(stderr,
                 "weft-sim launch: the ranks ran past --timeout_s=%llu; "
                 "killed them\n",
                 static_cast<unsigned long long>(request.timeout_s));
  }
  int code = finish(*served, result, request.world, 0);
  const bool all_ok = ranks.print_exits();
  if (!all_ok || timed_out) code = cli::kExitFailed;
  // A closed stdout (the lines above went nowhere) or a signal at the end.
  if (StopSignals::received() != 0) return StopSignals::exit_code();
  return code;
}

}  // namespace weft::tools::weft_sim
