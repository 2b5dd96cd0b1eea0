// rdma-core's own ibv_uc_pingpong (Debian's ibverbs-utils, unmodified) as
// two processes on weft's simulated fabric: `weft-sim launch` starts the
// simulation server and both ranks with the simulated provider as their
// libibverbs.so.1. Fault-free, both sides finish and print their bandwidth;
// the same seed gives the same trace; a frame the fault plan drops leaves
// both waiting, which the server reports as a deadlock instead of letting
// them spin. Then weft's own verbs fabric as one process per rank:
// weft-bench (its table, and rank 0's registration cache after it), and
// all-sums from registered user memory, with and without loss.
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "child_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/trace_nesting.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kPingpong[] = "/usr/bin/ibv_uc_pingpong";

// What the ranks' programs need in their environment: under
// AddressSanitizer, Debian's uninstrumented tools load the instrumented
// provider only with the ASan runtime preloaded.
std::string foreign_env() {
  const std::string preload = WEFT_FOREIGN_PRELOAD;
  return preload.empty() ? "" : "LD_PRELOAD=" + preload + " ";
}

// `weft-sim launch` of pingpong's server as rank 0 (device sim_0_1_0) and
// its client as rank 1, which starts once the server listens.
ToolResult run_pingpong(const std::string& launch_flags,
                        const std::string& pingpong_flags) {
  const std::string port = std::to_string(free_port());
  const std::string common =
      absl::StrCat(" -g 1 -p ", port, " ", pingpong_flags);
  return run_tool(
      WEFT_SIM_PATH,
      absl::StrCat("launch --ranks=2 --timeout_s=120 ", launch_flags, " -- ",
                   kPingpong, " -d sim_0_1_0", common, " : ",
                   WEFT_WAIT_FOR_LISTENER, " ", port, " 60 ", kPingpong,
                   " -d sim_1_0_0", common, " 127.0.0.1"),
      foreign_env());
}

std::string trace_hash(const std::string& out) {
  std::smatch m;
  static const std::regex kHash("trace hash ([0-9a-f]{16})");
  return std::regex_search(out, m, kHash) ? m[1].str() : "";
}

long count(const std::string& text, const std::regex& re) {
  return std::distance(std::sregex_iterator(text.begin(), text.end(), re),
                       std::sregex_iterator());
}

class UcPingpong : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(kPingpong))
        << kPingpong << " is missing: install ibverbs-utils (scripts/setup.sh)";
  }
};

TEST_F(UcPingpong, RunsUnmodifiedAsTwoProcesses) {
  const ToolResult r = run_pingpong("--seed=1 --link=tb5", "-n 200");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("rank 0 (pid"));
  EXPECT_THAT(r.out, HasSubstr("): exited 0\nrank 1 (pid"));
  // Each side prints its bandwidth and iteration lines; pingpong counts
  // the bytes of both directions: 2 * 200 iterations * 4096 bytes.
  const std::regex bandwidth(
      "1638400 bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec");
  const std::regex iters("200 iters in [0-9.]+ seconds = [0-9.]+ usec/iter");
  EXPECT_EQ(count(r.out, bandwidth), 2) << r.out;
  EXPECT_EQ(count(r.out, iters), 2) << r.out;
  // Each iteration is a message each way, one after the other, and a 4 KiB
  // message takes tb5's 4640 ns from post to arrival (docs/simulator.md):
  // 200 * 2 * 4640 ns of virtual time.
  EXPECT_THAT(r.out, HasSubstr("finished at virtual time 1856.000 us"));
}

TEST_F(UcPingpong, RunsWithCompletionEvents) {
  const ToolResult r = run_pingpong("--seed=1 --link=tb5", "-n 50 -e");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const std::regex bandwidth("409600 bytes in [0-9.]+ seconds");
  EXPECT_EQ(count(r.out, bandwidth), 2) << r.out;
  EXPECT_THAT(r.out, HasSubstr("finished at virtual time 464.000 us"));
}

