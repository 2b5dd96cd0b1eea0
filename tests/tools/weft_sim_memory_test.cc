// weft-sim's memory estimate, refusal and progress, run as the built
// binary: the estimate (read from the refusal line) holds the measured
// peak resident memory of real runs (wait4's ru_maxrss) between 1x and
// kMaxOverestimate; a run over --max_memory is refused with exit 2 and one
// line before it prints anything; --progress shows progress on a pipe and
// nothing else changes.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define WEFT_TEST_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WEFT_TEST_SANITIZED 1
#endif

// The estimate may exceed the measured peak by this factor at most (it
// rounds every part up and counts the process at kProcessBaselineBytes).
constexpr double kMaxOverestimate = 3.0;

ToolResult sim(const std::string& args) {
  return run_tool(WEFT_SIM_PATH, args);
}

// The estimate in a refusal line: "needs about 205.50 MiB of memory".
double refused_estimate_bytes(const std::string& line) {
  const std::regex re("needs about ([0-9.]+) (bytes|KiB|MiB|GiB|TiB)");
  std::smatch m;
  if (!std::regex_search(line, m, re)) {
    ADD_FAILURE() << "no estimate in: " << line;
    return 0;
  }
  double value = std::stod(m[1].str());
  for (const char* unit : {"KiB", "MiB", "GiB", "TiB"}) {
    if (m[2].str() == "bytes") return value;
    value *= 1024;
    if (m[2].str() == unit) return value;
  }
  return value;
}

// Peak resident bytes of `tool args...` run to exit `code`, its output
// dropped; -1 when it exits otherwise.
int64_t measured_peak_bytes(const std::string& tool,
                            const std::vector<std::string>& args,
                            int code = 0) {
  std::vector<char*> argv{const_cast<char*>(tool.c_str())};
  for (const std::string& a : args)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const int null_fd = open("/dev/null", O_WRONLY);
    dup2(null_fd, STDOUT_FILENO);
    dup2(null_fd, STDERR_FILENO);
    execv(tool.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (pid < 0 || wait4(pid, &status, 0, &usage) != pid) return -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != code) return -1;
#ifdef __APPLE__
  return usage.ru_maxrss;  // bytes on macOS
#else
  return int64_t{usage.ru_maxrss} * 1024;  // KiB on Linux
#endif
}

std::vector<std::string> split(const std::string& args) {
  std::vector<std::string> out;
  std::stringstream s(args);
  for (std::string a; s >> a;) out.push_back(a);
  return out;
}

TEST(WeftSimMemory, EstimateBoundsTheMeasuredPeakOfRealRuns) {
#ifdef WEFT_TEST_SANITIZED
  GTEST_SKIP() << "a sanitizer's shadow memory and quarantine are not what "
                  "the estimate models";
#endif
  // Two to 1024 ranks; buffers, frames, endpoints or scratch the largest
  // part. The 1024-rank ring sends about 2,000 frames of a few floats over
  // each endpoint, each writing a page of its receive slot; state that
  // grows with the world on every rank (a group's list of its members, a
  // topology's cell for every pair) would take it past the estimate. The
  // other collectives: the ring all-to-all holds the blocks it forwards in
  // scratch, (n - 1)(n - 2) / 2 of them on every rank (an estimate without
  // them was 0.29 to 0.43 of the peak at 12 ranks); in place, operations
  // copy their input first.
  const char* kWorlds[] = {
      "--ranks=2 --bytes=4K",
      "--ranks=2 --bytes=16M",
      "--ranks=8 --bytes=1M",
      "--ranks=8 --bytes=4M --topology=ring",
      "--ranks=64 --bytes=4K",
      "--ranks=1024 --bytes=4K --topology=ring",
      "--ranks=12 --bytes=1M --topology=ring --op=all_to_all",
      "--ranks=12 --bytes=1M --topology=ring --op=all_to_all --in_place",
      "--ranks=8 --bytes=1M --topology=ring --op=sum_scatter --in_place",
      "--ranks=8 --bytes=1M --topology=ring --op=all_gather",
      "--ranks=8 --bytes=4M --op=broadcast",
      "--ranks=8 --bytes=1M --op=reduce --in_place",
  };
  for (const char* world : kWorlds) {
    const std::string args = std::string("run ") + world;
    const ToolResult refused = sim(args + " --max_memory=1");
    ASSERT_EQ(refused.code, 2) << args << "\n" << refused.out << refused.err;
    const double estimate = refused_estimate_bytes(refused.err);
    std::vector<std::string> run_args = split(args);
    run_args.push_back("--max_memory=off");
    const int64_t measured = measured_peak_bytes(WEFT_SIM_PATH, run_args);
    ASSERT_GT(measured, 0) << args << ": the run did not exit 0";
    EXPECT_LE(static_cast<double>(measured), estimate) << args;
    EXPECT_LE(estimate, kMaxOverestimate * static_cast<double>(measured))
        << args;
  }
}

