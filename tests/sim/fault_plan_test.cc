// FaultPlan's text form: every line kind, round-trips, and bad input that
// names the line and what is wrong.
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "fabric/topology.h"
#include "sim/faults.h"

namespace weft::sim {
namespace {

using ::testing::HasSubstr;

constexpr const char* kEveryKind = R"(# a plan with one of everything
rates loss=0.01 duplicate=0.001 reorder=0.001 error=0.0005
drop from=1 to=2 frame=3
duplicate from=1 to=2 frame=5   # trailing comment
delay from=0 to=1 frame=2 by_ns=5000
error from=1 to=2 frame=4 status=IBV_WC_REM_OP_ERR side=recv
error from=2 to=1 frame=1 status=loc_qp_op_err side=send
qp_error rank=1 peer=2 at_ns=40000
crash rank=3 at_ns=40000

link_down from=0 to=1 at_ns=1000
stall rank=2 at_ns=1000 for_ns=50000
)";

TEST(FaultPlan, ParsesEveryKind) {
  absl::StatusOr<FaultPlan> plan = FaultPlan::parse(kEveryKind);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rates.loss, 0.01);
  EXPECT_EQ(plan->rates.duplicate, 0.001);
  EXPECT_EQ(plan->rates.reorder, 0.001);
  EXPECT_EQ(plan->rates.error_completion, 0.0005);
  ASSERT_EQ(plan->script.size(), 9u);
  const auto& s = plan->script;
  EXPECT_EQ(s[0].kind, FaultKind::kDrop);
  EXPECT_EQ(s[0].rank, 1u);
  EXPECT_EQ(s[0].peer, 2u);
  EXPECT_EQ(s[0].frame, 3u);
  EXPECT_EQ(s[1].kind, FaultKind::kDuplicate);
  EXPECT_EQ(s[2].kind, FaultKind::kDelay);
  EXPECT_EQ(s[2].duration_ns, 5000);
  EXPECT_EQ(s[3].kind, FaultKind::kError);
  EXPECT_EQ(s[3].status, WcStatus::kRemOpErr);
  EXPECT_EQ(s[3].side, FaultSide::kRecv);
  EXPECT_EQ(s[4].status, WcStatus::kLocQpOpErr);
  EXPECT_EQ(s[4].side, FaultSide::kSend);
  EXPECT_EQ(s[5].kind, FaultKind::kQpError);
  EXPECT_EQ(s[5].at_ns, 40000);
  EXPECT_EQ(s[6].kind, FaultKind::kCrash);
  EXPECT_EQ(s[6].rank, 3u);
  EXPECT_EQ(s[7].kind, FaultKind::kLinkDown);
  EXPECT_EQ(s[7].at_ns, 1000);
  EXPECT_EQ(s[8].kind, FaultKind::kStall);
  EXPECT_EQ(s[8].duration_ns, 50000);
}

TEST(FaultPlan, RoundTripsThroughText) {
  const FaultPlan plan = *FaultPlan::parse(kEveryKind);
  const std::string text = plan.to_text();
  EXPECT_THAT(
      text,
      HasSubstr(
          "error from=1 to=2 frame=4 status=IBV_WC_REM_OP_ERR side=recv"));
  EXPECT_THAT(text, HasSubstr("stall rank=2 at_ns=1000 for_ns=50000"));
  absl::StatusOr<FaultPlan> again = FaultPlan::parse(text);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*again, plan);
  EXPECT_EQ(FaultPlan::parse("")->to_text(), "");
  EXPECT_TRUE(FaultPlan::parse("# nothing\n\n")->empty());
}

TEST(FaultPlan, BadLinesNameTheLineAndTheProblem) {
  const std::pair<const char*, const char*> cases[] = {
      {"rates loss=-0.1", "line 1: loss rate -0.1 is outside 0..1"},
      {"rates loss=2", "outside 0..1"},
      {"rates loss=abc", "not a number"},
      {"rates loss=nan", "not a number"},
      {"rates loss=0.1 speed=3", "unknown key speed="},
      {"rates loss=0.1\nrates loss=0.2", "line 2: rates given twice"},
      {"explode rank=1", "unknown fault \"explode\""},
      {"drop from=1 to=2", "missing frame="},
      {"drop from=1 to=2 frame=0", "counted from 1"},
      {"drop from=x to=2 frame=1", "from=x is not a rank"},
      {"drop from=1 from=1 to=2 frame=1", "from given twice"},
      {"drop from=1 to=2 frame=1 junk", "\"junk\" is not key=value"},
      {"delay from=0 to=1 frame=2", "missing by_ns="},
      {"delay from=0 to=1 frame=2 by_ns=-5", "by_ns=-5"},
      {"error from=1 to=2 frame=4", "missing status="},
      {"error from=1 to=2 frame=4 status=IBV_WC_BOGUS",
       "not a verbs error status"},
      {"error from=1 to=2 frame=4 status=IBV_WC_SUCCESS",
       "not a verbs error status"},
      {"error from=1 to=2 frame=4 status=IBV_WC_REM_OP_ERR side=both",
       "neither send nor recv"},
      {"crash rank=3", "missing at_ns="},
      {"\n\nstall rank=2 at_ns=1", "line 3: missing for_ns="},
  };
  for (const auto& [text, expected] : cases) {
    absl::StatusOr<FaultPlan> plan = FaultPlan::parse(text);
    ASSERT_FALSE(plan.ok()) << text;
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(plan.status().message()), HasSubstr(expected))
        << text;
  }
}

