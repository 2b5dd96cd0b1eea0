// weft-sim's study and run command, run as the built binary: the study's
// table has a row for every op on both topologies, every outcome is an
// allowed one, the trace is written and the hash repeats; `run` runs any
// one collective; bad input exits 2 with one line.
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/support/trace_nesting.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The study's quick forms: every row up to 1 MiB (every op), 64 KiB.
constexpr char kQuickStudy[] = "--max_bytes=1M";
constexpr char kQuickerStudy[] = "--max_bytes=64K";

ToolResult sim(const std::string& args) {
  return run_tool(WEFT_SIM_PATH, args);
}

struct StudyRow {
  std::string topology, op, bytes, dtype, algorithm, outcome;
  std::vector<std::string> numbers;  // time, algbw, busbw, frames, faults,
                                     // detected
};

// The rows of a study or run table: lines starting with a topology name.
std::vector<StudyRow> table_rows(const std::string& out) {
  constexpr size_t kFixedFields = 11;
  std::vector<StudyRow> rows;
  for (const std::string& line : lines_of(out)) {
    const std::vector<std::string> f = fields_of(line);
    if (f.size() <= kFixedFields || (f[0] != "mesh" && f[0] != "ring"))
      continue;
    StudyRow row{f[0], f[1], f[2], f[3], f[4], "", {}};
    row.numbers.assign(f.begin() + 5, f.begin() + kFixedFields);
    for (size_t i = kFixedFields; i < f.size(); ++i) {
      row.outcome += (i == kFixedFields ? "" : " ") + f[i];
    }
    rows.push_back(row);
  }
  return rows;
}

// "correct", or "typed error (<cause>: rank R, peer P)".
bool allowed_outcome(const std::string& outcome) {
  if (outcome == "correct") return true;
  const std::string prefix = "typed error (";
  const size_t at = outcome.rfind(": rank ");
  if (outcome.rfind(prefix, 0) != 0 || at == std::string::npos ||
      at <= prefix.size()) {
    return false;
  }
  unsigned rank = 0, peer = 0;
  int end = 0;
  const std::string tail = outcome.substr(at);
  return std::sscanf(tail.c_str(), ": rank %u, peer %u)%n", &rank, &peer,
                     &end) == 2 &&
         static_cast<size_t>(end) == tail.size();
}

std::string last_line(const std::string& out) {
  const std::vector<std::string> lines = lines_of(out);
  return lines.empty() ? "" : lines.back();
}

// The 16 hex digits of the last line, "trace hash: <hash>"; "" if none.
std::string hash_of(const std::string& out) {
  const std::string prefix = "trace hash: ";
  const std::string last = last_line(out);
  if (last.rfind(prefix, 0) != 0) return "";
  const std::string hash = last.substr(prefix.size());
  const bool hex =
      hash.size() == 16 &&
      hash.find_first_not_of("0123456789abcdef") == std::string::npos;
  return hex ? hash : "";
}

