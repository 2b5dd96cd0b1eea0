// weft-sim launch --fabric=tcp, run as the built binary: the environment
// each rank gets (MLX's ring hostfile of free loopback ports, the rank, the
// coordinator, a fresh secret), a failing rank named with its status, the
// wall-clock deadline ending a rank that never exits, and weft-bench as N
// processes over the TCP fabric with every result checked.
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "child_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// What one rank printed: its variables and its hostfile's text.
struct RankEnv {
  std::string rank, hostfile_path, coordinator, secret, weft_rank,
      weft_hostfile, hostfile;
};

// A rank that prints one line: "env" and its variables ("-" for unset),
// then its hostfile (compact JSON, no spaces).
constexpr char kPrintEnv[] =
    "/bin/sh -c 'printf \"env %s %s %s %s %s %s %s\\n\" \"$MLX_RANK\" "
    "\"$MLX_HOSTFILE\" \"$WEFT_COORDINATOR\" \"$WEFT_SECRET\" "
    "\"${WEFT_RANK:--}\" \"${WEFT_HOSTFILE:--}\" \"$(cat \"$MLX_HOSTFILE\")\"'";

std::vector<RankEnv> rank_envs(const std::string& out) {
  std::vector<RankEnv> envs;
  for (const std::string& line : lines_of(out)) {
    const std::vector<std::string> f = fields_of(line);
    if (f.size() != 8 || f[0] != "env") continue;
    envs.push_back({f[1], f[2], f[3], f[4], f[5], f[6], f[7]});
  }
  return envs;
}

ToolResult launch(const std::string& args, const std::string& env = "") {
  return run_tool(WEFT_SIM_PATH, "launch --fabric=tcp " + args, env);
}

bool is_hex(const std::string& text) {
  for (char c : text) {
    if (std::isxdigit(static_cast<unsigned char>(c)) == 0) return false;
  }
  return true;
}

// The port of "127.0.0.1:5000" or "[::1]:5000".
int port_of(const std::string& address) {
  return std::stoi(address.substr(address.rfind(':') + 1));
}

// Every rank's line shows its own rank and the one hostfile: a row per
// rank of --cables addresses on --host, the coordinator on --host too,
// every port distinct (the coordinator's as well), a 32-byte secret in
// hex. The caller's WEFT_RANK and
// WEFT_HOSTFILE, which would win, are removed; the hostfile's directory is
// gone after the launch.
void expect_group(const ToolResult& r, int ranks, int cables,
                  const std::string& host_prefix) {
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<RankEnv> envs = rank_envs(r.out);
  ASSERT_EQ(envs.size(), static_cast<size_t>(ranks)) << r.out;
  std::set<std::string> seen_ranks;
  for (const RankEnv& e : envs) {
    seen_ranks.insert(e.rank);
    EXPECT_EQ(e.hostfile_path, envs[0].hostfile_path);
    EXPECT_EQ(e.coordinator, envs[0].coordinator);
    EXPECT_EQ(e.secret, envs[0].secret);
    EXPECT_EQ(e.hostfile, envs[0].hostfile);
    EXPECT_EQ(e.weft_rank, "-");
    EXPECT_EQ(e.weft_hostfile, "-");
  }
  for (int i = 0; i < ranks; ++i) {
    EXPECT_EQ(seen_ranks.count(std::to_string(i)), 1u) << i;
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("rank ", i, " (pid ")));
  }
  EXPECT_EQ(envs[0].secret.size(), 64u);
  EXPECT_TRUE(is_hex(envs[0].secret)) << envs[0].secret;
  const nlohmann::json hosts =
      nlohmann::json::parse(envs[0].hostfile, nullptr, false);
  ASSERT_TRUE(hosts.is_array()) << envs[0].hostfile;
  ASSERT_EQ(hosts.size(), static_cast<size_t>(ranks));
  std::set<int> ports;
  for (const nlohmann::json& row : hosts) {
    ASSERT_EQ(row.size(), static_cast<size_t>(cables)) << row.dump();
    for (const nlohmann::json& address : row) {
      EXPECT_THAT(address.get<std::string>(), StartsWith(host_prefix));
      ports.insert(port_of(address.get<std::string>()));
    }
  }
  EXPECT_EQ(ports.size(), static_cast<size_t>(ranks * cables));
  EXPECT_THAT(envs[0].coordinator, StartsWith(host_prefix));
  EXPECT_EQ(ports.count(port_of(envs[0].coordinator)), 0u)
      << envs[0].coordinator;
  EXPECT_FALSE(std::filesystem::exists(envs[0].hostfile_path));
}

