// Never hang: a silent peer ends the operation with DeadlineExceeded naming
// that peer and what was outstanding; a crashed rank is reported by every
// survivor; a stall shorter than the deadline is not declared dead; abort()
// cancels; after any of these the group refuses new work.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

constexpr TimeNs kTimeoutNs = kNsPerMs;

absl::StatusOr<SimCluster> cluster_of(Topology topology,
                                      sim::FaultPlan faults = {}) {
  sim::WorldOptions w;
  w.topology = std::move(topology);
  w.faults = std::move(faults);
  w.time_limit_ns = 100 * kTimeoutNs;
  GroupOptions o;
  o.timeout_ns = kTimeoutNs;
  return SimCluster::create(w, o);
}

TEST(GroupDeadline, SilentPeerIsNamedWithWhatWasOutstanding) {
  absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::mesh(3));
  ASSERT_TRUE(cluster.ok());
  PreparedCase c(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kFloat32, .count = 100},
      3);
  // Rank 2 never calls.
  ScriptRun run = cluster->run_scripts({{*c.starter(0)}, {*c.starter(1)}, {}});
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  EXPECT_LE(run.run.end_ns, 2 * kTimeoutNs);
  for (uint32_t r = 0; r < 2; ++r) {
    const absl::Status& s = run.results[r][0];
    EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded) << s;
    const auto place = error_place(s);
    ASSERT_TRUE(place.has_value());
    EXPECT_EQ(place->cause, ErrorCause::kDeadline);
    EXPECT_EQ(place->rank, r);
    EXPECT_EQ(place->peer, 2u) << s;
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("did not finish within its 1000000 ns"));
    EXPECT_THAT(std::string(s.message()),
                HasSubstr("receive item 0 frame 0 of 1 from peer 2"));
    EXPECT_FALSE(cluster->group(r).health().ok());
  }
}

TEST(GroupDeadline, CrashedRankIsReportedByEverySurvivor) {
  sim::FaultPlan faults;
  sim::ScriptedFault crash;
  crash.kind = sim::FaultKind::kCrash;
  crash.rank = 2;
  crash.at_ns = 20 * kNsPerUs;
  faults.script.push_back(crash);
  absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::ring(5), faults);
  ASSERT_TRUE(cluster.ok());
  std::vector<PreparedCase> cases;
  for (int i = 0; i < 3; ++i) {
    cases.emplace_back(Case{.kind = Kind::kAllReduce,
                            .dtype = DType::kFloat64,
                            .count = 50000,
                            .salt = static_cast<uint64_t>(i)},
                       5);
  }
  ScriptRun run = run_cases(*cluster, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  EXPECT_EQ(run.run.crashed_ranks, std::vector<uint32_t>{2});
  // Every survivor ended within one deadline of the crash (the operation
  // running then had started before it).
  EXPECT_LE(run.run.end_ns, crash.at_ns + kTimeoutNs);
  for (uint32_t r = 0; r < 5; ++r) {
    if (r == 2) continue;
    bool failed = false;
    for (const absl::Status& s : run.results[r]) {
      if (s.ok()) continue;
      const auto place = error_place(s);
      ASSERT_TRUE(place.has_value()) << s;
      EXPECT_EQ(place->rank, r);
      if (!failed) {
        EXPECT_THAT(place->cause,
                    AnyOf(ErrorCause::kDeadline, ErrorCause::kPeerUnavailable))
            << s;
        // The crashed rank, not a live neighbour stuck behind it.
        EXPECT_EQ(place->peer, 2u) << s;
      }
      failed = true;
    }
    EXPECT_TRUE(failed) << "rank " << r << " never noticed the crash";
  }
}

TEST(GroupDeadline, StallShorterThanTheDeadlineIsNotDeath) {
  sim::FaultPlan faults;
  sim::ScriptedFault stall;
  stall.kind = sim::FaultKind::kStall;
  stall.rank = 1;
  stall.at_ns = 1 * kNsPerUs;
  stall.duration_ns = kTimeoutNs / 2;
  faults.script.push_back(stall);
  absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::mesh(3), faults);
  ASSERT_TRUE(cluster.ok());
  std::vector<PreparedCase> cases;
  cases.emplace_back(
      Case{.kind = Kind::kAllGather, .dtype = DType::kUint8, .count = 300000},
      3);
  ScriptRun run = run_cases(*cluster, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  EXPECT_GT(run.run.end_ns, kTimeoutNs / 2);  // the stall really delayed it
  for (uint32_t r = 0; r < 3; ++r) {
    ASSERT_TRUE(run.results[r][0].ok()) << run.results[r][0];
    EXPECT_EQ(cases[0].check(r), "");
  }
}