TEST(WeftSimStudy, EveryOpOnBothTopologiesWithAllowedOutcomes) {
  const std::string trace = scratch_path("trace.json");
  const ToolResult r = sim(std::string(kQuickStudy) + " --trace=" + trace);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<StudyRow> rows = table_rows(r.out);
  std::map<std::string, std::set<std::string>> ops;  // topology -> ops
  for (const StudyRow& row : rows) {
    ops[row.topology].insert(row.op);
    EXPECT_TRUE(allowed_outcome(row.outcome)) << row.op << ": " << row.outcome;
    EXPECT_EQ(row.numbers.size(), 6u);
  }
  const std::set<std::string> want = {"all_sum",   "all_prod",   "all_max",
                                      "all_min",   "all_gather", "sum_scatter",
                                      "broadcast", "reduce/sum", "all_to_all",
                                      "send/recv", "barrier"};
  EXPECT_EQ(ops["mesh"], want);
  EXPECT_EQ(ops["ring"], want);
  EXPECT_THAT(r.out,
              HasSubstr("0 hang, 0 time limit, 0 CORRUPT, 0 untyped error"));
  EXPECT_NE(hash_of(r.out), "") << last_line(r.out);
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(fields_of(lines[1]),
            (std::vector<std::string>{
                "topology", "op", "bytes", "dtype", "algorithm", "time", "(us)",
                "algbw", "busbw", "frames", "faults", "detected", "outcome"}));
  const nlohmann::json doc =
      nlohmann::json::parse(read_text(trace), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_GT(doc["traceEvents"].size(), 0u);
  // Perfetto draws it as written: every track's slices nest.
  EXPECT_THAT(nesting_violations(doc), ::testing::IsEmpty());
}

TEST(WeftSimStudy, SameSeedSameHashOtherSeedOtherHash) {
  const ToolResult a = sim(std::string(kQuickerStudy) + " --trace=");
  const ToolResult b = sim(std::string(kQuickerStudy) + " --trace=");
  const ToolResult c = sim(std::string(kQuickerStudy) + " --trace= --seed=7");
  ASSERT_EQ(a.code, 0);
  ASSERT_EQ(c.code, 0);
  EXPECT_EQ(hash_of(a.out), hash_of(b.out));
  EXPECT_NE(hash_of(a.out), hash_of(c.out));
  EXPECT_EQ(a.out, b.out);
}

TEST(WeftSimStudy, GivenTopologyOnlyAndFaultFlagsReplaceTheDefaults) {
  const ToolResult r =
      sim(std::string(kQuickerStudy) + " --trace= --topology=ring --loss=0");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("faults none"));
  for (const StudyRow& row : table_rows(r.out)) {
    EXPECT_EQ(row.topology, "ring");
    EXPECT_EQ(row.outcome, "correct") << row.op;  // no faults
    EXPECT_EQ(row.numbers[4], "0");               // none injected
  }
}

TEST(WeftSimRun, AnyOpSizeDtypeAlgorithmAndTopology) {
  const ToolResult r =
      sim("run --op=all_gather --bytes=60K --dtype=bfloat16 --algorithm=ring "
          "--topology=ring --ranks=5");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<StudyRow> rows = table_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0].op, "all_gather");
  EXPECT_EQ(rows[0].dtype, "bfloat16");
  EXPECT_EQ(rows[0].algorithm, "ring");
  // 60 KiB rounded down to whole bfloat16 elements on each of 5 ranks.
  EXPECT_EQ(rows[0].bytes, std::to_string(60 * 1024 / 2 / 5 * 5 * 2));
  EXPECT_EQ(rows[0].outcome, "correct");
  EXPECT_EQ(hash_of(r.out).size(), 16u);
}

TEST(WeftSimRun, EveryDtypeAndReductionIsCorrectOnTheRing) {
  for (const char* dtype : {"bool", "int8", "uint16", "int32", "uint64",
                            "float16", "bfloat16", "float64", "complex64"}) {
    for (const char* op : {"all_sum", "all_prod", "all_max", "all_min"}) {
      const ToolResult r =
          sim(std::string("run --topology=ring --ranks=6 --bytes=3000 --op=") +
              op + " --dtype=" + dtype);
      ASSERT_EQ(r.code, 0) << op << " " << dtype << r.out << r.err;
      ASSERT_EQ(table_rows(r.out).size(), 1u);
      EXPECT_EQ(table_rows(r.out)[0].outcome, "correct") << op << " " << dtype;
    }
  }
}

TEST(WeftSimRun, FlagsOnTheStudyRunOneCollective) {
  const ToolResult r = sim("--op=broadcast --root=3 --bytes=4K --in_place");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<StudyRow> rows = table_rows(r.out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].op, "broadcast");
  EXPECT_EQ(rows[0].outcome, "correct");
}

TEST(WeftSimRun, ALostFrameIsResentByDefault) {
  const std::string plan =
      write_scratch("plan.txt", "drop from=1 to=2 frame=1\n");
  const ToolResult r =
      sim("run --op=all_sum --bytes=1M --topology=ring --faults=" + plan);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  const std::vector<StudyRow> rows = table_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_EQ(rows[0].outcome, "correct");
  EXPECT_EQ(rows[0].numbers[4], "1");  // the fault did happen
}

