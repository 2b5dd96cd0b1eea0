// Runs the weft-devices binary against the simulated provider (through
// WEFT_VERBS_LIBRARY), with each of Apple's quirks switched on, and checks
// its table, JSON, diagnosis lines and exit codes.
#include <sys/wait.h>

#include <cstdio>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/verbs/sim_provider.h"

namespace weft::verbs {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

struct ToolRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

// Runs weft-devices with exactly `variables` among the provider's and
// WEFT_VERBS_LIBRARY (unless `library` is empty).
ToolRun run(const std::map<std::string, std::string>& variables,
            const std::string& flags = "",
            const std::string& library = testing::SimProvider::path()) {
  std::string command = "env -u WEFT_VERBS_LIBRARY";
  for (const char* name : testing::kProviderVariables) {
    command += std::string(" -u ") + name;
  }
  if (!library.empty()) command += " WEFT_VERBS_LIBRARY='" + library + "'";
  for (const auto& [name, value] : variables) {
    command += " " + name + "='" + value + "'";
  }
  command += std::string(" '") + WEFT_DEVICES_PATH + "' " + flags + " 2>&1";
  ToolRun result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    result.out.append(buffer, n);
  }
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

TEST(WeftDevicesTest, ReadyDeviceIsListedWithItsIpv4Address) {
  const ToolRun r = run({});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, AllOf(HasSubstr("sim_0_1_0"), HasSubstr("PORT_ACTIVE"),
                           HasSubstr("1024"), HasSubstr("Ethernet"),
                           HasSubstr("169.254.0.1"),
                           HasSubstr("0 link-local, 1 IPv4-mapped"),
                           HasSubstr("diagnosis: ready: 1 device(s)")));
}

TEST(WeftDevicesTest, ListsTheChosenRanksDevices) {
  const ToolRun r =
      run({{"WEFT_SIM_VERBS_RANKS", "3"}, {"WEFT_SIM_VERBS_RANK", "2"}});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, AllOf(HasSubstr("sim_2_0_0"), HasSubstr("sim_2_1_0"),
                           HasSubstr("169.254.2.1"), HasSubstr("169.254.2.2"),
                           Not(HasSubstr("sim_0_1_0"))));
}

TEST(WeftDevicesTest, JsonReport) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_GID_MODE", "ipv4_at:3"}}, "--json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  ASSERT_EQ(doc["devices"].size(), 1u);
  const auto& d = doc["devices"][0];
  EXPECT_EQ(d["name"], "sim_0_1_0");
  EXPECT_EQ(d["ipv4"], "169.254.0.1");
  EXPECT_EQ(d["active_mtu_bytes"], 1024);
  EXPECT_EQ(d["port_state"], "PORT_ACTIVE");
  EXPECT_EQ(d["ready"], true);
  ASSERT_EQ(d["gids"].size(), 2u);
  EXPECT_EQ(d["gids"][1]["index"], 3);
  EXPECT_EQ(d["gids"][1]["kind"], "IPv4-mapped");
  EXPECT_EQ(doc["exit_code"], 0);
}

TEST(WeftDevicesTest, PortDownIsDiagnosedWithItsCauses) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_PORT", "down"}});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_THAT(r.out, AllOf(HasSubstr("PORT_DOWN"),
                           HasSubstr("diagnosis: sim_0_1_0: port 1 is "
                                     "PORT_DOWN; likely causes"),
                           HasSubstr("Thunderbolt Bridge"),
                           HasSubstr("rdma_ctl enable")));
}

TEST(WeftDevicesTest, LinkLocalOnlyIsDiagnosed) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_GID_MODE", "link_local"}});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("0 link-local"),
                    HasSubstr("diagnosis: sim_0_1_0: no IPv4-mapped GID, only "
                              "link-local"),
                    HasSubstr("sudo ifconfig enX inet 169.254.x.y")));
}

TEST(WeftDevicesTest, EmptyGidTableIsDiagnosed) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_GID_MODE", "empty"}});
  EXPECT_EQ(r.exit_code, 4) << r.out;
  EXPECT_THAT(
      r.out, AllOf(HasSubstr(" none"), HasSubstr("neither an IPv4-mapped nor a "
                                                 "link-local entry")));
}

TEST(WeftDevicesTest, VerboseShowsGidsAndAppleLimits) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_APPLE_LIMITS", "1"}}, "--verbose");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("gid[1] ::ffff:169.254.0.1 (IPv4-mapped)"),
                    HasSubstr("limits: 10 queue pairs, 100 memory regions, 63 "
                              "work requests per queue")));
}

// doctor over the simulated provider: every check that does not need
// macOS, one line each; exit 0 when nothing blocks, 1 when something does.
TEST(WeftDevicesTest, DoctorFindsNothingBlockingOnAReadyDevice) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_APPLE_LIMITS", "1"}}, "doctor");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("ok     sim_0_1_0: port 1 PORT_ACTIVE"),
                    HasSubstr("ok     sim_0_1_0: GID 1 ::ffff:169.254.0.1 "
                              "(IPv4-mapped)"),
                    HasSubstr("ok     sim_0_1_0: budget: 10 queue pairs"),
                    HasSubstr("100 memory regions"),
                    HasSubstr("note   macOS: not a Mac"),
                    HasSubstr("doctor: 0 blocking, 0 warning(s): nothing "
                              "blocks a first run"),
                    Not(HasSubstr("BLOCKS"))));
}