TEST(GroupDeadline, AbortCancelsAndPeersHearOfIt) {
  absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::mesh(2));
  ASSERT_TRUE(cluster.ok());
  PreparedCase c(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kInt32, .count = 50000},
      2);
  Group& zero = cluster->group(0);
  ScriptRun run = cluster->run_scripts({{[&](Group& g) {
                                          Operation op = (*c.starter(0))(g);
                                          g.abort();
                                          return op;
                                        }},
                                        {*c.starter(1)}});
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  EXPECT_EQ(run.results[0][0].code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(error_place(run.results[0][0])->cause, ErrorCause::kCancelled);
  const absl::Status& peer = run.results[1][0];
  EXPECT_THAT(peer.code(), AnyOf(absl::StatusCode::kAborted,
                                 absl::StatusCode::kDeadlineExceeded));
  EXPECT_THAT(error_place(peer)->cause,
              AnyOf(ErrorCause::kCancelled, ErrorCause::kDeadline));
  Operation later = zero.barrier_async();
  ASSERT_TRUE(later.done());
  EXPECT_EQ(error_place(later.status())->cause, ErrorCause::kGroupFailed);
  EXPECT_THAT(std::string(later.status().message()),
              HasSubstr("abort() was called"));
}

// How often `needle` occurs in `text`.
int occurrences(std::string_view text, std::string_view needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string_view::npos;
       at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// One rank fails (abort()); the others hear of it hop by hop. Each relays
// the failure in its origin's own words, so every rank's message names the
// origin once and ends with the origin's text, however many hops away it
// is (it used to wrap the previous hop's message at every hop: 4 times on
// the far side of an 8-rank ring).
TEST(GroupDeadline, AFailureRelayedAroundTheGroupNamesItsOriginOnce) {
  constexpr uint32_t kRanks = 8;
  constexpr uint32_t kOrigin = 3;
  for (const Topology& topology :
       {*Topology::ring(kRanks), *Topology::mesh(kRanks)}) {
    SCOPED_TRACE(topology.ranks());
    sim::WorldOptions w;
    w.topology = topology;
    w.time_limit_ns = 1000 * kTimeoutNs;
    GroupOptions o;
    o.timeout_ns = 100 * kTimeoutNs;  // the abort arrives long before
    absl::StatusOr<SimCluster> cluster = SimCluster::create(w, o);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    PreparedCase c(
        Case{.kind = Kind::kAllReduce, .dtype = DType::kInt32, .count = 200000},
        kRanks);
    std::vector<std::vector<Starter>> scripts(kRanks);
    for (uint32_t r = 0; r < kRanks; ++r) scripts[r].push_back(*c.starter(r));
    scripts[kOrigin][0] = [&](Group& g) {
      Operation op = (*c.starter(kOrigin))(g);
      g.abort();
      return op;
    };
    ScriptRun run = cluster->run_scripts(std::move(scripts));
    ASSERT_TRUE(run.run.completed()) << run.run.report;
    EXPECT_EQ(run.results[kOrigin][0].code(), absl::StatusCode::kCancelled);
    for (uint32_t r = 0; r < kRanks; ++r) {
      if (r == kOrigin) continue;
      const absl::Status& s = run.results[r][0];
      const std::string m(s.message());
      EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << "rank " << r << s;
      EXPECT_EQ(error_place(s)->cause, ErrorCause::kCancelled) << s;
      EXPECT_EQ(occurrences(m, "aborted the group after a failure"), 1)
          << "rank " << r << ": " << m;
      EXPECT_EQ(occurrences(m, "began on rank"), 1) << m;
      EXPECT_THAT(m, HasSubstr("began on rank 3 (cancelled): rank 3: "
                               "abort() was called; pending operations were "
                               "cancelled"))
          << "rank " << r;
    }
  }
}

}  // namespace
}  // namespace weft::testing
