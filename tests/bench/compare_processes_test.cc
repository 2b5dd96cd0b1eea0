// The comparison programs as separate processes, at small sizes: Gloo's
// all-reduce driver with two ranks (where Gloo is installed), each rank
// checking its own outputs, and tcp_sendrecv as two ranks of a TCP group
// under `weft-sim launch --fabric=tcp`, rank 1 checking every byte.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tools/tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

// The row of `size` in a weft-bench-style table, split into fields.
std::vector<std::string> row_of(const std::string& table,
                                const std::string& size) {
  for (const std::string& line : lines_of(table)) {
    const std::vector<std::string> f = fields_of(line);
    if (!f.empty() && f[0] == size) return f;
  }
  return {};
}

#ifdef WEFT_GLOO_ALLREDUCE
TEST(GlooAllreduce, TwoProcessesCheckEveryIteration) {
  const std::string store = scratch_path("store");
  const std::string rank1_out = scratch_path("rank1.txt");
  const std::string args = " --size=2 --store=" + store +
                           " --sizes=4K,64K --warmup_iters=1 --iters=3"
                           " --timeout_s=60";
  // Rank 1 in the background; the shell reports its exit status last.
  const std::string script =
      "mkdir -p " + store + " && (" WEFT_GLOO_ALLREDUCE " --rank=1" + args +
      " >" + rank1_out + " 2>&1; echo rank1=$? >>" + rank1_out + ") & " +
      WEFT_GLOO_ALLREDUCE " --rank=0" + args + "; r0=$?; wait; exit $r0";
  const ToolResult r = run_tool("sh -c", "'" + script + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(read_text(rank1_out), HasSubstr("rank1=0"));
  EXPECT_THAT(r.out, HasSubstr("# Out of bounds values : 0 OK"));
  for (const std::string size : {"4096", "65536"}) {
    const std::vector<std::string> row = row_of(r.out, size);
    ASSERT_EQ(row.size(), 13u) << size << "\n" << r.out;
    EXPECT_EQ(row[8], "0") << "out-of-place #wrong at " << size;
    EXPECT_EQ(row[12], "0") << "in-place #wrong at " << size;
  }
}
#endif

TEST(TcpSendRecv, TwoRanksMoveEveryByteAndReportTheRatio) {
  const ToolResult r = run_tool(
      WEFT_SIM_PATH, "launch --fabric=tcp --ranks=2 -- " WEFT_TCP_SENDRECV
                     " --bytes=64K --rounds=3 --timeout_s=60");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# wrong bytes      : 0"));
  EXPECT_THAT(r.out, HasSubstr("# ratio weft/plain : "));
  EXPECT_THAT(r.out, HasSubstr("weft-tcp"));
  EXPECT_THAT(r.out, HasSubstr("plain-tcp"));
}

TEST(TcpSendRecv, AGroupOfThreeIsRefused) {
  const ToolResult r = run_tool(
      WEFT_SIM_PATH, "launch --fabric=tcp --ranks=3 -- " WEFT_TCP_SENDRECV
                     " --bytes=4K --rounds=1");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_THAT(r.out + r.err, HasSubstr("start exactly 2"));
}

}  // namespace
}  // namespace weft::testing
