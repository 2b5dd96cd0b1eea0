// Every flag of weft-sim, weft-bench and weft-devices has an owner: a flag
// the binary holds (--helpfull lists them all) is either in one of the
// tool's flag sets, so --help lists it, or one of absl's own. A flag added
// without a set would be accepted by every command and missing from --help;
// this test catches it. Also: --help exits 0 and groups the
// flags by set, naming the commands that accept each.
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

// The flags of a help text: lines "    --name ...".
std::set<std::string> listed_flags(const std::string& help) {
  std::set<std::string> out;
  for (const std::string& line : lines_of(help)) {
    if (line.rfind("    --", 0) != 0) continue;
    const size_t end = line.find_first_of(" =", 6);
    out.insert(line.substr(6, end == std::string::npos ? end : end - 6));
  }
  return out;
}

// `refused`: flags the binary holds but the tool refuses as bad input, so
// its --help leaves them out (weft-bench's --trace).
void expect_every_flag_owned(const std::string& tool,
                             const std::set<std::string>& refused = {}) {
  const ToolResult full = run_tool(tool, "--helpfull");
  const ToolResult help = run_tool(tool, "--help");
  EXPECT_EQ(help.code, 0) << help.out << help.err;
  const std::set<std::string> all = listed_flags(full.out);
  const std::set<std::string> owned = listed_flags(help.out);
  ASSERT_FALSE(owned.empty()) << help.out;
  const std::set<std::string> absl_own = {"flagfile", "fromenv", "tryfromenv",
                                          "undefok"};
  for (const std::string& name : all) {
    EXPECT_TRUE(owned.count(name) == 1 || absl_own.count(name) == 1 ||
                refused.count(name) == 1)
        << tool << " --" << name << " is in no flag set (not in --help)";
  }
  for (const std::string& name : owned) {
    EXPECT_EQ(all.count(name), 1u) << tool << " --" << name;
  }
  for (const std::string& name : refused) {
    EXPECT_EQ(owned.count(name), 0u) << tool << " --help lists --" << name;
    const ToolResult r = run_tool(tool, "--" + name + "=x");
    EXPECT_EQ(r.code, 2) << tool << " accepts --" << name;
  }
}

TEST(ToolHelp, EveryWeftSimFlagIsInASet) {
  expect_every_flag_owned(WEFT_SIM_PATH);
}

TEST(ToolHelp, WeftSimHelpNamesTheCommandsOfEachSet) {
  const ToolResult r = run_tool(WEFT_SIM_PATH, "run --help");
  EXPECT_EQ(r.code, 0);
  // serve and launch (the simulation server) are built on Linux only.
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex(
                  "world flags: the simulated world \\(study, run, p2p(, "
                  "serve, launch)?\\):\n    --ranks \\("));
  EXPECT_THAT(r.out, HasSubstr("collective flags: one collective (run):"));
  // Only run's own sets: not sweep's.
  EXPECT_THAT(r.out, ::testing::StartsWith("weft-sim run: one collective"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("sweep flags:")));
  EXPECT_EQ(r.err, "");
  // Without a command, every set of every command.
  const ToolResult all = run_tool(WEFT_SIM_PATH, "--help");
  EXPECT_EQ(all.code, 0);
  EXPECT_THAT(all.out, HasSubstr("sweep flags:"));
  EXPECT_THAT(all.out, HasSubstr("    --recovery (see collective flags)\n"));
}

TEST(ToolHelp, EveryWeftDevicesFlagIsInASet) {
  expect_every_flag_owned(WEFT_DEVICES_PATH);
}

#ifdef WEFT_BENCH_PATH
TEST(ToolHelp, EveryWeftBenchFlagIsInASet) {
  expect_every_flag_owned(WEFT_BENCH_PATH, {"trace"});
  const ToolResult r = run_tool(WEFT_BENCH_PATH, "-h");
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("world flags: the simulated world:\n"));
  EXPECT_THAT(r.out, HasSubstr("    --minbytes ("));
}
#endif

// --version: weft's version (the project's, given to this test by CMake),
// the build type and the compiler; exit 0, nothing on stderr.
void expect_version(const std::string& tool, const std::string& name) {
  const ToolResult r = run_tool(tool, "--version");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out,
              ::testing::StartsWith(name + " " WEFT_PROJECT_VERSION " ("));
  EXPECT_THAT(r.out, HasSubstr(" build, "));
  EXPECT_EQ(r.err, "");
}

// -h is --help in every tool, as most tools take it (weft-bench's is
// nccl-tests' own -h).
TEST(ToolHelp, DashHIsHelpInEveryTool) {
  std::vector<std::string> tools = {WEFT_SIM_PATH, WEFT_DEVICES_PATH};
#ifdef WEFT_BENCH_PATH
  tools.push_back(WEFT_BENCH_PATH);
#endif
  for (const std::string& tool : tools) {
    const ToolResult help = run_tool(tool, "--help");
    const ToolResult h = run_tool(tool, "-h");
    EXPECT_EQ(h.code, 0) << tool << ": " << h.err;
    EXPECT_EQ(h.out, help.out) << tool;
    EXPECT_EQ(h.err, "") << tool;
  }
}

TEST(ToolVersion, EachToolSaysWeftsVersion) {
  expect_version(WEFT_SIM_PATH, "weft-sim");
  expect_version(WEFT_DEVICES_PATH, "weft-devices");
#ifdef WEFT_BENCH_PATH
  expect_version(WEFT_BENCH_PATH, "weft-bench");
#endif
}

}  // namespace
}  // namespace weft::testing
