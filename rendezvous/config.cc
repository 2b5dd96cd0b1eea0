#include "rendezvous/config.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "fabric/topology_check.h"
#include "rendezvous/tcp_hosts.h"

namespace weft {
namespace {

// Enough digits for any port or rank; longer strings are rejected before
// they can overflow.
constexpr size_t kMaxDigits = 9;

// How a weft::Config user runs the ring (JACCL's switch), in
// check_topology's advice.
constexpr std::string_view kUseRing = "set JACCL_RING=1";

std::optional<uint32_t> parse_decimal(std::string_view text) {
  if (text.empty() || text.size() > kMaxDigits) return std::nullopt;
  uint32_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + uint32_t(c - '0');
  }
  return value;
}

// A variable that was set, with its parsed value.
template <typename T>
struct Found {
  const char* name;
  std::string text;
  T value;
};

// The first of `names` that is set, parsed by `parse(name, text)`. Every
// alias that is set must parse and agree with the first, or InvalidArgument
// names both.
template <typename T, typename Parse>
absl::StatusOr<std::optional<Found<T>>> read_aliases(
    const EnvLookup& getenv, std::initializer_list<const char*> names,
    Parse parse) {
  std::optional<Found<T>> first;
  for (const char* name : names) {
    const char* raw = getenv(name);
    if (raw == nullptr) continue;
    absl::StatusOr<T> value = parse(name, std::string_view(raw));
    if (!value.ok()) return value.status();
    if (!first.has_value()) {
      first = Found<T>{name, raw, *std::move(value)};
    } else if (!(*value == first->value)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s='%s' and %s='%s' disagree; set only one of them (%s takes "
          "precedence)",
          first->name, first->text, name, raw, first->name));
    }
  }
  return first;
}

absl::StatusOr<uint32_t> parse_rank(const char* name, std::string_view text) {
  std::optional<uint32_t> rank = parse_decimal(text);
  if (!rank.has_value() || *rank >= Topology::kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' is not a rank: set it to this process's rank, a whole "
        "number from 0 to the group's size - 1",
        name, text));
  }
  return *rank;
}

absl::StatusOr<bool> parse_flag(const char* name, std::string_view text) {
  const std::string lower = absl::AsciiStrToLower(base::to_absl(text));
  if (lower == "1" || lower == "true") return true;
  if (lower == "0" || lower == "false") return false;
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s='%s' is not a boolean: set it to 1, 0, true or false", name, text));
}

absl::StatusOr<std::string> parse_path(const char* name,
                                       std::string_view text) {
  if (text.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is set but empty: set it to the path of the file, or unset it",
        name));
  }
  return std::string(text);
}

absl::StatusOr<bool> parse_fabric_is_tcp(const char* name,
                                         std::string_view text) {
  if (text == "tcp") return true;
  if (text == "verbs") return false;
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s='%s' is not a fabric: set it to tcp (read the hostfile) or verbs "
      "(read the device JSON)",
      name, text));
}

absl::StatusOr<std::string> parse_coordinator(const char* name,
                                              std::string_view text) {
  absl::StatusOr<HostPort> hp = parse_host_port(text);
  if (!hp.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", name, hp.status().message()));
  }
  if (hp->port == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' has port 0: choose a fixed port that every rank can be told",
        name, text));
  }
  return std::string(text);
}

absl::StatusOr<Found<uint32_t>> read_rank(const EnvLookup& getenv) {
  absl::StatusOr<std::optional<Found<uint32_t>>> rank = read_aliases<uint32_t>(
      getenv, {"WEFT_RANK", "JACCL_RANK", "MLX_RANK"}, parse_rank);
  if (!rank.ok()) return rank.status();
  if (rank->has_value()) return **rank;
  // Launchers: mpirun inside a Slurm allocation sets both, and only
  // OMPI_COMM_WORLD_RANK differs between its processes, so it goes first.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "SLURM_PROCID"}) {
    const char* raw = getenv(name);
    if (raw == nullptr) continue;
    absl::StatusOr<uint32_t> value = parse_rank(name, raw);
    if (!value.ok()) return value.status();
    return Found<uint32_t>{name, raw, *value};
  }
  return absl::InvalidArgumentError(
      "no rank is set: set JACCL_RANK (or MLX_RANK, or weft's WEFT_RANK) to "
      "this process's rank, or start it with mpirun (OMPI_COMM_WORLD_RANK) or "
      "srun (SLURM_PROCID)");
}

