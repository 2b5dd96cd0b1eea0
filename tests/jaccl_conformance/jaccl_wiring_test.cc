// A JACCL program that finds its cabling, and one given a crossed device
// file, one process per rank under `weft-sim launch` (docs/wiring.md). The
// world's true cabling (launch's --devices) names each Mac's ports as a
// Mac does, rdma_en2..., in an order that says nothing of who is behind
// them; the ranks read only the device variable.
#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaccl_launch.h"
#include "tests/tools/tool_runner.h"

namespace weft::testing {
namespace {

// Three Macs: two cables between 0 and 1, one between 0 and 2, one
// between 1 and 2.
constexpr char kTrue[] =
    R"([[null, ["rdma_en3", "rdma_en2"], "rdma_en4"],
        [["rdma_en2", "rdma_en4"], null, "rdma_en3"],
        ["rdma_en2", "rdma_en3", null]])";
// The same but for rank 0's rdma_en4 and rdma_en2, swapped: well formed,
// symmetric in its counts, and wrong.
constexpr char kCrossed[] =
    R"([[null, ["rdma_en3", "rdma_en4"], "rdma_en2"],
        [["rdma_en2", "rdma_en4"], null, "rdma_en3"],
        ["rdma_en2", "rdma_en3", null]])";

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(Wiring, AJacclProgramWithTheDeviceVariableAutoFindsItsCablesAndPasses) {
  const std::string truth = write_scratch("wiring_true.json", kTrue);
  const Launch l = launch(absl::StrCat("--devices=", truth), WEFT_JACCL_ALL_SUM,
                          "JACCL_IBV_DEVICES=auto MLX_IBV_DEVICES=auto ");
  expect_all_exited_zero(l, 3);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(
        count(l.tool.out, absl::StrCat("rank ", r, " of 3: sum 6, correct")), 1)
        << l.tool.out << l.tool.err;
  }
}

TEST(Wiring, ACrossedFileWithTheCheckEndsEveryRankNamingTheEntry) {
  const std::string truth = write_scratch("wiring_true.json", kTrue);
  const std::string crossed = write_scratch("wiring_crossed.json", kCrossed);
  const Launch l =
      launch(absl::StrCat("--devices=", truth), WEFT_JACCL_ALL_SUM,
             absl::StrCat("WEFT_CHECK_WIRING=1 JACCL_IBV_DEVICES=", crossed,
                          " MLX_IBV_DEVICES=", crossed, " "));
  EXPECT_EQ(l.end, "finished") << l.tool.out << l.tool.err;
  EXPECT_GT(l.virtual_us, 0);
  EXPECT_LT(l.virtual_us, 1e6) << "not within a second of virtual time";
  const std::string all = l.tool.out + l.tool.err;
  EXPECT_EQ(count(all,
                  "rank 0's rdma_en4 reaches rank 2, not rank 1 as "
                  "device JSON says"),
            3)
      << all;
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(l.exits.count(r) ? l.exits.at(r) : "missing", "exited 1")
        << "rank " << r << "\n"
        << all;
  }
}

}  // namespace
}  // namespace weft::testing
