// weft-sim sweep, run as the built binary: the outcome table counts every
// seed once, fault-free seeds all end correct (exit 0), the same flags print
// the same table and combined trace hash, shards split the seeds exactly,
// --check-determinism finds every run repeatable, a failing seed is
// reported with its replay line and a trace file, and bad flags exit 2 with
// one line.

#include <signal.h>

#include <cctype>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "child_process.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/trace_nesting.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

constexpr int kSeeds = 20;
const char* const kOutcomes[] = {"correct",    "typed error", "hang",
                                 "time limit", "CORRUPT",     "untyped error"};

ToolResult sim(const std::string& args) {
  return run_tool(WEFT_SIM_PATH, args);
}

// A sweep whose failing seeds' traces go to this test's own scratch dir.
ToolResult sweep(const std::string& args) {
  return sim("sweep " + args + " --out=" + scratch_path("out"));
}

// The table's rows: "<outcome> <seeds> <percent>%" and "total <seeds>".
std::map<std::string, long> table_counts(const std::string& out) {
  std::map<std::string, long> counts;
  for (const std::string& line : lines_of(out)) {
    const std::vector<std::string> f = fields_of(line);
    if (f.size() < 2) continue;
    // The name is every field before the first number.
    std::string name;
    size_t i = 0;
    for (; i < f.size() && !std::isdigit(static_cast<unsigned char>(f[i][0]));
         ++i) {
      name += (name.empty() ? "" : " ") + f[i];
    }
    const bool row =
        i + 1 == f.size() ||
        (i + 2 == f.size() && (f[i + 1].back() == '%' || f[i + 1] == "seeds"));
    if (i < f.size() && row) counts[name] = std::stol(f[i]);
  }
  return counts;
}

long outcome_sum(const std::map<std::string, long>& counts) {
  long sum = 0;
  for (const char* o : kOutcomes) {
    const auto it = counts.find(o);
    if (it != counts.end()) sum += it->second;
  }
  return sum;
}

// The 16 hex digits of "trace hash: <hash>"; "" if none.
std::string hash_of(const std::string& out) {
  const std::string prefix = "trace hash: ";
  for (const std::string& line : lines_of(out)) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

// Everything but the wall time and the cost per seed (the only lines
// allowed to differ).
std::string without_wall_time(const std::string& out) {
  std::string kept;
  for (const std::string& line : lines_of(out)) {
    if (line.rfind("wall time:", 0) != 0 && line.rfind("seed cost:", 0) != 0) {
      kept += line + "\n";
    }
  }
  return kept;
}

TEST(WeftSimSweep, FaultFreeSeedsAllEndCorrectAndExitZero) {
  const std::string empty_plan = write_scratch("empty.plan", "");
  const ToolResult r =
      sim("sweep --seeds=20 --progress --faults=" + empty_plan);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::map<std::string, long> counts = table_counts(r.out);
  for (const char* o : kOutcomes) EXPECT_EQ(counts.count(o), 1u) << o;
  EXPECT_EQ(outcome_sum(counts), kSeeds) << r.out;
  EXPECT_EQ(counts.at("correct"), kSeeds) << r.out;
  EXPECT_EQ(counts.at("total"), kSeeds);
  EXPECT_THAT(r.out, HasSubstr("failed an oracle: 0 seeds"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("FAIL seed")));
  // --progress: progress lines even though stderr is not a terminal.
  EXPECT_THAT(r.err, HasSubstr("sweep: 20/20 seeds"));
}

TEST(WeftSimSweep, DrawnFaultsNeverHangCorruptOrGoUntyped) {
  const ToolResult r = sweep("--seeds=20");
  ASSERT_TRUE(r.code == 0 || r.code == 1) << r.out << r.err;
  const std::map<std::string, long> counts = table_counts(r.out);
  EXPECT_EQ(outcome_sum(counts), kSeeds) << r.out;
  EXPECT_EQ(counts.at("hang"), 0) << r.out;
  EXPECT_EQ(counts.at("CORRUPT"), 0) << r.out;
  EXPECT_EQ(counts.at("untyped error"), 0) << r.out;
  // Exit 1 exactly when some seed failed an oracle, each one listed.
  const long failed = counts.at("failed an oracle:");
  EXPECT_EQ(r.code, failed == 0 ? 0 : 1);
  long listed = 0;
  for (const std::string& line : lines_of(r.out))
    listed += line.rfind("FAIL seed ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(listed, failed);
}

TEST(WeftSimSweep, SameFlagsSameTableAndHash) {
  const ToolResult a = sweep("--seeds=20 --first-seed=100");
  const ToolResult b = sweep("--seeds=20 --first-seed=100");
  const ToolResult other = sweep("--seeds=20 --first-seed=200");
  EXPECT_EQ(a.code, b.code);
  ASSERT_EQ(hash_of(a.out).size(), 16u) << a.out;
  EXPECT_EQ(hash_of(a.out), hash_of(b.out));
  EXPECT_EQ(without_wall_time(a.out), without_wall_time(b.out));
  EXPECT_NE(hash_of(a.out), hash_of(other.out));
}

TEST(WeftSimSweep, ShardsSplitTheSeedsExactly) {
  const ToolResult all = sweep("--seeds=20 --first-seed=7");
  const ToolResult even = sweep("--seeds=20 --first-seed=7 --shard=0/2");
  const ToolResult odd = sweep("--seeds=20 --first-seed=7 --shard=1/2");
  const std::map<std::string, long> a = table_counts(all.out);
  const std::map<std::string, long> e = table_counts(even.out);
  const std::map<std::string, long> o = table_counts(odd.out);
  EXPECT_EQ(e.at("total"), kSeeds / 2);
  EXPECT_EQ(o.at("total"), kSeeds / 2);
  for (const char* name : kOutcomes) {
    EXPECT_EQ(e.at(name) + o.at(name), a.at(name)) << name;
  }
  EXPECT_EQ(e.at("ranks disagree") + o.at("ranks disagree"),
            a.at("ranks disagree"));
  // A failing seed is listed by exactly one shard.
  for (const std::string& line : lines_of(all.out)) {
    if (line.rfind("FAIL seed ", 0) != 0) continue;
    const std::string seed = line.substr(0, line.find(':'));
    EXPECT_NE(even.out.find(seed + ":") != std::string::npos,
              odd.out.find(seed + ":") != std::string::npos)
        << seed;
  }
}

TEST(WeftSimSweep, CheckDeterminismFindsEveryRunRepeatable) {
  const ToolResult r = sweep("--seeds=10 --check-determinism");
  const std::map<std::string, long> counts = table_counts(r.out);
  ASSERT_EQ(counts.count("nondeterministic"), 1u) << r.out;
  EXPECT_EQ(counts.at("nondeterministic"), 0);
  EXPECT_EQ(counts.at("total"), 10);
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("not deterministic")));
}

