// `weft-devices discover` and `weft-devices check`, the built binary: what
// they refuse before joining the side channel, each with exit 2 and one
// line naming what to fix. (Discovery and the check themselves are tested
// in process over the simulator: tests/wiring.)
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

// The variables a group reads, unset, so the flags alone decide.
constexpr char kNoGroupEnv[] =
    "env -u WEFT_RANK -u JACCL_RANK -u MLX_RANK -u OMPI_COMM_WORLD_RANK "
    "-u SLURM_PROCID -u WEFT_SIZE -u OMPI_COMM_WORLD_SIZE -u SLURM_NTASKS "
    "-u JACCL_COORDINATOR -u MLX_JACCL_COORDINATOR -u WEFT_COORDINATOR "
    "-u WEFT_HOSTFILE -u MLX_HOSTFILE ";

ToolResult devices(const std::string& args) {
  return run_tool(WEFT_DEVICES_PATH, args, kNoGroupEnv);
}

TEST(WeftDevicesWiring, CheckNeedsAFile) {
  const ToolResult r = devices("check --rank=0");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("check needs --devices=FILE"));
}

TEST(WeftDevicesWiring, CheckNamesAFileItCannotRead) {
  const ToolResult r = devices("check --rank=0 --devices=no-such.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("no-such.json"));
}

TEST(WeftDevicesWiring, DiscoverRefusesARankThatIsNoNumber) {
  const ToolResult r = devices("discover --rank=abc --ranks=2");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--rank=abc is not a whole number"));
}

TEST(WeftDevicesWiring, DiscoverWithoutASizeSaysWhatToSet) {
  const ToolResult r = devices("discover --rank=0");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("no group size is set"));
  EXPECT_THAT(r.err, HasSubstr("WEFT_SIZE"));
}

TEST(WeftDevicesWiring, DiscoverOfManyRanksNeedsACoordinator) {
  const ToolResult r = devices("discover --rank=0 --ranks=2");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("no coordinator is set"));
}

TEST(WeftDevicesWiring, FlagsOfAnotherCommandAreRefused) {
  const ToolResult r = devices("discover --devices=x.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--devices"));
}

}  // namespace
}  // namespace weft::testing