TEST(WeftSimTcpLaunch, EachRankGetsTheHostfileItsRankAndTheSecret) {
  const ToolResult r =
      launch(std::string("--ranks=3 --cables=2 --timeout_s=60 -- ") + kPrintEnv,
             "WEFT_RANK=7 WEFT_HOSTFILE=/nonexistent.json ");
  expect_group(r, 3, 2, "127.0.0.1:");
}

TEST(WeftSimTcpLaunch, EveryLaunchHasItsOwnSecret) {
  const std::string args =
      std::string("--ranks=2 --timeout_s=60 -- ") + kPrintEnv;
  const std::vector<RankEnv> first = rank_envs(launch(args).out);
  const std::vector<RankEnv> second = rank_envs(launch(args).out);
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(second.size(), 2u);
  EXPECT_NE(first[0].secret, second[0].secret);
}

TEST(WeftSimTcpLaunch, Ipv6Loopback) {
  const ToolResult r = launch(
      std::string("--ranks=2 --host=::1 --timeout_s=60 -- ") + kPrintEnv);
  if (r.code == 2 && r.err.find("cannot bind") != std::string::npos) {
    GTEST_SKIP() << "no IPv6 loopback here: " << r.err;
  }
  expect_group(r, 2, 1, "[::1]:");
}

// A rank that exits other than 0 is named with its status, and launch
// exits 1; the ranks that exited 0 say so.
TEST(WeftSimTcpLaunch, AFailingRankIsNamed) {
  const ToolResult r = launch(
      "--ranks=3 --timeout_s=60 -- /bin/sh -c "
      "'[ \"$MLX_RANK\" = 1 ] && exit 3; exit 0'");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("): exited 3\n"));
  const std::vector<std::string> lines = lines_of(r.out);
  int ok = 0;
  for (const std::string& line : lines) {
    if (line.find("): exited 0") != std::string::npos) ++ok;
    if (line.find("): exited 3") != std::string::npos) {
      EXPECT_THAT(line, StartsWith("rank 1 (pid "));
    }
  }
  EXPECT_EQ(ok, 2) << r.out;
}

// A rank that never exits is killed at --timeout_s; launch names it.
TEST(WeftSimTcpLaunch, TheDeadlineKillsARankThatNeverExits) {
  const ToolResult r = launch(
      "--ranks=2 --timeout_s=2 -- /bin/sh -c "
      "'[ \"$MLX_RANK\" = 1 ] && exec sleep 600; exit 0'");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err,
              HasSubstr("rank(s) 1 still running after --timeout_s=2; killed "
                        "them"));
  EXPECT_THAT(r.out, HasSubstr("rank 0 (pid "));
  EXPECT_THAT(r.out, HasSubstr("): exited 0\nrank 1 (pid "));
  EXPECT_THAT(r.out, HasSubstr("): killed by signal 9\n"));
}