TEST(FaultPlan, RatesMayStopAtATime) {
  EXPECT_EQ(FaultPlan::parse("rates loss=0.1")->rates.until_ns, kNeverNs);
  EXPECT_EQ(FaultPlan::parse("rates loss=0.1")->to_text(),
            "rates loss=0.1 duplicate=0 reorder=0 error=0\n");
  const absl::StatusOr<FaultPlan> plan =
      FaultPlan::parse("rates loss=0.1 until_ns=5000");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->rates.until_ns, 5000);
  EXPECT_THAT(plan->to_text(), HasSubstr(" until_ns=5000\n"));
  EXPECT_EQ(*FaultPlan::parse(plan->to_text()), *plan);
  // A stop time without any rate is accepted and reads back the same (the
  // fault_plan fuzzer found it dropped from the text).
  const absl::StatusOr<FaultPlan> stop_only =
      FaultPlan::parse("rates until_ns=2");
  ASSERT_TRUE(stop_only.ok()) << stop_only.status();
  EXPECT_EQ(stop_only->to_text(),
            "rates loss=0 duplicate=0 reorder=0 error=0 until_ns=2\n");
  EXPECT_EQ(*FaultPlan::parse(stop_only->to_text()), *stop_only);
  for (const char* bad :
       {"rates loss=0.1 until_ns=-1", "rates loss=0.1 until_ns=soon"}) {
    const absl::StatusOr<FaultPlan> refused = FaultPlan::parse(bad);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(std::string(refused.status().message()),
                HasSubstr("is not a whole number of nanoseconds"))
        << bad;
  }
}

TEST(FaultPlan, LinkDownTakesACableAndBothWays) {
  const FaultPlan plan = *FaultPlan::parse(
      "link_down from=0 to=1 cable=1 at_ns=1000\n"
      "link_down between=2,3 at_ns=5\n"
      "link_down between=3,1 cable=0 at_ns=7\n");
  const auto& s = plan.script;
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].cable, 1u);
  EXPECT_FALSE(s[0].both_ways);
  EXPECT_EQ(s[1].cable, kAllCables);
  EXPECT_TRUE(s[1].both_ways);
  EXPECT_EQ(s[1].rank, 2u);
  EXPECT_EQ(s[1].peer, 3u);
  EXPECT_TRUE(s[0].takes_link(0, 1, 1));
  EXPECT_FALSE(s[0].takes_link(0, 1, 0));
  EXPECT_FALSE(s[0].takes_link(1, 0, 1));
  EXPECT_TRUE(s[1].takes_link(3, 2, 4));
  EXPECT_TRUE(s[2].takes_link(1, 3, 0));
  EXPECT_FALSE(s[2].takes_link(1, 3, 1));
  // Written back as read; an old plan's line is unchanged.
  EXPECT_EQ(plan.to_text(),
            "link_down from=0 to=1 cable=1 at_ns=1000\n"
            "link_down between=2,3 at_ns=5\n"
            "link_down between=3,1 cable=0 at_ns=7\n");
  EXPECT_EQ(*FaultPlan::parse(plan.to_text()), plan);
  EXPECT_EQ(FaultPlan::parse("link_down from=0 to=1 at_ns=1000")->to_text(),
            "link_down from=0 to=1 at_ns=1000\n");
  // The same ends one way and both ways are different faults.
  EXPECT_NE(*FaultPlan::parse("link_down from=0 to=1 at_ns=1"),
            *FaultPlan::parse("link_down between=0,1 at_ns=1"));
  const std::pair<const char*, const char*> bad[] = {
      {"link_down between=0,1 from=0 to=1 at_ns=1",
       "line 1: link_down takes from= and to=, or between=, not both"},
      {"link_down between=0 at_ns=1", "between=0 is not two rank numbers A,B"},
      {"link_down between=0,x at_ns=1", "is not two rank numbers"},
      {"link_down from=0 to=1 cable=x at_ns=1", "cable=x is not a cable index"},
      {"link_down from=0 to=1 cable=8 at_ns=1", "cable=8 is not a cable index"},
      {"link_down between=0,1 cable=1", "missing at_ns="},
      {"drop from=0 to=1 frame=1 cable=1", "unknown key cable= for drop"},
  };
  for (const auto& [text, expected] : bad) {
    absl::StatusOr<FaultPlan> refused = FaultPlan::parse(text);
    ASSERT_FALSE(refused.ok()) << text;
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr(expected))
        << text;
  }
}