TEST(WeftSimMemory, RunOverTheLimitIsRefusedBeforeItStarts) {
  const std::string args = "run --ranks=8 --bytes=1M";
  expect_bad_input(WEFT_SIM_PATH, "weft-sim", args + " --max_memory=1M",
                   "--max_memory");
  const ToolResult refused = sim(args + " --max_memory=1M");
  EXPECT_EQ(refused.out, "");  // nothing printed: no row, no header
  EXPECT_GT(refused_estimate_bytes(refused.err), 1 << 20);
  EXPECT_THAT(refused.err, HasSubstr("but --max_memory is 1.00 MiB"));
  // Under a limit above the estimate it runs.
  const ToolResult ran = sim(args + " --max_memory=64G");
  EXPECT_EQ(ran.code, 0) << ran.out << ran.err;
  EXPECT_THAT(ran.out, HasSubstr("correct"));
}

TEST(WeftSimMemory, StudyChecksEveryRowBeforeTheFirst) {
  expect_bad_input(WEFT_SIM_PATH, "weft-sim", "--max_bytes=64K --max_memory=1M",
                   "the study's row");
  EXPECT_EQ(sim("--max_bytes=64K --max_memory=1M").out, "");
}

// A generated world whose endpoints alone exceed the limit is refused
// before its topology is built: a mesh of 2048 ranks holds 4.2 million
// links (about a gigabyte) before anything runs.
TEST(WeftSimMemory, AWorldTooBigIsRefusedBeforeItIsBuilt) {
  const std::string args = "run --ranks=2048 --bytes=4K --max_memory=1G";
  expect_bad_input(WEFT_SIM_PATH, "weft-sim", args,
                   "a mesh of 2048 ranks opens 4192256 endpoints");
  const int64_t peak = measured_peak_bytes(WEFT_SIM_PATH, split(args), 2);
  ASSERT_GT(peak, 0) << "the refusal did not exit 2";
  EXPECT_LT(peak, int64_t{64} << 20);
  expect_bad_input(WEFT_SIM_PATH, "weft-sim",
                   "p2p --ranks=4096 --topology=mesh", "use fewer ranks");
}

TEST(WeftSimMemory, MachineLimitRefusesWhatCannotFitAnywhere) {
  // 8 ranks x (16 GiB in + 16 GiB out) is more than any CI machine has.
  expect_bad_input(WEFT_SIM_PATH, "weft-sim", "run --bytes=16G",
                   "physical memory is");
}

TEST(WeftSimMemory, BadMaxMemoryIsBadInput) {
  expect_bad_input(WEFT_SIM_PATH, "weft-sim", "run --max_memory=lots",
                   "--max_memory=lots");
}

#ifdef WEFT_BENCH_PATH
TEST(WeftSimMemory, WeftBenchRefusesItsSimulatedRunsToo) {
  expect_bad_input(WEFT_BENCH_PATH, "weft-bench", "-b 1M -e 1M --max_memory=1M",
                   "--max_memory");
}
#endif

// The table rows of a study's stdout: between the two header lines and
// the "N runs:" line.
size_t study_rows(const std::string& out) {
  const std::vector<std::string> lines = lines_of(out);
  size_t rows = 0;
  for (size_t i = 3; i < lines.size(); ++i) {
    if (lines[i].find(" runs: ") != std::string::npos) break;
    ++rows;
  }
  return rows;
}

TEST(WeftSimProgress, ProgressGoesToAPipeOnlyWhenAskedAndEndsAtTheTotal) {
  const ToolResult quiet = sim("--max_bytes=4K");
  const ToolResult shown = sim("--max_bytes=4K --progress");
  ASSERT_EQ(quiet.code, 0) << quiet.out << quiet.err;
  ASSERT_EQ(shown.code, 0) << shown.out << shown.err;
  EXPECT_EQ(quiet.err, "");  // stderr is no terminal here
  EXPECT_EQ(shown.out, quiet.out);
  const size_t rows = study_rows(quiet.out);
  ASSERT_GT(rows, 0u);
  const std::vector<std::string> err = lines_of(shown.err);
  ASSERT_FALSE(err.empty());
  const std::string total = std::to_string(rows);
  EXPECT_EQ(err.back(), "study: " + total + "/" + total + " rows");
}

TEST(WeftSimProgress, SweepProgressCountsSeeds) {
  const ToolResult quiet = sim("sweep --seeds=5");
  const ToolResult shown = sim("sweep --seeds=5 --progress");
  EXPECT_EQ(quiet.err, "");
  const std::vector<std::string> err = lines_of(shown.err);
  ASSERT_FALSE(err.empty());
  EXPECT_THAT(err.back(), StartsWith("sweep: 5/5 seeds, correct "));
}

}  // namespace
}  // namespace weft::testing