// Seed 8's last operation (of 20) with recovery off and the one duplicated
// frame that `weft-sim shrink --seed=8 --recovery=off` finds for it: a typed
// error, which --require-correct refuses. A change to the sweep's draw
// changes what a seed runs: then shrink another seed and take its replay
// line.
constexpr char kShrunkOps[] = " --keep-ops=19";
constexpr char kShrunkPlan[] = "duplicate from=0 to=1 frame=11\n";

TEST(WeftSimSweep, FailingSeedHasReplayLineAndTrace) {
  const std::string plan = write_scratch("dup.plan", kShrunkPlan);
  const std::string out_dir = scratch_path("out");
  const ToolResult r =
      sim(std::string("sweep --seeds=1 --first-seed=8 --recovery=off "
                      "--require-correct") +
          kShrunkOps + " --faults=" + plan + " --out=" + out_dir);
  ASSERT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIL seed 8: typed error"));
  EXPECT_THAT(r.out,
              HasSubstr("replay: weft-sim sweep --seeds=1 --first-seed=8 "
                        "--recovery=off --require-correct --faults=" +
                        plan + kShrunkOps));
  EXPECT_THAT(r.out, HasSubstr(" 1 ops: "));  // the one operation kept
  const std::string trace = out_dir + "/seed-8.json";
  EXPECT_THAT(r.out, HasSubstr("trace: " + trace));
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(trace), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << trace;
  EXPECT_GT(doc["traceEvents"].size(), 0u);
  EXPECT_THAT(nesting_violations(doc), ::testing::IsEmpty());
}

// The same seed, operation and plan with recovery on: the duplicate is
// discarded.
TEST(WeftSimSweep, RecoverySurvivesWhatFailsWithoutIt) {
  const std::string plan = write_scratch("dup.plan", kShrunkPlan);
  const ToolResult r =
      sim(std::string("sweep --seeds=1 --first-seed=8 --require-correct") +
          kShrunkOps + " --faults=" + plan);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("seed 8: correct"));
}