TEST(WeftDevicesTest, DoctorBlocksWhenNoPortIsUp) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_PORT", "down"}}, "doctor");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, AllOf(HasSubstr("BLOCKS sim_0_1_0: port 1 is PORT_DOWN; "
                                     "fix: likely causes"),
                           HasSubstr("rdma_ctl enable"),
                           HasSubstr("doctor: 1 blocking")));
}

TEST(WeftDevicesTest, DoctorBlocksOnAnEmptyGidTable) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_GID_MODE", "empty"}}, "doctor");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("BLOCKS sim_0_1_0: no usable GID; fix: the "
                               "port's GID table has neither"));
}

TEST(WeftDevicesTest, DoctorWarnsOnLinkLocalGidsOnly) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_GID_MODE", "link_local"}}, "doctor");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, AllOf(HasSubstr("warn   sim_0_1_0: GID 0 "),
                           HasSubstr("(link-local); fix: only link-local"),
                           HasSubstr("doctor: 0 blocking, 1 warning(s)")));
}

TEST(WeftDevicesTest, DoctorBlocksOnALibraryThatCannotLoad) {
  const ToolRun r = run({}, "doctor --library=/nonexistent/librdma.dylib");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("BLOCKS library: cannot load the RDMA library "
                               "/nonexistent/librdma.dylib"));
}

TEST(WeftDevicesTest, DoctorJson) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_PORT", "down"}}, "doctor --json");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_EQ(doc["command"], "doctor");
  EXPECT_EQ(doc["blocking"], 1);
  EXPECT_EQ(doc["exit_code"], 1);
  bool blocked = false;
  for (const auto& f : doc["findings"]) {
    if (f["severity"] == "BLOCKS") {
      blocked = true;
      EXPECT_EQ(f["subject"], "sim_0_1_0");
      EXPECT_EQ(f["finding"], "port 1 is PORT_DOWN");
      EXPECT_THAT(f["fix"].get<std::string>(), HasSubstr("rdma_ctl enable"));
    }
  }
  EXPECT_TRUE(blocked);
}

// The listing's flags are not the doctor's.
TEST(WeftDevicesTest, DoctorRefusesTheListingsFlags) {
  const ToolRun r = run({}, "doctor --verbose");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("--verbose is not a flag of weft-devices doctor"));
}

// A library that cannot be loaded is a failed run (1), as in every weft
// tool; 2 is bad flags.
TEST(WeftDevicesTest, MissingLibraryExitsOne) {
  const ToolRun r = run({}, "--library=/nonexistent/librdma.dylib");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("diagnosis: cannot load the RDMA library "
                               "/nonexistent/librdma.dylib"));
}

TEST(WeftDevicesTest, RealLibraryWithoutDevicesExitsThree) {
  const ToolRun r = run({}, "--library=libibverbs.so.1", /*library=*/"");
  if (r.exit_code == 1) GTEST_SKIP() << "libibverbs.so.1 is not installed";
  if (r.exit_code != 3) GTEST_SKIP() << "this host has RDMA devices";
  EXPECT_THAT(r.out,
              HasSubstr("diagnosis: no RDMA devices found by libibverbs.so.1"));
}

// The simulated provider that cannot build its world from its environment
// says why; the diagnosis is that reason, not the missing kernel driver a
// real library's empty list would mean. Exit 1: the library failed.
TEST(WeftDevicesTest, ProviderErrorIsTheDiagnosis) {
  const ToolRun r = run({{"WEFT_SIM_VERBS_RANKS", "abc"}});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("diagnosis: weft simulated verbs provider: "
                               "WEFT_SIM_VERBS_RANKS=abc: expected a whole "
                               "number"));
  EXPECT_THAT(r.out, Not(HasSubstr("kernel driver")));
  const ToolRun json = run({{"WEFT_SIM_VERBS_RANKS", "abc"}}, "--json");
  const size_t start = json.out.find('{');
  ASSERT_NE(start, std::string::npos) << json.out;
  const auto doc = nlohmann::json::parse(
      json.out.substr(start, json.out.rfind('}') - start + 1));
  EXPECT_EQ(doc["exit_code"], 1);
  EXPECT_THAT(doc["diagnosis"][0].get<std::string>(),
              HasSubstr("WEFT_SIM_VERBS_RANKS=abc"));
}

TEST(WeftDevicesTest, BadFlagsExitTwo) {
  EXPECT_EQ(run({}, "--no_such_flag").exit_code, 2);
  EXPECT_EQ(run({}, "extra").exit_code, 2);
  EXPECT_EQ(run({}, "--json=maybe").exit_code, 2);
  const ToolRun help = run({}, "--help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, AllOf(HasSubstr("exit codes"), HasSubstr("--library"),
                              HasSubstr("1 the RDMA library cannot be loaded "
                                        "or fails to list its devices; 2 bad "
                                        "flags")));
}

}  // namespace
}  // namespace weft::verbs