TEST(WeftSimRun, ALostFrameWithoutRecoveryIsATypedErrorNamingRankAndPeer) {
  const std::string plan =
      write_scratch("plan.txt", "drop from=1 to=2 frame=1\n");
  const ToolResult r = sim(
      "run --op=all_sum --bytes=1M --topology=ring --recovery=off --faults=" +
      plan);
  EXPECT_EQ(r.code, 0) << r.out << r.err;  // allowed
  const std::vector<StudyRow> rows = table_rows(r.out);
  ASSERT_EQ(rows.size(), 1u) << r.out;
  EXPECT_THAT(rows[0].outcome, StartsWith("typed error ("));
  EXPECT_TRUE(allowed_outcome(rows[0].outcome)) << rows[0].outcome;
  EXPECT_EQ(rows[0].numbers[4], "1");         // one fault injected
  EXPECT_EQ(rows[0].numbers[1], "-");         // no bandwidth for a failed run
  EXPECT_THAT(r.out, HasSubstr("rank 2: "));  // the rank that saw the gap
}

// Every reproduce line a study prints runs as printed: `weft-sim run`
// takes every flag on it (the study's own --max_bytes, --json and
// --progress are left off; run refuses the first two kinds and --json would
// overwrite the study's file), and it gives the row's outcome again.
TEST(WeftSimStudy, ReproduceLinesRunAsPrinted) {
  const std::string plan =
      write_scratch("stall.txt", "stall rank=1 at_ns=0 for_ns=100000000000\n");
  const std::string json = scratch_path("study.json");
  const ToolResult study =
      sim("--max_bytes=4K --ranks=2 --time_limit_ms=10 --progress --trace= "
          "--faults=" +
          plan + " --json=" + json);
  // Every row stops at the time limit: exit 5, not 1 (no defect found).
  EXPECT_EQ(study.code, 5) << study.out << study.err;
  EXPECT_THAT(study.out, HasSubstr(" time limit, 0 CORRUPT"));
  EXPECT_THAT(study.out, HasSubstr(", 0 hang, "));
  const std::string written = read_text(json);
  int lines = 0;
  for (const std::string& line : lines_of(study.out)) {
    constexpr std::string_view kPrefix = "reproduce: weft-sim ";
    if (line.rfind(kPrefix, 0) != 0) continue;
    ++lines;
    EXPECT_THAT(line, Not(HasSubstr("--json")));
    EXPECT_THAT(line, Not(HasSubstr("--progress")));
    EXPECT_THAT(line, Not(HasSubstr("--max_bytes")));
    const ToolResult again = sim(line.substr(kPrefix.size()));
    EXPECT_EQ(again.code, 5) << line << "\n" << again.err;
    const std::vector<StudyRow> rows = table_rows(again.out);
    ASSERT_EQ(rows.size(), 1u) << again.out;
    EXPECT_EQ(rows[0].outcome, "time limit") << line;
  }
  EXPECT_GT(lines, 0) << study.out;
  EXPECT_EQ(read_text(json), written) << "a reproduce line wrote the study's "
                                         "JSON";
}

TEST(WeftSimRun, P2pStillWorks) {
  const ToolResult r = sim("p2p --ranks=3 --frames=20");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("weft-sim p2p: 3 ranks"));
  EXPECT_EQ(hash_of(r.out).size(), 16u);
}

void expect_bad_input(const std::string& args, const std::string& what) {
  testing::expect_bad_input(WEFT_SIM_PATH, "weft-sim", args, what);
}

// Named, the study is the study: run's flags are refused in one line
// rather than turned silently into `run` (which only `weft-sim` with no
// command does, above).
TEST(WeftSimStudy, NamedItRefusesRunsFlags) {
  expect_bad_input("study --op=all_gather",
                   "--op=all_gather is not a flag of weft-sim study");
  expect_bad_input("study --bytes=4K", "--bytes=4K is not a flag");
}

TEST(WeftSimRun, BadInputExits2WithOneLine) {
  expect_bad_input("run --op=explode", "--op=explode");
  expect_bad_input("run --dtype=float128", "--dtype=float128");
  expect_bad_input("run --bytes=1Q", "--bytes=1Q");
  expect_bad_input("run --algorithm=fast", "--algorithm=fast");
  expect_bad_input("run --redop=avg", "--redop=avg");
  expect_bad_input("run --algorithm=mesh --topology=ring",
                   "--topology=ring: ranks 0 and 2 are not joined");
  expect_bad_input("run --op=broadcast --root=8", "root 8");
  expect_bad_input("run --op=send_recv --in_place", "in-place");
  expect_bad_input("run --iterations=0", "--iterations=0");
  expect_bad_input("--frames=10", "--frames=10");
  expect_bad_input("run --frames=10", "not a flag of weft-sim run");
  expect_bad_input("--max_bytes=lots", "--max_bytes=lots");
}