TEST(FaultPlan, ACableThePairDoesNotHaveIsRefusedNamingTheLine) {
  const FaultPlan plan = *FaultPlan::parse(
      "# one bad cable\nlink_down between=0,1 cable=2 at_ns=1000\n");
  EXPECT_TRUE(plan.check_world(*Topology::mesh(4, 3)).ok());
  const absl::Status s = plan.check_world(*Topology::mesh(4, 2));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "fault plan line 2 (\"link_down between=0,1 cable=2 at_ns=1000\") "
            "names cable 2, but ranks 0 and 1 have 2 cables in this world; "
            "name a cable in 0..1, or leave cable= out for all");
  EXPECT_THAT(
      std::string(FaultPlan::parse("link_down from=1 to=2 cable=1 at_ns=0")
                      ->check_world(*Topology::ring(4))
                      .message()),
      HasSubstr("have 1 cable in this world; name a cable in 0..0"));
}

TEST(FaultPlan, RanksAreCheckedAgainstTheWorld) {
  const FaultPlan plan = *FaultPlan::parse("drop from=1 to=5 frame=1");
  EXPECT_FALSE(plan.check_world(*Topology::mesh(4)).ok());
  EXPECT_TRUE(plan.check_world(*Topology::mesh(6)).ok());
  EXPECT_FALSE(FaultPlan::parse("drop from=1 to=1 frame=1")
                   ->check_world(*Topology::mesh(4))
                   .ok());
  EXPECT_FALSE(FaultPlan::parse("crash rank=4 at_ns=1")
                   ->check_world(*Topology::mesh(4))
                   .ok());
}

// On a ring of 8 ranks 0 and 3 share no cable: a link_down there would
// never fire yet count as injected, and the run look "correct".
TEST(FaultPlan, APairNoCableJoinsIsRefusedNamingTheLine) {
  const FaultPlan plan =
      *FaultPlan::parse("# a cable pull\ncrash rank=5 at_ns=9\n"
                        "link_down from=0 to=3 at_ns=1000\n");
  const absl::Status s = plan.check_world(*Topology::ring(8));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "fault plan line 3 (\"link_down from=0 to=3 at_ns=1000\") names "
            "ranks 0 and 3, which no cable joins in this world; name a cabled "
            "pair (rank 0 is cabled to 1 and 7)");
  EXPECT_TRUE(plan.check_world(*Topology::mesh(8)).ok());
  for (const char* line : {"drop from=2 to=6 frame=1", "qp_error rank=2 peer=6 at_ns=1",
                           "error from=6 to=2 frame=1 status=IBV_WC_GENERAL_ERR"}) {
    EXPECT_FALSE(FaultPlan::parse(line)->check_world(*Topology::ring(8)).ok())
        << line;
  }
}

// A fault made in code (the sweep's) has no line: it is named by entry.
TEST(FaultPlan, AFaultMadeInCodeIsNamedByItsEntry) {
  FaultPlan plan;
  plan.script.push_back({.kind = FaultKind::kCrash, .rank = 9});
  EXPECT_EQ(plan.check_world(*Topology::mesh(4)).message(),
            "fault plan entry 1 (\"crash rank=9 at_ns=0\") names a rank "
            "outside this world's 0..3");
}

TEST(FaultRates, ValidateAndParse) {
  EXPECT_TRUE(FaultRates{}.validate().ok());
  EXPECT_FALSE((FaultRates{.loss = 1.5}).validate().ok());
  EXPECT_FALSE((FaultRates{.error_completion = -0.1}).validate().ok());
  EXPECT_EQ(*FaultRates::parse_rate("loss", "0.25"), 0.25);
  EXPECT_EQ(*FaultRates::parse_rate("loss", "1"), 1.0);
  EXPECT_FALSE(FaultRates::parse_rate("loss", "").ok());
  EXPECT_FALSE(FaultRates::parse_rate("loss", "inf").ok());
  EXPECT_THAT(
      std::string(FaultRates::parse_rate("duplicate", "-1").status().message()),
      HasSubstr("duplicate rate -1"));
}

TEST(FaultPlan, LoadFileReportsMissingFileAndBadContent) {
  EXPECT_EQ(FaultPlan::load_file("/nonexistent/plan.txt").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace weft::sim