// The group's cabling: a device JSON (verbs) or a hostfile (TCP).
struct Cabling {
  Topology devices;
  TcpHosts tcp_hosts;          // empty for verbs
  const char* source;          // what lists the ranks, for messages
  bool discover = false;       // the device variable said `auto`
  std::string devices_source;  // "VARIABLE: path" of a device JSON
};

// The device variable's value that asks the ranks to find their cabling.
constexpr std::string_view kAutoDevices = "auto";

absl::StatusOr<uint32_t> parse_size(const char* name, std::string_view text) {
  std::optional<uint32_t> size = parse_decimal(text);
  if (!size.has_value() || *size == 0 || *size > Topology::kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' is not a group size: set it to the number of ranks, 1 to %u",
        name, text, Topology::kMaxRanks));
  }
  return *size;
}

// The group's size when the device variable says `auto` (no file lists
// the ranks): WEFT_SIZE, else the launchers' own.
absl::StatusOr<Cabling> discovered_cabling(const EnvLookup& getenv,
                                           const char* variable) {
  absl::StatusOr<std::optional<Found<uint32_t>>> size =
      read_aliases<uint32_t>(getenv, {"WEFT_SIZE"}, parse_size);
  if (!size.ok()) return size.status();
  std::optional<uint32_t> n;
  if (size->has_value()) n = (*size)->value;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "SLURM_NTASKS"}) {
    const char* raw = getenv(name);
    if (n.has_value() || raw == nullptr) continue;
    absl::StatusOr<uint32_t> value = parse_size(name, raw);
    if (!value.ok()) return value.status();
    n = *value;
  }
  if (!n.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=auto but no group size is set: with no device file to count the "
        "ranks, set WEFT_SIZE to their number (or start them with mpirun or "
        "srun, which set OMPI_COMM_WORLD_SIZE or SLURM_NTASKS)",
        variable));
  }
  absl::StatusOr<Topology> none = Topology::unjoined(*n);
  if (!none.ok()) return none.status();
  return Cabling{*std::move(none), {}, "group size", true, ""};
}

// A variable naming a file, read through `load`, its errors prefixed with
// the variable's name.
template <typename T, typename Load>
absl::StatusOr<T> load_named(const Found<std::string>& found, Load load) {
  absl::StatusOr<T> loaded = load(found.value);
  if (!loaded.ok()) {
    return absl::Status(
        loaded.status().code(),
        absl::StrFormat("%s: %s", found.name, loaded.status().message()));
  }
  return loaded;
}

// Which of the two files to read: the only one set, or WEFT_FABRIC's
// choice. true: the hostfile.
absl::StatusOr<bool> choose_tcp(const EnvLookup& getenv,
                                const std::optional<Found<std::string>>& hosts,
                                const std::optional<Found<std::string>>& devs) {
  absl::StatusOr<std::optional<Found<bool>>> fabric =
      read_aliases<bool>(getenv, {"WEFT_FABRIC"}, parse_fabric_is_tcp);
  if (!fabric.ok()) return fabric.status();
  if (fabric->has_value()) {
    const bool tcp = (*fabric)->value;
    if (tcp ? hosts.has_value() : devs.has_value()) return tcp;
    return absl::InvalidArgumentError(absl::StrFormat(
        "WEFT_FABRIC=%s but %s is not set: set it to the path of %s",
        (*fabric)->text,
        tcp ? "WEFT_HOSTFILE (or MLX_HOSTFILE)"
            : "JACCL_IBV_DEVICES (or MLX_IBV_DEVICES)",
        tcp ? "the ring hostfile" : "the device JSON"));
  }
  if (hosts.has_value() && devs.has_value()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' (a hostfile, for TCP) and %s='%s' (a device JSON, for RDMA) "
        "are both set; unset one, or set WEFT_FABRIC=tcp or "
        "WEFT_FABRIC=verbs to choose",
        hosts->name, hosts->text, devs->name, devs->text));
  }
  if (!hosts.has_value() && !devs.has_value()) {
    return absl::InvalidArgumentError(
        "no device JSON or hostfile is set: set JACCL_IBV_DEVICES (or "
        "MLX_IBV_DEVICES) to the path of a JSON file whose devices[i][j] "
        "names the device joining rank i to rank j (RDMA), or WEFT_HOSTFILE "
        "(or MLX_HOSTFILE) to a ring hostfile listing each rank's "
        "\"ip:port\" addresses (TCP)");
  }
  return hosts.has_value();
}