TEST_F(UcPingpong, SmallMessagesGoInline) {
  // 64 bytes is within the 256 of max_inline_data that ibv_query_qp
  // reports, so pingpong posts them with IBV_SEND_INLINE.
  const ToolResult r = run_pingpong("--seed=1", "-n 20 -s 64");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, std::regex("2560 bytes in")), 2) << r.out;
}

TEST_F(UcPingpong, TheSameSeedGivesTheSameTrace) {
  const ToolResult a = run_pingpong("--seed=3 --loss=0", "-n 100");
  const ToolResult b = run_pingpong("--seed=3 --loss=0", "-n 100");
  ASSERT_EQ(a.code, 0) << a.out << a.err;
  ASSERT_EQ(b.code, 0) << b.out << b.err;
  ASSERT_FALSE(trace_hash(a.out).empty()) << a.out;
  EXPECT_EQ(trace_hash(a.out), trace_hash(b.out));
}

TEST_F(UcPingpong, ALostFrameIsReportedAsADeadlockNamingTheWaitingRank) {
  // The client (rank 1) sends first; its 5th message never arrives, so the
  // server (rank 0) waits for it and the client for the answer.
  const std::string plan =
      write_scratch("drop.plan", "drop from=1 to=0 frame=5\n");
  const ToolResult r =
      run_pingpong(absl::StrCat("--seed=1 --faults=", plan), "-n 20");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("deadlock"));
  EXPECT_THAT(r.err, HasSubstr("rank 0 (pid"));
  EXPECT_THAT(r.err, HasSubstr("waits in ibv_poll_cq"));
  EXPECT_THAT(r.err, HasSubstr("4 received"));
  EXPECT_THAT(r.err, HasSubstr("drop from=1 to=0 frame=5"));
  // Both ranks were ended by the server, not left spinning.
  EXPECT_THAT(r.out, HasSubstr("rank 0 (pid"));
  EXPECT_THAT(r.out, HasSubstr("exited 75"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("exited 0")));
}

TEST_F(UcPingpong, ACrashedRankFailsItsCallsAndThePeerIsReportedWaiting) {
  // Rank 0 crashes 100 us in: its next poll fails (pingpong exits 1), and
  // rank 1, waiting for an answer that never comes, is in the report.
  const std::string plan =
      write_scratch("crash.plan", "crash rank=0 at_ns=100000\n");
  const ToolResult r =
      run_pingpong(absl::StrCat("--seed=1 --faults=", plan), "-n 1000");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("rank 0 crashed at 100.000 us"));
  EXPECT_THAT(r.err, HasSubstr("rank 0: its process has ended"));
  EXPECT_THAT(r.err, HasSubstr("rank 1 (pid"));
  EXPECT_THAT(r.out, HasSubstr("rank 0 (pid"));
  EXPECT_THAT(r.out, HasSubstr("exited 1\nrank 1"));
  EXPECT_THAT(r.out, HasSubstr("exited 75"));
}

TEST_F(UcPingpong, WithOnCrashKillTheCrashedRanksProcessIsKilled) {
  const std::string plan =
      write_scratch("crash.plan", "crash rank=1 at_ns=100000\n");
  const ToolResult r = run_pingpong(
      absl::StrCat("--seed=1 --on_crash=kill --faults=", plan), "-n 1000");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("rank 1 crashed at 100.000 us"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("rank 1 \\(pid [0-9]+\\): "
                                              "killed by signal 9"));
}

TEST_F(UcPingpong, AQueuePairForcedIntoErrorGivesPingpongAnErrorCompletion) {
  // Rank 0's queue pair to rank 1 enters the error state 50 us in: its
  // posted work flushes, which pingpong reports and exits on; rank 1 then
  // waits for a message that never comes.
  const std::string plan =
      write_scratch("qp_error.plan", "qp_error rank=0 peer=1 at_ns=50000\n");
  const ToolResult r =
      run_pingpong(absl::StrCat("--seed=1 --faults=", plan), "-n 1000");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.err + r.out, HasSubstr("Failed status"));
  EXPECT_THAT(r.err + r.out, HasSubstr("(5)"));  // IBV_WC_WR_FLUSH_ERR
  EXPECT_THAT(r.err, HasSubstr("qp_error rank=0 peer=1"));
}