// A seed no fatal fault struck must end correct; the sweep counts those
// seeds and flags any that did not ("not live").
TEST(WeftSimSweep, SeedsWithoutAFatalFaultEndCorrect) {
  const ToolResult r = sweep("--seeds=40 --first-seed=300");
  const std::map<std::string, long> counts = table_counts(r.out);
  ASSERT_EQ(counts.count("not live"), 1u) << r.out;
  EXPECT_EQ(counts.at("not live"), 0) << r.out;
  long nonfatal = -1;
  long correct = -1;
  for (const std::string& line : lines_of(r.out)) {
    if (line.rfind("no crash, dead link", 0) != 0) continue;
    const std::vector<std::string> f = fields_of(line);
    for (size_t i = 0; i + 1 < f.size(); ++i) {
      if (f[i + 1] == "seeds,") nonfatal = std::stol(f[i]);
      if (f[i + 1] == "correct") correct = std::stol(f[i]);
    }
  }
  EXPECT_GT(nonfatal, 0) << r.out;
  EXPECT_EQ(correct, nonfatal) << r.out;
  EXPECT_THAT(r.out, HasSubstr("seed cost: median "));
}

// Seeds that once livelocked with no fatal fault: a rank's lane owed a
// probe while its acknowledgement frame was in flight and reported the
// probe's past due time as its next wake-up, so the world stepped it at
// one instant until the livelock detector gave up (LaneTest
// AProbeDueWhileTheAcknowledgementIsInFlightWaitsForIt holds the cause
// itself; these hold the whole path, as long as the draw is unchanged).
TEST(WeftSimSweep, SeedsThatOnceLivelockedEndCorrect) {
  for (const char* seed : {"12177", "13852", "17047"}) {
    const ToolResult r = sweep(std::string("--seeds=1 --first-seed=") + seed);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string("seed ") + seed + ": correct"))
        << r.out;
  }
}

// Seeds whose one fatal-looking fault is a pulled cable of a pair joined
// by several (docs/fault-tolerance.md, "A dead cable"), which meets their
// traffic: their lanes move and every operation ends correct, also under
// loss (38). Each of the others once failed: 224 pulls one of three
// cables, and both ends found it at once and chose different cables to
// move to (now the lower rank's choice stands); in 657 the cable took a
// credit report, so the sender had nothing to resend and only its probe
// went unanswered; in 2743 no other cable of the pair had carried traffic
// to show the peer alive (it is probed first); in 1332 a stalled rank's
// silence on every cable moved lanes to cables being moved themselves (a
// silent peer is now probed over its other cables, and the move frame
// names the physical cable); in 2170 the answer to a move was lost and
// the repeated asks must be answered again. A quarter of the seeds of worlds with
// several cables a pair draw a pull; these hold the path as long as the
// draw is unchanged.
TEST(WeftSimSweep, SeedsWithAPulledCableOfSeveralEndCorrect) {
  for (const auto& [seed, pull] :
       {std::pair{"38", "link_down between=2,1 cable=1"},
        std::pair{"152", "link_down between=0,2 cable=2"},
        std::pair{"224", "link_down between=7,8 cable=1"},
        std::pair{"657", "link_down between=5,4 cable=0"},
        std::pair{"2743", "link_down between=4,3 cable=3"},
        std::pair{"1332", "link_down between=5,1 cable=2"},
        std::pair{"2170", "link_down between=2,3 cable=1"}}) {
    const ToolResult r = sweep(std::string("--seeds=1 --first-seed=") + seed);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string("seed ") + seed + ": correct"))
        << r.out;
    EXPECT_THAT(r.out, HasSubstr(pull)) << r.out;
  }
}

constexpr std::pair<const char*, const char*> kOnlyCablePulls[] = {
    {"331", "link_down between=0,2 cable=0"},    // 3 ranks: one relay
    {"265", "link_down from=3 to=4"},            // one direction (5 ranks)
    {"915", "link_down between=7,6 cable=0"},    // 8 ranks
    {"876", "link_down between=2,0 cable=0"},    // pulled 18 ns in
    {"1228", "link_down between=24,50 cable=0"},  // 56 ranks
    // A reduce to rank 0 whose first frame from rank 1 met the pull: rank
    // 1 heard no one since, and asks through rank 2 all the same.
    {"1804", "link_down between=1,0 cable=0"}};

