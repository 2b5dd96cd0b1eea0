// Every call of weft::Group between real processes over TCP: 2, 3 and 4
// tcp_rank processes on loopback, each joining through
// ProcessGroup::from_environment() and checking every result against
// values it computes itself (every_op.h). A rank prints one line per call
// and exits 0 only when all were right.
#include "tests/tcp_processes/every_op.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/scratch.h"
#include "tests/tcp_processes/rank_processes.h"

namespace weft::tcp_processes {
namespace {

using ::weft::testing::ScratchDir;

using ::testing::HasSubstr;
using ::testing::Not;

class EveryOp : public ::testing::TestWithParam<int> {};

TEST_P(EveryOp, EveryRankChecksEveryCallCorrect) {
  const int ranks = GetParam();
  const ScratchDir dir;
  const Layout layout = Layout::loopback(ranks, dir.path());
  RankProcesses procs;
  for (int r = 0; r < ranks; ++r) procs.start(layout, r, {"every-op"});
  ASSERT_TRUE(procs.wait_all_exited()) << procs.report(0);
  const std::string large = absl::StrCat(kLargeCount);
  for (int r = 0; r < ranks; ++r) {
    const std::string me = absl::StrCat("rank ", r, ": ");
    EXPECT_EQ(procs.exit_code(r), 0) << procs.report(r);
    EXPECT_THAT(procs.out(r), HasSubstr(me + "every-op: "));
    EXPECT_THAT(procs.out(r), HasSubstr("results, all OK"));
    EXPECT_THAT(procs.out(r), Not(HasSubstr("WRONG")));
    // A sample of the calls, at each size and placement.
    for (const std::string line :
         {"all_sum int32 0 out-of-place: OK", "all_prod float32 1 in-place: OK",
          "all_reduce(min) int32 1 out-of-place: OK", "barrier: OK",
          "split(reversed) all_sum int32 1000: OK"}) {
      EXPECT_THAT(procs.out(r), HasSubstr(me + line)) << procs.report(r);
    }
    for (const std::string call :
         {"all_max float32", "all_gather int32", "sum_scatter int32",
          "reduce_scatter(max) int32", "broadcast(root 0) int32",
          "reduce(sum, root last) int32", "all_to_all int32"}) {
      for (const char* placement : {" out-of-place: OK", " in-place: OK"}) {
        EXPECT_THAT(procs.out(r),
                    HasSubstr(absl::StrCat(me, call, " ", large, placement)))
            << procs.report(r);
      }
    }
    EXPECT_THAT(procs.out(r),
                HasSubstr(absl::StrCat(me, "send/recv int32 ", large, " to ",
                                       (r + 1) % ranks, " from ",
                                       (r + ranks - 1) % ranks, ": OK")));
  }
}

INSTANTIATE_TEST_SUITE_P(Processes, EveryOp, ::testing::Values(2, 3, 4),
                         [](const auto& info) {
                           return absl::StrCat(info.param, "Ranks");
                         });

}  // namespace
}  // namespace weft::tcp_processes
