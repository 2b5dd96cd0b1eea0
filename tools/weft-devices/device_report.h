// weft-devices' report: what the RDMA library lists, whether each device is
// ready for weft (port ACTIVE, an IPv4-mapped GID), one diagnosis line per
// problem with what to do, and the exit code that sums it up.
#ifndef WEFT_TOOLS_WEFT_DEVICES_DEVICE_REPORT_H_
#define WEFT_TOOLS_WEFT_DEVICES_DEVICE_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/cli/exit_status.h"
#include "verbs/device_info.h"

namespace weft::tools::weft_devices {

// Exit codes (also in --help and docs/verbs-macos.md): weft's tools' 0, 1
// and 2 (tools/cli/exit_status.h), and weft-devices' own 3 and 4.
inline constexpr int kExitReady = cli::kExitOk;  // every device ready
// The library cannot be loaded or fails to list its devices.
inline constexpr int kExitFailed = cli::kExitFailed;
inline constexpr int kExitBadInput = cli::kExitBadInput;  // bad flags
inline constexpr int kExitNoDevices = 3;  // the library lists no devices
inline constexpr int kExitNotReady = 4;   // some device is not ready

struct Report {
  // kLibrary: not loaded; kProvider: loaded, but it could not answer (the
  // simulated provider's environment is wrong, say); kNoDevices: it
  // answered with none.
  enum class Failure { kNone, kLibrary, kProvider, kNoDevices };
  std::string library;  // the path weft loaded (or tried to)
  Failure failure = Failure::kNone;
  absl::Status status;  // why loading or listing failed
  std::vector<verbs::DeviceInfo> devices;
};

// Loads `library` (empty: $WEFT_VERBS_LIBRARY or the system's) and lists
// its devices. When listing fails and the library is weft's simulated
// provider, its own reason (weft_sim_verbs_last_error(), e.g. a bad
// WEFT_SIM_VERBS_RANKS) is the report's status, not the missing driver a
// real library's failure would mean.
Report make_report(const std::string& library);

// What is wrong with `device`, one line per problem (empty: ready).
std::vector<std::string> diagnose(const verbs::DeviceInfo& device);
int exit_code(const Report& report);

// The table, optionally every GID and the device limits, then diagnosis
// lines.
std::string format_text(const Report& report, bool verbose);
// The report as JSON in weft's shared vocabulary (docs/json.md):
//   {"format_version", "tool": "weft-devices", "library", "devices":
//    [{"name", "node_guid", "ready", "problems", "port_state",
//      "active_mtu_bytes", "link_layer", "ipv4", "gids": [{"index", "gid",
//      "kind"}]}], "diagnosis", "exit_code"}
// 2: the shared vocabulary (format_version and tool added; active_mtu
// became active_mtu_bytes); 1 had no version key.
inline constexpr int kJsonFormatVersion = 2;
std::string format_json(const Report& report);

}  // namespace weft::tools::weft_devices

#endif  // WEFT_TOOLS_WEFT_DEVICES_DEVICE_REPORT_H_
