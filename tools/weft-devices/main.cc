// weft-devices: lists the RDMA devices weft can use, like ibv_devices, with
// port 1's state, the IPv4 address from the GID table, GID kinds, active MTU
// and link layer, and a diagnosis line for whatever is not ready. Its
// `tcp-hostfile` command turns mlx.launch's hostfile into the ring hostfile
// the TCP fabric reads (tcp_hostfile.h). Its `doctor` command checks what a
// Mac's first run needs, one finding a line with its fix (doctor.h). Its
// `discover` and `check` commands find the cabling through the fabric and
// check a device file against it (wiring_command.h).
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/absl_compat.h"
#include "base/text_file.h"
#include "fabric/topology.h"
#include "rendezvous/tcp_hosts.h"
#include "tools/cli/exit_status.h"
#include "tools/cli/flag_parse.h"
#include "tools/cli/flag_scope.h"
#include "tools/weft-devices/device_report.h"
#include "tools/weft-devices/doctor.h"
#include "tools/weft-devices/tcp_hostfile.h"
#include "tools/weft-devices/wiring_command.h"

ABSL_FLAG(std::string, library, "",
          "RDMA library to load (default: $WEFT_VERBS_LIBRARY, else "
          "librdma.dylib on macOS, libibverbs.so.1 on Linux)");
ABSL_FLAG(bool, json, false, "print the report as JSON");
ABSL_FLAG(bool, verbose, false, "also print every GID and the device limits");
ABSL_FLAG(std::string, from, "",
          "mlx.launch's hostfile (hosts with \"ssh\" and "
          "\"ips\") to convert");
ABSL_FLAG(uint32_t, port, weft::tools::weft_devices::kMlxStartingPort,
          "the first address's port; each further address "
          "(every host's every IP and cable, in order) takes the next, as "
          "mlx.launch's --starting-port");
ABSL_FLAG(std::string, devices, "",
          "check: the device JSON to check against the cables");
ABSL_FLAG(std::string, rank, "",
          "discover, check: this process's rank (default: WEFT_RANK, "
          "JACCL_RANK, MLX_RANK, or the launcher's)");
ABSL_FLAG(std::string, ranks, "",
          "discover: how many ranks (default: WEFT_SIZE, or the "
          "launcher's); check takes the file's");
ABSL_FLAG(std::string, coordinator, "",
          "discover, check: host:port where rank 0 listens (default: "
          "JACCL_COORDINATOR, MLX_JACCL_COORDINATOR, WEFT_COORDINATOR)");
ABSL_FLAG(std::string, ip, "",
          "discover: this machine's IP addresses, comma-separated, for the "
          "TCP ring hostfile");
ABSL_FLAG(uint32_t, cables, 1,
          "addresses (cables) per IP, as mlx.launch's "
          "--connections-per-ip");