#ifdef WEFT_RDMA_WRITE_PAIR
// A program linked against libibverbs writes into another process's memory
// region with RDMA WRITE WITH IMMEDIATE through the server.
TEST(RdmaWriteOnTheServer, BytesLandInTheOtherProcesssMemory) {
  std::string dir = ::testing::TempDir() + "/weft_write_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const ToolResult r =
      run_tool(WEFT_SIM_PATH,
               absl::StrCat("launch --ranks=2 --timeout_s=120 -- ",
                            WEFT_RDMA_WRITE_PAIR, " ", dir),
               foreign_env());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("writer: RDMA WRITE of 256 bytes completed"));
  EXPECT_THAT(r.out,
              HasSubstr("target: 256 bytes landed at offset 100, immediate "
                        "0x1234"));
  std::filesystem::remove_all(dir);
}
#endif

// weft's own verbs fabric, one process per rank: weft-bench --fabric=verbs
// with JACCL's environment from the launcher and the TCP bootstrap.
ToolResult run_bench(const std::string& launch_flags) {
  return run_tool(WEFT_SIM_PATH,
                  absl::StrCat("launch --ranks=4 --timeout_s=300 ",
                               launch_flags, " -- ", WEFT_BENCH_PATH,
                               " --fabric=verbs -b 4K -e 16M -f 4 -n 1 -w 1"));
}

// The table's rows (size, count, type, redop, root, then time, algbw,
// busbw, #wrong out of place and in place), checking that no element is
// wrong; how many there were.
int checked_rows(const std::string& out) {
  int rows = 0;
  for (const std::string& line : lines_of(out)) {
    const std::vector<std::string> f = fields_of(line);
    if (f.size() != 13 || f[2] != "float") continue;
    ++rows;
    EXPECT_EQ(f[8], "0") << "out of place, #wrong: " << line;
    EXPECT_EQ(f[12], "0") << "in place, #wrong: " << line;
  }
  return rows;
}

TEST(WeftBenchOnTheServer, FourProcessesAreCorrectAtEverySizeAndRepeatable) {
  const ToolResult a = run_bench("--seed=2");
  ASSERT_EQ(a.code, 0) << a.out << a.err;
  // 4 KiB, 16 KiB, ... 16 MiB: seven rows, none with a wrong element.
  EXPECT_EQ(checked_rows(a.out), 7) << a.out;
  EXPECT_THAT(a.out, HasSubstr("# #wrong total         : 0"));
  EXPECT_THAT(a.out, HasSubstr("virtual time (weft's simulated provider)"));
  for (int rank = 0; rank < 4; ++rank) {
    EXPECT_THAT(a.out, HasSubstr(absl::StrCat("rank ", rank, " (pid")));
  }
  EXPECT_EQ(count(a.out, std::regex("\\): exited 0")), 4) << a.out;
  const ToolResult b = run_bench("--seed=2");
  ASSERT_EQ(b.code, 0) << b.out << b.err;
  ASSERT_FALSE(trace_hash(a.out).empty());
  EXPECT_EQ(trace_hash(a.out), trace_hash(b.out));
}

// The launch contract: launch names the fabric (WEFT_FABRIC=verbs, over
// the simulated provider) and weft-bench without --fabric follows it, as
// one rank of the group, instead of simulating a world of its own in each
// process (which never reaches the server: "ranks missing").
TEST(WeftBenchOnTheServer, LearnsTheFabricFromLaunch) {
  const ToolResult r = run_tool(
      WEFT_SIM_PATH, absl::StrCat("launch --ranks=2 --timeout_s=300 -- ",
                                  WEFT_BENCH_PATH, " -b 4K -e 4K -n 1 -w 1"));
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("on a group of 2 on verbs (this is rank 0)"));
  EXPECT_EQ(checked_rows(r.out), 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("weft-sim: finished at virtual time"));
  // Told to simulate on its own, it refuses in one line.
  const ToolResult sim =
      run_tool(WEFT_SIM_PATH,
               absl::StrCat("launch --ranks=2 --timeout_s=300 -- ",
                            WEFT_BENCH_PATH, " --fabric=sim -b 4K -e 4K"));
  EXPECT_EQ(sim.code, 1) << sim.out << sim.err;
  EXPECT_EQ(count(sim.out, std::regex("\\): exited 2")), 2) << sim.out;
  EXPECT_THAT(sim.err,
              HasSubstr("weft-bench: --fabric=sim, but WEFT_FABRIC=verbs"));
}

