// A JACCL program started with a bad configuration, run as a process of its
// own (no launch: nothing gets as far as the fabric): jaccl::init(strict)
// throws std::runtime_error saying what to set, and the program ends with
// that message (exit 3, "jaccl_allsum_bench rank R: error: ..."), never a
// crash or a hang. An unreachable coordinator ends within
// WEFT_CONNECT_TIMEOUT_S.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

// The program with only `vars` of JACCL's and MLX's variables set.
ToolResult run_with(const std::string& vars) {
  return run_tool(
      WEFT_JACCL_ALLSUM_BENCH, "",
      absl::StrCat("env -u JACCL_RANK -u MLX_RANK -u JACCL_IBV_DEVICES ",
                   "-u MLX_IBV_DEVICES -u JACCL_COORDINATOR ",
                   "-u MLX_JACCL_COORDINATOR -u JACCL_RING -u MLX_JACCL_RING ",
                   "WEFT_CONNECT_TIMEOUT_S=2 ", vars, " "));
}

std::string two_ranks_json() {
  return write_scratch("devices.json", "[[null, \"a\"], [\"b\", null]]\n");
}

void expect_error(const ToolResult& r, const std::string& what) {
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("jaccl_allsum_bench rank "));
  EXPECT_THAT(r.err, HasSubstr(": error: [jaccl] "));
  EXPECT_THAT(r.err, HasSubstr(what)) << r.err;
}

TEST(BadConfiguration, NoVariablesNamesEveryVariableToSet) {
  const ToolResult r = run_with("");
  expect_error(r, "JACCL_RANK/MLX_RANK");
  EXPECT_THAT(r.err, HasSubstr("JACCL_IBV_DEVICES/MLX_IBV_DEVICES"));
  EXPECT_THAT(r.err, HasSubstr("JACCL_COORDINATOR/MLX_JACCL_COORDINATOR"));
}

TEST(BadConfiguration, DeviceJsonThatDoesNotParseNamesTheFile) {
  const std::string bad = write_scratch("bad.json", "[[null, \"a\"], [\"b\"");
  const ToolResult r = run_with(absl::StrCat(
      "JACCL_RANK=0 JACCL_COORDINATOR=127.0.0.1:1 JACCL_IBV_DEVICES=", bad));
  expect_error(r, bad);
  EXPECT_THAT(r.err, HasSubstr("not valid JSON"));
}

TEST(BadConfiguration, ADeviceFileThatDoesNotExistNamesIt) {
  const ToolResult r = run_with(
      "JACCL_RANK=0 JACCL_COORDINATOR=127.0.0.1:1 "
      "JACCL_IBV_DEVICES=/nonexistent/devices.json");
  expect_error(r, "/nonexistent/devices.json");
}

TEST(BadConfiguration, ARankOutOfRangeSaysWhichRanksExist) {
  // JACCL_RANK wins over MLX_RANK, as in JACCL.
  const ToolResult r = run_with(
      absl::StrCat("JACCL_RANK=5 MLX_RANK=0 JACCL_COORDINATOR=127.0.0.1:1 ",
                   "JACCL_IBV_DEVICES=", two_ranks_json()));
  expect_error(r, "rank 5");
  EXPECT_THAT(r.err, HasSubstr("0..1"));
}

TEST(BadConfiguration, ARankThatIsNotANumberIsNamed) {
  const ToolResult r = run_with(absl::StrCat(
      "MLX_RANK=one JACCL_COORDINATOR=127.0.0.1:1 JACCL_IBV_DEVICES=",
      two_ranks_json()));
  expect_error(r, "'one'");
}

TEST(BadConfiguration, AnUnreachableCoordinatorEndsWithinTheConnectDeadline) {
  // Rank 1 dials rank 0, which never listens.
  const ToolResult r = run_with(
      absl::StrCat("JACCL_RANK=1 JACCL_COORDINATOR=127.0.0.1:", free_port(),
                   " JACCL_IBV_DEVICES=", two_ranks_json()));
  expect_error(r, "could not reach the coordinator (rank 0)");
  EXPECT_THAT(r.err, HasSubstr("within 2000 ms"));
}

}  // namespace
}  // namespace weft::testing
