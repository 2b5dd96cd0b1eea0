// The macOS commands `weft-devices doctor` runs on a Mac, read from their
// text output. Each parser is a pure function of the text: output it does
// not recognise (another macOS release, a localised system, an error) is a
// finding that says which command to run and what to look for, never a
// guess. tests/tools/data/doctor/ holds the public samples each parser is
// tested against, each naming its source.
#ifndef WEFT_TOOLS_WEFT_DEVICES_MACOS_PARSERS_H_
#define WEFT_TOOLS_WEFT_DEVICES_MACOS_PARSERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "tools/weft-devices/finding.h"

namespace weft::tools::weft_devices {

// The first macOS release with RDMA over Thunderbolt (Apple's TN3205).
inline constexpr int kRdmaMacosMajor = 26;
inline constexpr int kRdmaMacosMinor = 2;
// The fastest Thunderbolt 4 link; RDMA needs Thunderbolt 5 (80 Gb/s and up).
inline constexpr int kThunderbolt4Gbps = 40;

// `rdma_ctl status`: "enabled" is ready, "disabled" blocks (the fix is
// `rdma_ctl enable` in Recovery); anything else says what to run.
Finding rdma_ctl_finding(std::string_view text);

// `sw_vers`: its ProductVersion against macOS 26.2.
Finding macos_version_finding(std::string_view text);

// `system_profiler SPThunderboltDataType`: one finding per bus's own port
// (not the ports of devices plugged into it), by the speed it reports: 40
// Gb/s or less is Thunderbolt 4 or older, which never does RDMA. A Mac none
// of whose ports is faster blocks.
std::vector<Finding> thunderbolt_findings(std::string_view text);

// `ifconfig`: every bridge member (`member: enX`) that is one of
// `rdma_interfaces` (enX of each rdma_enX) blocks: a Thunderbolt Bridge
// holding an RDMA port loops traffic and keeps the port down.
std::vector<Finding> bridge_findings(
    std::string_view text, const std::vector<std::string>& rdma_interfaces);

}  // namespace weft::tools::weft_devices

#endif  // WEFT_TOOLS_WEFT_DEVICES_MACOS_PARSERS_H_
