// weft-sim launch --fabric=tcp: N rank processes that meet over real TCP on
// this machine, with no server. Every rank gets the hostfile MLX's ring
// backend reads (MLX_HOSTFILE: for each rank, --cables "ip:port"
// addresses on --host, ports free when chosen), its MLX_RANK, the side
// channel's WEFT_COORDINATOR and a WEFT_SECRET new to this launch.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "tools/cli/cli_common.h"
#include "tools/weft-sim/free_ports.h"
#include "tools/weft-sim/launch.h"
#include "tools/weft-sim/rank_processes.h"
#include "tools/weft-sim/stop_signals.h"
#include "tools/weft-sim/temp_dir.h"

ABSL_DECLARE_FLAG(std::string, cables);

namespace weft::tools::weft_sim {
namespace {

constexpr size_t kSecretBytes = 32;

// What every rank shares: the hostfile's path, the coordinator, the secret.
struct TcpGroup {
  std::string hostfile;
  std::string coordinator;
  std::string secret;
};

// kSecretBytes from the system's random source, in hex.
absl::StatusOr<std::string> random_secret() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  std::string bytes(kSecretBytes, '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
    return absl::FailedPreconditionError(
        "cannot read /dev/urandom for WEFT_SECRET");
  }
  return absl::BytesToHexString(bytes);
}

// The hostfile (ranks rows of `cables` addresses) and the coordinator, on
// free ports of `host` (IPv4 or IPv6, the side channel's as the fabric's),
// the hostfile written to `dir`.
absl::StatusOr<TcpGroup> plan_group(const LaunchRequest& request,
                                    uint32_t cables, const TempDir& dir) {
  const size_t addresses = size_t{request.ranks} * cables;
  absl::StatusOr<std::vector<uint16_t>> ports =
      free_ports(request.host, addresses + 1);
  if (!ports.ok()) return ports.status();
  nlohmann::json rows = nlohmann::json::array();
  for (uint32_t r = 0; r < request.ranks; ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (uint32_t c = 0; c < cables; ++c) {
      row.push_back(address_text(request.host, (*ports)[r * cables + c]));
    }
    rows.push_back(std::move(row));
  }
  TcpGroup group;
  absl::StatusOr<std::string> path = dir.write("hostfile.json", rows.dump());
  if (!path.ok()) return path.status();
  group.hostfile = *path;
  group.coordinator = address_text(request.host, ports->back());
  absl::StatusOr<std::string> secret = random_secret();
  if (!secret.ok()) return secret.status();
  group.secret = *secret;
  return group;
}

// MLX's variables and weft's. WEFT_FABRIC=tcp, so a device JSON the
// caller's environment names is not read; the caller's other rank and
// hostfile variables, which would win over or contradict these, are
// removed.
std::vector<EnvSetting> rank_env(const TcpGroup& group, uint32_t rank) {
  return {{"MLX_HOSTFILE", group.hostfile},
          {"MLX_RANK", std::to_string(rank)},
          {"WEFT_COORDINATOR", group.coordinator},
          {"WEFT_SECRET", group.secret},
          {"WEFT_FABRIC", "tcp"},
          {"WEFT_HOSTFILE", std::nullopt},
          {"WEFT_RANK", std::nullopt},
          {"JACCL_RANK", std::nullopt}};
}

// Waits for every rank, ending them all at the deadline, or 10 seconds
// after one fails, or with the signal launch got (StopSignals). Says on
// stderr which rank failed and which were killed.
void wait_for_ranks(RankProcesses& ranks, uint64_t timeout_s) {
  using Clock = RankProcesses::Clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::seconds(timeout_s);
  const auto signalled = [] { return StopSignals::received() != 0; };
  if (ranks.wait_until(deadline, [&] {
        return ranks.first_failure() != nullptr || signalled();
      })) {
    return;
  }
  if (signalled()) {
    if (!StopSignals::quiet()) {
      std::fprintf(stderr,
                   "weft-sim launch: interrupted by %s; ending rank(s) %s\n",
                   StopSignals::name(StopSignals::received()),
                   ranks.running_list().c_str());
    }
    // As mpirun ends its job: the ranks get the signal (a closed stdout:
    // SIGTERM), then SIGKILL after the grace period.
    ranks.end(StopSignals::quiet() ? SIGTERM : StopSignals::received(),
              kExitGrace);
    return;
  }
  if (const RankProcess* failed = ranks.first_failure()) {
    std::fprintf(stderr,
                 "weft-sim launch: rank %u %s; the other ranks have %lld s "
                 "to exit before they are killed\n",
                 failed->rank, describe_status(*failed->status).c_str(),
                 static_cast<long long>(kExitGrace.count()));
    const Clock::time_point grace =
        std::min(deadline, Clock::now() + kExitGrace);
    if (ranks.wait_until(grace, signalled)) return;
    std::fprintf(stderr, "weft-sim launch: killed rank(s) %s, still running\n",
                 ranks.running_list().c_str());
  } else {
    std::fprintf(stderr,
                 "weft-sim launch: rank(s) %s still running after "
                 "--timeout_s=%llu; killed them\n",
                 ranks.running_list().c_str(),
                 static_cast<unsigned long long>(timeout_s));
  }
  ranks.kill_all();
}

}  // namespace

int launch_on_tcp(const LaunchRequest& request) {
  absl::StatusOr<uint64_t> cables =
      cli::parse_uint("cables", absl::GetFlag(FLAGS_cables), 1, 8);
  if (!cables.ok()) return cli::bad_input(cables.status());
  // Installed before the hostfile exists, so that no signal leaves it.
  const StopSignals signals;
  absl::StatusOr<TempDir> dir = TempDir::create();
  if (!dir.ok()) return cli::bad_input(dir.status());
  absl::StatusOr<TcpGroup> group =
      plan_group(request, static_cast<uint32_t>(*cables), *dir);
  if (!group.ok()) return cli::bad_input(group.status());
  RankProcesses ranks;
  for (uint32_t r = 0; r < request.ranks; ++r) {
    if (absl::Status s =
            ranks.start(r, request.program_of(r), rank_env(*group, r));
        !s.ok()) {
      std::fprintf(stderr, "weft-sim launch: %s\n",
                   std::string(s.message()).c_str());
      return cli::kExitFailed;  // ~RankProcesses kills the ones started
    }
  }
  wait_for_ranks(ranks, request.timeout_s);
  if (StopSignals::quiet()) return StopSignals::exit_code();
  const bool all_ok = ranks.print_exits();
  // A signal, or stdout closed while the lines above went out.
  if (StopSignals::received() != 0) return StopSignals::exit_code();
  return all_ok ? cli::kExitOk : cli::kExitFailed;
}

}  // namespace weft::tools::weft_sim
