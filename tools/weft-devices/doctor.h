// `weft-devices doctor`: what a Mac's first run needs, checked one finding
// a line, each with the command that fixes it. Portable checks (the RDMA
// library's devices, ports, GIDs, MTU and limits through weft's loader;
// each rdma_enX's interface enX through getifaddrs) run everywhere; the
// macOS checks (`rdma_ctl status`, `sw_vers`, `system_profiler
// SPThunderboltDataType`, `ifconfig`'s bridges: macos_parsers.h) run only
// on a Mac, through a command runner with a deadline.
//
// Exit status: 0 when no finding blocks a first run (warnings and notes
// may remain), 1 when one does, 2 for bad flags.
#ifndef WEFT_TOOLS_WEFT_DEVICES_DOCTOR_H_
#define WEFT_TOOLS_WEFT_DEVICES_DOCTOR_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "tools/weft-devices/device_report.h"
#include "tools/weft-devices/finding.h"

namespace weft::tools::weft_devices {

inline constexpr int kDoctorExitClear = cli::kExitOk;        // nothing blocks
inline constexpr int kDoctorExitBlocked = cli::kExitFailed;  // something does

// One network interface as getifaddrs lists it.
struct InterfaceInfo {
  std::string name;
  std::vector<std::string> ipv4;             // "169.254.12.1"
  std::vector<std::string> ipv6_link_local;  // "fe80::1"
  int mtu = -1;                              // -1: unknown
};

// This machine's interfaces, in getifaddrs' order.
std::vector<InterfaceInfo> read_interfaces();

// The interface behind an RDMA device: a Mac's rdma_en2 is en2. "" for a
// name without the rdma_ prefix (rdma-core's mlx5_0, the simulated sim_*).
std::string interface_of(std::string_view device);

// What the library's devices say: the library loaded, and for each device
// its port, GID, interface (address and MTU) and queue-pair and
// memory-region budgets. A device that is not usable (port down, no
// usable GID) blocks only when no device is usable: a Mac's spare ports
// have no cable.
std::vector<Finding> device_findings(const Report& report,
                                     const std::vector<InterfaceInfo>& interfaces);

// A command's outcome: `ran` false when it could not be started, did not
// finish by its deadline or was killed (`problem` says which).
struct CommandResult {
  bool ran = false;
  int exit_code = -1;
  std::string output;  // stdout and stderr
  std::string problem;
};
using CommandRunner =
    std::function<CommandResult(const std::vector<std::string>& argv)>;

// Runs argv[0] (looked up on PATH) with stdin closed, collecting at most
// 1 MiB of output; kills it at `deadline`.
CommandResult run_command(const std::vector<std::string>& argv,
                          absl::Duration deadline);
// run_command() with a deadline of 30 seconds (system_profiler is slow).
CommandRunner default_runner();

// The macOS checks, each command through `run`; `rdma_interfaces` are the
// enX behind the library's rdma_enX devices (for the bridge check).
std::vector<Finding> macos_findings(const CommandRunner& run,
                                    const std::vector<std::string>& rdma_interfaces);

struct DoctorReport {
  std::string library;
  std::vector<Finding> findings;
};

// Every check; the macOS ones only when `on_mac` (else one note saying
// they were not run).
DoctorReport make_doctor_report(const Report& devices,
                                const std::vector<InterfaceInfo>& interfaces,
                                bool on_mac, const CommandRunner& run);

int doctor_exit_code(const DoctorReport& report);

// One line per finding, "<severity> <subject>: <text>" and, when there is
// one, "; fix: <fix>", then a summary line.
std::string format_doctor_text(const DoctorReport& report);
// {"format_version", "tool": "weft-devices", "command": "doctor",
//  "library", "findings": [{"severity", "subject", "finding", "fix"}],
//  "blocking", "warnings", "exit_code"}
inline constexpr int kDoctorJsonFormatVersion = 1;
std::string format_doctor_json(const DoctorReport& report);

}  // namespace weft::tools::weft_devices

#endif  // WEFT_TOOLS_WEFT_DEVICES_DOCTOR_H_
