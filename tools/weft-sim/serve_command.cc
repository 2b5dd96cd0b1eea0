// weft-sim serve and weft-sim launch: the simulation server for verbs
// programs in processes of their own (sim/server/fabric_server.h).
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
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "sim/server/fabric_server.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-sim/commands.h"

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
ABSL_FLAG(std::string, n, "0",
          "launch: ranks to start (default: the world's); each PROGRAM given "
          "after -- and separated by ':' is one rank, one PROGRAM is every "
          "rank");
ABSL_FLAG(std::string, timeout_s, "600",
          "launch: wall-clock seconds the ranks may run before they are "
          "killed and launch exits 1 (1..86400)");

namespace weft::sim::cli {

const FlagSet kServeFlags("serve", "simulation server", FLAGS_socket,
                          FLAGS_on_deadlock, FLAGS_on_crash,
                          FLAGS_connect_timeout_s);
const FlagSet kLaunchFlags("launch", "process launcher", FLAGS_n,
                           FLAGS_timeout_s);

namespace {

using server::FabricServer;
using server::ServeResult;
using server::ServerOptions;

// A private directory for the socket; removed with it.
class SocketDir {
 public:
  static absl::StatusOr<SocketDir> create() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        absl::StrFormat("%s/weft-sim-XXXXXX", tmp != nullptr ? tmp : "/tmp");
    if (::mkdtemp(pattern.data()) == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrFormat("cannot create a directory like %s", pattern));
    }
    return SocketDir(pattern);
  }
  SocketDir(SocketDir&& other) noexcept : path_(std::move(other.path_)) {
    other.path_.clear();
  }
  ~SocketDir() {
    if (!path_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(path_, ignored);
    }
  }
  std::string socket() const { return path_ + "/socket"; }
  std::string file(std::string_view name) const {
    return path_ + "/" + std::string(name);
  }

 private:
  explicit SocketDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::StatusOr<ServerOptions> server_options(const WorldFlags& world) {
  ServerOptions o;
  o.world = world.options;
  o.world.keep_trace_events = !world.trace_path.empty();
  const std::string deadlock = absl::GetFlag(FLAGS_on_deadlock);
  if (deadlock == "end") {
    o.on_deadlock = ServerOptions::OnDeadlock::kEnd;
  } else if (deadlock == "leave") {
    o.on_deadlock = ServerOptions::OnDeadlock::kLeave;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--on_deadlock=%s is neither end nor leave", deadlock));
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
  absl::StatusOr<uint64_t> timeout = parse_uint(
      "connect_timeout_s", absl::GetFlag(FLAGS_connect_timeout_s), 1, 3600);
  if (!timeout.ok()) return timeout.status();
  o.connect_timeout = std::chrono::seconds(*timeout);
  return o;
}

// Prints the end of a run (and writes the trace); the exit code.
int finish(const FabricServer& server, const ServeResult& result,
           const WorldFlags& world) {
  const char* outcome = "finished";
  if (result.outcome == ServeResult::Outcome::kDeadlock) outcome = "deadlock";
  if (result.outcome == ServeResult::Outcome::kTimeLimit) {
    outcome = "time limit";
  }
  if (result.outcome == ServeResult::Outcome::kStopped) outcome = "stopped";
  if (result.outcome == ServeResult::Outcome::kMissingRanks) {
    outcome = "ranks missing";
  }
  std::printf("weft-sim: %s at virtual time %.3f us, %u faults injected, "
              "trace hash %s\n",
              outcome, static_cast<double>(result.end_ns) / kNsPerUs,
              static_cast<unsigned>(server.world().injected_faults().size()),
              server.world().trace().hash_hex().c_str());
  if (!world.trace_path.empty()) {
    if (absl::Status s =
            server.world().trace().write_perfetto_json(world.trace_path);
        !s.ok()) {
      std::fprintf(stderr, "weft-sim: %s\n", std::string(s.message()).c_str());
      return kExitFailed;
    }
    std::printf("trace written to %s\n", world.trace_path.c_str());
  }
  std::fflush(stdout);
  return result.outcome == ServeResult::Outcome::kFinished ? kExitOk
                                                           : kExitFailed;
}

// Where the drop-in libibverbs.so.1 lives: $WEFT_SIM_DROPIN_DIR, else the
// build tree's (for a weft-sim run from its build tree), else the
// installed one next to the installed weft-sim.
std::optional<std::string> dropin_dir() {
  std::error_code ec;
  std::vector<std::filesystem::path> candidates;
  if (const char* dir = std::getenv("WEFT_SIM_DROPIN_DIR")) {
    candidates.emplace_back(dir);
  }
#ifdef WEFT_DROPIN_BUILD_DIR
  candidates.emplace_back(WEFT_DROPIN_BUILD_DIR);
#endif
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    candidates.push_back(self.parent_path() / WEFT_DROPIN_INSTALLED_FROM_BIN);
  }
  for (const std::filesystem::path& candidate : candidates) {
    if (std::filesystem::exists(candidate / "libibverbs.so.1", ec)) {
      return candidate.lexically_normal().string();
    }
  }
  return std::nullopt;
}

struct Child {
  uint32_t rank = 0;
  pid_t pid = 0;
  std::optional<int> status;  // waitpid's, once reaped
};

std::string describe_status(int status) {
  if (WIFEXITED(status)) {
    return absl::StrFormat("exited %d", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return absl::StrFormat("killed by signal %d", WTERMSIG(status));
  }
  return "ended";
}

// A loopback TCP port nothing listens on now (the kernel's choice for
// port 0), for rank 0 of a JACCL-style group to listen on.
absl::StatusOr<uint16_t> free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  const bool ok =
      fd >= 0 &&
      ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok) {
    return absl::FailedPreconditionError(
        "cannot find a free loopback port for JACCL_COORDINATOR");
  }
  return ntohs(addr.sin_port);
}