namespace {

const weft::tools::cli::FlagSet kDevicesFlags("weft-devices",
                                              "what to load and print",
                                              FLAGS_library, FLAGS_json,
                                              FLAGS_verbose);
const weft::tools::cli::FlagSet kHostfileFlags(
    "tcp-hostfile", "mlx.launch's hostfile to the ring hostfile", FLAGS_from,
    FLAGS_port, FLAGS_cables);
const weft::tools::cli::FlagSet kDoctorFlags("doctor",
                                             "what the doctor loads and prints",
                                             FLAGS_library, FLAGS_json);
const weft::tools::cli::FlagSet kDiscoverFlags(
    "discover", "the side channel, this machine's addresses", FLAGS_library,
    FLAGS_rank, FLAGS_ranks, FLAGS_coordinator, FLAGS_ip);
const weft::tools::cli::FlagSet kCheckFlags("check",
                                            "the file and the side channel",
                                            FLAGS_library, FLAGS_devices,
                                            FLAGS_rank, FLAGS_coordinator);
constexpr const weft::tools::cli::FlagSet* kFlagSets[] = {
    &kDevicesFlags, &kHostfileFlags, &kDoctorFlags, &kDiscoverFlags,
    &kCheckFlags};
constexpr const weft::tools::cli::FlagSet* kDiscoverSets[] = {&kDiscoverFlags};
constexpr const weft::tools::cli::FlagSet* kCheckSets[] = {&kCheckFlags};
constexpr char kDiscoverCommand[] = "discover";
constexpr char kCheckCommand[] = "check";
constexpr const weft::tools::cli::FlagSet* kListSets[] = {&kDevicesFlags};
constexpr const weft::tools::cli::FlagSet* kHostfileSets[] = {&kHostfileFlags};
constexpr const weft::tools::cli::FlagSet* kDoctorSets[] = {&kDoctorFlags};
constexpr char kHostfileCommand[] = "tcp-hostfile";
constexpr char kDoctorCommand[] = "doctor";
// Largest launch hostfile read (a line of JSON per rank).
constexpr size_t kMaxHostfileBytes = size_t{64} << 20;

constexpr char kUsage[] =
    "lists RDMA devices and says whether weft can use them; tcp-hostfile "
    "prints the ring hostfile (MLX_HOSTFILE, WEFT_HOSTFILE) for an "
    "mlx.launch hostfile; doctor checks what a Mac's first run needs, one "
    "finding a line with the command that fixes it.\n"
    "usage: weft-devices [--library=PATH] [--json] [--verbose]\n"
    "       weft-devices tcp-hostfile --from=HOSTS_JSON [--port=32323] "
    "[--cables=1]\n"
    "       weft-devices doctor [--library=PATH] [--json]\n"
    "       weft-devices discover [--rank=R --ranks=N "
    "--coordinator=HOST:PORT] [--ip=ADDR,...]\n"
    "       weft-devices check --devices=FILE [--rank=R "
    "--coordinator=HOST:PORT]\n"
    "exit codes: 0 every device ready; 1 the RDMA library cannot be loaded "
    "or fails to list its devices; 2 bad flags; 3 no RDMA devices; 4 a "
    "device is not ready (port not active, no IPv4-mapped GID, or it cannot "
    "be opened); tcp-hostfile: 0 printed, 2 bad flags or a hostfile it "
    "cannot convert; doctor: 0 nothing blocks a first run, 1 a BLOCKS line "
    "says what does, 2 bad flags; discover: 0 found, 1 failed, 2 bad flags; "
    "check: 0 the file matches the cables, 1 an entry is wrong (or the "
    "probing failed), 2 bad flags or file";

// --help and --helpshort: prints the usage, then the flags; --version: the
// version line.
bool answered_help(const std::vector<std::string>& args) {
  if (weft::tools::cli::wants_version(args)) {
    std::printf("%s\n", weft::tools::cli::version_line("weft-devices").c_str());
    return true;
  }
  if (!weft::tools::cli::wants_help(args)) return false;
  std::printf("weft-devices: %s\n\n%s", kUsage,
              weft::tools::cli::flags_help(kFlagSets, {}).c_str());
  return true;
}

int bad_input(const absl::Status& status) {
  return weft::tools::cli::report_line("weft-devices",
                                       weft::tools::weft_devices::kExitBadInput,
                                       weft::base::to_std(status.message()));
}

// tcp-hostfile: reads --from, prints the ring hostfile; exit 0, or 2 with
// one line saying what is wrong.
int print_tcp_hostfile() {
  const std::string path = absl::GetFlag(FLAGS_from);
  const uint32_t port = absl::GetFlag(FLAGS_port);
  const uint32_t cables = absl::GetFlag(FLAGS_cables);
  if (path.empty()) {
    return bad_input(absl::InvalidArgumentError(
        "tcp-hostfile needs --from=PATH, the mlx.launch hostfile to convert"));
  }
  if (port == 0 || port > 65535 || cables == 0 ||
      cables > weft::Topology::kMaxCables) {
    return bad_input(absl::InvalidArgumentError(absl::StrFormat(
        "--port=%u --cables=%u: the port must be 1..65535 and the cables "
        "1..%u",
        port, cables, weft::Topology::kMaxCables)));
  }
  absl::StatusOr<std::string> text =
      weft::base::read_text_file(path, kMaxHostfileBytes, "launch hostfile");
  if (!text.ok()) return bad_input(text.status());
  absl::StatusOr<weft::TcpHosts> hosts =
      weft::tools::weft_devices::ring_hosts_from_launch_hostfile(*text, path,
                                                                 port, cables);
  if (!hosts.ok()) return bad_input(hosts.status());
  std::fputs(weft::tools::weft_devices::format_ring_hostfile(*hosts).c_str(),
             stdout);
  return weft::tools::cli::kExitOk;
}

// doctor: every check, one line each (or --json); exit 0 when nothing
// blocks a first run, 1 when something does.
int print_doctor() {
#ifdef __APPLE__
  constexpr bool kOnMac = true;
#else
  constexpr bool kOnMac = false;
#endif
  const weft::tools::weft_devices::DoctorReport report =
      weft::tools::weft_devices::make_doctor_report(
          weft::tools::weft_devices::make_report(absl::GetFlag(FLAGS_library)),
          weft::tools::weft_devices::read_interfaces(), kOnMac,
          weft::tools::weft_devices::default_runner());
  const std::string text =
      absl::GetFlag(FLAGS_json)
          ? weft::tools::weft_devices::format_doctor_json(report)
          : weft::tools::weft_devices::format_doctor_text(report);
  std::fputs(text.c_str(), stdout);
  return weft::tools::weft_devices::doctor_exit_code(report);
}

// discover and check: the flags into WiringArgs; 2 with one line when one
// is malformed.
int run_wiring(bool check) {
  weft::tools::weft_devices::WiringArgs args;
  args.library = absl::GetFlag(FLAGS_library);
  args.devices_file = absl::GetFlag(FLAGS_devices);
  args.coordinator = absl::GetFlag(FLAGS_coordinator);
  if (check && args.devices_file.empty()) {
    return bad_input(absl::InvalidArgumentError(
        "check needs --devices=FILE, the device JSON to check"));
  }
  for (auto [flag, out] : {std::pair{&FLAGS_rank, &args.rank},
                           std::pair{&FLAGS_ranks, &args.ranks}}) {
    const std::string text = absl::GetFlag(*flag);
    if (text.empty()) continue;
    uint32_t value = 0;
    if (!absl::SimpleAtoi(text, &value) || value >= weft::Topology::kMaxRanks) {
      return bad_input(absl::InvalidArgumentError(
          absl::StrFormat("--%s=%s is not a whole number below %u",
                          flag == &FLAGS_rank ? "rank" : "ranks", text,
                          weft::Topology::kMaxRanks)));
    }
    *out = value;
  }
  for (absl::string_view ip :
       absl::StrSplit(absl::GetFlag(FLAGS_ip), ',', absl::SkipEmpty())) {
    args.ips.emplace_back(ip);
  }
  return weft::tools::weft_devices::run_wiring_command(args, check, ::getenv);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<std::string> raw(argv, argv + argc);
  // The command comes first: `weft-devices tcp-hostfile --from=...`.
  const bool hostfile = raw.size() > 1 && raw[1] == kHostfileCommand;
  const bool doctor = raw.size() > 1 && raw[1] == kDoctorCommand;
  const bool discover = raw.size() > 1 && raw[1] == kDiscoverCommand;
  const bool check = raw.size() > 1 && raw[1] == kCheckCommand;
  if (hostfile || doctor || discover || check) raw.erase(raw.begin() + 1);
  absl::StatusOr<std::vector<std::string>> args =
      weft::tools::cli::check_args("weft-devices", raw);
  if (!args.ok()) return bad_input(args.status());
  if (answered_help(*args)) return weft::tools::weft_devices::kExitReady;
  const weft::tools::cli::FlagScope scope{
      "weft-devices",
      hostfile   ? kHostfileCommand
      : doctor   ? kDoctorCommand
      : discover ? kDiscoverCommand
      : check    ? kCheckCommand
                 : "device listing",
      hostfile   ? weft::tools::cli::FlagSets(kHostfileSets)
      : doctor   ? weft::tools::cli::FlagSets(kDoctorSets)
      : discover ? weft::tools::cli::FlagSets(kDiscoverSets)
      : check    ? weft::tools::cli::FlagSets(kCheckSets)
                 : weft::tools::cli::FlagSets(kListSets),
      kFlagSets};
  if (absl::Status s = weft::tools::cli::check_flag_scope(*args, scope);
      !s.ok()) {
    return bad_input(s);
  }
  weft::tools::cli::set_flags(*std::move(args));
  if (hostfile) return print_tcp_hostfile();
  if (doctor) return print_doctor();
  if (discover || check) return run_wiring(check);
  const weft::tools::weft_devices::Report report =
      weft::tools::weft_devices::make_report(absl::GetFlag(FLAGS_library));
  const std::string text = absl::GetFlag(FLAGS_json)
                               ? weft::tools::weft_devices::format_json(report)
                               : weft::tools::weft_devices::format_text(
                                     report, absl::GetFlag(FLAGS_verbose));
  std::fputs(text.c_str(), stdout);
  return weft::tools::weft_devices::exit_code(report);
}
