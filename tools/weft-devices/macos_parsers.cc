#include "tools/weft-devices/macos_parsers.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "base/absl_compat.h"

namespace weft::tools::weft_devices {
namespace {

constexpr size_t kMaxQuoted = 80;

// `text` as one short line, for quoting output weft did not recognise.
std::string quote_output(absl::string_view text) {
  std::string line(absl::StripAsciiWhitespace(text));
  std::replace(line.begin(), line.end(), '\n', ' ');
  std::replace(line.begin(), line.end(), '\t', ' ');
  if (line.size() > kMaxQuoted) line = line.substr(0, kMaxQuoted) + "...";
  return absl::StrCat("\"", line, "\"");
}

size_t indent_of(absl::string_view line) {
  const size_t first = line.find_first_not_of(" \t");
  return first == absl::string_view::npos ? line.size() : first;
}

// "Key: value" at any indent: the value when the stripped line starts with
// `key` and a colon.
std::optional<absl::string_view> value_of(absl::string_view line,
                                         absl::string_view key) {
  absl::string_view s = absl::StripAsciiWhitespace(line);
  if (!absl::ConsumePrefix(&s, key) || !absl::ConsumePrefix(&s, ":")) {
    return std::nullopt;
  }
  return absl::StripAsciiWhitespace(s);
}

// The first number in `speed` that "Gb/s" follows ("Up to 40 Gb/s x1": 40).
std::optional<int> gbps_of(absl::string_view speed) {
  const size_t unit = speed.find("Gb/s");
  if (unit == absl::string_view::npos) return std::nullopt;
  absl::string_view before = absl::StripTrailingAsciiWhitespace(speed.substr(0, unit));
  const size_t start = before.find_last_of(' ');
  const absl::string_view number =
      start == absl::string_view::npos ? before : before.substr(start + 1);
  int gbps = 0;
  if (!absl::SimpleAtoi(number, &gbps) || gbps <= 0) return std::nullopt;
  return gbps;
}

struct ThunderboltPort {
  std::string bus;         // "Thunderbolt/USB4 Bus 2"
  std::string status;      // "Device connected", "No device connected"
  std::string speed;       // "80 Gb/s", "Up to 40 Gb/s x1"
  std::string receptacle;  // "3"
};

// Each bus's own Port block: the "Port:" line at the bus's key indent, and
// the keys one level under it (a device plugged into the port, and that
// device's own ports, sit at other indents and are skipped).
std::vector<ThunderboltPort> thunderbolt_ports(absl::string_view text) {
  constexpr size_t kUnset = absl::string_view::npos;
  std::vector<ThunderboltPort> ports;
  std::string bus;
  size_t bus_key_indent = kUnset;
  size_t port_key_indent = kUnset;
  bool in_port = false;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (stripped.empty()) continue;
    const size_t indent = indent_of(line);
    if (absl::StartsWith(stripped, "Thunderbolt") &&
        absl::StrContains(stripped, "Bus") && absl::EndsWith(stripped, ":")) {
      bus = std::string(absl::StripSuffix(stripped, ":"));
      bus_key_indent = kUnset;
      in_port = false;
      continue;
    }
    if (bus.empty()) continue;
    if (bus_key_indent == kUnset) bus_key_indent = indent;
    if (indent == bus_key_indent) {
      in_port = stripped == "Port:";
      port_key_indent = kUnset;
      if (in_port) ports.push_back({bus, "", "", ""});
      continue;
    }
    if (!in_port || indent < bus_key_indent) continue;
    if (port_key_indent == kUnset) port_key_indent = indent;
    if (indent != port_key_indent) continue;
    ThunderboltPort& port = ports.back();
    if (auto v = value_of(line, "Status")) port.status = std::string(*v);
    if (auto v = value_of(line, "Speed")) port.speed = std::string(*v);
    if (auto v = value_of(line, "Receptacle")) port.receptacle = std::string(*v);
  }
  return ports;
}

}  // namespace

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::kOk:
      return "ok";
    case Severity::kNote:
      return "note";
    case Severity::kWarning:
      return "warn";
    case Severity::kBlocking:
      return "BLOCKS";
  }
  return "note";
}

