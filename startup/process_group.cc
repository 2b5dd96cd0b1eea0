#include "startup/process_group.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/group_builder.h"
#include "fabric/topology_check.h"
#include "rendezvous/tcp_bootstrap.h"
#include "startup/internal/deadlines.h"
#include "startup/internal/memory_region_budget.h"
#include "tcp/tcp_fabric.h"
#include "verbs/departure_check.h"
#include "verbs/verbs_fabric.h"
#include "wiring/check.h"
#include "wiring/discovery.h"

namespace weft {

// Declared in the order they are made, so they go in the reverse: the group
// before the fabric its endpoints live on, the fabric before the side
// channel whose closing tells the peers this rank left.
struct ProcessGroup::Parts {
  Config config;
  std::unique_ptr<Bootstrap> bootstrap;
  std::unique_ptr<Fabric> fabric;
  std::unique_ptr<Group> group;
  bool virtual_time = false;
};

namespace {

// The deadlines of StartOptions' comment, from the environment, into
// `config` and `group`.
absl::Status apply_deadlines(const EnvLookup& getenv, Config* config,
                             GroupOptions* group) {
  absl::StatusOr<TimeNs> timeout_ns = startup::internal::read_seconds(
      getenv, startup::internal::kTimeoutEnv, StartOptions::kDefaultTimeoutNs,
      GroupOptions::kMaxTimeoutNs);
  if (!timeout_ns.ok()) return timeout_ns.status();
  absl::StatusOr<TimeNs> connect_ns = startup::internal::read_seconds(
      getenv, startup::internal::kConnectTimeoutEnv,
      StartOptions::kDefaultConnectTimeoutNs, Config::kMaxTimeoutNs);
  if (!connect_ns.ok()) return connect_ns.status();
  // Recovery limits are checked first so outlast() starts from valid ones.
  if (absl::Status s = group->recovery.validate(); !s.ok()) return s;
  group->timeout_ns = *timeout_ns;
  if (group->recovery.enabled) {
    group->recovery = startup::internal::outlast(group->recovery, *timeout_ns);
  }
  config->connect_timeout_ns = *connect_ns;
  return absl::OkStatus();
}

// config.validate(), except that a caller's side channel needs no
// coordinator.
absl::Status validate(const Config& config, bool own_bootstrap) {
  if (!own_bootstrap || !config.coordinator.empty()) return config.validate();
  Config checked = config;
  checked.coordinator = "unused:1";
  return checked.validate();
}

// WEFT_FABRIC names the fabric this process is to run on (weft-sim launch
// sets it for every rank); a Config for the other fabric would form a
// group somewhere the launcher did not put it.
absl::Status check_launched_fabric(const EnvLookup& getenv,
                                   const Config& config) {
  const char* named = getenv("WEFT_FABRIC");
  if (named == nullptr || *named == '\0') return absl::OkStatus();
  const std::string_view fabric(named);
  const bool tcp = !config.tcp_hosts.empty();
  if (fabric == (tcp ? "tcp" : "verbs")) return absl::OkStatus();
  if (fabric != "tcp" && fabric != "verbs") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "WEFT_FABRIC='%s' is not a fabric: set it to tcp or verbs, or unset "
        "it",
        fabric));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "WEFT_FABRIC=%s (weft-sim launch sets it) says this process runs on "
      "%s, but its Config %s: form the group from the environment "
      "(ProcessGroup::from_environment(), jaccl::init()), or unset "
      "WEFT_FABRIC",
      fabric, fabric == "tcp" ? "TCP" : "verbs",
      tcp ? "lists TCP hosts" : "has RDMA devices and no TCP hosts"));
}

absl::StatusOr<std::unique_ptr<Bootstrap>> join(const Config& config,
                                                const StartOptions& options) {
  if (!options.make_bootstrap) {
    absl::StatusOr<std::unique_ptr<TcpBootstrap>> tcp =
        TcpBootstrap::connect(config);
    if (!tcp.ok()) return tcp.status();
    return std::unique_ptr<Bootstrap>(*std::move(tcp));
  }
  absl::StatusOr<std::unique_ptr<Bootstrap>> made =
      options.make_bootstrap(config);
  if (!made.ok()) return made.status();
  if (*made == nullptr || (*made)->rank() != config.rank ||
      (*made)->size() != config.size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "StartOptions.make_bootstrap made a side channel for rank %d of %d, "
        "not rank %u of %u; make it from the Config it is given",
        *made == nullptr ? -1 : static_cast<int>((*made)->rank()),
        *made == nullptr ? -1 : static_cast<int>((*made)->size()), config.rank,
        config.size));
  }
  return made;
}