// A rank that ends without a verbs call leaves the run "ranks missing";
// launch says why in one line, naming the rank and how it ended.
TEST(LaunchOnTheServer, ARankThatNeverReachesTheWorldIsExplained) {
  const ToolResult r = run_tool(
      WEFT_SIM_PATH, "launch --ranks=2 --timeout_s=60 -- /bin/sh -c 'exit 0'");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("weft-sim: ranks missing at virtual time"));
  static const std::regex kWhy(
      "weft-sim launch: rank\\(s\\) [01] \\(exited 0\\), [01] \\(exited "
      "0\\) ended without a verbs call to the simulated world[^\n]*"
      "WEFT_FABRIC=verbs");
  EXPECT_EQ(count(r.err, kWhy), 1) << r.err;
}

// launch --trace writes the world's timeline; Perfetto draws it as
// written: every track's slices nest, frames in flight on a link included.
TEST(WeftBenchOnTheServer, TheTraceNestsOnEveryTrack) {
  const std::string trace = scratch_path("launch-trace.json");
  const ToolResult r = run_bench("--seed=2 --trace=" + trace);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(trace), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << trace;
  size_t link_slices = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    link_slices += e.value("ph", "") == "X" && e.value("pid", 0) == 2;
  }
  EXPECT_GT(link_slices, 100u);  // frames in flight were drawn
  EXPECT_THAT(nesting_violations(doc), ::testing::IsEmpty());
}

TEST(WeftBenchOnTheServer, UnderLossEveryRowIsCorrectOrATypedError) {
  const ToolResult r = run_bench("--seed=7 --loss=0.01");
  // Recovery repairs what 1% loss takes; a run that could not would exit
  // with weft-bench's typed error, never with wrong elements or a hang.
  const int rows = checked_rows(r.out);
  if (r.code == 0) {
    EXPECT_EQ(rows, 7) << r.out;
    EXPECT_THAT(r.out, HasSubstr("# #wrong total         : 0"));
    EXPECT_THAT(r.out, ::testing::ContainsRegex("[1-9][0-9]* faults injected"));
  } else {
    EXPECT_THAT(r.err, ::testing::ContainsRegex("weft-bench: .*(rank|peer)"));
  }
}

// weft-bench prints rank 0's registration cache after its table, and its
// JSON carries it: the budget WEFT_MR_BUDGET gave every rank through the
// launcher, weft's slabs registered once (weft-bench registers no user
// memory unless asked to, so every post finds its memory registered: no
// miss, no eviction).
TEST(WeftBenchOnTheServer, PrintsRankZerosRegistrationCache) {
  std::string dir = ::testing::TempDir() + "/weft_cache_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string json = dir + "/bench.json";
  const ToolResult r = run_tool(
      WEFT_SIM_PATH,
      absl::StrCat("launch --ranks=2 --timeout_s=300 -- ", WEFT_BENCH_PATH,
                   " --fabric=verbs -b 4K -e 64K -f 4 -n 1 -w 1 --json=", json),
      "WEFT_MR_BUDGET=40 ");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# Registration cache of rank 0 (memory "
                               "regions per device):"));
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(json), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << read_text(json);
  const nlohmann::json& caches = doc["registration_caches"];
  // Two ranks, one cable: rank 0 opens one device.
  ASSERT_TRUE(caches.is_array()) << doc.dump();
  ASSERT_EQ(caches.size(), 1u) << caches.dump();
  const nlohmann::json& c = caches[0];
  EXPECT_EQ(c["device"], "sim_0_1_0");
  EXPECT_EQ(c["budget"], 40);
  EXPECT_GE(c["regions"].get<uint64_t>(), 1u);
  EXPECT_LE(c["regions"].get<uint64_t>(), 40u);
  EXPECT_EQ(c["registrations"], c["regions"]);
  EXPECT_EQ(c["misses"], 0);
  EXPECT_EQ(c["evictions"], 0);
  EXPECT_GT(c["hits"].get<uint64_t>(), 0u);
  // The table's line says the same.
  const std::vector<std::string> line = {"#",
                                         "sim_0_1_0",
                                         "40",
                                         c["regions"].dump(),
                                         c["registrations"].dump(),
                                         c["hits"].dump(),
                                         "0",
                                         "0"};
  bool found = false;
  for (const std::string& l : lines_of(r.out)) found |= fields_of(l) == line;
  EXPECT_TRUE(found) << r.out;
  std::filesystem::remove_all(dir);
}