Finding rdma_ctl_finding(std::string_view text_in) {
  const absl::string_view text = base::to_absl(text_in);
  const std::string said = absl::AsciiStrToLower(absl::StripAsciiWhitespace(text));
  constexpr char kEnable[] =
      "start up in macOS Recovery, open Utilities > Terminal, run `rdma_ctl "
      "enable`, restart";
  if (said == "enabled") {
    return {Severity::kOk, "RDMA", "`rdma_ctl status` says enabled", ""};
  }
  if (said == "disabled") {
    return {Severity::kBlocking, "RDMA",
            "`rdma_ctl status` says disabled: RDMA over Thunderbolt is off",
            kEnable};
  }
  return {Severity::kWarning, "RDMA",
          absl::StrCat("`rdma_ctl status` said ", quote_output(text),
                       ", not enabled or disabled"),
          absl::StrCat("run `rdma_ctl status`: it must print `enabled`; if "
                       "it does not, ",
                       kEnable)};
}

Finding macos_version_finding(std::string_view text_in) {
  const absl::string_view text = base::to_absl(text_in);
  const std::string fix = absl::StrFormat(
      "update macOS to %d.%d or later (System Settings > General > Software "
      "Update)",
      kRdmaMacosMajor, kRdmaMacosMinor);
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    const std::optional<absl::string_view> version = value_of(line, "ProductVersion");
    if (!version.has_value()) continue;
    std::vector<absl::string_view> parts = absl::StrSplit(*version, '.');
    int major = 0;
    int minor = 0;
    if (!absl::SimpleAtoi(parts[0], &major) ||
        (parts.size() > 1 && !absl::SimpleAtoi(parts[1], &minor))) {
      break;
    }
    if (major > kRdmaMacosMajor ||
        (major == kRdmaMacosMajor && minor >= kRdmaMacosMinor)) {
      return {Severity::kOk, "macOS", absl::StrCat("macOS ", *version), ""};
    }
    return {Severity::kBlocking, "macOS",
            absl::StrFormat("macOS %s: RDMA over Thunderbolt needs %d.%d or "
                            "later",
                            *version, kRdmaMacosMajor, kRdmaMacosMinor),
            fix};
  }
  return {Severity::kWarning, "macOS",
          absl::StrCat("no version in `sw_vers`'s output ", quote_output(text)),
          absl::StrFormat("run `sw_vers`: ProductVersion must be %d.%d or "
                          "later; if not, %s",
                          kRdmaMacosMajor, kRdmaMacosMinor, fix)};
}

