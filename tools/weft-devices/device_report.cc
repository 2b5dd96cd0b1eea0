#include "tools/weft-devices/device_report.h"

#include <dlfcn.h>

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/absl_compat.h"
#include "nlohmann/json.hpp"

namespace weft::tools::weft_devices {
namespace {

constexpr std::string_view kLinkLocalOnly =
    "no IPv4-mapped GID, only link-local: weft falls back to link-local, "
    "which peers may not reach; give the Thunderbolt interface an IPv4 "
    "address, e.g. `sudo ifconfig enX inet 169.254.x.y netmask 255.255.0.0`";

std::string guid_text(const verbs::DeviceInfo& d) {
  return d.node_guid.has_value() ? absl::StrFormat("%016x", *d.node_guid)
                                 : std::string("-");
}

std::string ipv4_text(const verbs::DeviceInfo& d) {
  auto gid = d.ipv4_gid();
  return gid.has_value() ? verbs::gid_ipv4_text(gid->gid) : std::string("-");
}

std::string gid_kinds(const verbs::DeviceInfo& d) {
  if (d.gids.empty()) return "none";
  std::vector<std::string> parts;
  for (const verbs::GidEntry& g : d.gids) {
    parts.push_back(
        absl::StrFormat("%d %s", g.index, verbs::gid_kind_name(g.kind)));
  }
  return absl::StrJoin(parts, ", ");
}

// What the simulated provider says it could not do, or "" for any other
// library (which lacks weft_sim_verbs_last_error) or when it has no error.
// The library is loaded already; RTLD_NOLOAD only finds it again.
std::string provider_error(const verbs::VerbsLibrary& library) {
  void* handle = dlopen(library.path().c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return "";
  using LastError = const char* (*)();
  const auto last_error =
      reinterpret_cast<LastError>(dlsym(handle, "weft_sim_verbs_last_error"));
  const char* text = last_error != nullptr ? last_error() : nullptr;
  std::string out = text != nullptr ? text : "";
  dlclose(handle);  // drops only the reference RTLD_NOLOAD took
  return out;
}

std::vector<std::string> diagnosis_lines(const Report& report) {
  std::vector<std::string> lines;
  if (!report.status.ok()) {
    lines.push_back(std::string(report.status.message()));
    return lines;
  }
  for (const verbs::DeviceInfo& d : report.devices) {
    for (const std::string& problem : diagnose(d)) {
      lines.push_back(absl::StrFormat("%s: %s", d.name, problem));
    }
  }
  if (lines.empty()) {
    lines.push_back(absl::StrFormat(
        "ready: %u device(s), every port active with an IPv4-mapped GID",
        report.devices.size()));
  }
  return lines;
}

void append_details(const verbs::DeviceInfo& d, std::string* out) {
  for (const verbs::GidEntry& g : d.gids) {
    absl::StrAppendFormat(out, "    gid[%d] %s (%s)\n", g.index,
                          verbs::gid_text(g.gid), verbs::gid_kind_name(g.kind));
  }
  if (d.limits.has_value()) {
    absl::StrAppendFormat(
        out,
        "    limits: %d queue pairs, %d memory regions, %d work requests "
        "per queue, %d completion queue entries\n",
        d.limits->max_qp, d.limits->max_mr, d.limits->max_qp_wr,
        d.limits->max_cqe);
  }
}

}  // namespace

Report make_report(const std::string& library) {
  Report report;
  report.library =
      library.empty() ? verbs::VerbsLibrary::default_path() : library;
  absl::StatusOr<const verbs::VerbsLibrary*> loaded =
      verbs::VerbsLibrary::load(library);
  if (!loaded.ok()) {
    report.failure = Report::Failure::kLibrary;
    report.status = loaded.status();
    return report;
  }
  absl::StatusOr<std::vector<verbs::DeviceInfo>> devices =
      verbs::list_devices(**loaded);
  if (!devices.ok()) {
    const std::string provider = provider_error(**loaded);
    report.failure = provider.empty() ? Report::Failure::kNoDevices
                                      : Report::Failure::kProvider;
    report.status =
        provider.empty()
            ? devices.status()
            : absl::FailedPreconditionError(absl::StrCat(
                  provider, " (", (*loaded)->path(),
                  " could not list its devices; fix that and run again)"));
    return report;
  }
  report.devices = *std::move(devices);
  return report;
}

std::vector<std::string> diagnose(const verbs::DeviceInfo& d) {
  if (!d.status.ok()) return {std::string(d.status.message())};
  std::vector<std::string> problems;
  if (!d.port_active()) {
    problems.push_back(absl::StrFormat(
        "port %u is %s; %s", static_cast<unsigned>(verbs::kPort),
        verbs::port_state_name(d.port_state), verbs::port_down_causes()));
  }
  if (!d.ipv4_gid().has_value()) {
    problems.push_back(verbs::choose_gid(d.gids).has_value()
                           ? std::string(kLinkLocalOnly)
                           : std::string(verbs::no_usable_gid_remedy()));
  }
  return problems;
}

int exit_code(const Report& report) {
  switch (report.failure) {
    case Report::Failure::kLibrary:
    case Report::Failure::kProvider:
      return kExitFailed;
    case Report::Failure::kNoDevices:
      return kExitNoDevices;
    case Report::Failure::kNone:
      break;
  }
  for (const verbs::DeviceInfo& d : report.devices) {
    if (!diagnose(d).empty()) return kExitNotReady;
  }
  return kExitReady;
}

std::string format_text(const Report& report, bool verbose) {
  std::string out = absl::StrFormat("library: %s\n", report.library);
  if (report.status.ok()) {
    constexpr const char* kRow = "%-16s %-16s %-17s %-4s %-11s %-15s %s\n";
    absl::StrAppendFormat(&out, kRow, "device", "node GUID", "port 1 state",
                          "MTU", "link layer", "IPv4", "GIDs");
    for (const verbs::DeviceInfo& d : report.devices) {
      if (!d.status.ok()) {
        absl::StrAppendFormat(&out, kRow, d.name, guid_text(d), "-", "-", "-",
                              "-", "-");
        continue;
      }
      absl::StrAppendFormat(&out, kRow, d.name, guid_text(d),
                            verbs::port_state_name(d.port_state),
                            absl::StrCat(verbs::mtu_bytes(d.active_mtu)),
                            verbs::link_layer_name(d.link_layer), ipv4_text(d),
                            gid_kinds(d));
      if (verbose) append_details(d, &out);
    }
  }
  for (const std::string& line : diagnosis_lines(report)) {
    absl::StrAppendFormat(&out, "diagnosis: %s\n", line);
  }
  return out;
}

std::string format_json(const Report& report) {
  // Keys in the order written, format_version and tool first: weft's shared
  // JSON vocabulary (docs/json.md).
  nlohmann::ordered_json doc;
  doc["format_version"] = kJsonFormatVersion;
  doc["tool"] = "weft-devices";
  doc["library"] = report.library;
  doc["devices"] = nlohmann::ordered_json::array();
  for (const verbs::DeviceInfo& d : report.devices) {
    nlohmann::ordered_json device = {{"name", d.name},
                                     {"node_guid", guid_text(d)},
                                     {"ready", diagnose(d).empty()},
                                     {"problems", diagnose(d)}};
    if (d.status.ok()) {
      device["port_state"] = std::string(verbs::port_state_name(d.port_state));
      device["active_mtu_bytes"] = verbs::mtu_bytes(d.active_mtu);
      device["link_layer"] = std::string(verbs::link_layer_name(d.link_layer));
      device["ipv4"] = ipv4_text(d);
      nlohmann::ordered_json gids = nlohmann::ordered_json::array();
      for (const verbs::GidEntry& g : d.gids) {
        gids.push_back({{"index", g.index},
                        {"gid", verbs::gid_text(g.gid)},
                        {"kind", std::string(verbs::gid_kind_name(g.kind))}});
      }
      device["gids"] = gids;
    }
    doc["devices"].push_back(device);
  }
  doc["diagnosis"] = diagnosis_lines(report);
  doc["exit_code"] = exit_code(report);
  return doc.dump(2, ' ', /*ensure_ascii=*/false,
                  nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace weft::tools::weft_devices