// With --registered every row registers the rank's buffers with the group
// (Group::register_memory): the verbs fabric registers user memory as a
// post first needs it (a miss), and releases it when the row's buffers
// go, so more regions were registered than remain. Every row is still
// checked correct.
TEST(WeftBenchOnTheServer, RegisteredBuffersGoThroughTheCache) {
  std::string dir = ::testing::TempDir() + "/weft_registered_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string json = dir + "/bench.json";
  const ToolResult r = run_tool(
      WEFT_SIM_PATH,
      absl::StrCat("launch --ranks=2 --timeout_s=300 -- ", WEFT_BENCH_PATH,
                   " --fabric=verbs -b 4K -e 64K -f 4 -n 1 -w 1 --registered"
                   " --json=",
                   json),
      "WEFT_MR_BUDGET=40 ");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(checked_rows(r.out), 3) << r.out;
  EXPECT_THAT(r.out, HasSubstr("# #wrong total         : 0"));
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(json), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << read_text(json);
  EXPECT_EQ(doc["config"]["registered"], true);
  const nlohmann::json& caches = doc["registration_caches"];
  ASSERT_TRUE(caches.is_array()) << doc.dump();
  ASSERT_EQ(caches.size(), 1u) << caches.dump();
  const nlohmann::json& c = caches[0];
  EXPECT_GT(c["misses"].get<uint64_t>(), 0u) << c.dump();
  EXPECT_GT(c["registrations"].get<uint64_t>(), c["regions"].get<uint64_t>())
      << c.dump();
  EXPECT_LE(c["regions"].get<uint64_t>(), 40u);
  std::filesystem::remove_all(dir);
}

// Registered memory through the simulation server: four processes, each
// all-summing from buffers it registered (registered_all_sum_rank.cc checks
// every element against sums it computes itself, and that payloads went
// out zero-copy). `launch_flags` add the server's faults.
ToolResult run_registered(const std::string& launch_flags) {
  return run_tool(
      WEFT_SIM_PATH,
      absl::StrCat("launch --ranks=4 --timeout_s=300 ", launch_flags, " -- ",
                   WEFT_REGISTERED_ALL_SUM_RANK));
}

// Each rank's zero-copy payload bytes from its last line; -1 when a rank
// did not print one.
std::vector<long long> zero_copy_bytes(const std::string& out) {
  std::vector<long long> bytes(4, -1);
  static const std::regex kLine(
      "rank ([0-3]): 6 all_sums of 100003 int64 correct; zero-copy payload "
      "bytes ([0-9]+)");
  for (std::sregex_iterator it(out.begin(), out.end(), kLine), end; it != end;
       ++it) {
    bytes[std::stoi((*it)[1].str())] = std::stoll((*it)[2].str());
  }
  return bytes;
}

TEST(RegisteredMemoryOnTheServer, AllSumsFromRegisteredBuffersAreRight) {
  const ToolResult r = run_registered("--seed=3");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, std::regex("\\): exited 0")), 4) << r.out;
  for (long long bytes : zero_copy_bytes(r.out)) {
    EXPECT_GT(bytes, 0) << r.out;
  }
}

