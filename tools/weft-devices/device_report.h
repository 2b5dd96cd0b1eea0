// weft-devices' report: what the RDMA library lists, whether each device is
// ready for weft (port ACTIVE, an IPv4-mapped GID), one diagnosis line per
// problem with what to do, and the exit code that sums it up.
#ifndef WEFT_TOOLS_WEFT_DEVICES_DEVICE_REPORT_H_
#define WEFT_TOOLS_WEFT_DEVICES_DEVICE_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "verbs/device_info.h"

namespace weft::verbs::cli {

// Exit codes (also in --help and docs/verbs-macos.md).
inline constexpr int kExitReady = 0;      // every device ready
inline constexpr int kExitUsage = 1;      // bad flags
inline constexpr int kExitNoLibrary = 2;  // the library cannot be loaded
inline constexpr int kExitNoDevices = 3;  // the library lists no devices
inline constexpr int kExitNotReady = 4;   // some device is not ready

struct Report {
  enum class Failure { kNone, kLibrary, kNoDevices };
  std::string library;  // the path weft loaded (or tried to)
  Failure failure = Failure::kNone;
  absl::Status status;  // why loading or listing failed
  std::vector<DeviceInfo> devices;
};

// Loads `library` (empty: $WEFT_VERBS_LIBRARY or the system's) and lists
// its devices.
Report make_report(const std::string& library);

// What is wrong with `device`, one line per problem (empty: ready).
std::vector<std::string> diagnose(const DeviceInfo& device);
int exit_code(const Report& report);

// The table, optionally every GID and the device limits, then diagnosis
// lines.
std::string format_text(const Report& report, bool verbose);
std::string format_json(const Report& report);

}  // namespace weft::verbs::cli

#endif  // WEFT_TOOLS_WEFT_DEVICES_DEVICE_REPORT_H_
