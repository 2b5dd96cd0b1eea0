#include "tools/weft-devices/wiring_command.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "fabric/clock.h"
#include "fabric/topology.h"
#include "rendezvous/tcp_bootstrap.h"
#include "tools/cli/exit_status.h"
#include "tools/weft-devices/tcp_hostfile.h"
#include "verbs/verbs_fabric.h"
#include "wiring/check.h"
#include "wiring/discovery.h"

namespace weft::tools::weft_devices {
namespace {

int fail(const absl::Status& status, int code) {
  std::fprintf(stderr, "weft-devices: %s\n",
               std::string(status.message()).c_str());
  return code;
}

void print_discovery(const wiring::Discovery& d) {
  std::fputs(d.wiring.table().c_str(), stdout);
  std::printf("\ndevice JSON (JACCL_IBV_DEVICES, MLX_IBV_DEVICES):\n%s\n",
              d.wiring.topology().to_json().c_str());
  if (!d.tcp_hosts.empty()) {
    absl::Status s = check_tcp_hosts(d.tcp_hosts, "the ranks' --ip");
    if (s.ok()) {
      std::printf("\nTCP ring hostfile (MLX_HOSTFILE, WEFT_HOSTFILE):\n%s",
                  format_ring_hostfile(d.tcp_hosts).c_str());
    } else {
      std::printf("\nno TCP ring hostfile: %s\n",
                  std::string(s.message()).c_str());
    }
  }
  std::printf(
      "\nprobing: %u rounds, %llu pairs of devices, %llu probes, "
      "%.3f ms\n",
      d.stats.rounds, static_cast<unsigned long long>(d.stats.pairs_probed),
      static_cast<unsigned long long>(d.stats.probes_sent),
      static_cast<double>(d.stats.elapsed_ns) / kNsPerMs);
}

}  // namespace

absl::StatusOr<Config> wiring_config(const WiringArgs& args,
                                     const Topology* declared,
                                     const EnvLookup& getenv) {
  std::map<std::string, std::string> set;
  set["WEFT_FABRIC"] = "verbs";
  // The file is read by the check itself (in its reporting mode), so the
  // side channel is joined as for auto, with as many ranks as it has rows.
  set["JACCL_IBV_DEVICES"] = "auto";
  set["MLX_IBV_DEVICES"] = "auto";
  if (args.rank.has_value()) {
    for (const char* name : {"WEFT_RANK", "JACCL_RANK", "MLX_RANK"}) {
      set[name] = std::to_string(*args.rank);
    }
  }
  if (args.ranks.has_value()) set["WEFT_SIZE"] = std::to_string(*args.ranks);
  if (declared != nullptr) set["WEFT_SIZE"] = std::to_string(declared->ranks());
  if (!args.coordinator.empty()) {
    for (const char* name :
         {"WEFT_COORDINATOR", "JACCL_COORDINATOR", "MLX_JACCL_COORDINATOR"}) {
      set[name] = args.coordinator;
    }
  }
  const EnvLookup layered = [&set, &getenv](const char* name) -> const char* {
    auto it = set.find(name);
    return it != set.end() ? it->second.c_str() : getenv(name);
  };
  return Config::from_environment(layered);
}

int run_wiring_command(const WiringArgs& args, bool check,
                       const EnvLookup& getenv) {
  std::optional<Topology> declared;
  if (check) {
    absl::StatusOr<Topology> file = Topology::load_json_file(args.devices_file);
    if (!file.ok()) return fail(file.status(), cli::kExitBadInput);
    declared = *std::move(file);
  }
  absl::StatusOr<Config> config =
      wiring_config(args, declared ? &*declared : nullptr, getenv);
  if (!config.ok()) return fail(config.status(), cli::kExitBadInput);
  absl::StatusOr<std::unique_ptr<TcpBootstrap>> bootstrap =
      TcpBootstrap::connect(*config);
  if (!bootstrap.ok()) return fail(bootstrap.status(), cli::kExitFailed);
  verbs::VerbsFabricOptions options;
  options.library = args.library;
  absl::StatusOr<std::unique_ptr<verbs::VerbsFabric>> fabric =
      verbs::VerbsFabric::open(config->rank, std::move(options));
  if (!fabric.ok()) return fail(fabric.status(), cli::kExitFailed);
  wiring::DiscoveryOptions discovery;
  discovery.addresses = args.ips;
  discovery.declared = declared;
  absl::StatusOr<wiring::Discovery> found =
      wiring::discover(**fabric, **bootstrap, (*fabric)->devices(), discovery,
                       config->connect_timeout_ns, config->connect_timeout_ns);
  if (!found.ok()) return fail(found.status(), cli::kExitFailed);
  if (!check) {
    print_discovery(*found);
    return cli::kExitOk;
  }
  const wiring::CheckReport report =
      wiring::check_wiring(*declared, found->wiring, args.devices_file);
  for (const wiring::Finding& f : report.findings) {
    std::printf("%s\n", f.text.c_str());
  }
  if (report.ok()) {
    std::printf("%s matches the cables: %zu cables answered both ways\n",
                args.devices_file.c_str(), found->wiring.cables().size());
    return cli::kExitOk;
  }
  std::printf("\n%zu wrong; the file the cables call for:\n%s\n",
              report.findings.size(), report.corrected.to_json().c_str());
  return cli::kExitFailed;
}

}  // namespace weft::tools::weft_devices