// Under loss frames sent from user memory are resent (from the user's
// buffer or, once the call returned, from the copy set aside); every
// element is still right.
TEST(RegisteredMemoryOnTheServer, AllSumsFromRegisteredBuffersUnderLoss) {
  const ToolResult r = run_registered("--seed=5 --loss=0.02");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, ::testing::ContainsRegex("[1-9][0-9]* faults injected"));
  EXPECT_EQ(count(r.out, std::regex("\\): exited 0")), 4) << r.out;
  for (long long bytes : zero_copy_bytes(r.out)) {
    EXPECT_GT(bytes, 0) << r.out;
  }
}

// Signals: SIGINT and SIGTERM end launch as mpirun ends a job. Every rank
// gets the signal, the run's line says so, the temporary directory (the
// socket, the device JSON) is removed, and launch exits 128 + the signal.
// The ranks print where the socket is, then sleep until ended.
// examples/elastic_all_reduce: four processes, rank 2 killed 60 us in by
// the fault plan; the survivors' all-sum ends naming it (the simulated
// provider's departure record, in virtual time), they shrink and finish
// every step, each sum checked over the members of its step. Twice: the
// same run, the same virtual end time and trace.
TEST(ElasticOnTheServer, TheSurvivorsShrinkAndFinishEveryStep) {
  const std::string plan =
      write_scratch("crash.plan", "crash rank=2 at_ns=60000\n");
  std::string first_summary;
  for (int run = 0; run < 2; ++run) {
    const ToolResult r =
        run_tool(WEFT_SIM_PATH,
                 absl::StrCat("launch --ranks=4 --timeout_s=300 --seed=1 "
                              "--on_crash=kill --faults=",
                              plan, " -- ", WEFT_ELASTIC_ALL_REDUCE, " 30"));
    // A rank was killed, so launch exits 1; the survivors exit 0.
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_THAT(r.out, ::testing::ContainsRegex(
                           "rank 2 \\(pid [0-9]+\\): killed by signal 9"));
    EXPECT_EQ(count(r.out, std::regex("\\): exited 0")), 3) << r.out << r.err;
    for (int rank : {0, 1, 3}) {
      const int now = rank == 3 ? 2 : rank;
      EXPECT_THAT(r.out, HasSubstr(absl::StrCat(
                             "elastic_all_reduce: rank ", rank, " (now ", now,
                             " of 3): 30 all-sums correct, 1 "
                             "shrink(s)")))
          << r.out << r.err;
    }
    std::smatch m;
    ASSERT_TRUE(std::regex_search(
        r.out, m, std::regex("finished at virtual time [^\\n]*")))
        << r.out;
    if (run == 0) first_summary = m.str();
    EXPECT_EQ(m.str(), first_summary);
  }
}

void expect_launch_interrupted(int signal, const std::string& name) {
  ChildProcess launch({WEFT_SIM_PATH, "launch", "--ranks=2", "--timeout_s=120",
                       "--", "/bin/sh", "-c",
                       "echo \"socket $WEFT_SIM_SERVER\"; exec sleep 600"});
  ASSERT_TRUE(launch.wait_for_line("socket "));
  ASSERT_TRUE(launch.wait_for_line("socket "));  // both ranks run
  const std::filesystem::path dir =
      std::filesystem::path(launch.after("socket ")).parent_path();
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  ASSERT_EQ(::kill(launch.pid(), signal), 0);
  EXPECT_EQ(launch.wait(), 128 + signal) << launch.out() << launch.err();
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_THAT(launch.out(), HasSubstr("weft-sim: interrupted by " + name +
                                      " at virtual time 0.000 us"));
  EXPECT_EQ(count(launch.out(), std::regex("\\): killed by signal " +
                                           std::to_string(signal))),
            2)
      << launch.out();
}

TEST(LaunchSignals, SigintEndsTheRanksAndRemovesTheDirectory) {
  expect_launch_interrupted(SIGINT, "SIGINT");
}

TEST(LaunchSignals, SigtermEndsTheRanksAndRemovesTheDirectory) {
  expect_launch_interrupted(SIGTERM, "SIGTERM");
}

