// weft-devices: lists the RDMA devices weft can use, like ibv_devices, with
// port 1's state, the IPv4 address from the GID table, GID kinds, active MTU
// and link layer, and a diagnosis line for whatever is not ready.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "fabric/absl_compat.h"
#include "tools/cli/exit_status.h"
#include "tools/cli/flag_parse.h"
#include "tools/cli/flag_scope.h"
#include "tools/weft-devices/device_report.h"

ABSL_FLAG(std::string, library, "",
          "RDMA library to load (default: $WEFT_VERBS_LIBRARY, else "
          "librdma.dylib on macOS, libibverbs.so.1 on Linux)");
ABSL_FLAG(bool, json, false, "print the report as JSON");
ABSL_FLAG(bool, verbose, false, "also print every GID and the device limits");

namespace {

const weft::sim::cli::FlagSet kDevicesFlags("weft-devices",
                                            "what to load and print",
                                            FLAGS_library, FLAGS_json,
                                            FLAGS_verbose);
constexpr const weft::sim::cli::FlagSet* kFlagSets[] = {&kDevicesFlags};

constexpr char kUsage[] =
    "lists RDMA devices and says whether weft can use them.\n"
    "usage: weft-devices [--library=PATH] [--json] [--verbose]\n"
    "exit codes: 0 every device ready; 1 the RDMA library cannot be loaded "
    "or fails to list its devices; 2 bad flags; 3 no RDMA devices; 4 a "
    "device is not ready (port not active, no IPv4-mapped GID, or it cannot "
    "be opened)";

// --help and --helpshort: prints the usage, then the flags; --version: the
// version line.
bool answered_help(const std::vector<std::string>& args) {
  if (weft::sim::cli::wants_version(args)) {
    std::printf("%s\n", weft::sim::cli::version_line("weft-devices").c_str());
    return true;
  }
  if (!weft::sim::cli::wants_help(args)) return false;
  std::printf("weft-devices: %s\n\n%s", kUsage,
              weft::sim::cli::flags_help(kFlagSets, {}).c_str());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  absl::StatusOr<std::vector<std::string>> args = weft::sim::cli::check_args(
      "weft-devices", std::vector<std::string>(argv, argv + argc));
  if (!args.ok()) {
    return weft::sim::cli::report_line("weft-devices",
                                       weft::verbs::cli::kExitBadInput,
                                       weft::to_std(args.status().message()));
  }
  if (answered_help(*args)) return weft::verbs::cli::kExitReady;
  weft::sim::cli::set_flags(*std::move(args));
  const weft::verbs::cli::Report report =
      weft::verbs::cli::make_report(absl::GetFlag(FLAGS_library));
  const std::string text =
      absl::GetFlag(FLAGS_json)
          ? weft::verbs::cli::format_json(report)
          : weft::verbs::cli::format_text(report, absl::GetFlag(FLAGS_verbose));
  std::fputs(text.c_str(), stdout);
  return weft::verbs::cli::exit_code(report);
}