// An open fabric and what tells its group that a peer's process is gone.
struct OpenedFabric {
  std::unique_ptr<Fabric> fabric;
  std::function<absl::Status()> departure_check;
  bool virtual_time = false;
};

// The TCP fabric on exactly this rank's hostfile addresses, proving the
// shared secret (WEFT_SECRET) on every connection when one is set. A peer whose
// process is gone closes its side channel, and the group's calls end then,
// naming it, instead of at the deadline.
absl::StatusOr<OpenedFabric> open_tcp(const Config& config,
                                      Bootstrap* bootstrap) {
  tcp::TcpOptions options;
  options.listen = config.tcp_hosts[config.rank];
  options.secret = config.secret;
  absl::StatusOr<std::unique_ptr<tcp::TcpFabric>> fabric =
      tcp::TcpFabric::open(config.rank, std::move(options));
  if (!fabric.ok()) return fabric.status();
  return OpenedFabric{*std::move(fabric),
                      [bootstrap] { return bootstrap->check_alive(); }};
}

// The verbs fabric. On weft's simulated provider the provider says when a
// rank left the world, in virtual time, where the side channel's closing
// would arrive whenever the host delivers it (and the run would differ
// from run to run); elsewhere the side channel says, as for TCP.
absl::StatusOr<OpenedFabric> open_verbs(const Config& config,
                                        size_t memory_region_budget,
                                        Bootstrap* bootstrap) {
  verbs::VerbsFabricOptions options;
  options.memory_region_budget = memory_region_budget;
  absl::StatusOr<std::unique_ptr<verbs::VerbsFabric>> fabric =
      verbs::VerbsFabric::open(config.rank, std::move(options));
  if (!fabric.ok()) return fabric.status();
  const verbs::VerbsLibrary& library = (*fabric)->library();
  OpenedFabric out;
  // On weft's simulated provider the fabric's clock is its virtual time.
  out.virtual_time = library.api().sim_now_ns != nullptr;
  out.departure_check = verbs::departure_check(library, config.rank);
  if (!out.departure_check) {
    out.departure_check = [bootstrap] { return bootstrap->check_alive(); };
  }
  out.fabric = *std::move(fabric);
  return out;
}

// WEFT_CHECK_WIRING: 1 checks the device JSON against the cables as the
// group forms; unset or 0 does not.
absl::StatusOr<bool> read_check_wiring(const EnvLookup& getenv) {
  const char* raw = getenv("WEFT_CHECK_WIRING");
  if (raw == nullptr || std::string_view(raw) == "0" || *raw == '\0') {
    return false;
  }
  if (std::string_view(raw) == "1") return true;
  return absl::InvalidArgumentError(absl::StrFormat(
      "WEFT_CHECK_WIRING='%s' is not 0 or 1: set it to 1 to check the device "
      "JSON against the cables as the group forms, or unset it",
      raw));
}

// The device variable said `auto`: the ranks find their cabling through
// the fabric (wiring/discovery.h), and the group runs on the cables that
// work both ways.
absl::Status discover_devices(Fabric& fabric, Bootstrap& bootstrap,
                              Config* config) {
  absl::StatusOr<wiring::Discovery> found =
      wiring::discover(fabric, bootstrap, fabric.devices(), {},
                       config->connect_timeout_ns, config->connect_timeout_ns);
  if (!found.ok()) return found.status();
  config->devices = found->wiring.topology();
  return check_topology(
      config->devices,
      config->ring ? TopologyNeeds::kRing : TopologyNeeds::kMesh,
      {.source = "the cabling the ranks found (device variable auto)",
       .use_ring = "set JACCL_RING=1"});
}

// WEFT_CHECK_WIRING=1: the device JSON's cables are probed first, and
// only when one is wrong is the rest probed, to name where each goes.
absl::Status check_devices(Fabric& fabric, Bootstrap& bootstrap,
                           const Config& config) {
  wiring::DiscoveryOptions options;
  options.declared = config.devices;
  options.probe_all = false;
  absl::StatusOr<wiring::Discovery> found =
      wiring::discover(fabric, bootstrap, fabric.devices(), options,
                       config.connect_timeout_ns, config.connect_timeout_ns);
  if (!found.ok()) return found.status();
  if (!found->complete) return absl::OkStatus();  // every cable answered
  const std::string source =
      config.devices_source.empty() ? "device JSON" : config.devices_source;
  return wiring::report_status(
      wiring::check_wiring(config.devices, found->wiring, source), source);
}

}  // namespace