// When one rank fails, the others are ended too (here by the deadline,
// which comes before the grace period's end).
TEST(WeftSimTcpLaunch, ARankFailingEndsTheOthers) {
  const ToolResult r = launch(
      "--ranks=2 --timeout_s=3 -- /bin/sh -c "
      "'[ \"$MLX_RANK\" = 1 ] && exit 4; exec sleep 600'");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("rank 1 exited 4; the other ranks have"));
  EXPECT_THAT(r.err, HasSubstr("killed rank(s) 0, still running"));
  EXPECT_THAT(r.out, HasSubstr("rank 0 (pid "));
  EXPECT_THAT(r.out, HasSubstr("): killed by signal 9\nrank 1 (pid "));
  EXPECT_THAT(r.out, HasSubstr("): exited 4\n"));
}

TEST(WeftSimTcpLaunch, BadInputExits2WithOneLine) {
  const auto bad = [](const std::string& args, const std::string& what) {
    expect_bad_input(WEFT_SIM_PATH, "weft-sim", "launch " + args, what);
  };
  bad("--fabric=udp -- true", "--fabric=udp is neither sim nor tcp");
  bad("--fabric=tcp --seed=3 -- true", "--seed=3 is the simulator's");
  bad("--fabric=tcp --host=localhost -- true",
      "--host=localhost is not a numeric IPv4 or IPv6 address");
  bad("--fabric=tcp --host=192.0.2.1 -- true", "cannot bind a TCP port");
  bad("--fabric=tcp --cables=9 -- true", "--cables");
  bad("--fabric=tcp --ranks=2", "give the program after --");
  bad("--fabric=tcp --ranks=3 -- true : true", "2 programs");
  bad("--fabric=tcp --ranks=2 -- /nonexistent/prog",
      "cannot run '/nonexistent/prog': No such file or directory");
  bad("--fabric=tcp --ranks=2 -- /tmp", "cannot run '/tmp': not a file");
}

// Signals: launch passes SIGINT or SIGTERM on to every rank, removes the
// hostfile's directory and exits 128 + the signal.
void expect_interrupted(int signal, const std::string& name) {
  ChildProcess launch({WEFT_SIM_PATH, "launch", "--fabric=tcp", "--ranks=2",
                       "--timeout_s=120", "--", "/bin/sh", "-c",
                       "echo \"hostfile $MLX_HOSTFILE\"; exec sleep 600"});
  ASSERT_TRUE(launch.wait_for_line("hostfile "));
  ASSERT_TRUE(launch.wait_for_line("hostfile "));  // both ranks run
  const std::filesystem::path dir =
      std::filesystem::path(launch.after("hostfile ")).parent_path();
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  ASSERT_EQ(::kill(launch.pid(), signal), 0);
  EXPECT_EQ(launch.wait(), 128 + signal) << launch.out() << launch.err();
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_THAT(launch.err(), HasSubstr("weft-sim launch: interrupted by " +
                                      name + "; ending rank(s) 0, 1"));
  const std::string killed =
      "): killed by signal " + std::to_string(signal) + "\n";
  EXPECT_THAT(launch.out(), HasSubstr("rank 0 (pid ")) << launch.out();
  size_t killed_lines = 0;
  for (size_t at = 0; (at = launch.out().find(killed, at)) != std::string::npos;
       ++at) {
    ++killed_lines;
  }
  EXPECT_EQ(killed_lines, 2u) << launch.out();
}

TEST(WeftSimTcpLaunch, SigintEndsTheRanksAndRemovesTheHostfile) {
  expect_interrupted(SIGINT, "SIGINT");
}

TEST(WeftSimTcpLaunch, SigtermEndsTheRanksAndRemovesTheHostfile) {
  expect_interrupted(SIGTERM, "SIGTERM");
}