std::vector<Finding> thunderbolt_findings(std::string_view text_in) {
  const absl::string_view text = base::to_absl(text_in);
  const std::vector<ThunderboltPort> ports = thunderbolt_ports(text);
  std::vector<Finding> findings;
  size_t fast = 0;
  for (const ThunderboltPort& port : ports) {
    const std::string subject =
        port.receptacle.empty()
            ? port.bus
            : absl::StrCat("Thunderbolt receptacle ", port.receptacle);
    const std::optional<int> gbps = gbps_of(port.speed);
    const std::string state = port.status.empty() ? "" : absl::StrCat(", ", absl::AsciiStrToLower(port.status));
    if (!gbps.has_value()) {
      findings.push_back(
          {Severity::kWarning, subject,
           absl::StrCat(port.bus, ": no speed in its Port section (Speed: ",
                        quote_output(port.speed), ")"),
           "run `system_profiler SPThunderboltDataType`: each bus's Port "
           "must show Speed 80 Gb/s or more (Thunderbolt 5)"});
      continue;
    }
    if (*gbps > kThunderbolt4Gbps) {
      ++fast;
      findings.push_back({Severity::kOk, subject,
                          absl::StrCat(port.bus, ": Speed ", port.speed,
                                       " (Thunderbolt 5)", state),
                          ""});
      continue;
    }
    findings.push_back(
        {Severity::kWarning, subject,
         absl::StrCat(port.bus, ": Speed ", port.speed, state,
                      ": Thunderbolt 4 or older, which never does RDMA"),
         "cable the Macs through Thunderbolt 5 ports (80 Gb/s or more) with "
         "Thunderbolt 5 cables"});
  }
  if (ports.empty()) {
    findings.push_back(
        {Severity::kWarning, "Thunderbolt",
         "no bus with a Port section in `system_profiler "
         "SPThunderboltDataType`'s output",
         "run `system_profiler SPThunderboltDataType`: under each \"Bus\", "
         "Port's Speed 80 Gb/s or \"Up to 120 Gb/s\" is Thunderbolt 5; 40 "
         "Gb/s is Thunderbolt 4, which never does RDMA"});
  } else if (fast == 0) {
    findings.push_back(
        {Severity::kBlocking, "Thunderbolt",
         absl::StrFormat("none of this Mac's %u Thunderbolt ports is faster "
                         "than %d Gb/s: no Thunderbolt 5, so no RDMA",
                         ports.size(), kThunderbolt4Gbps),
         "use Macs with Thunderbolt 5 ports for RDMA; others run weft over "
         "TCP (docs/tcp.md)"});
  }
  return findings;
}

std::vector<Finding> bridge_findings(
    std::string_view text_in, const std::vector<std::string>& rdma_interfaces) {
  const absl::string_view text = base::to_absl(text_in);
  std::vector<Finding> findings;
  std::string interface;  // the interface whose block we are in
  size_t interfaces = 0;
  std::vector<std::pair<std::string, std::vector<std::string>>> bridges;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (line.empty()) continue;
    if (indent_of(line) == 0) {
      const size_t colon = line.find(": flags=");
      interface = colon == absl::string_view::npos
                      ? std::string()
                      : std::string(line.substr(0, colon));
      if (!interface.empty()) ++interfaces;
      continue;
    }
    const std::optional<absl::string_view> member = value_of(line, "member");
    if (interface.empty() || !member.has_value()) continue;
    const std::string name(member->substr(0, member->find(' ')));
    if (bridges.empty() || bridges.back().first != interface) {
      bridges.push_back({interface, {}});
    }
    bridges.back().second.push_back(name);
  }
  if (interfaces == 0) {
    findings.push_back(
        {Severity::kWarning, "bridges",
         "no interface in `ifconfig`'s output",
         "run `ifconfig`: no bridge (bridge0, ...) may list `member: enX` "
         "for the enX of an RDMA device rdma_enX"});
    return findings;
  }
  size_t blocking = 0;
  for (const auto& [bridge, members] : bridges) {
    for (const std::string& member : members) {
      if (std::find(rdma_interfaces.begin(), rdma_interfaces.end(), member) ==
          rdma_interfaces.end()) {
        continue;
      }
      ++blocking;
      findings.push_back(
          {Severity::kBlocking, bridge,
           absl::StrCat(bridge, " contains ", member, ", the interface of rdma_",
                        member,
                        ": a Thunderbolt Bridge holding an RDMA port loops "
                        "traffic"),
           absl::StrCat("`sudo ifconfig ", bridge, " deletem ", member,
                        "` (until restart), or remove the port from System "
                        "Settings > Network > Thunderbolt Bridge")});
    }
  }
  if (blocking == 0) {
    std::vector<std::string> names;
    for (const auto& [bridge, members] : bridges) {
      names.push_back(absl::StrCat(bridge, " (", absl::StrJoin(members, ", "), ")"));
    }
    findings.push_back(
        {Severity::kOk, "bridges",
         names.empty()
             ? std::string("no bridge has members")
             : absl::StrCat("no bridge contains an RDMA port: ",
                            absl::StrJoin(names, "; ")),
         ""});
  }
  return findings;
}

}  // namespace weft::tools::weft_devices