// `launch ... | head -1`: the ranks write until the reader has gone (and
// then die of SIGPIPE); launch's own lines find stdout closed, and it ends
// quietly with 141, its directory removed.
TEST(LaunchSignals, AClosedStdoutEndsQuietlyWith141) {
  ChildProcess launch({WEFT_SIM_PATH, "launch", "--ranks=2", "--timeout_s=120",
                       "--", "/bin/sh", "-c",
                       "while echo \"socket $WEFT_SIM_SERVER\"; do :; done"});
  ASSERT_TRUE(launch.wait_for_line("socket "));
  const std::filesystem::path dir =
      std::filesystem::path(launch.after("socket ")).parent_path();
  launch.close_stdout();
  EXPECT_EQ(launch.wait(), 141) << launch.err();
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_THAT(launch.err(), ::testing::Not(HasSubstr("pipe"))) << launch.err();
  EXPECT_THAT(launch.err(), ::testing::Not(HasSubstr("weft-sim: ")));
}

// serve: the same, for a server whose ranks were started by hand (none
// here).
void expect_serve_interrupted(int signal, const std::string& name) {
  ChildProcess serve({WEFT_SIM_PATH, "serve", "--ranks=2"});
  ASSERT_TRUE(serve.wait_for_line("weft-sim serve: 2 ranks; run each with"));
  const std::string line = serve.after("WEFT_SIM_SERVER=");
  const std::filesystem::path dir =
      std::filesystem::path(line.substr(0, line.find(' '))).parent_path();
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  ASSERT_EQ(::kill(serve.pid(), signal), 0);
  EXPECT_EQ(serve.wait(), 128 + signal) << serve.out() << serve.err();
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_THAT(serve.out(), HasSubstr("weft-sim: interrupted by " + name));
}

TEST(ServeSignals, SigintRemovesTheDirectory) {
  expect_serve_interrupted(SIGINT, "SIGINT");
}

TEST(ServeSignals, SigtermRemovesTheDirectory) {
  expect_serve_interrupted(SIGTERM, "SIGTERM");
}

// `serve | head -1`: the reader takes the first line and goes; serve's
// last line (when the ranks it waits for have not come within 1 s) finds
// stdout closed, and it ends quietly with 141, its directory removed.
TEST(ServeSignals, AClosedStdoutEndsQuietlyWith141) {
  ChildProcess serve(
      {WEFT_SIM_PATH, "serve", "--ranks=2", "--connect_timeout_s=1"});
  ASSERT_TRUE(serve.wait_for_line("weft-sim serve: 2 ranks; run each with"));
  const std::string line = serve.after("WEFT_SIM_SERVER=");
  const std::filesystem::path dir =
      std::filesystem::path(line.substr(0, line.find(' '))).parent_path();
  serve.close_stdout();
  EXPECT_EQ(serve.wait(), 141) << serve.err();
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_THAT(serve.err(), ::testing::Not(HasSubstr("pipe"))) << serve.err();
}

// A rank that holds virtual time (here pingpong's client as rank 1 of 3,
// blocked reading its peer's address from the test, which says nothing)
// while the other two wait on the fabric is named on stderr once, after
// --hold_report_s, with the call the server last saw from it; the run is
// the same as without the report.
struct HeldRun {
  int code = -1;
  std::string out;
};

