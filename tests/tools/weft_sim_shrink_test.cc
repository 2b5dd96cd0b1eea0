// weft-sim shrink, run as the built binary, on a deliberately weakened
// configuration (recovery off, so one lost or duplicated frame ends a run
// in a typed error): a seed whose program ran many operations and injected
// several faults shrinks to the operations and the one fault that matter;
// replaying the shrunk program and plan still fails, and replaying the
// program without that fault (an empty plan) passes. Bad flags exit 2 with
// one line.
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tool_runner.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

// Seed 8 draws 8 ranks on a ring of two cables running 20 operations; with
// recovery off it injects 3 faults and ends in a typed error that one
// faulty frame of its last operation explains. A change to the sweep's
// draw (tools/weft-sim/sweep_draw_*.cc) changes what a seed runs: then pick
// another seed with more than one operation and more than one injected
// fault (`weft-sim shrink --seed=S --recovery=off`).
constexpr char kSeed[] = "8";

ToolResult sim(const std::string& args) {
  return run_tool(WEFT_SIM_PATH, args);
}

// The number in "outcome: <verdict>, <n> faults injected"; -1 if none.
long injected_of(const std::string& out) {
  for (const std::string& line : lines_of(out)) {
    if (line.rfind("outcome: ", 0) != 0) continue;
    const size_t comma = line.rfind(", ");
    if (comma == std::string::npos) continue;
    return std::stol(line.substr(comma + 2));
  }
  return -1;
}

// "K of N" from "minimal program: K of N operations: i,j"; {-1, -1} if none.
std::pair<long, long> kept_ops(const std::string& out) {
  for (const std::string& line : lines_of(out)) {
    const std::vector<std::string> f = fields_of(line);
    if (f.size() >= 5 && f[0] == "minimal" && f[1] == "program:") {
      return {std::stol(f[2]), std::stol(f[4])};
    }
  }
  return {-1, -1};
}

// The arguments of the printed "replay: weft-sim <args>" line.
std::string replay_args(const std::string& out) {
  const std::string prefix = "replay: weft-sim ";
  for (const std::string& line : lines_of(out)) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

// The verdict a one-seed replay printed: "seed <S>: <summary>".
std::string replay_summary(const std::string& out) {
  const std::string prefix = std::string("seed ") + kSeed + ": ";
  for (const std::string& line : lines_of(out)) {
    if (line.rfind(prefix, 0) == 0) return line.substr(prefix.size());
  }
  return "";
}

TEST(WeftSimShrink, RecoveryOffShrinksToTheOperationAndFrameThatMatter) {
  const std::string plan_path = scratch_path("shrunk.plan");
  const ToolResult r = sim(std::string("shrink --seed=") + kSeed +
                           " --recovery=off --out=" + plan_path);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_GT(injected_of(r.out), 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("outcome: typed error"));
  const auto [kept, all] = kept_ops(r.out);
  EXPECT_GT(all, 1) << r.out;
  EXPECT_GE(kept, 1) << r.out;
  EXPECT_LT(kept, all) << r.out;

  const std::vector<std::string> plan = lines_of(read_text(plan_path));
  ASSERT_EQ(plan.size(), 1u) << read_text(plan_path);
  EXPECT_THAT(fields_of(plan[0])[0],
              ::testing::AnyOf("drop", "duplicate", "delay", "error"))
      << plan[0];
  EXPECT_THAT(r.out, HasSubstr("\n" + plan[0] + "\n"));  // printed too
  const std::string replay = replay_args(r.out);
  EXPECT_THAT(replay, HasSubstr(std::string("sweep --seeds=1 --first-seed=") +
                                kSeed + " --recovery=off --keep-ops="));
  EXPECT_THAT(replay, ::testing::EndsWith(" --faults=" + plan_path));

  // The shrunk program and plan still fail: a typed error, not correct.
  const ToolResult again = sim(replay);
  EXPECT_THAT(replay_summary(again.out), ::testing::StartsWith("typed error"))
      << again.out;
  EXPECT_THAT(again.out, HasSubstr(" " + std::to_string(kept) + " ops: "));
  // Without its one fault the shrunk program passes every oracle.
  const std::string empty = write_scratch("empty.plan", "");
  const std::string without =
      replay.substr(0, replay.rfind(" --faults=")) + " --faults=" + empty;
  const ToolResult clean = sim(without);
  EXPECT_EQ(clean.code, 0) << clean.out << clean.err;
  EXPECT_EQ(replay_summary(clean.out), "correct") << clean.out;
}

TEST(WeftSimShrink, SeedThatEndsCorrectHasNothingToShrink) {
  // Seed 3 injects no fault, so it ends correct even with recovery off.
  const ToolResult r =
      sim("shrink --seed=3 --recovery=off --out=" + scratch_path("none.plan"));
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("nothing to shrink"));
}

TEST(WeftSimShrink, BadFlagsExitTwoWithOneLine) {
  const std::string sim_path = WEFT_SIM_PATH;
  expect_bad_input(sim_path, "weft-sim", "shrink", "--seed is required");
  expect_bad_input(sim_path, "weft-sim", "shrink --seed=x", "--seed=x");
  expect_bad_input(sim_path, "weft-sim", "shrink --seed=3 --seeds=4",
                   "not a flag of weft-sim shrink");
  expect_bad_input(sim_path, "weft-sim", "shrink --seed=3 --recovery=no",
                   "--recovery=no");
}

}  // namespace
}  // namespace weft::testing
