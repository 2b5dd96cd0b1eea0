// JACCL programs under injected faults, one process per rank on weft's
// simulated fabric. Where JACCL would hang (a lost frame, a dead peer) or
// compute on garbage (an error completion it never reads), weft's jaccl
// recovers what can be recovered, so under loss, duplication and
// reordering every rank ends with the right bytes; and it ends every call
// it cannot finish with std::runtime_error naming the cause, so under a
// crashed rank, a dead cable or an error completion every surviving rank
// exits with such an error (exit code 3, "... rank R: error: ...") within
// the deadline (WEFT_TIMEOUT_S=5, virtual time on the simulated provider),
// never with a wrong value (exit code 1) and never hung (launch's run ends
// "finished", not "deadlock" or "stopped").
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaccl_launch.h"
#include "tests/tools/tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;

constexpr char kDeadline[] = "WEFT_TIMEOUT_S=5 ";
constexpr double kDeadlineUs = 5e6;

TEST(UnderLoss, TheConformanceProgramIsExactOnEveryRank) {
  const Launch l =
      launch("--ranks=3 --seed=3 --loss=0.01 --duplicate=0.01 --reorder=0.01",
             absl::StrCat(WEFT_JACCL_CONFORMANCE, " --max_count=1009"));
  expect_all_exited_zero(l, 3);
  for (int r = 0; r < 3; ++r) {
    EXPECT_THAT(l.tool.out,
                ContainsRegex(absl::StrCat("rank ", r,
                                           ": conformance OK, [0-9]+ checks")));
  }
  EXPECT_THAT(l.tool.out, ContainsRegex("[1-9][0-9]* faults injected"));
}

TEST(UnderLoss, TheBenchmarkOnARingIsExactOnEveryRankAndRepeatable) {
  const auto run = [] {
    return launch(
        "--ranks=4 --topology=ring --seed=5 --loss=0.02",
        absl::StrCat(WEFT_JACCL_ALLSUM_BENCH, " -b 4K -e 1M -f 16 -d float32"),
        "JACCL_RING=1 ");
  };
  const Launch l = run();
  expect_all_exited_zero(l, 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("rank ", r, ": 3 sizes, all OK")));
  }
  EXPECT_THAT(l.tool.out, ContainsRegex("[1-9][0-9]* faults injected"));
  // The same seed: the same faults, the same recovery, the same trace.
  const Launch again = run();
  ASSERT_FALSE(l.trace_hash.empty()) << l.tool.out;
  EXPECT_EQ(again.trace_hash, l.trace_hash);
}

// The benchmark of 4 ranks under `plan`: long enough (1K to 4M, 2 + 5
// iterations each) that every fault below lands mid-run.
Launch bench_under(const std::string& plan, const std::string& flags = "") {
  const std::string path = write_scratch("faults.plan", plan);
  return launch(
      absl::StrCat("--ranks=4 --seed=1 --faults=", path, " ", flags),
      absl::StrCat(WEFT_JACCL_ALLSUM_BENCH, " -b 1K -e 4M -f 4 -d float32"),
      kDeadline);
}