// A plan that crashes every rank leaves no result to judge: refused, not
// reported as correct. With a survivor, the run is judged on it.
TEST(WeftSimRun, APlanThatCrashesEveryRankIsRefused) {
  const std::string every = write_scratch(
      "crash_all.txt", "crash rank=0 at_ns=0\ncrash rank=1 at_ns=0\n");
  expect_bad_input("run --ranks=2 --bytes=4K --faults=" + every,
                   "crashes every rank (2 of 2)");
  expect_bad_input("--ranks=2 --max_bytes=4K --faults=" + every,
                   "crash at most 1");
  const std::string one =
      write_scratch("crash_one.txt", "crash rank=0 at_ns=0\n");
  const ToolResult r = sim("run --ranks=2 --bytes=4K --faults=" + one);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("typed error"));
}

// A rate flag given overrides the plan's rates line, 0 included: the plan
// says 2% loss, --loss=0 runs without loss.
TEST(WeftSimRun, ARateFlagOfZeroOverridesThePlansRate) {
  const std::string plan =
      write_scratch("lossy.plan", "rates loss=0.02\n");
  const ToolResult lossy =
      sim("run --ranks=4 --bytes=256K --topology=ring --faults=" + plan);
  ASSERT_EQ(lossy.code, 0) << lossy.out << lossy.err;
  EXPECT_THAT(lossy.out, HasSubstr("faults loss=0.02 "));
  const ToolResult clean = sim(
      "run --ranks=4 --bytes=256K --topology=ring --loss=0 --faults=" + plan);
  ASSERT_EQ(clean.code, 0) << clean.out << clean.err;
  EXPECT_THAT(clean.out, HasSubstr(", faults none, "));
  const std::vector<StudyRow> rows = table_rows(clean.out);
  ASSERT_EQ(rows.size(), 1u) << clean.out;
  EXPECT_EQ(rows[0].numbers[4], "0") << "faults injected: " << clean.out;
}

// A fault on a pair no cable joins would never happen, yet count as
// injected: refused, naming the file and line.
TEST(WeftSimRun, AFaultOnAnUncabledPairIsRefusedNamingTheLine) {
  const std::string plan = write_scratch(
      "pull.plan", "# the cable between 0 and 3\nlink_down from=0 to=3 at_ns=1000\n");
  expect_bad_input("run --ranks=8 --topology=ring --faults=" + plan,
                   plan + ": fault plan line 2 (\"link_down from=0 to=3 "
                          "at_ns=1000\") names ranks 0 and 3, which no cable "
                          "joins in this world; name a cabled pair (rank 0 is "
                          "cabled to 1 and 7)");
  const ToolResult mesh = sim("run --ranks=8 --bytes=4K --faults=" + plan);
  EXPECT_EQ(mesh.code, 0) << mesh.out << mesh.err;
}

// A cable the pair does not have would never go down: refused, naming the
// file and line; the same plan on a world with that cable runs.
TEST(WeftSimRun, ACableThePairDoesNotHaveIsRefusedNamingTheLine) {
  const std::string plan = write_scratch(
      "cable.plan",
      "# the second cable of 0-1\nlink_down between=0,1 cable=1 at_ns=1000\n");
  expect_bad_input("run --ranks=4 --faults=" + plan,
                   plan +
                       ": fault plan line 2 (\"link_down between=0,1 "
                       "cable=1 at_ns=1000\") names cable 1, but ranks 0 "
                       "and 1 have 1 cable in this world; name a cable in "
                       "0..0, or leave cable= out for all");
  const ToolResult two =
      sim("run --ranks=4 --cables=2 --bytes=4K --faults=" + plan);
  EXPECT_THAT(two.err, ::testing::Not(HasSubstr("names cable")))
      << two.out << two.err;
  EXPECT_THAT(two.out, HasSubstr("faults"));
}

}  // namespace
}  // namespace weft::testing
