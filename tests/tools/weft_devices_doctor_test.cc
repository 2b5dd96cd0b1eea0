// weft-devices doctor's checks as functions: each macOS parser against the
// public samples in tests/tools/data/doctor (each file names its source)
// and against output it cannot read; the device findings for devices built
// here; getifaddrs on this machine; and the command runner.
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tools/weft-devices/device_report.h"
#include "tools/weft-devices/doctor.h"
#include "tools/weft-devices/finding.h"
#include "tools/weft-devices/macos_parsers.h"
#include "verbs/abi.h"
#include "verbs/device_info.h"
#include "verbs/gid.h"

namespace weft::tools::weft_devices {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A sample's command output: the file without its "# source" header (the
// lines up to "# ---").
std::string sample(const std::string& name) {
  std::ifstream in(std::string(WEFT_DOCTOR_SAMPLES) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  const std::string all((std::istreambuf_iterator<char>(in)),
                        std::istreambuf_iterator<char>());
  EXPECT_THAT(all, ::testing::StartsWith("# source: ")) << name;
  const size_t end = all.find("# ---\n");
  EXPECT_NE(end, std::string::npos) << name;
  return end == std::string::npos ? all : all.substr(end + 6);
}

size_t count(const std::vector<Finding>& findings, Severity severity) {
  size_t n = 0;
  for (const Finding& f : findings) n += f.severity == severity ? 1 : 0;
  return n;
}

TEST(DoctorRdmaCtl, EnabledIsReady) {
  const Finding f = rdma_ctl_finding(sample("rdma_ctl_status_enabled.txt"));
  EXPECT_EQ(f.severity, Severity::kOk);
  EXPECT_EQ(f.fix, "");
}

TEST(DoctorRdmaCtl, DisabledBlocksWithTheRecoveryCommand) {
  const Finding f = rdma_ctl_finding(sample("rdma_ctl_status_disabled.txt"));
  EXPECT_EQ(f.severity, Severity::kBlocking);
  EXPECT_THAT(f.fix, AllOf(HasSubstr("Recovery"), HasSubstr("`rdma_ctl enable`")));
}

TEST(DoctorRdmaCtl, UnknownTextSaysWhatToRunAndQuotesIt) {
  const Finding f = rdma_ctl_finding("rdma_ctl: command failed\x01\n\n");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_THAT(f.text, HasSubstr("\"rdma_ctl: command failed"));
  EXPECT_THAT(f.fix, HasSubstr("run `rdma_ctl status`: it must print `enabled`"));
  EXPECT_EQ(rdma_ctl_finding("").severity, Severity::kWarning);
}

TEST(DoctorMacosVersion, FifteenIsTooOld) {
  const Finding f = macos_version_finding(sample("sw_vers_15.0.txt"));
  EXPECT_EQ(f.severity, Severity::kBlocking);
  EXPECT_THAT(f.text, HasSubstr("macOS 15.0: RDMA over Thunderbolt needs 26.2"));
  EXPECT_THAT(f.fix, HasSubstr("Software Update"));
}

// The bound itself, on the sample's shape with other versions (sw_vers
// prints tabs on recent releases; any whitespace is read).
TEST(DoctorMacosVersion, TwentySixTwoIsTheFirstReady) {
  const auto version = [](const std::string& v) {
    return macos_version_finding("ProductName:\t\tmacOS\nProductVersion:\t\t" +
                                 v + "\nBuildVersion:\t\t25C56\n")
        .severity;
  };
  EXPECT_EQ(version("26.1"), Severity::kBlocking);
  EXPECT_EQ(version("26"), Severity::kBlocking);
  EXPECT_EQ(version("26.2"), Severity::kOk);
  EXPECT_EQ(version("26.10.1"), Severity::kOk);
  EXPECT_EQ(version("27.0"), Severity::kOk);
}

TEST(DoctorMacosVersion, UnreadableOutputSaysWhatToLookFor) {
  for (const char* text : {"", "ProductVersion: banana\n", "Usage: sw_vers"}) {
    const Finding f = macos_version_finding(text);
    EXPECT_EQ(f.severity, Severity::kWarning) << text;
    EXPECT_THAT(f.fix, HasSubstr("run `sw_vers`: ProductVersion must be 26.2"));
  }
}

TEST(DoctorThunderbolt, ThunderboltFivePortWithAMacConnected) {
  const std::vector<Finding> f =
      thunderbolt_findings(sample("system_profiler_tb5_mac_mini.txt"));
  // One port: the bus's own, not the connected Mac Studio's.
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kOk);
  EXPECT_EQ(f[0].subject, "Thunderbolt receptacle 3");
  EXPECT_THAT(f[0].text, AllOf(HasSubstr("Thunderbolt/USB4 Bus 2"),
                               HasSubstr("Speed 80 Gb/s (Thunderbolt 5)"),
                               HasSubstr("device connected")));
}

TEST(DoctorThunderbolt, OnlyThunderboltFourPortsBlock) {
  const std::vector<Finding> f =
      thunderbolt_findings(sample("system_profiler_tb4_macbook_pro.txt"));
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(count(f, Severity::kWarning), 3u);
  EXPECT_EQ(f[0].subject, "Thunderbolt receptacle 3");
  EXPECT_THAT(f[0].text, AllOf(HasSubstr("Speed Up to 40 Gb/s x1"),
                               HasSubstr("never does RDMA")));
  EXPECT_EQ(f[3].severity, Severity::kBlocking);
  EXPECT_THAT(f[3].text, HasSubstr("none of this Mac's 3 Thunderbolt ports"));
}

TEST(DoctorThunderbolt, UnreadableOutputSaysWhatToLookFor) {
  for (const char* text :
       {"", "Thunderbolt/USB4:\n\n    No information found.\n",
        "Thunderbolt/USB4 Bus 0:\n  Port:\n      Speed: fast\n"}) {
    const std::vector<Finding> f = thunderbolt_findings(text);
    ASSERT_FALSE(f.empty()) << text;
    EXPECT_EQ(count(f, Severity::kWarning), 1u) << text;
    EXPECT_EQ(count(f, Severity::kOk), 0u) << text;
    EXPECT_THAT(f[0].fix, HasSubstr("system_profiler SPThunderboltDataType"));
  }
}

TEST(DoctorBridges, ABridgeHoldingAnRdmaPortBlocks) {
  const std::vector<Finding> f =
      bridge_findings(sample("ifconfig_bridge0.txt"), {"en1", "en3"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kBlocking);
  EXPECT_EQ(f[0].subject, "bridge0");
  EXPECT_THAT(f[0].text, HasSubstr("bridge0 contains en3, the interface of rdma_en3"));
  EXPECT_THAT(f[0].fix, HasSubstr("`sudo ifconfig bridge0 deletem en3`"));
}

TEST(DoctorBridges, MembersThatAreNoRdmaPortAreFine) {
  const std::vector<Finding> f =
      bridge_findings(sample("ifconfig_bridge0.txt"), {"en7"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kOk);
  EXPECT_THAT(f[0].text, HasSubstr("bridge0 (en2, en3, en4)"));
}

TEST(DoctorBridges, UnreadableOutputSaysWhatToLookFor) {
  const std::vector<Finding> f = bridge_findings("ifconfig: ioctl failed\n", {"en2"});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, Severity::kWarning);
  EXPECT_THAT(f[0].fix, HasSubstr("member: enX"));
}

TEST(DoctorInterfaces, RdmaDevicesNameTheirInterface) {
  EXPECT_EQ(interface_of("rdma_en2"), "en2");
  EXPECT_EQ(interface_of("mlx5_0"), "");
  EXPECT_EQ(interface_of("rdma_"), "");
}

// getifaddrs on this machine: the loopback interface has 127.0.0.1 and an
// MTU (Linux names it lo, macOS lo0).
TEST(DoctorInterfaces, ReadsTheLoopbackInterface) {
  const std::vector<InterfaceInfo> all = read_interfaces();
  const InterfaceInfo* lo = nullptr;
  for (const InterfaceInfo& i : all) {
    if (i.name == "lo" || i.name == "lo0") lo = &i;
  }
  ASSERT_NE(lo, nullptr);
  EXPECT_THAT(lo->ipv4, ::testing::Contains("127.0.0.1"));
  EXPECT_GT(lo->mtu, 0);
}

verbs::DeviceInfo device(const std::string& name, bool active,
                         verbs::GidKind kind) {
  verbs::DeviceInfo d;
  d.name = name;
  d.port_state = active ? verbs::abi::IBV_PORT_ACTIVE : verbs::abi::IBV_PORT_DOWN;
  d.active_mtu = verbs::abi::IBV_MTU_1024;
  if (kind != verbs::GidKind::kEmpty) {
    verbs::GidEntry g;
    g.index = 0;
    g.kind = kind;
    g.gid[0] = 0xfe;
    g.gid[1] = 0x80;
    if (kind == verbs::GidKind::kIpv4Mapped) {
      g.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 12, 1};
    }
    d.gids.push_back(g);
  }
  d.limits = verbs::DeviceLimits{};
  d.limits->max_qp = 10;
  d.limits->max_mr = 100;
  return d;
}

Report report_of(std::vector<verbs::DeviceInfo> devices) {
  Report r;
  r.library = "librdma.dylib";
  r.devices = std::move(devices);
  return r;
}

std::vector<Finding> about(const std::vector<Finding>& all,
                           const std::string& subject) {
  std::vector<Finding> out;
  for (const Finding& f : all) {
    if (f.subject == subject) out.push_back(f);
  }
  return out;
}

// A spare port without a cable is a warning while another port is ready;
// the ready port's interface gives its addresses.
TEST(DoctorDevices, ASparePortWarnsWhileAnotherIsReady) {
  const std::vector<InterfaceInfo> interfaces = {
      {"en2", {"169.254.12.1"}, {"fe80::1"}, 1500}, {"en3", {}, {}, 1500}};
  const std::vector<Finding> f = device_findings(
      report_of({device("rdma_en2", true, verbs::GidKind::kIpv4Mapped),
                 device("rdma_en3", false, verbs::GidKind::kEmpty)}),
      interfaces);
  EXPECT_EQ(count(f, Severity::kBlocking), 0u);
  EXPECT_EQ(count(about(f, "rdma_en2"), Severity::kWarning), 0u);
  EXPECT_THAT(about(f, "rdma_en2")[2].text,
              HasSubstr("en2: inet 169.254.12.1, inet6 fe80::1"));
  EXPECT_THAT(about(f, "rdma_en2")[3].text,
              HasSubstr("budget: 10 queue pairs"));
  EXPECT_GE(count(about(f, "rdma_en3"), Severity::kWarning), 2u);
}

TEST(DoctorDevices, NoUsablePortBlocks) {
  const std::vector<Finding> f = device_findings(
      report_of({device("rdma_en3", false, verbs::GidKind::kLinkLocal)}), {});
  EXPECT_EQ(count(f, Severity::kBlocking), 1u);
  EXPECT_THAT(f[1].fix, HasSubstr("rdma_ctl enable"));
}

TEST(DoctorDevices, AnActivePortWithoutAddressesBlocks) {
  const std::vector<Finding> f = device_findings(
      report_of({device("rdma_en2", true, verbs::GidKind::kLinkLocal)}),
      {{"en2", {}, {}, 576}});
  const std::vector<Finding> en2 = about(f, "rdma_en2");
  EXPECT_EQ(count(en2, Severity::kBlocking), 1u);
  bool mtu = false;
  for (const Finding& x : en2) {
    if (x.severity == Severity::kBlocking) {
      EXPECT_THAT(x.fix, HasSubstr("sudo ifconfig en2 inet 169.254.x.y"));
    }
    if (absl::StrContains(x.text, "MTU 576 is below the port's active MTU 1024")) {
      mtu = true;
      EXPECT_THAT(x.fix, HasSubstr("`sudo ifconfig en2 mtu 1024`"));
    }
  }
  EXPECT_TRUE(mtu);
  // Link-local only: usable by weft, but a warning saying what JACCL needs.
  EXPECT_THAT(en2[1].text, HasSubstr("(link-local)"));
  EXPECT_EQ(en2[1].severity, Severity::kWarning);
}

TEST(DoctorDevices, AMemoryRegionBudgetBelowWeftsSaysWhatToSet) {
  verbs::DeviceInfo d = device("rdma_en2", true, verbs::GidKind::kIpv4Mapped);
  d.limits->max_mr = 50;
  const std::vector<Finding> f = device_findings(report_of({d}), {});
  bool found = false;
  for (const Finding& x : f) {
    if (absl::StrContains(x.text, "budget of 50 memory regions")) {
      found = true;
      EXPECT_EQ(x.severity, Severity::kWarning);
      EXPECT_THAT(x.fix, HasSubstr("WEFT_MR_BUDGET=46"));
    }
  }
  EXPECT_TRUE(found);
}

// The macOS checks through a runner that answers with the samples, as a
// Mac would; and a runner whose commands are missing.
TEST(DoctorMacos, SamplesThroughTheRunner) {
  const CommandRunner mac = [](const std::vector<std::string>& argv) {
    CommandResult r{true, 0, "", ""};
    if (argv[0] == "rdma_ctl") r.output = sample("rdma_ctl_status_enabled.txt");
    if (argv[0] == "sw_vers") r.output = "ProductVersion:\t\t26.2\n";
    if (argv[0] == "system_profiler") {
      r.output = sample("system_profiler_tb5_mac_mini.txt");
    }
    if (argv[0] == "ifconfig") r.output = sample("ifconfig_bridge0.txt");
    return r;
  };
  const DoctorReport report = make_doctor_report(
      report_of({device("rdma_en2", true, verbs::GidKind::kIpv4Mapped)}),
      {{"en2", {"169.254.12.1"}, {}, 1500}}, /*on_mac=*/true, mac);
  EXPECT_EQ(doctor_exit_code(report), kDoctorExitBlocked);
  const std::string text = format_doctor_text(report);
  EXPECT_THAT(text, AllOf(HasSubstr("ok     RDMA: `rdma_ctl status` says enabled\n"),
                          HasSubstr("ok     macOS: macOS 26.2\n"),
                          HasSubstr("BLOCKS bridge0: bridge0 contains en2"),
                          HasSubstr("doctor: 1 blocking, 0 warning(s)")));
  const CommandRunner missing = [](const std::vector<std::string>&) {
    return CommandResult{false, -1, "", "could not be run (not found)"};
  };
  const std::vector<Finding> f = macos_findings(missing, {"en2"});
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[0].severity, Severity::kBlocking);
  EXPECT_THAT(f[0].text, HasSubstr("no `rdma_ctl`"));
  for (size_t i = 1; i < f.size(); ++i) {
    EXPECT_EQ(f[i].severity, Severity::kWarning);
    EXPECT_THAT(f[i].fix, HasSubstr("yourself")) << f[i].text;
  }
}

