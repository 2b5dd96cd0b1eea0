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
//
// A rank whose process has gone (crashed, killed, or exited after an
// error) is named by every survivor at its next liveness check, 50 ms of
// virtual time later at most, long before the deadline, and at the same
// virtual time on every run: the simulation server says when it left, in
// virtual time (docs/simulation-server.md, "A rank that leaves"), so the run's
// end time and trace hash repeat.
#include <functional>
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

// Past JACCL: a JACCL program that includes weft's jaccl/weft.h shrinks
// the group behind its jaccl::Group when a rank dies (rank 2, killed 50 us
// in), and its later all_sums run over the three survivors.
TEST(AfterACrash, AJacclProgramShrinksThroughWeftsHeaderAndFinishes) {
  const std::string plan =
      write_scratch("elastic.plan", "crash rank=2 at_ns=50000\n");
  const Launch l =
      launch(absl::StrCat("--ranks=4 --seed=1 --on_crash=kill --faults=", plan),
             absl::StrCat(WEFT_JACCL_ELASTIC, " 20"));
  EXPECT_EQ(l.end, "finished") << l.tool.out << l.tool.err;
  EXPECT_EQ(l.exits.at(2), "killed by signal 9") << l.tool.out;
  for (int rank : {0, 1, 3}) {
    EXPECT_EQ(l.exits.at(rank), "exited 0") << l.tool.out << l.tool.err;
    EXPECT_THAT(l.tool.out,
                HasSubstr(absl::StrCat("jaccl_elastic: rank ", rank, " (now ",
                                       rank == 3 ? 2 : rank,
                                       " of 3): 20 all_sums correct, 1 "
                                       "shrink(s)")))
        << l.tool.out << l.tool.err;
  }
}

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
// value and nothing hung: the run finished by itself within `within_us`
// of the fault at `fault_us` (virtual time).
void expect_errors(const Launch& l, const std::map<int, std::string>& causes,
                   double fault_us, double within_us = 1.1 * kDeadlineUs) {
  EXPECT_EQ(l.tool.code, 1) << l.tool.out << l.tool.err;  // a rank failed
  EXPECT_EQ(l.end, "finished") << l.tool.out << l.tool.err;
  EXPECT_THAT(l.tool.out, ::testing::Not(HasSubstr("FAIL")));
  EXPECT_GT(l.virtual_us, fault_us) << l.tool.out;
  EXPECT_LE(l.virtual_us, fault_us + within_us) << l.tool.out;
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

// How long survivors may take to name a rank that left, in virtual time:
// its process ends soon after the fault, and the group's liveness check
// runs every 50 ms (Group::kWatchIntervalNs); 100 ms is far below the
// deadline, so a survivor that waited for the deadline fails this.
constexpr double kNoticedWithinUs = 100e3;

// Every rank of the 4 but `gone` names `gone` as the rank that left the
// simulated world (its process ended), and when.
std::map<int, std::string> others_name_departed(int gone) {
  std::map<int, std::string> causes;
  for (int r = 0; r < 4; ++r) {
    if (r == gone) continue;
    causes[r] =
        names(r, gone,
              absl::StrCat("rank ", gone,
                           " left the simulated world at [0-9]+\\.[0-9]{3} us "
                           "\\(its process exited or was killed\\)"));
  }
  return causes;
}

TEST(UnderFaults, ACrashedRankEndsEverySurvivorWithAnErrorNamingIt) {
  // Rank 2 stops 200 us in; its verbs calls fail from then on (EIO).
  const Launch l = bench_under("crash rank=2 at_ns=200000\n");
  expect_errors(l, others_name_departed(2), 200, kNoticedWithinUs);
  EXPECT_THAT(l.tool.err, HasSubstr("rank 2 crashed"));
  // The crashed rank's own calls fail too: an error, not a wrong value.
  EXPECT_EQ(l.exits.count(2) ? l.exits.at(2) : "missing", "exited 3")
      << l.tool.err;
}

TEST(UnderFaults, AKilledRankEndsEverySurvivorWithAnErrorNamingIt) {
  const Launch l =
      bench_under("crash rank=1 at_ns=200000\n", "--on_crash=kill");
  expect_errors(l, others_name_departed(1), 200, kNoticedWithinUs);
  EXPECT_EQ(l.exits.count(1) ? l.exits.at(1) : "missing", "killed by signal 9")
      << l.tool.out;
  // Killed by the fault plan: it left at the crash time.
  EXPECT_THAT(error_of(l, 0),
              HasSubstr("left the simulated world at 200.000 us"));
}

TEST(UnderFaults, ADeadCableOfTheMeshIsRoutedAroundAndEveryRankFinishes) {
  // Rank 0's only cable to rank 3 drops everything from 200 us on. The
  // four ranks are a mesh, so the pair's lane goes through ranks 1 and 2
  // (docs/fault-tolerance.md, "A pair's only cable"): every rank finishes
  // the benchmark, its sums checked, and none fails.
  const Launch l = bench_under("link_down from=0 to=3 at_ns=200000\n");
  EXPECT_EQ(l.tool.code, 0) << l.tool.out << l.tool.err;
  EXPECT_EQ(l.end, "finished") << l.tool.out << l.tool.err;
  EXPECT_THAT(l.tool.out, ::testing::Not(HasSubstr("FAIL")));
  EXPECT_GT(l.virtual_us, 200) << l.tool.out;
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(l.exits.count(r) ? l.exits.at(r) : "missing", "exited 0")
        << "rank " << r << "\n"
        << l.tool.out << l.tool.err;
    EXPECT_EQ(error_of(l, r), "") << "rank " << r;
  }
}

