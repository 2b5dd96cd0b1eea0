// weft-devices: lists the RDMA devices weft can use, like ibv_devices, with
// port 1's state, the IPv4 address from the GID table, GID kinds, active MTU
// and link layer, and a diagnosis line for whatever is not ready.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "tools/cli/flag_scope.h"
#include "tools/weft-devices/device_report.h"

ABSL_FLAG(std::string, library, "",
          "RDMA library to load (default: $WEFT_VERBS_LIBRARY, else "
          "librdma.dylib on macOS, libibverbs.so.1 on Linux)");
ABSL_FLAG(bool, json, false, "print the report as JSON");
ABSL_FLAG(bool, verbose, false, "also print every GID and the device limits");

namespace {

constexpr int kExitHelp = 0;  // --help and --version answered

const weft::sim::cli::FlagSet kDevicesFlags("weft-devices",
                                            "what to load and print",
                                            FLAGS_library, FLAGS_json,
                                            FLAGS_verbose);
constexpr const weft::sim::cli::FlagSet* kFlagSets[] = {&kDevicesFlags};

constexpr char kUsage[] =
    "lists RDMA devices and says whether weft can use them.\n"
    "usage: weft-devices [--library=PATH] [--json] [--verbose]\n"
    "exit codes: 0 every device ready; 1 bad flags; 2 the RDMA library "
    "cannot be loaded; 3 no RDMA devices; 4 a device is not ready (port "
    "not active, no IPv4-mapped GID, or it cannot be opened)";

// --help and --helpshort: prints the usage, then the flags; --version: the
// version line.
bool answered_help(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
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
  if (answered_help(argc, argv)) return kExitHelp;
  const auto args = absl::ParseCommandLine(argc, argv);
  if (args.size() > 1) {
    std::fprintf(stderr, "weft-devices: unexpected argument %s; see --help\n",
                 args[1]);
    return weft::verbs::cli::kExitUsage;
  }
  const weft::verbs::cli::Report report =
      weft::verbs::cli::make_report(absl::GetFlag(FLAGS_library));
  const std::string text =
      absl::GetFlag(FLAGS_json)
          ? weft::verbs::cli::format_json(report)
          : weft::verbs::cli::format_text(report, absl::GetFlag(FLAGS_verbose));
  std::fputs(text.c_str(), stdout);
  return weft::verbs::cli::exit_code(report);
}