// Seeds that pull a pair's only cable on a mesh (docs/fault-tolerance.md,
// "A pair's only cable"), drawn on a quarter of the seeds of such worlds,
// where the pull meets the program's traffic: both ends relay the lane
// (each logs it at info) and every operation ends correct, on small
// meshes and on a big one. They hold the path as long as the draw is
// unchanged.
TEST(WeftSimSweep, SeedsWithAPairsOnlyCablePulledEndCorrect) {
  for (const auto& [seed, pull] : kOnlyCablePulls) {
    const ToolResult r =
        run_tool(WEFT_SIM_PATH,
                 std::string("sweep --seeds=1 --first-seed=") + seed +
                     " --out=" + scratch_path("out"),
                 "WEFT_LOG_LEVEL=info ");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr(std::string("seed ") + seed + ": correct"))
        << r.out;
    EXPECT_THAT(r.out, HasSubstr(pull)) << r.out;
    EXPECT_THAT(r.err, HasSubstr("is relayed from now on")) << r.err;
  }
}

// SIGINT or SIGTERM ends a long sweep once the seed running has finished:
// the tally of the seeds it ran and which seeds those were, exit 128 + the
// signal. The test waits for a failing seed's line (--require-correct
// fails every seed that does not end correct), so some seeds have run.
void expect_interrupted(int signal, const std::string& name) {
  ChildProcess sweep({WEFT_SIM_PATH, "sweep", "--seeds=100000",
                      "--require-correct", "--out=" + scratch_path("out")});
  ASSERT_TRUE(sweep.wait_for_line("FAIL seed ")) << sweep.out();
  ASSERT_EQ(::kill(sweep.pid(), signal), 0);
  EXPECT_EQ(sweep.wait(), 128 + signal) << sweep.out() << sweep.err();
  std::smatch m;
  static const std::regex kLine(
      "weft-sim sweep: interrupted by (SIG[A-Z]+) after ([0-9]+) of 100000 "
      "seeds: ran seeds? 1(\\.\\.([0-9]+) \\(resume with --first-seed=([0-9]+) "
      "--seeds=([0-9]+)\\))?; the tally counts those\n");
  ASSERT_TRUE(std::regex_search(sweep.out(), m, kLine)) << sweep.out();
  EXPECT_EQ(m[1].str(), name);
  const long ran = std::stol(m[2].str());
  ASSERT_GE(ran, 1);
  if (ran > 1) {
    EXPECT_EQ(std::stol(m[4].str()), ran);
    EXPECT_EQ(std::stol(m[5].str()), ran + 1);
    EXPECT_EQ(std::stol(m[6].str()), 100000 - ran);
  }
  // The seeds that failed were among those run.
  static const std::regex kFail("FAIL seed ([0-9]+):");
  for (std::sregex_iterator it(sweep.out().begin(), sweep.out().end(), kFail),
       end;
       it != end; ++it) {
    EXPECT_LE(std::stol((*it)[1].str()), ran);
  }
  const std::map<std::string, long> counts = table_counts(sweep.out());
  EXPECT_EQ(counts.count("total") ? counts.at("total") : -1, ran)
      << sweep.out();
  EXPECT_EQ(outcome_sum(counts), ran) << sweep.out();
  EXPECT_EQ(hash_of(sweep.out()).size(), 16u) << sweep.out();
}

TEST(WeftSimSweep, SigintEndsWithThePartialTallyAndTheSeedsRun) {
  expect_interrupted(SIGINT, "SIGINT");
}

TEST(WeftSimSweep, SigtermEndsWithThePartialTallyAndTheSeedsRun) {
  expect_interrupted(SIGTERM, "SIGTERM");
}

TEST(WeftSimSweep, BadFlagsExitTwoWithOneLine) {
  const std::string sim_path = WEFT_SIM_PATH;
  expect_bad_input(sim_path, "weft-sim", "sweep", "--seeds is required");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=0", "--seeds=0");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=x", "--seeds=x");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --shard=2/2",
                   "--shard=2/2");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --shard=1",
                   "--shard=1");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --recovery=maybe",
                   "--recovery=maybe");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --first-seed=-1",
                   "--first_seed=-1");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --op=all_sum",
                   "not a flag of weft-sim sweep");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --bogus=1",
                   "unknown flag --bogus");
  expect_bad_input(sim_path, "weft-sim",
                   "sweep --seeds=5 --faults=/nonexistent/plan", "--faults");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --keep-ops=3,1",
                   "--keep-ops=3,1");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --keep-ops=x",
                   "--keep-ops=x");
  // Where failing seeds' traces would go, checked before the first seed.
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --out=/proc/weft",
                   "--out=/proc/weft: cannot create the directory");
  expect_bad_input(sim_path, "weft-sim", "sweep --seeds=5 --out=/dev/null",
                   "--out=/dev/null is not a directory");
}

}  // namespace
}  // namespace weft::testing