HeldRun run_held(int hold_report_s) {
  HeldRun run;
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listener < 0 ||
      ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ADD_FAILURE() << "cannot listen on 127.0.0.1";
    return run;
  }
  const std::string held_port = std::to_string(ntohs(addr.sin_port));
  const std::string port = std::to_string(free_port());
  const std::string pair = " -g 1 -n 20 -p " + port;
  ChildProcess launch(
      {"/bin/sh", "-c",
       absl::StrCat(foreign_env(), WEFT_SIM_PATH,
                    " launch --ranks=3 --seed=1 --timeout_s=120 "
                    "--hold_report_s=",
                    hold_report_s, " -- ", kPingpong, " -d sim_0_2_0", pair,
                    " : ", kPingpong, " -g 1 -d sim_1_0_0 -p ", held_port,
                    " 127.0.0.1 : ", WEFT_WAIT_FOR_LISTENER, " ", port, " 60 ",
                    kPingpong, " -d sim_2_0_0", pair, " 127.0.0.1")},
      /*merge_stderr=*/true);
  if (hold_report_s > 0) {
    EXPECT_TRUE(launch.wait_for_line("has held virtual time")) << launch.out();
  }
  // Rank 1 is let go: its peer closes without a word.
  pollfd p{listener, POLLIN, 0};
  EXPECT_EQ(::poll(&p, 1, 60'000), 1) << launch.out();
  const int held = ::accept(listener, nullptr, nullptr);
  if (held >= 0) ::close(held);
  ::close(listener);
  run.code = launch.wait(std::chrono::seconds(120));
  run.out = launch.out();
  return run;
}

TEST(HeldClock, TheRankHoldingVirtualTimeIsNamedOnceAndTheRunIsUnchanged) {
  if (!std::filesystem::exists(kPingpong)) GTEST_SKIP() << kPingpong;
  const HeldRun held = run_held(1);
  // Rank 1 exits 1 (no peer address); the pair finishes.
  EXPECT_EQ(held.code, 1) << held.out;
  EXPECT_EQ(count(held.out, std::regex("has held virtual time")), 1)
      << held.out;
  EXPECT_THAT(held.out,
              ::testing::ContainsRegex(
                  "weft-sim serve: rank 1 \\(pid [0-9]+, ibv_uc_pingpong\\) "
                  "has held virtual time at 0.000 us for 1 s of wall time: it "
                  "has not waited on the fabric since its last call, ibv_"
                  "[a-z_]+, while rank\\(s\\) 0, 2 wait on the fabric"));
  EXPECT_THAT(held.out, HasSubstr("weft-sim: finished at virtual time"));
  EXPECT_EQ(count(held.out, std::regex("\\): exited 0")), 2) << held.out;
  const HeldRun quiet = run_held(0);
  EXPECT_EQ(quiet.code, 1) << quiet.out;
  EXPECT_THAT(quiet.out, ::testing::Not(HasSubstr("has held virtual time")));
  ASSERT_FALSE(trace_hash(held.out).empty()) << held.out;
  EXPECT_EQ(trace_hash(held.out), trace_hash(quiet.out));
  const std::regex summary("weft-sim: finished at virtual time [^\n]*");
  std::smatch a, b;
  ASSERT_TRUE(std::regex_search(held.out, a, summary)) << held.out;
  ASSERT_TRUE(std::regex_search(quiet.out, b, summary)) << quiet.out;
  EXPECT_EQ(a.str(), b.str());
}

// --socket places the server's socket where it says (its directory the
// user's alone); the device JSON stays in launch's own directory.
TEST(LaunchOnTheServer, TheSocketFlagPlacesTheSocket) {
  std::string dir = ::testing::TempDir() + "/weft_socket_XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string socket = dir + "/s";
  const ToolResult r = run_tool(
      WEFT_SIM_PATH, "launch --ranks=2 -n 1 --timeout_s=60 --socket=" + socket +
                         " -- /bin/sh -c 'echo \"server $WEFT_SIM_SERVER\"'");
  EXPECT_EQ(r.code, 1) << r.out << r.err;  // no verbs call: ranks missing
  EXPECT_THAT(r.out, HasSubstr("server " + socket + "\n"));
  EXPECT_FALSE(std::filesystem::exists(socket));  // removed at the end
  std::filesystem::remove_all(dir);
}

TEST(LaunchOnTheServer, AProgramThatCannotRunIsBadInput) {
  expect_bad_input(WEFT_SIM_PATH, "weft-sim",
                   "launch --ranks=2 -- /nonexistent/prog",
                   "cannot run '/nonexistent/prog'");
  expect_bad_input(WEFT_SIM_PATH, "weft-sim",
                   "launch --ranks=2 -- weft-no-such-program-anywhere",
                   "no executable of that name on PATH");
}

}  // namespace
}  // namespace weft::testing