// The line rank r printed for its error ("" when none).
std::string error_of(const Launch& l, int r) {
  const std::string prefix =
      absl::StrCat("jaccl_allsum_bench rank ", r, ": error: ");
  for (const std::string& line : lines_of(l.tool.err)) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

// Each rank of `causes` exited 3 with an error whose message matches its
// regular expression (this rank, the peer, the cause); no rank saw a wrong
// value and nothing hung: the run finished by itself within the deadline
// of the fault at `fault_us` (virtual time).
void expect_errors(const Launch& l, const std::map<int, std::string>& causes,
                   double fault_us) {
  EXPECT_EQ(l.tool.code, 1) << l.tool.out << l.tool.err;  // a rank failed
  EXPECT_EQ(l.end, "finished") << l.tool.out << l.tool.err;
  EXPECT_THAT(l.tool.out, ::testing::Not(HasSubstr("FAIL")));
  EXPECT_GT(l.virtual_us, fault_us) << l.tool.out;
  EXPECT_LE(l.virtual_us, fault_us + 1.1 * kDeadlineUs) << l.tool.out;
  for (const auto& [r, cause] : causes) {
    EXPECT_EQ(l.exits.count(r) ? l.exits.at(r) : "missing", "exited 3")
        << "rank " << r << "\n"
        << l.tool.out << l.tool.err;
    EXPECT_THAT(error_of(l, r), ContainsRegex(cause)) << "rank " << r << "\n"
                                                      << l.tool.err;
  }
}

// "rank R, peer P" then, later in the message, `cause`.
std::string names(int rank, int peer, const std::string& cause) {
  return absl::StrCat("^\\[jaccl\\] all_sum failed: rank ", rank, ", peer ",
                      peer, ",.*(", cause, ")");
}

// A peer that stopped answering, found silent (or, where the library learns
// it sooner, reported gone).
constexpr char kSilent[] = "silent|crashed|ended|closed";

// Every rank of the 4 but `lost` names `lost` as the silent peer.
std::map<int, std::string> others_find_silent(int lost) {
  std::map<int, std::string> causes;
  for (int r = 0; r < 4; ++r) {
    if (r != lost) causes[r] = names(r, lost, kSilent);
  }
  return causes;
}

TEST(UnderFaults, ACrashedRankEndsEverySurvivorWithAnErrorNamingIt) {
  // Rank 2 stops 200 us in; its verbs calls fail from then on (EIO).
  const Launch l = bench_under("crash rank=2 at_ns=200000\n");
  expect_errors(l, others_find_silent(2), 200);
  EXPECT_THAT(l.tool.err, HasSubstr("rank 2 crashed"));
  // The crashed rank's own calls fail too: an error, not a wrong value.
  EXPECT_EQ(l.exits.count(2) ? l.exits.at(2) : "missing", "exited 3")
      << l.tool.err;
}

TEST(UnderFaults, AKilledRankEndsEverySurvivorWithAnErrorNamingIt) {
  const Launch l =
      bench_under("crash rank=1 at_ns=200000\n", "--on_crash=kill");
  expect_errors(l, others_find_silent(1), 200);
  EXPECT_EQ(l.exits.count(1) ? l.exits.at(1) : "missing", "killed by signal 9")
      << l.tool.out;
}

TEST(UnderFaults, ADeadCableEndsEveryRankWithAnError) {
  // Rank 0's cable to rank 3 drops everything from 200 us on. Its two ends
  // name each other; ranks 1 and 2 name the rank they wait on and the
  // silence reported to them.
  const Launch l = bench_under("link_down from=0 to=3 at_ns=200000\n");
  const std::string cut = "silent|cut off|lost";
  expect_errors(l,
                {{0, names(0, 3, cut)},
                 {3, names(3, 0, cut)},
                 {1, names(1, 0, cut) + "|" + names(1, 3, cut)},
                 {2, names(2, 0, cut) + "|" + names(2, 3, cut)}},
                200);
}

TEST(UnderFaults, AnErrorCompletionEndsEveryRankWithAnErrorNamingTheStatus) {
  // The 30th frame from rank 1 to rank 2 completes with a remote operation
  // error on rank 2's receive; the others lose rank 2.
  const Launch l = bench_under(
      "error from=1 to=2 frame=30 status=IBV_WC_REM_OP_ERR side=recv\n");
  std::map<int, std::string> causes = others_find_silent(2);
  causes[2] = names(2, 1, "remote operation error");
  expect_errors(l, causes, 0);
}

TEST(UnderFaults, AQueuePairInErrorEndsEveryRankWithAnError) {
  // Rank 3's queue pair to rank 0 enters the error state: its posted
  // receives flush.
  const Launch l = bench_under("qp_error rank=3 peer=0 at_ns=200000\n");
  std::map<int, std::string> causes = others_find_silent(3);
  causes[3] = names(3, 0, "Flush");
  expect_errors(l, causes, 200);
}

}  // namespace
}  // namespace weft::testing