// What every rank gets besides its rank: the server's socket, the library
// path, and JACCL's group environment (device JSON of the world's
// topology, a coordinator on loopback) unless the caller set it.
struct LaunchEnv {
  std::string socket;
  std::string dropin;
  std::string devices_json;
  std::string coordinator;
};

pid_t spawn(const std::vector<std::string>& program, uint32_t rank,
            const LaunchEnv& env) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const std::string& dropin = env.dropin;
  const std::string r = std::to_string(rank);
  ::setenv(server::kServerVariable, env.socket.c_str(), 1);
  ::setenv("WEFT_SIM_RANK", r.c_str(), 1);
  // JACCL's and MLX's names for the same facts, as mpirun or mlx.launch
  // would set them (the rank always; the rest unless already set).
  ::setenv("JACCL_RANK", r.c_str(), 1);
  ::setenv("MLX_RANK", r.c_str(), 1);
  ::setenv("JACCL_IBV_DEVICES", env.devices_json.c_str(), 0);
  ::setenv("MLX_IBV_DEVICES", env.devices_json.c_str(), 0);
  ::setenv("JACCL_COORDINATOR", env.coordinator.c_str(), 0);
  ::setenv("MLX_JACCL_COORDINATOR", env.coordinator.c_str(), 0);
  const char* old = std::getenv("LD_LIBRARY_PATH");
  const std::string path =
      old != nullptr && *old != '\0' ? dropin + ":" + old : dropin;
  ::setenv("LD_LIBRARY_PATH", path.c_str(), 1);
  ::setenv("WEFT_VERBS_LIBRARY", (dropin + "/libibverbs.so.1").c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : program) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "weft-sim launch: cannot run '%s' as rank %u: %s\n",
               argv[0], rank, std::strerror(errno));
  std::_Exit(127);
}

}  // namespace

int run_serve(int argc, char** argv) {
  CommandArgs args = parse_command_flags(argc, argv, "serve");
  if (args.exit_code) return *args.exit_code;
  absl::StatusOr<WorldFlags> world = world_flags();
  if (!world.ok()) return bad_input(world.status());
  absl::StatusOr<ServerOptions> options = server_options(*world);
  if (!options.ok()) return bad_input(options.status());
  std::optional<SocketDir> dir;
  options->socket_path = absl::GetFlag(FLAGS_socket);
  if (options->socket_path.empty()) {
    absl::StatusOr<SocketDir> made = SocketDir::create();
    if (!made.ok()) return bad_input(made.status());
    dir.emplace(*std::move(made));
    options->socket_path = dir->socket();
  }
  absl::StatusOr<std::unique_ptr<FabricServer>> server =
      FabricServer::create(*std::move(options));
  if (!server.ok()) return bad_input(server.status());
  std::printf("weft-sim serve: %u ranks; run each with %s=%s and "
              "WEFT_SIM_RANK=<rank>\n",
              (*server)->world().ranks(), server::kServerVariable,
              (*server)->socket_path().c_str());
  std::fflush(stdout);
  const ServeResult result = (*server)->serve();
  return finish(**server, result, *world);
}

