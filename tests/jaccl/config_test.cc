// jaccl::Config: JACCL's validity rules on JACCL's own examples, its
// environment (JACCL_ over MLX_ names), and the device file's errors.
#include <stdexcept>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaccl/jaccl.h"
#include "tests/jaccl/jaccl_env.h"

namespace jaccl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Devices = std::vector<std::vector<std::vector<std::string>>>;

// Four Macs, every pair joined by one cable (JACCL's README).
const Devices kMesh4 = {{{}, {"rdma_en2"}, {"rdma_en3"}, {"rdma_en4"}},
                        {{"rdma_en2"}, {}, {"rdma_en3"}, {"rdma_en4"}},
                        {{"rdma_en2"}, {"rdma_en3"}, {}, {"rdma_en4"}},
                        {{"rdma_en2"}, {"rdma_en3"}, {"rdma_en4"}, {}}};
// 0-1-2-3-0 with two cables each way, the diagonals (0-2, 1-3) null.
const Devices kRing4 = {
    {{}, {"en1", "en5"}, {}, {"en3", "en7"}},
    {{"en1", "en5"}, {}, {"en2", "en6"}, {}},
    {{}, {"en2", "en6"}, {}, {"en3", "en7"}},
    {{"en3", "en7"}, {}, {"en2", "en6"}, {}},
};

TEST(ConfigValidity, FullMeshIsBoth) {
  Config c;
  c.set_devices(kMesh4);
  EXPECT_EQ(c.get_size(), 4);
  EXPECT_TRUE(c.is_valid_mesh());
  // Every neighbour has one cable, as rank 0 has to rank 1.
  EXPECT_TRUE(c.is_valid_ring());
  EXPECT_TRUE(c.is_valid());
}

TEST(ConfigValidity, RingWithNullsIsOnlyARing) {
  Config c;
  c.set_devices(kRing4);
  EXPECT_FALSE(c.is_valid_mesh());
  EXPECT_TRUE(c.is_valid_ring());
  EXPECT_TRUE(c.is_valid());
}

TEST(ConfigValidity, UnevenCablesAreNoRing) {
  Devices d = kRing4;
  d[2][3] = {"en3"};  // one cable where rank 0 has two to rank 1
  Config c;
  c.set_devices(d);
  EXPECT_FALSE(c.is_valid_ring());
  EXPECT_FALSE(c.is_valid());
}

TEST(ConfigValidity, ADeviceOnTheDiagonalIsNoMesh) {
  Devices d = kMesh4;
  d[1][1] = {"rdma_en9"};
  Config c;
  c.set_devices(d);
  EXPECT_FALSE(c.is_valid_mesh());
}

TEST(ConfigValidity, OneRankAndNoneAreNeither) {
  Config none;
  EXPECT_FALSE(none.is_valid_mesh());
  EXPECT_FALSE(none.is_valid_ring());
  Config one;
  one.set_devices({{{}}});
  EXPECT_EQ(one.get_size(), 1);
  EXPECT_FALSE(one.is_valid_mesh());
  EXPECT_FALSE(one.is_valid_ring());
  EXPECT_FALSE(one.is_valid());
}

TEST(ConfigValidity, NonSquareIsInvalidArgument) {
  Config c;
  try {
    c.set_devices({{{}, {"en2"}}, {{"en2"}}});
    FAIL() << "a 2x1 row was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("2 rows"), HasSubstr("row 1 has 1")));
  }
}

TEST(ConfigBuilder, TextRankIsReadWhenItIsANumber) {
  Config c;
  c.set_rank("3");
  EXPECT_EQ(c.get_rank(), 3);
  c.set_rank(1);
  EXPECT_EQ(c.get_rank(), 1);
  c.set_coordinator("10.0.0.1:5000");
  EXPECT_EQ(c.get_coordinator(), "10.0.0.1:5000");
  c.set_coordinator(static_cast<const char*>(nullptr));
  EXPECT_THAT(c.get_coordinator(), IsEmpty());
}

