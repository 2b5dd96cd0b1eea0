#include "rendezvous/tcp_hosts.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/text_file.h"
#include "net/address.h"
#include "nlohmann/json.hpp"

namespace weft {
namespace {

constexpr uint32_t kMaxPort = 65535;

// Where an entry is, for messages: "hosts.json: rank 1's entry 0".
std::string place(std::string_view origin, size_t rank, size_t entry) {
  return absl::StrFormat("%s: rank %u's entry %u", origin, rank, entry);
}

absl::Status check_row_shape(const TcpHosts& hosts, std::string_view origin,
                             size_t rank) {
  const size_t count = hosts[rank].size();
  if (count == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: rank %u's row is empty; list one \"ip:port\" per cable where "
        "that rank listens",
        origin, rank));
  }
  if (count > Topology::kMaxCables) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: rank %u lists %u addresses, more than the %u cables weft "
        "joins a pair with; list at most %u",
        origin, rank, count, Topology::kMaxCables, Topology::kMaxCables));
  }
  if (count != hosts[0].size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: rank 0 lists %u addresses but rank %u lists %u; weft joins "
        "two ranks with one cable per address index (entry c of each row), "
        "so give every rank the same number of addresses",
        origin, hosts[0].size(), rank, count));
  }
  return absl::OkStatus();
}

// One row of the JSON: a list of strings, or one string (one address, as
// MLX's loader reads it).
absl::StatusOr<std::vector<std::string>> parse_row(const nlohmann::json& row,
                                                   std::string_view origin,
                                                   size_t rank) {
  if (row.is_string()) return std::vector<std::string>{row.get<std::string>()};
  if (!row.is_array()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: rank %u's row is %s, not a list of \"ip:port\" strings", origin,
        rank, row.type_name()));
  }
  std::vector<std::string> out;
  for (size_t c = 0; c < row.size(); ++c) {
    if (!row[c].is_string()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s is %s, not an \"ip:port\" string",
                          place(origin, rank, c), row[c].type_name()));
    }
    out.push_back(row[c].get<std::string>());
  }
  return out;
}

}  // namespace

absl::StatusOr<TcpAddress> parse_tcp_address(std::string_view text) {
  absl::StatusOr<net::SocketAddress> a = net::SocketAddress::parse(text);
  if (!a.ok()) return a.status();
  return TcpAddress{a->ip(), a->port(), a->family() == AF_INET6};
}

std::string format_tcp_address(const TcpAddress& a) {
  return a.ipv6 ? absl::StrFormat("[%s]:%u", a.ip, a.port)
                : absl::StrFormat("%s:%u", a.ip, a.port);
}

absl::Status check_tcp_hosts(const TcpHosts& hosts, std::string_view origin) {
  if (hosts.empty() || hosts.size() > Topology::kMaxRanks) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s lists %u ranks; list 1 to %u, one row per rank",
                        origin, hosts.size(), Topology::kMaxRanks));
  }
  // canonical address -> (rank, entry) that named it first
  std::map<std::string, std::pair<size_t, size_t>> seen;
  for (size_t r = 0; r < hosts.size(); ++r) {
    if (absl::Status s = check_row_shape(hosts, origin, r); !s.ok()) return s;
    for (size_t c = 0; c < hosts[r].size(); ++c) {
      absl::StatusOr<TcpAddress> a = parse_tcp_address(hosts[r][c]);
      if (!a.ok()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: %s", place(origin, r, c), a.status().message()));
      }
      if (a->port == 0) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s '%s' has port 0; every rank must know where the others "
            "listen, so give a fixed port",
            place(origin, r, c), hosts[r][c]));
      }
      auto [it, fresh] =
          seen.emplace(format_tcp_address(*a), std::make_pair(r, c));
      if (!fresh) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s '%s' is the same address as rank %u's entry %u; each entry "
            "is one listening socket: give it a port of its own",
            place(origin, r, c), hosts[r][c], it->second.first,
            it->second.second));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TcpHosts> parse_tcp_hosts(std::string_view json_text,
                                         std::string_view origin) {
  const nlohmann::json doc =
      nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not JSON; write a list with one list of \"ip:port\" strings "
        "per rank, e.g. [[\"127.0.0.1:5000\"], [\"127.0.0.1:5001\"]]",
        origin));
  }
  if (!doc.is_array()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s holds a JSON %s, not a list with one list of \"ip:port\" "
        "strings per rank (an mlx.launch hostfile with \"ssh\" and \"ips\" "
        "converts with `weft-devices tcp-hostfile`)",
        origin, doc.type_name()));
  }
  if (doc.size() > Topology::kMaxRanks) {
    return check_tcp_hosts(TcpHosts(doc.size()), origin);
  }
  TcpHosts hosts;
  for (size_t r = 0; r < doc.size(); ++r) {
    absl::StatusOr<std::vector<std::string>> row = parse_row(doc[r], origin, r);
    if (!row.ok()) return row.status();
    hosts.push_back(*std::move(row));
  }
  if (absl::Status s = check_tcp_hosts(hosts, origin); !s.ok()) return s;
  return hosts;
}

absl::StatusOr<TcpHosts> load_tcp_hosts(const std::string& path) {
  absl::StatusOr<std::string> text =
      base::read_text_file(path, kMaxHostfileBytes, "hostfile");
  if (!text.ok()) return text.status();
  return parse_tcp_hosts(*text, path);
}

Topology tcp_mesh_topology(const TcpHosts& hosts) {
  nlohmann::json doc = nlohmann::json::array();
  for (size_t i = 0; i < hosts.size(); ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (size_t j = 0; j < hosts.size(); ++j) {
      row.push_back(i == j ? nlohmann::json(nullptr)
                           : nlohmann::json(hosts[i]));
    }
    doc.push_back(std::move(row));
  }
  // The JSON is well formed and the addresses are distinct, non-empty
  // names, so Topology's checks pass.
  absl::StatusOr<Topology> topology = Topology::parse_json(doc.dump());
  return *std::move(topology);
}

absl::StatusOr<std::string> default_tcp_coordinator(const TcpHosts& hosts) {
  absl::StatusOr<TcpAddress> first = parse_tcp_address(hosts[0][0]);
  if (!first.ok()) return first.status();

  uint32_t highest = 0;
  for (const std::vector<std::string>& row : hosts) {
    for (const std::string& entry : row) {
      absl::StatusOr<TcpAddress> a = parse_tcp_address(entry);
      if (!a.ok()) return a.status();
      if (a->ip != first->ip) continue;
      highest = std::max<uint32_t>(highest, a->port);
    }
  }
  if (highest + 1 > kMaxPort) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the hostfile uses port %u on %s, so no port above it is left for "
        "the side channel; set WEFT_COORDINATOR to a free host:port of rank "
        "0",
        highest, first->ip));
  }
  return format_tcp_address(
      TcpAddress{first->ip, static_cast<uint16_t>(highest + 1), first->ipv6});
}

}  // namespace weft