int run_launch(int argc, char** argv) {
  // Flags before "--", the programs after it.
  int split = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--") {
      split = i;
      break;
    }
  }
  std::vector<std::vector<std::string>> programs(1);
  for (int i = split + 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == ":") {
      programs.emplace_back();
    } else {
      programs.back().push_back(argv[i]);
    }
  }
  CommandArgs args = parse_command_flags(split, argv, "launch");
  if (args.exit_code) return *args.exit_code;
  for (const auto& p : programs) {
    if (p.empty()) {
      return bad_input(
          "give the program after --: weft-sim launch -n 2 -- PROGRAM ARGS "
          "(several programs, one per rank, separated by ':')");
    }
  }
  absl::StatusOr<WorldFlags> world = world_flags();
  if (!world.ok()) return bad_input(world.status());
  absl::StatusOr<ServerOptions> options = server_options(*world);
  if (!options.ok()) return bad_input(options.status());
  const uint32_t ranks = world->options.topology.ranks();
  absl::StatusOr<uint64_t> n =
      parse_uint("n", absl::GetFlag(FLAGS_n), 0, ranks);
  if (!n.ok()) return bad_input(n.status());
  const uint32_t count = *n == 0 ? ranks : static_cast<uint32_t>(*n);
  if (programs.size() > 1 && programs.size() != count) {
    return bad_input(absl::StrFormat(
        "%u programs separated by ':' for %u ranks: give one program, or "
        "one per rank",
        programs.size(), count));
  }
  absl::StatusOr<uint64_t> timeout =
      parse_uint("timeout_s", absl::GetFlag(FLAGS_timeout_s), 1, 86400);
  if (!timeout.ok()) return bad_input(timeout.status());
  const std::optional<std::string> dropin = dropin_dir();
  if (!dropin) {
    return bad_input(
        "cannot find the simulated provider's drop-in directory (dropin/ "
        "with libibverbs.so.1) next to this weft-sim: build the "
        "weft_sim_verbs target or install weft");
  }
  absl::StatusOr<SocketDir> dir = SocketDir::create();
  if (!dir.ok()) return bad_input(dir.status());
  options->socket_path = dir->socket();
  for (uint32_t r = 0; r < count; ++r) options->expected_ranks.push_back(r);

  std::vector<Child> children;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(*timeout);
  bool timed_out = false;
  auto reap = [&](bool block) {
    for (Child& c : children) {
      if (c.status) continue;
      int status = 0;
      if (::waitpid(c.pid, &status, block ? 0 : WNOHANG) == c.pid) {
        c.status = status;
      }
    }
  };
  FabricServer* served = nullptr;
  options->tick = [&]() {
    reap(false);
    for (const Child& c : children) {
      if (c.status && served != nullptr) served->rank_gone(c.rank);
    }
    if (std::chrono::steady_clock::now() > deadline) {
      timed_out = true;
      return false;
    }
    return true;
  };
  absl::StatusOr<std::unique_ptr<FabricServer>> server =
      FabricServer::create(*std::move(options));
  if (!server.ok()) return bad_input(server.status());
  served = server->get();
  LaunchEnv env;
  env.socket = served->socket_path();
  env.dropin = *dropin;
  env.devices_json = dir->file("devices.json");
  {
    std::FILE* f = std::fopen(env.devices_json.c_str(), "w");
    const std::string json = world->options.topology.to_json();
    if (f == nullptr || std::fwrite(json.data(), 1, json.size(), f) !=
                            json.size()) {
      if (f != nullptr) std::fclose(f);
      return bad_input(absl::StrFormat("cannot write %s", env.devices_json));
    }
    std::fclose(f);
  }
  absl::StatusOr<uint16_t> port = free_port();
  if (!port.ok()) return bad_input(port.status());
  env.coordinator = absl::StrFormat("127.0.0.1:%u", *port);
  std::fflush(stdout);
  std::fflush(stderr);
  for (uint32_t r = 0; r < count; ++r) {
    const auto& program = programs.size() == 1 ? programs[0] : programs[r];
    const pid_t pid = spawn(program, r, env);
    if (pid < 0) {
      std::fprintf(stderr, "weft-sim launch: fork failed\n");
      for (Child& c : children) ::kill(c.pid, SIGKILL);
      reap(true);
      return kExitFailed;
    }
    children.push_back({r, pid, std::nullopt});
  }
  const ServeResult result = served->serve();
  // The ranks the server ended exit on their own; give them a moment, then
  // make sure none outlives the launcher.
  const auto grace =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    reap(false);
    bool all = true;
    for (const Child& c : children) all = all && c.status.has_value();
    if (all || timed_out || std::chrono::steady_clock::now() > grace) break;
    ::usleep(10'000);  // polling for exit; no ordering depends on it
  }
  for (const Child& c : children) {
    if (!c.status) ::kill(c.pid, SIGKILL);
  }
  reap(true);
  if (timed_out) {
    std::fprintf(stderr,
                 "weft-sim launch: the ranks ran past --timeout_s=%llu; "
                 "killed them\n",
                 static_cast<unsigned long long>(*timeout));
  }
  int code = finish(*served, result, *world);
  for (const Child& c : children) {
    std::printf("rank %u (pid %d): %s\n", c.rank, c.pid,
                describe_status(*c.status).c_str());
    if (code == kExitOk &&
        !(WIFEXITED(*c.status) && WEXITSTATUS(*c.status) == 0)) {
      code = kExitFailed;
    }
  }
  if (timed_out) code = kExitFailed;
  return code;
}

}  // namespace weft::sim::cli
