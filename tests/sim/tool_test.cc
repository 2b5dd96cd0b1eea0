// The weft-sim binary: bad input exits 2 with one line saying what and
// where; a run ends with its trace hash, reproducibly.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Per test and process: CTest runs tests in parallel, and each is its own
// process, so shared scratch names would race.
std::string scratch_path(const std::string& name) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return ::testing::TempDir() + "/weft_sim_" + std::to_string(getpid()) + "_" +
         (test != nullptr ? test->name() : "none") + "_" + name;
}

Result run_tool(const std::string& args) {
  const std::string err_path = scratch_path("stderr.txt");
  const std::string cmd =
      std::string(WEFT_SIM_PATH) + " " + args + " 2>" + err_path;
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0)
    r.out.append(buffer, n);
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_path);
  return r;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = scratch_path(name);
  std::ofstream(path) << text;
  return path;
}

std::string trace_hash(const std::string& out) {
  std::smatch m;
  static const std::regex kLine("trace hash: ([0-9a-f]{16})\n$");
  return std::regex_search(out, m, kLine) ? m[1].str() : "";
}

void expect_bad_input(const std::string& args, const std::string& what) {
  const Result r = run_tool(args);
  EXPECT_EQ(r.code, 2) << args << "\n" << r.out << r.err;
  EXPECT_THAT(r.err, StartsWith("weft-sim: ")) << args;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1)
      << args << ": " << r.err;
  EXPECT_THAT(r.err, HasSubstr(what)) << args;
}

TEST(WeftSimTool, BadFlagValuesExit2WithOneLine) {
  expect_bad_input("--loss=-0.5", "--loss");
  expect_bad_input("--duplicate=abc", "not a number");
  expect_bad_input("p2p --reorder=1.5", "outside 0..1");
  expect_bad_input("--error=2", "--error");
  expect_bad_input("--ranks=0", "--ranks=0");
  expect_bad_input("--ranks=many", "--ranks=many");
  expect_bad_input("--link=warp", "link model \"warp\"");
  expect_bad_input("--link=latency_ns=-4", "latency_ns=-4");
  expect_bad_input("--topology=star", "--topology=star");
  expect_bad_input("--frames=0", "--frames=0");
  expect_bad_input("--seed=-1", "--seed=-1");
  expect_bad_input("--no-such-flag=3", "unknown flag --no_such_flag");
  expect_bad_input("p2p stray", "unexpected argument");
  expect_bad_input("explode", "unknown command \"explode\"");
}

TEST(WeftSimTool, BadDeviceJsonExits2NamingTheFileAndCell) {
  expect_bad_input("--devices=/nonexistent/devices.json",
                   "/nonexistent/devices.json");
  expect_bad_input(
      "--devices=" + write_temp("malformed.json", "[[null, \"a\"], [\"b\""),
      "not valid JSON");
  expect_bad_input(
      "--devices=" + write_temp("nonsquare.json", R"([[null, "a"], ["b"]])"),
      "row 1 has 1 cells");
  expect_bad_input("--devices=" + write_temp("diagonal.json",
                                             R"([["x", "a"], ["b", null]])"),
                   "cell [0][0]");
}

TEST(WeftSimTool, BadFaultPlanExits2NamingTheLine) {
  expect_bad_input(
      "--faults=" +
          write_temp("plan.txt", "drop from=0 to=1 frame=1\nexplode\n"),
      "line 2");
  expect_bad_input(
      "--faults=" + write_temp("ranks.txt", "crash rank=9 at_ns=5\n"), "rank");
  expect_bad_input("--faults=/nonexistent/plan.txt", "cannot be opened");
  // Bounded: a device that never ends is refused, not read into memory.
  expect_bad_input("--faults=/dev/zero", "is over 67108864 bytes");
  expect_bad_input("--devices=/tmp", "/tmp cannot be read");
}

// With no arguments weft-sim runs the collectives study (tests/tools);
// `p2p` alone runs the point-to-point stream with its defaults.
TEST(WeftSimTool, P2pDefaultsEndWithATraceHashAndRepeat) {
  const Result first = run_tool("p2p");
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  EXPECT_THAT(first.out, HasSubstr("weft-sim p2p: 8 ranks, mesh, link tb5"));
  EXPECT_THAT(first.out, HasSubstr("outcome            completed"));
  EXPECT_THAT(first.out,
              HasSubstr("frames delivered   56000"));  // 8*7 streams * 1000
  const std::string hash = trace_hash(first.out);
  ASSERT_EQ(hash.size(), 16u) << first.out;
  const Result explicit_p2p =
      run_tool("p2p --ranks=8 --topology=mesh --link=tb5 --seed=1");
  EXPECT_EQ(trace_hash(explicit_p2p.out), hash);
}

TEST(WeftSimTool, CheckDeterminismWithFaults) {
  const Result r = run_tool(
      "p2p --ranks=4 --frames=200 --loss=0.02 --duplicate=0.01 --reorder=0.01 "
      "--error=0.002 "
      "--seed=5 --check-determinism");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("determinism: ok"));
  EXPECT_THAT(r.out, HasSubstr("gaps detected"));
  const Result other = run_tool(
      "p2p --ranks=4 --frames=200 --loss=0.02 --duplicate=0.01 --reorder=0.01 "
      "--error=0.002 "
      "--seed=6");
  EXPECT_EQ(other.code, 0);
  EXPECT_NE(trace_hash(other.out), trace_hash(r.out));
  EXPECT_EQ(trace_hash(other.out).size(), 16u);
}

TEST(WeftSimTool, DeviceJsonRingAndTraceFile) {
  const std::string devices = write_temp(
      "ring3.json",
      R"([[null, "en1", ["en2", "en3"]], ["en1", null, "en2"], [["en2", "en3"], "en1", null]])");
  const std::string trace = ::testing::TempDir() + "/weft_sim_tool_trace.json";
  const Result r =
      run_tool("p2p --devices=" + devices + " --frames=50 --trace=" + trace);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 ranks"));
  EXPECT_THAT(r.out,
              HasSubstr("streams            8 x 50"));  // 2 + 1 + 2 + 1 + 2
  const nlohmann::json doc =
      nlohmann::json::parse(read_file(trace), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["otherData"]["trace_hash"], trace_hash(r.out));
}

TEST(WeftSimTool, HelpDocumentsTheFlags) {
  const Result r = run_tool("--help");
  const std::string all = r.out + r.err;
  for (const char* flag :
       {"--ranks", "--devices", "--topology", "--link", "--loss", "--duplicate",
        "--reorder", "--error", "--faults", "--seed", "--trace", "--frames",
        "--check_determinism", "--apple_limits"}) {
    EXPECT_THAT(all, HasSubstr(flag)) << flag;
  }
  EXPECT_THAT(all, HasSubstr("p2p"));
}

}  // namespace
