// Mistakes absl's own parser finds (a boolean given "maybe", a flag file
// that is not there, an unknown flag, a flag without its value, the --no
// form misused) are weft's bad input in every tool: exit 2 and one stderr
// line that starts with the tool's name, not absl's message and exit 1. And
// what check_args() expands (flag files, --name value) reaches the tool.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Tool {
  const char* path;
  const char* name;
  const char* command;  // what comes before the flags ("run " for weft-sim)
  const char* boolean;  // one of the tool's boolean flags
};

const Tool kSim = {WEFT_SIM_PATH, "weft-sim", "run ", "apple_limits"};
const Tool kDevices = {WEFT_DEVICES_PATH, "weft-devices", "", "json"};
const Tool kTools[] = {
    kSim,
    kDevices,
#ifdef WEFT_BENCH_PATH
    {WEFT_BENCH_PATH, "weft-bench", "", "model"},
#endif
};

void expect_bad(const Tool& t, const std::string& flags,
                const std::string& what) {
  SCOPED_TRACE(std::string(t.name) + " " + flags);
  expect_bad_input(t.path, t.name, t.command + flags, what);
}

TEST(ToolFlags, ABooleanGivenAnotherWordIsBadInput) {
  for (const Tool& t : kTools) {
    const std::string b = t.boolean;
    expect_bad(t, "--" + b + "=maybe",
               "--" + b + "=maybe is neither true nor false");
    expect_bad(t, "--" + b + "=", "is neither true nor false");
    expect_bad(t, "--no" + b + "=true", "the --no form takes no value");
  }
}

TEST(ToolFlags, AMissingFlagFileIsBadInput) {
  for (const Tool& t : kTools) {
    expect_bad(t, "--flagfile=/nonexistent/flags.txt",
               "--flagfile=/nonexistent/flags.txt: flag file "
               "/nonexistent/flags.txt cannot be opened");
  }
}

// A directory (which libc++ reads as an empty file) and /dev/zero (which
// never ends) are bad input at once, not an empty file or a hang.
TEST(ToolFlags, AFlagFileThatIsNoFileIsBadInput) {
  for (const Tool& t : kTools) {
    expect_bad(t, "--flagfile=/tmp",
               "--flagfile=/tmp: flag file /tmp cannot be read (it is a "
               "directory)");
    expect_bad(t, "--flagfile=/dev/zero", "is over 1048576 bytes");
  }
}

TEST(ToolFlags, AnUnknownFlagIsBadInput) {
  for (const Tool& t : kTools) {
    expect_bad(
        t, "--no_such_flag=1",
        "unknown flag --no_such_flag (see " + std::string(t.name) + " --help)");
  }
  // One dash is absl's too (weft-bench reads it as nccl-tests' options).
  expect_bad(kSim, "-no_such_flag", "unknown flag --no_such_flag");
  expect_bad(kDevices, "-no_such_flag", "unknown flag --no_such_flag");
}

TEST(ToolFlags, AFlagWithoutItsValueIsBadInput) {
  expect_bad(kSim, "--ranks", "--ranks needs a value: --ranks=VALUE");
  expect_bad(kSim, "--ranks --seed=3", "--ranks needs a value");
  expect_bad(kSim, "--noranks", "only a true/false flag has a --no form");
  expect_bad(kDevices, "--library", "--library needs a value");
}

TEST(ToolFlags, APositionalArgumentIsBadInput) {
  for (const Tool& t : kTools) {
    expect_bad(t, "stray", "unexpected argument \"stray\"");
  }
}

TEST(ToolFlags, AFlagFileLineThatIsNoFlagIsBadInput) {
  const std::string file =
      write_scratch("flags.txt", "# a comment\n--ranks=2\nranks=3\n");
  expect_bad(kSim, "--flagfile=" + file, "line 3: \"ranks=3\" is not a flag");
  const std::string bad_value =
      write_scratch("bad_value.txt", "--apple_limits=perhaps\n");
  expect_bad(kSim, "--flagfile=" + bad_value,
             "--apple_limits=perhaps is neither true nor false");
}

// A flag file's flags, and "--name value", are the tool's flags as if
// given as --name=value: the run says it had 2 ranks and ran 4096 bytes.
TEST(ToolFlags, FlagFilesAndSpacedValuesReachTheTool) {
  const std::string file = write_scratch(
      "good.txt", "# two ranks\n--ranks=2\n\n  --op=all_gather  \n");
  const ToolResult r =
      run_tool(WEFT_SIM_PATH, "run --flagfile=" + file + " --bytes 4096");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::StartsWith("weft-sim run: 2 ranks"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("all_gather +4096 "));
  EXPECT_EQ(r.err, "");
}

// absl's --helpfull names the file that defines each flag: weft's files
// as "weft", never the build machine's path to the sources.
TEST(ToolFlags, UsageOutputHasNoSourcePath) {
  for (const Tool& t : kTools) {
    const ToolResult full = run_tool(t.path, "--helpfull");
    EXPECT_EQ(full.code, 0) << t.name;
    EXPECT_THAT(full.out, ::testing::StartsWith(std::string(t.name) + ": "));
    EXPECT_THAT(full.out, HasSubstr("Flags from weft:")) << t.name;
    EXPECT_THAT(full.out, Not(HasSubstr(WEFT_SOURCE_DIR))) << t.name;
    EXPECT_THAT(full.out, Not(HasSubstr("tools/"))) << t.name;
    // -help (one dash) is weft's --help, not absl's.
    const ToolResult help = run_tool(t.path, "-help");
    EXPECT_EQ(help.code, 0) << t.name << help.err;
    EXPECT_THAT(help.out, ::testing::StartsWith(std::string(t.name) + ": "));
    EXPECT_THAT(help.out, Not(HasSubstr(WEFT_SOURCE_DIR))) << t.name;
  }
}

}  // namespace
}  // namespace weft::testing