absl::StatusOr<Cabling> read_cabling(const EnvLookup& getenv,
                                     const DeviceLoader& load_devices,
                                     const HostsLoader& load_hosts) {
  absl::StatusOr<std::optional<Found<std::string>>> hosts =
      read_aliases<std::string>(getenv, {"WEFT_HOSTFILE", "MLX_HOSTFILE"},
                                parse_path);
  if (!hosts.ok()) return hosts.status();
  absl::StatusOr<std::optional<Found<std::string>>> devs =
      read_aliases<std::string>(
          getenv, {"JACCL_IBV_DEVICES", "MLX_IBV_DEVICES"}, parse_path);
  if (!devs.ok()) return devs.status();
  absl::StatusOr<bool> tcp = choose_tcp(getenv, *hosts, *devs);
  if (!tcp.ok()) return tcp.status();
  if (!*tcp && (*devs)->value == kAutoDevices) {
    return discovered_cabling(getenv, (*devs)->name);
  }
  if (!*tcp) {
    absl::StatusOr<Topology> devices =
        load_named<Topology>(**devs, load_devices);
    if (!devices.ok()) return devices.status();
    // The file's own faults (a one-way cable, a rank joined to none) named
    // with the variable and the file, as every reader of one says them.
    const std::string source =
        absl::StrFormat("%s: %s", (*devs)->name, (*devs)->value);
    if (absl::Status s =
            check_topology(*devices, TopologyNeeds::kLinks,
                           {.source = source, .use_ring = kUseRing});
        !s.ok()) {
      return s;
    }
    return Cabling{*std::move(devices), {}, "device JSON", false, source};
  }
  absl::StatusOr<TcpHosts> loaded = load_named<TcpHosts>(**hosts, load_hosts);
  if (!loaded.ok()) return loaded.status();
  Topology devices = tcp_mesh_topology(*loaded);
  return Cabling{std::move(devices), *std::move(loaded), "hostfile"};
}

absl::Status check_timeout(const char* what, TimeNs timeout_ns) {
  if (timeout_ns > 0 && timeout_ns <= Config::kMaxTimeoutNs) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s of %d ns is outside 1 ns..%d s", what, timeout_ns,
                      Config::kMaxTimeoutNs / kNsPerS));
}

// The hostfile's part of validate().
absl::Status check_tcp(const Config& c) {
  if (c.tcp_hosts.empty()) return absl::OkStatus();
  if (c.tcp_hosts.size() != c.size) {
    return absl::InvalidArgumentError(
        absl::StrFormat("tcp_hosts lists %u ranks but the group's size is %u",
                        c.tcp_hosts.size(), c.size));
  }
  if (absl::Status s = check_tcp_hosts(c.tcp_hosts, "tcp_hosts"); !s.ok()) {
    return s;
  }
  for (uint32_t i = 0; i < c.size; ++i) {
    for (uint32_t j = 0; j < c.size; ++j) {
      if (i == j || c.devices.devices(i, j) == c.tcp_hosts[i]) continue;
      return absl::InvalidArgumentError(absl::StrFormat(
          "devices(%u, %u) is not rank %u's tcp_hosts addresses; set devices "
          "to tcp_mesh_topology(tcp_hosts)",
          i, j, i));
    }
  }
  absl::StatusOr<TcpAddress> coordinator = parse_tcp_address(c.coordinator);
  if (c.size == 1 || !coordinator.ok()) return absl::OkStatus();
  const std::string same = format_tcp_address(*coordinator);
  for (uint32_t r = 0; r < c.size; ++r) {
    for (const std::string& entry : c.tcp_hosts[r]) {
      if (format_tcp_address(*parse_tcp_address(entry)) != same) continue;
      return absl::InvalidArgumentError(absl::StrFormat(
          "the coordinator %s is also rank %u's hostfile address; the side "
          "channel needs a port of its own: unset WEFT_COORDINATOR for the "
          "default, or pick a free port",
          c.coordinator, r));
    }
  }
  return absl::OkStatus();
}

