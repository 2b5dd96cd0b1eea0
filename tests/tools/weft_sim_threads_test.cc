// Programs with threads on the simulation server: threaded_ring (a verbs
// program that drives each queue pair from a thread of its own, as JACCL's
// multi-cable ring does, and waits for those threads on std::futures
// outside any verbs call) under `weft-sim launch` as a ring of 2, 3 and 4
// processes with two cables per neighbour. Every byte arrives right, no
// deadlock is reported where there is none, five runs give one trace hash
// and one end time, and a program whose threads truly deadlock is still
// reported, each rank's waiting threads named.
#include <stdlib.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What the ranks' programs need in their environment: under
// AddressSanitizer, an uninstrumented program loads the instrumented
// provider only with the ASan runtime preloaded.
std::string foreign_env() {
  const std::string preload = WEFT_FOREIGN_PRELOAD;
  return preload.empty() ? "" : "LD_PRELOAD=" + preload + " ";
}

// A directory of its own for the ranks' records.
class RecordsDir {
 public:
  RecordsDir() {
    path_ = ::testing::TempDir() + "/weft_threads_XXXXXX";
    EXPECT_NE(::mkdtemp(path_.data()), nullptr);
  }
  ~RecordsDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

ToolResult run_ring(int ranks, const std::string& program_flags) {
  RecordsDir dir;
  return run_tool(
      WEFT_SIM_PATH,
      absl::StrCat("launch --ranks=", ranks,
                   " --topology=ring --cables=2 --timeout_s=240 -- ",
                   WEFT_THREADED_RING, " ", dir.path(), " ", program_flags),
      foreign_env());
}

std::string first_match(const std::string& text, const char* regex) {
  std::smatch m;
  return std::regex_search(text, m, std::regex(regex)) ? m[1].str() : "";
}

long count(const std::string& text, const std::string& regex) {
  const std::regex re(regex);
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                       std::sregex_iterator());
}

// The run finished, every rank checked every byte and exited 0.
void expect_right(const ToolResult& r, int ranks) {
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("weft-sim: finished at virtual time"));
  EXPECT_THAT(r.out + r.err, Not(HasSubstr("deadlock")));
  for (int rank = 0; rank < ranks; ++rank) {
    EXPECT_EQ(count(r.out, absl::StrCat("threaded_ring: rank ", rank,
                                        ": 6 rounds on [0-9]+ wires, every "
                                        "byte right")),
              1)
        << "rank " << rank << "\n"
        << r.out << r.err;
  }
  EXPECT_EQ(count(r.out, "\\): exited 0"), ranks) << r.out;
}

TEST(ThreadsOnTheServer, ARingOfThreadsIsRightOnTwoThreeAndFourRanks) {
  for (int ranks : {2, 3, 4}) {
    SCOPED_TRACE(absl::StrCat(ranks, " ranks"));
    const ToolResult r = run_ring(ranks, "");
    expect_right(r, ranks);
    // Two ranks are each other's both neighbours: 2 wires; more, 4.
    EXPECT_THAT(r.out, HasSubstr(ranks == 2 ? "on 2 wires" : "on 4 wires"));
  }
}

TEST(ThreadsOnTheServer, FiveRunsGiveOneTraceHashAndOneEndTime) {
  std::vector<std::string> hashes;
  std::vector<std::string> ends;
  std::vector<std::string> sums;
  for (int run = 0; run < 5; ++run) {
    const ToolResult r = run_ring(4, "");
    expect_right(r, 4);
    hashes.push_back(first_match(r.out, "trace hash ([0-9a-f]{16})"));
    ends.push_back(first_match(r.out, "finished at virtual time ([0-9.]+) us"));
    sums.push_back(first_match(r.out, "rank 0: .*\\(sum ([0-9]+)\\)"));
  }
  ASSERT_FALSE(hashes[0].empty());
  ASSERT_FALSE(ends[0].empty());
  ASSERT_FALSE(sums[0].empty());
  for (int run = 1; run < 5; ++run) {
    EXPECT_EQ(hashes[run], hashes[0]) << "run " << run;
    EXPECT_EQ(ends[run], ends[0]) << "run " << run;
    EXPECT_EQ(sums[run], sums[0]) << "run " << run;
  }
}

TEST(ThreadsOnTheServer, ATrueDeadlockOfThreadsIsStillReported) {
  const ToolResult r = run_ring(3, "--deadlock");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const std::string all = r.out + r.err;
  EXPECT_THAT(all, HasSubstr("every rank waits on the fabric and nothing is in "
                             "flight; no program can progress."));
  // Each rank: its stuck wire's thread in ibv_poll_cq, its main thread on
  // a future (and its idle workers on their condition variable).
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(count(all, absl::StrCat("rank ", rank,
                                      " \\(pid [0-9]+, weft_test_threa\\): "
                                      "waits in ibv_poll_cq \\(cq 0x[0-9a-f]+"
                                      "\\); [0-9]+ more threads? blocked on "
                                      "threads of the process")),
              1)
        << "rank " << rank << "\n"
        << all;
  }
  EXPECT_THAT(r.out, HasSubstr("weft-sim: deadlock at virtual time"));
  EXPECT_EQ(count(r.out, "\\): exited 75"), 3) << r.out;
}

}  // namespace
}  // namespace weft::testing
