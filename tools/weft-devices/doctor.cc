#include "tools/weft-devices/doctor.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/absl_compat.h"
#include "nlohmann/json.hpp"
#include "tools/weft-devices/macos_parsers.h"
#include "verbs/device_info.h"
#include "verbs/gid.h"
#include "verbs/port_state.h"
#include "verbs/verbs_fabric.h"

namespace weft::tools::weft_devices {
namespace {

constexpr size_t kMaxCommandOutput = size_t{1} << 20;
constexpr absl::Duration kCommandDeadline = absl::Seconds(30);

std::string ipv4_text(const in_addr& a) {
  char buffer[INET_ADDRSTRLEN] = {};
  return inet_ntop(AF_INET, &a, buffer, sizeof(buffer)) != nullptr ? buffer
                                                                   : "";
}

std::string ipv6_text(const in6_addr& a) {
  char buffer[INET6_ADDRSTRLEN] = {};
  return inet_ntop(AF_INET6, &a, buffer, sizeof(buffer)) != nullptr ? buffer
                                                                    : "";
}

int interface_mtu(int fd, const std::string& name) {
  if (fd < 0 || name.size() >= IFNAMSIZ) return -1;
  ifreq request = {};
  std::memcpy(request.ifr_name, name.data(), name.size());
  if (ioctl(fd, SIOCGIFMTU, &request) != 0) return -1;
  return request.ifr_mtu;
}

bool usable(const verbs::DeviceInfo& d) {
  return d.status.ok() && d.port_active() &&
         verbs::choose_gid(d.gids).has_value();
}

const InterfaceInfo* find_interface(const std::vector<InterfaceInfo>& all,
                                    const std::string& name) {
  for (const InterfaceInfo& i : all) {
    if (i.name == name) return &i;
  }
  return nullptr;
}

// The interface behind `d`: its addresses (the GID table is built from
// them) and its MTU against the port's.
void interface_findings(const verbs::DeviceInfo& d,
                        const std::vector<InterfaceInfo>& interfaces,
                        std::vector<Finding>* out) {
  const std::string name = interface_of(d.name);
  if (name.empty()) {
    out->push_back({Severity::kNote, d.name,
                    "not named rdma_<interface> (a Mac's devices are: "
                    "rdma_en2 is en2), so its interface is not checked",
                    ""});
    return;
  }
  const InterfaceInfo* i = find_interface(interfaces, name);
  if (i == nullptr) {
    out->push_back({Severity::kWarning, d.name,
                    absl::StrCat("no interface ", name, " on this machine"),
                    absl::StrCat("run `ifconfig ", name,
                                 "`: it should exist, with an inet address")});
    return;
  }
  std::vector<std::string> addresses;
  for (const std::string& a : i->ipv4) addresses.push_back("inet " + a);
  for (const std::string& a : i->ipv6_link_local) {
    addresses.push_back("inet6 " + a);
  }
  if (addresses.empty()) {
    out->push_back({d.port_active() ? Severity::kBlocking : Severity::kWarning,
                    d.name,
                    absl::StrCat(name,
                                 " has no IPv4 and no link-local address, so "
                                 "the port has no usable GID"),
                    absl::StrCat("`sudo ifconfig ", name,
                                 " inet 169.254.x.y netmask 255.255.0.0` "
                                 "(both ends of the cable in one subnet)")});
  } else {
    out->push_back({Severity::kOk, d.name,
                    absl::StrCat(name, ": ", absl::StrJoin(addresses, ", ")),
                    ""});
  }
  const int port_mtu = verbs::mtu_bytes(d.active_mtu);
  if (d.status.ok() && i->mtu > 0 && port_mtu > 0 && i->mtu < port_mtu) {
    out->push_back(
        {Severity::kWarning, d.name,
         absl::StrFormat("%s's MTU %d is below the port's active MTU %d",
                         name, i->mtu, port_mtu),
         absl::StrFormat("`sudo ifconfig %s mtu %d`", name, port_mtu)});
  }
}

// Apple allows 10 queue pairs and about 100 memory regions per device:
// what weft takes of them.
void budget_findings(const verbs::DeviceInfo& d, std::vector<Finding>* out) {
  if (!d.limits.has_value()) {
    out->push_back({Severity::kNote, d.name,
                    "the library did not report the device's limits "
                    "(ibv_query_device)",
                    "run `ibv_devinfo -v -d " + d.name +
                        "`: max_qp and max_mr are its budgets"});
    return;
  }
  const int qps = d.limits->max_qp;
  const int mrs = d.limits->max_mr;
  const int weft_mrs = static_cast<int>(verbs::kDefaultMemoryRegionBudget);
  if (qps < 1 || mrs < 1) {
    out->push_back({Severity::kBlocking, d.name,
                    absl::StrFormat("budget of %d queue pairs and %d memory "
                                    "regions: weft needs at least one of each",
                                    qps, mrs),
                    "restart the Mac (another process may hold them), then "
                    "run `weft-devices --verbose` again"});
    return;
  }
  if (mrs < weft_mrs) {
    out->push_back(
        {Severity::kWarning, d.name,
         absl::StrFormat("budget of %d memory regions, fewer than the %d "
                         "weft keeps registered by default",
                         mrs, weft_mrs),
         absl::StrFormat("`export WEFT_MR_BUDGET=%d` before running weft",
                         std::max(1, mrs - 4))});
  }
  out->push_back(
      {Severity::kOk, d.name,
       absl::StrFormat("budget: %d queue pairs (weft takes one per peer this "
                       "device's cable reaches), %d memory regions (weft "
                       "keeps at most %d registered)",
                       qps, mrs, std::min(mrs, weft_mrs)),
       ""});
}

Finding command_problem(const std::string& command, const CommandResult& r,
                        std::string_view subject, std::string_view look_for) {
  const std::string said =
      r.ran ? absl::StrFormat("exited %d", r.exit_code) : r.problem;
  return {Severity::kWarning, std::string(subject),
          absl::StrCat("`", command, "` ", said),
          absl::StrCat("run `", command, "` yourself: ",
                       base::to_absl(look_for))};
}

size_t count(const DoctorReport& report, Severity severity) {
  return static_cast<size_t>(std::count_if(
      report.findings.begin(), report.findings.end(),
      [&](const Finding& f) { return f.severity == severity; }));
}

}  // namespace

std::vector<InterfaceInfo> read_interfaces() {
  std::vector<InterfaceInfo> interfaces;
  ifaddrs* head = nullptr;
  if (getifaddrs(&head) != 0) return interfaces;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  for (const ifaddrs* a = head; a != nullptr; a = a->ifa_next) {
    if (a->ifa_name == nullptr) continue;
    const std::string name = a->ifa_name;
    auto it = std::find_if(interfaces.begin(), interfaces.end(),
                           [&](const InterfaceInfo& i) { return i.name == name; });
    if (it == interfaces.end()) {
      interfaces.push_back({name, {}, {}, interface_mtu(fd, name)});
      it = interfaces.end() - 1;
    }
    if (a->ifa_addr == nullptr) continue;
    if (a->ifa_addr->sa_family == AF_INET) {
      it->ipv4.push_back(ipv4_text(
          reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr));
    } else if (a->ifa_addr->sa_family == AF_INET6) {
      const in6_addr& v6 =
          reinterpret_cast<const sockaddr_in6*>(a->ifa_addr)->sin6_addr;
      if (IN6_IS_ADDR_LINKLOCAL(&v6)) {
        it->ipv6_link_local.push_back(ipv6_text(v6));
      }
    }
  }
  if (fd >= 0) close(fd);
  freeifaddrs(head);
  return interfaces;
}

std::string interface_of(std::string_view device) {
  absl::string_view name = base::to_absl(device);
  if (!absl::ConsumePrefix(&name, "rdma_") || name.empty()) return "";
  return std::string(name);
}

std::vector<Finding> device_findings(
    const Report& report, const std::vector<InterfaceInfo>& interfaces) {
  std::vector<Finding> out;
  if (!report.status.ok()) {
    out.push_back({Severity::kBlocking, "library",
                   std::string(report.status.message()),
                   report.failure == Report::Failure::kNoDevices
                       ? std::string(verbs::no_devices_remedy())
                       : std::string("fix what the line says, then run "
                                     "`weft-devices` again")});
    return out;
  }
  out.push_back({Severity::kOk, "library",
                 absl::StrFormat("%s lists %u device(s)", report.library,
                                 report.devices.size()),
                 ""});
  const bool any_usable =
      std::any_of(report.devices.begin(), report.devices.end(), usable);
  const Severity unusable =
      any_usable ? Severity::kWarning : Severity::kBlocking;
  for (const verbs::DeviceInfo& d : report.devices) {
    if (!d.status.ok()) {
      out.push_back({unusable, d.name, std::string(d.status.message()),
                     "restart the Mac if another process holds the device"});
      continue;
    }
    if (d.port_active()) {
      out.push_back({Severity::kOk, d.name,
                     absl::StrFormat("port %u %s, active MTU %d, %s",
                                     static_cast<unsigned>(verbs::kPort),
                                     verbs::port_state_name(d.port_state),
                                     verbs::mtu_bytes(d.active_mtu),
                                     verbs::link_layer_name(d.link_layer)),
                     ""});
    } else {
      out.push_back({unusable, d.name,
                     absl::StrFormat("port %u is %s",
                                     static_cast<unsigned>(verbs::kPort),
                                     verbs::port_state_name(d.port_state)),
                     std::string(verbs::port_down_causes())});
    }
    const std::optional<verbs::GidEntry> gid = verbs::choose_gid(d.gids);
    if (!gid.has_value()) {
      out.push_back({d.port_active() ? Severity::kBlocking : unusable, d.name,
                     "no usable GID",
                     std::string(verbs::no_usable_gid_remedy())});
    } else {
      const bool ipv4 = gid->kind == verbs::GidKind::kIpv4Mapped;
      out.push_back(
          {ipv4 ? Severity::kOk : Severity::kWarning, d.name,
           absl::StrFormat("GID %d %s (%s)", gid->index,
                           verbs::gid_text(gid->gid),
                           verbs::gid_kind_name(gid->kind)),
           ipv4 ? ""
                : "only link-local GIDs: weft uses one, JACCL and peers in "
                  "other subnets cannot; give the interface an IPv4 address "
                  "(`sudo ifconfig enX inet 169.254.x.y netmask "
                  "255.255.0.0`)"});
    }
    interface_findings(d, interfaces, &out);
    budget_findings(d, &out);
  }
  return out;
}

CommandResult run_command(const std::vector<std::string>& argv,
                          absl::Duration deadline) {
  CommandResult result;
  if (argv.empty()) {
    result.problem = "no command";
    return result;
  }
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    result.problem = absl::StrCat("could not start: ", std::strerror(errno));
    return result;
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    result.problem = absl::StrCat("could not start: ", std::strerror(errno));
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return result;
  }
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, STDIN_FILENO);
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  const absl::Time end = absl::Now() + deadline;
  bool timed_out = false;
  char buffer[4096];
  for (;;) {
    const absl::Duration left = end - absl::Now();
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    pollfd p = {pipe_fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the loop's deadline check ends a timeout
    const ssize_t n = read(pipe_fds[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // end of output (or a read error)
    if (result.output.size() < kMaxCommandOutput) {
      result.output.append(buffer, std::min(static_cast<size_t>(n),
                                            kMaxCommandOutput - result.output.size()));
    }
  }
  close(pipe_fds[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    result.problem = absl::StrCat("did not finish in ", absl::FormatDuration(deadline));
    return result;
  }
  if (!WIFEXITED(status)) {
    result.problem = "was killed by a signal";
    return result;
  }
  result.exit_code = WEXITSTATUS(status);
  if (result.exit_code == 127) {
    result.problem = "could not be run (not found)";
    return result;
  }
  result.ran = true;
  return result;
}

std::vector<Finding> macos_findings(
    const CommandRunner& run, const std::vector<std::string>& rdma_interfaces) {
  std::vector<Finding> out;
  const CommandResult rdma_ctl = run({"rdma_ctl", "status"});
  if (!rdma_ctl.ran && !rdma_ctl.problem.empty() &&
      absl::StrContains(rdma_ctl.problem, "not found")) {
    out.push_back(
        {Severity::kBlocking, "RDMA",
         "no `rdma_ctl`: this macOS has no RDMA over Thunderbolt",
         absl::StrFormat("update macOS to %d.%d or later", kRdmaMacosMajor,
                         kRdmaMacosMinor)});
  } else if (!rdma_ctl.ran) {
    out.push_back(command_problem("rdma_ctl status", rdma_ctl, "RDMA",
                                  "it must print `enabled`"));
  } else {
    out.push_back(rdma_ctl_finding(rdma_ctl.output));
  }
  const CommandResult sw_vers = run({"sw_vers"});
  out.push_back(sw_vers.ran && sw_vers.exit_code == 0
                    ? macos_version_finding(sw_vers.output)
                    : command_problem("sw_vers", sw_vers, "macOS",
                                      "ProductVersion must be 26.2 or later"));
  const CommandResult thunderbolt =
      run({"system_profiler", "SPThunderboltDataType"});
  if (thunderbolt.ran && thunderbolt.exit_code == 0) {
    for (Finding& f : thunderbolt_findings(thunderbolt.output)) {
      out.push_back(std::move(f));
    }
  } else {
    out.push_back(command_problem(
        "system_profiler SPThunderboltDataType", thunderbolt, "Thunderbolt",
        "each bus's Port must show Speed 80 Gb/s or more (Thunderbolt 5)"));
  }
  const CommandResult ifconfig = run({"ifconfig"});
  if (ifconfig.ran && ifconfig.exit_code == 0) {
    for (Finding& f : bridge_findings(ifconfig.output, rdma_interfaces)) {
      out.push_back(std::move(f));
    }
  } else {
    out.push_back(command_problem(
        "ifconfig", ifconfig, "bridges",
        "no bridge may list `member: enX` for an RDMA device's enX"));
  }
  return out;
}

DoctorReport make_doctor_report(const Report& devices,
                                const std::vector<InterfaceInfo>& interfaces,
                                bool on_mac, const CommandRunner& run) {
  DoctorReport report;
  report.library = devices.library;
  report.findings = device_findings(devices, interfaces);
  if (!on_mac) {
    report.findings.push_back(
        {Severity::kNote, "macOS",
         "not a Mac: rdma_ctl status, sw_vers, system_profiler "
         "SPThunderboltDataType and ifconfig's bridges are checked only on "
         "macOS",
         ""});
    return report;
  }
  std::vector<std::string> rdma_interfaces;
  for (const verbs::DeviceInfo& d : devices.devices) {
    const std::string name = interface_of(d.name);
    if (!name.empty()) rdma_interfaces.push_back(name);
  }
  for (Finding& f : macos_findings(run, rdma_interfaces)) {
    report.findings.push_back(std::move(f));
  }
  return report;
}

CommandRunner default_runner() {
  return [](const std::vector<std::string>& argv) {
    return run_command(argv, kCommandDeadline);
  };
}

int doctor_exit_code(const DoctorReport& report) {
  return count(report, Severity::kBlocking) > 0 ? kDoctorExitBlocked
                                                : kDoctorExitClear;
}

std::string format_doctor_text(const DoctorReport& report) {
  std::string out;
  for (const Finding& f : report.findings) {
    absl::StrAppendFormat(&out, "%-6s %s: %s", severity_name(f.severity),
                          f.subject, f.text);
    if (!f.fix.empty()) absl::StrAppend(&out, "; fix: ", f.fix);
    out += "\n";
  }
  const size_t blocking = count(report, Severity::kBlocking);
  const size_t warnings = count(report, Severity::kWarning);
  absl::StrAppendFormat(
      &out, "doctor: %u blocking, %u warning(s): %s\n", blocking, warnings,
      blocking == 0 ? "nothing blocks a first run"
                    : "fix the BLOCKS lines, then run `weft-devices doctor` "
                      "again");
  return out;
}

std::string format_doctor_json(const DoctorReport& report) {
  nlohmann::ordered_json doc;
  doc["format_version"] = kDoctorJsonFormatVersion;
  doc["tool"] = "weft-devices";
  doc["command"] = "doctor";
  doc["library"] = report.library;
  doc["findings"] = nlohmann::ordered_json::array();
  for (const Finding& f : report.findings) {
    doc["findings"].push_back({{"severity", std::string(severity_name(f.severity))},
                               {"subject", f.subject},
                               {"finding", f.text},
                               {"fix", f.fix}});
  }
  doc["blocking"] = count(report, Severity::kBlocking);
  doc["warnings"] = count(report, Severity::kWarning);
  doc["exit_code"] = doctor_exit_code(report);
  return doc.dump(2, ' ', /*ensure_ascii=*/false,
                  nlohmann::ordered_json::error_handler_t::replace) +
         "\n";
}

}  // namespace weft::tools::weft_devices