absl::Status check_cabling(const Config& c) {
  if (c.discover_devices) return absl::OkStatus();  // no cable known yet
  return check_topology(c.devices,
                        c.ring ? TopologyNeeds::kRing : TopologyNeeds::kMesh,
                        {.source = "device JSON", .use_ring = kUseRing});
}

}  // namespace

absl::StatusOr<HostPort> parse_host_port(std::string_view text) {
  return net::split_host_port(text);
}

Topology single_rank_topology() { return *Topology::mesh(1); }

absl::StatusOr<Config> Config::from_environment(
    const EnvLookup& getenv, const DeviceLoader& load_devices,
    const HostsLoader& load_hosts) {
  absl::StatusOr<Found<uint32_t>> rank = read_rank(getenv);
  if (!rank.ok()) return rank.status();
  absl::StatusOr<Cabling> cabling =
      read_cabling(getenv, load_devices, load_hosts);
  if (!cabling.ok()) return cabling.status();
  absl::StatusOr<std::optional<Found<std::string>>> coordinator =
      read_aliases<std::string>(
          getenv,
          {"WEFT_COORDINATOR", "JACCL_COORDINATOR", "MLX_JACCL_COORDINATOR"},
          parse_coordinator);
  if (!coordinator.ok()) return coordinator.status();
  absl::StatusOr<std::optional<Found<bool>>> ring =
      read_aliases<bool>(getenv, {"JACCL_RING", "MLX_JACCL_RING"}, parse_flag);
  if (!ring.ok()) return ring.status();

  Config c;
  c.rank = rank->value;
  c.size = cabling->devices.ranks();
  c.devices = std::move(cabling->devices);
  c.tcp_hosts = std::move(cabling->tcp_hosts);
  c.discover_devices = cabling->discover;
  c.devices_source = std::move(cabling->devices_source);
  if (coordinator->has_value()) c.coordinator = (*coordinator)->value;
  if (ring->has_value()) c.ring = (*ring)->value;
  if (const char* secret = getenv("WEFT_SECRET"); secret != nullptr) {
    c.secret = secret;
  }
  if (c.rank >= c.size && c.discover_devices) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s='%s' but the group size is %u; set it below %u",
                        rank->name, rank->text, c.size, c.size));
  }
  if (c.rank >= c.size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' but the %s lists %u ranks; set it below %u or use a %s with "
        "a row for every rank",
        rank->name, rank->text, cabling->source, c.size, c.size,
        cabling->source));
  }
  if (c.size > 1 && c.coordinator.empty() && !c.tcp_hosts.empty()) {
    absl::StatusOr<std::string> implied = default_tcp_coordinator(c.tcp_hosts);
    if (!implied.ok()) return implied.status();
    c.coordinator = *std::move(implied);
  }
  if (c.size > 1 && c.coordinator.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the %s %u ranks but no coordinator is set: set "
        "JACCL_COORDINATOR (or MLX_JACCL_COORDINATOR, or weft's "
        "WEFT_COORDINATOR) to the host:port where rank 0 listens",
        c.discover_devices ? "group size gives" : "device JSON lists", c.size));
  }
  if (absl::Status s = c.validate(); !s.ok()) return s;
  return c;
}

absl::Status Config::validate() const {
  if (size == 0 || size > Topology::kMaxRanks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "group size %u is outside 1..%u", size, Topology::kMaxRanks));
  }
  if (rank >= size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "rank %u is not below the group's size %u", rank, size));
  }
  if (devices.ranks() != size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the device JSON lists %u ranks but the group's size is %u",
        devices.ranks(), size));
  }
  if (absl::Status s = check_cabling(*this); !s.ok()) return s;
  if (absl::Status s = check_tcp(*this); !s.ok()) return s;
  if (size > 1) {
    absl::StatusOr<HostPort> hp = parse_host_port(coordinator);
    if (!hp.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("coordinator: %s", hp.status().message()));
    }
  }
  if (absl::Status s = check_timeout("connect timeout", connect_timeout_ns);
      !s.ok()) {
    return s;
  }
  return check_timeout("exchange timeout", exchange_timeout_ns);
}

}  // namespace weft