// The error completion's plan: the 30th frame from rank 1 to rank 2
// completes with a remote operation error on rank 2's receive; rank 2's
// call throws and its process exits, and the others name it as gone.
constexpr char kErrorPlan[] =
    "error from=1 to=2 frame=30 status=IBV_WC_REM_OP_ERR side=recv\n";

TEST(UnderFaults, AnErrorCompletionEndsEveryRankWithAnErrorNamingTheStatus) {
  const Launch l = bench_under(kErrorPlan);
  std::map<int, std::string> causes = others_name_departed(2);
  causes[2] = names(2, 1, "remote operation error");
  expect_errors(l, causes, 0, kNoticedWithinUs);
}

TEST(UnderFaults, AQueuePairInErrorEndsEveryRankWithAnError) {
  // Rank 3's queue pair to rank 0 enters the error state: its posted
  // receives flush, its call throws and its process exits.
  const Launch l = bench_under("qp_error rank=3 peer=0 at_ns=200000\n");
  std::map<int, std::string> causes = others_name_departed(3);
  causes[3] = names(3, 0, "Flush");
  expect_errors(l, causes, 200, kNoticedWithinUs);
}

// `run` three times: each run ends as the first did, at the same virtual
// time with the same trace hash.
void expect_repeatable(const std::function<Launch()>& run) {
  const Launch first = run();
  ASSERT_FALSE(first.trace_hash.empty()) << first.tool.out << first.tool.err;
  for (int i = 1; i < 3; ++i) {
    const Launch again = run();
    EXPECT_EQ(again.trace_hash, first.trace_hash)
        << "run " << i + 1 << "\n"
        << again.tool.out << again.tool.err;
    EXPECT_EQ(again.virtual_us, first.virtual_us) << again.tool.out;
    EXPECT_EQ(again.exits, first.exits) << again.tool.out;
  }
}

TEST(DepartedRank, AKilledRanksSurvivorsNameItAtTheSameVirtualTimeEveryRun) {
  // JACCL's minimal program (examples/jaccl_all_sum.cc), rank 1 killed
  // 5 us in: ranks 0 and 2 name it in their next call, once 50 ms of
  // virtual time have passed (the liveness check), never at the deadline.
  const std::string plan =
      write_scratch("crash.plan", "crash rank=1 at_ns=5000\n");
  expect_repeatable([&] {
    const Launch l =
        launch(absl::StrCat("--ranks=3 --on_crash=kill --faults=", plan),
               WEFT_JACCL_ALL_SUM, kDeadline);
    EXPECT_EQ(l.end, "finished") << l.tool.out << l.tool.err;
    EXPECT_LE(l.virtual_us, 5 + kNoticedWithinUs) << l.tool.out;
    EXPECT_EQ(l.exits.count(1) ? l.exits.at(1) : "missing",
              "killed by signal 9");
    for (int r : {0, 2}) {
      EXPECT_EQ(l.exits.count(r) ? l.exits.at(r) : "missing", "exited 1");
      EXPECT_THAT(l.tool.err, HasSubstr(absl::StrCat(
                                  "jaccl_all_sum: rank ", r, ": [jaccl] ",
                                  "barrier failed: rank ", r, ", peer 1")));
    }
    EXPECT_THAT(l.tool.err,
                HasSubstr("rank 1 left the simulated world at 5.000 us (its "
                          "process exited or was killed)"));
    return l;
  });
}

TEST(DepartedRank, ARankThatExitsAfterAnErrorIsNamedAtTheSameTimeEveryRun) {
  expect_repeatable([] {
    const Launch l = bench_under(kErrorPlan);
    for (int r : {0, 1, 3}) {
      EXPECT_THAT(error_of(l, r), HasSubstr("rank 2 left the simulated world"))
          << l.tool.err;
    }
    return l;
  });
}

}  // namespace
}  // namespace weft::testing