// The device file through weft's loader: every error names the file.
TEST(DeviceFile, ReadsJacclsFormat) {
  testing::ScratchFile file(
      "two.json", R"([[null, ["en2", "en5"]], [["en3", "en6"], null]])");
  Config c;
  c.set_devices_from_file(file.path().c_str());
  EXPECT_EQ(c.get_size(), 2);
  EXPECT_TRUE(c.is_valid_mesh());
}

void expect_file_error(const std::string& path, const char* what) {
  Config c;
  try {
    c.set_devices_from_file(path.c_str());
    FAIL() << path << " was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(),
                AllOf(HasSubstr("[jaccl]"), HasSubstr(path), HasSubstr(what)));
  }
}

TEST(DeviceFile, MissingFile) {
  expect_file_error("/nonexistent/jaccl_devices.json", "cannot be opened");
}

TEST(DeviceFile, BadJson) {
  testing::ScratchFile file("bad.json", "[[null, \"en2\"], [");
  expect_file_error(file.path(), "not valid JSON");
}

TEST(DeviceFile, WrongShape) {
  testing::ScratchFile file("shape.json", R"([[null, "en2"], ["en3"]])");
  expect_file_error(file.path(), "not square");
  testing::ScratchFile cell("cell.json", R"([[null, 5], ["en3", null]])");
  expect_file_error(cell.path(), "cell [0][1]");
}

// from_env: the JACCL_ name wins, with one warning line naming both.
TEST(FromEnv, JacclNamesWinOverMlxNames) {
  testing::ScopedEnv env;
  testing::ScratchFile mesh4("mesh4.json", R"([[null, "a", "b", "c"],
      ["a", null, "b", "c"], ["a", "b", null, "c"], ["a", "b", "c", null]])");
  testing::ScratchFile two("two.json", R"([[null, "a"], ["a", null]])");
  env.set("JACCL_RANK", "2");
  env.set("MLX_RANK", "0");
  env.set("JACCL_IBV_DEVICES", mesh4.path());
  env.set("MLX_IBV_DEVICES", two.path());
  env.set("JACCL_COORDINATOR", "10.0.0.1:5000");
  env.set("MLX_JACCL_COORDINATOR", "10.0.0.1:5000");  // same: no warning
  ::testing::internal::CaptureStderr();
  const Config c = Config::from_env();
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.get_rank(), 2);
  EXPECT_EQ(c.get_size(), 4);
  EXPECT_EQ(c.get_coordinator(), "10.0.0.1:5000");
  EXPECT_FALSE(c.get_prefer_ring());
  EXPECT_THAT(
      err, AllOf(HasSubstr("JACCL_RANK='2'"), HasSubstr("MLX_RANK='0'"),
                 HasSubstr("JACCL_IBV_DEVICES"), HasSubstr("MLX_IBV_DEVICES")));
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
  EXPECT_THAT(err, ::testing::Not(HasSubstr("COORDINATOR")));
}

TEST(FromEnv, MlxNamesAloneAreRead) {
  testing::ScopedEnv env;
  testing::ScratchFile two("two.json", R"([[null, "a"], ["a", null]])");
  env.set("MLX_RANK", "1");
  env.set("MLX_IBV_DEVICES", two.path());
  env.set("MLX_JACCL_COORDINATOR", "10.0.0.2:6000");
  env.set("MLX_JACCL_RING", "1");
  const Config c = Config::from_env();
  EXPECT_EQ(c.get_rank(), 1);
  EXPECT_EQ(c.get_size(), 2);
  EXPECT_EQ(c.get_coordinator(), "10.0.0.2:6000");
  EXPECT_TRUE(c.get_prefer_ring());
}

TEST(FromEnv, NothingSetLeavesAnInvalidConfig) {
  testing::ScopedEnv env;
  const Config c = Config::from_env();
  EXPECT_EQ(c.get_size(), 0);
  EXPECT_FALSE(c.is_valid());
}

TEST(FromEnv, UnreadableDeviceFileThrows) {
  testing::ScopedEnv env;
  env.set("JACCL_IBV_DEVICES", "/nonexistent/jaccl_env_devices.json");
  EXPECT_THROW(Config::from_env(), std::runtime_error);
}

}  // namespace
}  // namespace jaccl
