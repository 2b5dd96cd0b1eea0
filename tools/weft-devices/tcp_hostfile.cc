#include "tools/weft-devices/tcp_hostfile.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "rendezvous/tcp_hosts.h"

namespace weft::tools::weft_devices {
namespace {

constexpr uint32_t kMaxPort = 65535;

// The hosts list of mlx.launch's file: the document itself, or its "hosts".
absl::StatusOr<nlohmann::json> hosts_of(const nlohmann::json& doc,
                                        std::string_view origin) {
  if (doc.is_array()) return doc;
  if (doc.is_object() && doc.contains("hosts") && doc["hosts"].is_array()) {
    return doc["hosts"];
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is not an mlx.launch hostfile: write a list of hosts, each "
      "{\"ssh\": \"name\", \"ips\": [\"192.168.1.10\"]}, or an object whose "
      "\"hosts\" is that list",
      origin));
}

// Host `index`'s IPs, as weft writes them before a port ("10.0.0.1",
// "[fe80::1]").
absl::StatusOr<std::vector<std::string>> ips_of(const nlohmann::json& host,
                                                std::string_view origin,
                                                size_t index) {
  const std::string who =
      host.is_object() && host.contains("ssh") && host["ssh"].is_string()
          ? absl::StrFormat("host %u (\"%s\")", index,
                            host["ssh"].get<std::string>())
          : absl::StrFormat("host %u", index);
  if (!host.is_object() || !host.contains("ips") || !host["ips"].is_array() ||
      host["ips"].empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: %s has no \"ips\"; the ring backend talks over IP addresses, not "
        "host names: give it \"ips\": [\"its address\"]",
        origin, who));
  }
  std::vector<std::string> out;
  for (const nlohmann::json& ip : host["ips"]) {
    const std::string text = ip.is_string() ? ip.get<std::string>() : "";
    // An IP with a colon is IPv6: try it in brackets.
    const bool v6 = text.find(':') != std::string::npos;
    const std::string written = v6 ? "[" + text + "]" : text;
    absl::StatusOr<TcpAddress> parsed = parse_tcp_address(written + ":1");
    if (text.empty() || !parsed.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s's ip %s is not a numeric IPv4 or IPv6 address", origin, who,
          ip.dump()));
    }
    out.push_back(written);
  }
  return out;
}

}  // namespace

absl::StatusOr<TcpHosts> ring_hosts_from_launch_hostfile(
    std::string_view json_text, std::string_view origin, uint32_t starting_port,
    uint32_t cables_per_ip) {
  const nlohmann::json doc =
      nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not JSON; check its brackets and quotes", origin));
  }
  absl::StatusOr<nlohmann::json> hosts = hosts_of(doc, origin);
  if (!hosts.ok()) return hosts.status();
  TcpHosts out;
  uint64_t port = starting_port;
  for (size_t h = 0; h < hosts->size(); ++h) {
    absl::StatusOr<std::vector<std::string>> ips =
        ips_of((*hosts)[h], origin, h);
    if (!ips.ok()) return ips.status();
    std::vector<std::string> row;
    for (const std::string& ip : *ips) {
      for (uint32_t c = 0; c < cables_per_ip; ++c, ++port) {
        if (port > kMaxPort) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "%s: host %u's addresses run past port %u; start lower than "
              "%u",
              origin, h, kMaxPort, starting_port));
        }
        row.push_back(absl::StrFormat("%s:%u", ip, port));
      }
    }
    out.push_back(std::move(row));
  }
  if (absl::Status s = check_tcp_hosts(out, origin); !s.ok()) return s;
  return out;
}

std::string format_ring_hostfile(const TcpHosts& hosts) {
  std::vector<std::string> rows;
  for (const std::vector<std::string>& row : hosts) {
    rows.push_back("[\"" + absl::StrJoin(row, "\", \"") + "\"]");
  }
  return "[" + absl::StrJoin(rows, ", ") + "]\n";
}

}  // namespace weft::tools::weft_devices