TEST(DoctorMacos, NotAMacSaysSoInOneLine) {
  const DoctorReport report = make_doctor_report(
      report_of({device("rdma_en2", true, verbs::GidKind::kIpv4Mapped)}), {},
      /*on_mac=*/false, nullptr);
  EXPECT_EQ(doctor_exit_code(report), kDoctorExitClear);
  EXPECT_EQ(report.findings.back().subject, "macOS");
  EXPECT_THAT(report.findings.back().text, HasSubstr("not a Mac"));
}

TEST(DoctorCommands, RunsAndCollectsOutput) {
  const CommandResult r =
      run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, absl::Seconds(30));
  EXPECT_TRUE(r.ran) << r.problem;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.output, AllOf(HasSubstr("out\n"), HasSubstr("err\n")));
}

TEST(DoctorCommands, AMissingCommandIsNotFound) {
  const CommandResult r =
      run_command({"weft-no-such-command-for-the-doctor"}, absl::Seconds(30));
  EXPECT_FALSE(r.ran);
  EXPECT_THAT(r.problem, HasSubstr("not found"));
}

// A command past its deadline is killed and said to be so (the child
// would sleep far longer than the deadline).
TEST(DoctorCommands, ACommandPastItsDeadlineIsKilled) {
  const CommandResult r =
      run_command({"sh", "-c", "exec sleep 600"}, absl::Milliseconds(200));
  EXPECT_FALSE(r.ran);
  EXPECT_THAT(r.problem, HasSubstr("did not finish in 200ms"));
}

}  // namespace
}  // namespace weft::tools::weft_devices