ProcessGroup::ProcessGroup() : parts_(std::make_unique<Parts>()) {}
ProcessGroup::~ProcessGroup() = default;

absl::StatusOr<std::unique_ptr<ProcessGroup>> ProcessGroup::from_environment(
    const StartOptions& options) {
  absl::StatusOr<Config> config = Config::from_environment(options.getenv);
  if (!config.ok()) return config.status();
  return start(*config, options);
}

absl::StatusOr<std::unique_ptr<ProcessGroup>> ProcessGroup::start(
    const Config& config, const StartOptions& options) {
  std::unique_ptr<ProcessGroup> pg(new ProcessGroup());
  Parts& parts = *pg->parts_;
  parts.config = config;
  GroupOptions group = options.group;
  if (!options.keep_timeouts) {
    if (absl::Status s = apply_deadlines(options.getenv, &parts.config, &group);
        !s.ok()) {
      return s;
    }
  }
  // The ring was chosen (JACCL_RING on a full mesh): keep to it.
  if (parts.config.ring && group.algorithm == Algorithm::kAuto) {
    group.algorithm = Algorithm::kRing;
  }
  const bool own_bootstrap = static_cast<bool>(options.make_bootstrap);
  if (absl::Status s = validate(parts.config, own_bootstrap); !s.ok()) return s;
  if (absl::Status s = check_launched_fabric(options.getenv, parts.config);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = group.validate(); !s.ok()) return s;
  // Read before joining, so a bad value costs no connection; only the
  // verbs fabric registers memory regions.
  const bool on_verbs = parts.config.tcp_hosts.empty();
  absl::StatusOr<size_t> budget =
      on_verbs ? startup::internal::read_memory_region_budget(options.getenv)
               : verbs::kDefaultMemoryRegionBudget;
  if (!budget.ok()) return budget.status();
  absl::StatusOr<bool> check_wiring = read_check_wiring(options.getenv);
  if (!check_wiring.ok()) return check_wiring.status();

  absl::StatusOr<std::unique_ptr<Bootstrap>> bootstrap =
      join(parts.config, options);
  if (!bootstrap.ok()) return bootstrap.status();
  parts.bootstrap = *std::move(bootstrap);
  absl::StatusOr<OpenedFabric> opened =
      on_verbs ? open_verbs(parts.config, *budget, parts.bootstrap.get())
               : open_tcp(parts.config, parts.bootstrap.get());
  if (!opened.ok()) return opened.status();
  parts.fabric = std::move(opened->fabric);
  parts.virtual_time = opened->virtual_time;
  if (on_verbs && parts.config.discover_devices) {
    if (absl::Status s =
            discover_devices(*parts.fabric, *parts.bootstrap, &parts.config);
        !s.ok()) {
      return s;
    }
  } else if (on_verbs && *check_wiring) {
    if (absl::Status s =
            check_devices(*parts.fabric, *parts.bootstrap, parts.config);
        !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::unique_ptr<Group>> formed =
      create_group(*parts.fabric, *parts.bootstrap, parts.config.devices, group,
                   parts.config.connect_timeout_ns);
  if (!formed.ok()) return formed.status();
  parts.group = *std::move(formed);
  // The bootstrap outlives the group (Parts' order).
  parts.group->watch(std::move(opened->departure_check));
  return pg;
}

Group& ProcessGroup::group() { return *parts_->group; }

absl::Status ProcessGroup::shrink(CallOptions c) {
  absl::StatusOr<std::unique_ptr<Group>> shrunk = parts_->group->shrink(c);
  if (!shrunk.ok()) return shrunk.status();
  parts_->group = *std::move(shrunk);
  return absl::OkStatus();
}
Fabric& ProcessGroup::fabric() { return *parts_->fabric; }
Bootstrap& ProcessGroup::bootstrap() { return *parts_->bootstrap; }
const Config& ProcessGroup::config() const { return parts_->config; }
bool ProcessGroup::virtual_time() const { return parts_->virtual_time; }

}  // namespace weft