// `launch --fabric=tcp ... | head -1`: quietly 141, the directory removed.
TEST(WeftSimTcpLaunch, AClosedStdoutEndsQuietlyWith141) {
  ChildProcess launch({WEFT_SIM_PATH, "launch", "--fabric=tcp", "--ranks=2",
                       "--timeout_s=120", "--", "/bin/sh", "-c",
                       "while echo \"hostfile $MLX_HOSTFILE\"; do :; done"});
  ASSERT_TRUE(launch.wait_for_line("hostfile "));
  const std::filesystem::path dir =
      std::filesystem::path(launch.after("hostfile ")).parent_path();
  launch.close_stdout();
  EXPECT_EQ(launch.wait(), 141) << launch.err();
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_THAT(launch.err(), ::testing::Not(HasSubstr("pipe"))) << launch.err();
}

// weft-bench as N processes on the TCP fabric, every result checked: its
// JSON shows every row and #wrong 0.
void expect_bench_runs(int ranks) {
  const std::string json = scratch_path(absl::StrCat("tcp", ranks, ".json"));
  const ToolResult r = launch(
      absl::StrCat("--ranks=", ranks, " --timeout_s=120 -- ", WEFT_BENCH_PATH,
                   " --fabric=tcp -b 4K -e 256K -f 8 -w 1 -n 2 "
                   "--op=all_reduce,all_gather,broadcast --json=",
                   json));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(json), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << read_text(json);
  EXPECT_EQ(doc["fabric"], "tcp");
  EXPECT_EQ(doc["clock"], "wall");
  EXPECT_EQ(doc["ranks"], ranks);
  ASSERT_EQ(doc["blocks"].size(), 3u);
  for (const nlohmann::json& block : doc["blocks"]) {
    ASSERT_EQ(block["results"].size(), 3u) << block.dump();  // 4K, 32K, 256K
    EXPECT_EQ(block["wrong_total"], 0) << block.dump();
    EXPECT_EQ(block["errors"], 0) << block.dump();
    for (const nlohmann::json& row : block["results"]) {
      for (const char* place : {"out_of_place", "in_place"}) {
        ASSERT_TRUE(row[place].is_object()) << row.dump();
        EXPECT_EQ(row[place]["nwrong"], 0) << row.dump();
      }
    }
  }
}

TEST(WeftSimTcpLaunch, WeftBenchOnTwoRanks) { expect_bench_runs(2); }
TEST(WeftSimTcpLaunch, WeftBenchOnThreeRanks) { expect_bench_runs(3); }

// The launch contract: launch names the fabric (WEFT_FABRIC=tcp), and
// weft-bench without --fabric follows it: one table, from rank 0, of a
// group of two over TCP, never the simulator in each process.
TEST(WeftSimTcpLaunch, WeftBenchLearnsTheFabricFromLaunch) {
  const ToolResult r =
      launch(absl::StrCat("--ranks=2 --timeout_s=120 -- ", WEFT_BENCH_PATH,
                          " -b 4K -e 4K -w 1 -n 1"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("on a group of 2 on tcp (this is rank 0)"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("simulated")));
  const std::vector<std::string> lines = lines_of(r.out);
  EXPECT_EQ(std::count_if(lines.begin(), lines.end(),
                          [](const std::string& l) {
                            return l.rfind("# weft-bench ", 0) == 0;
                          }),
            1)
      << r.out;
}

// A process under launch that is told to run something else refuses in
// one line (exit 2) instead of running it.
TEST(WeftSimTcpLaunch, WeftBenchRefusesAFabricLaunchDidNotStart) {
  for (const char* fabric : {"sim", "verbs"}) {
    const ToolResult r =
        launch(absl::StrCat("--ranks=2 --timeout_s=120 -- ", WEFT_BENCH_PATH,
                            " --fabric=", fabric, " -b 4K -e 4K"));
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("): exited 2\n")) << fabric;
    EXPECT_THAT(r.out, ::testing::Not(HasSubstr("# weft-bench"))) << fabric;
    EXPECT_THAT(r.err, HasSubstr(absl::StrCat("weft-bench: --fabric=", fabric,
                                              ", but WEFT_FABRIC=tcp")))
        << r.err;
  }
}

}  // namespace
}  // namespace weft::testing
