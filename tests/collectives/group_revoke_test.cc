// Group::revoke(): not collective, idempotent, callable from any thread;
// every pending and later operation, on the revoking rank and on every
// rank the revocation reaches (relayed hop by hop), ends with Aborted
// (kRevoked) naming the rank that revoked and its reason.
#include <algorithm>
#include <cstdint>
#include <optional>
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
#include "sim/link_model.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr TimeNs kTimeoutNs = 100 * kNsPerMs;  // the revocation comes first
// The most bytes an abort frame carrying a revocation's reason has.
constexpr uint64_t kAbortFrameBytesForTest = 64 + 448;

absl::StatusOr<SimCluster> cluster_of(Topology topology) {
  sim::WorldOptions w;
  w.topology = std::move(topology);
  w.time_limit_ns = 10 * kTimeoutNs;
  GroupOptions o;
  o.timeout_ns = kTimeoutNs;
  return SimCluster::create(w, o);
}

// The error every operation of a revoked group ends with, on `rank`, when
// rank `origin` revoked it for `reason`.
void expect_revoked(const absl::Status& s, uint32_t rank, uint32_t origin,
                    std::string_view reason) {
  SCOPED_TRACE(::testing::Message() << "rank " << rank << ": " << s);
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  const std::optional<ErrorPlace> place = error_place(s);
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ(place->cause, ErrorCause::kRevoked);
  EXPECT_EQ(place->rank, rank);
  // The revoking rank names no peer; the others name it.
  EXPECT_EQ(place->peer, rank == origin ? kNoPeer : origin);
  const std::string m(s.message());
  const std::string said = "rank " + std::to_string(origin) +
                           " revoked the group: " + std::string(reason);
  EXPECT_THAT(m, HasSubstr(said));
  // Relayed in the revoking rank's own words: said once, not nested.
  EXPECT_EQ(m.find("revoked the group"), m.rfind("revoked the group"));
}

class GroupRevoke : public ::testing::TestWithParam<bool> {
 protected:
  // A mesh, or a ring (the revocation is relayed around it).
  Topology topology(uint32_t ranks) const {
    return GetParam() ? *Topology::ring(ranks) : *Topology::mesh(ranks);
  }
};

// Rank 1 revokes while every rank runs an all-sum that cannot finish
// without it: every rank's all-sum ends revoked, and so do later calls.
TEST_P(GroupRevoke, EndsThePendingOperationOnEveryRank) {
  constexpr uint32_t kRanks = 6;
  constexpr uint32_t kOrigin = 1;
  constexpr std::string_view kReason = "rank 1 lost its input";
  absl::StatusOr<SimCluster> cluster = cluster_of(topology(kRanks));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  PreparedCase c(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kInt32, .count = 200000},
      kRanks);
  std::vector<std::vector<Starter>> scripts(kRanks);
  for (uint32_t r = 0; r < kRanks; ++r) scripts[r].push_back(*c.starter(r));
  scripts[kOrigin][0] = [&](Group& g) {
    Operation op = (*c.starter(kOrigin))(g);
    g.revoke(kReason);
    return op;
  };
  ScriptRun run = cluster->run_scripts(std::move(scripts));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < kRanks; ++r) {
    expect_revoked(run.results[r][0], r, kOrigin, kReason);
    // Later calls are refused with the revocation itself, not a generic
    // refusal.
    Operation later = cluster->group(r).barrier_async();
    ASSERT_TRUE(later.done());
    expect_revoked(later.status(), r, kOrigin, kReason);
    expect_revoked(cluster->group(r).health(), r, kOrigin, kReason);
  }
}

// Revoked between operations: the ranks learn of it at their next call,
// which ends revoked even though every rank makes it.
TEST_P(GroupRevoke, ReachesRanksAtTheirNextCall) {
  constexpr uint32_t kRanks = 4;
  constexpr uint32_t kOrigin = 2;
  constexpr std::string_view kReason = "shrinking after a failure";
  absl::StatusOr<SimCluster> cluster = cluster_of(topology(kRanks));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  std::vector<std::vector<Starter>> scripts(kRanks);
  for (uint32_t r = 0; r < kRanks; ++r) {
    scripts[r].push_back([](Group& g) { return g.barrier_async(); });
    scripts[r].push_back([r, kOrigin, kReason](Group& g) {
      if (r == kOrigin) g.revoke(kReason);
      return g.barrier_async();
    });
  }
  ScriptRun run = cluster->run_scripts(std::move(scripts));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < kRanks; ++r) {
    EXPECT_TRUE(run.results[r][0].ok()) << "rank " << r << run.results[r][0];
    expect_revoked(run.results[r][1], r, kOrigin, kReason);
  }
}

// How long the revocation takes to reach each rank, in virtual time: a
// mesh's ranks hear it from the revoking rank itself; around a ring a rank
// k hops away hears it after k hops, each rank relaying it in the step it
// hears it in. A hop is at most one flight of the abort frame (the link
// model's latency, per-message overhead and serialisation) behind the data
// the sending rank had already handed to that cable (at most
// GroupOptions::send_queue_bytes).
TEST_P(GroupRevoke, ReachesEveryRankWithinOneHopTimePerHop) {
  constexpr uint32_t kRanks = 8;
  constexpr uint32_t kOrigin = 0;
  absl::StatusOr<SimCluster> cluster = cluster_of(topology(kRanks));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  PreparedCase c(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kInt32, .count = 200000},
      kRanks);
  const Clock& clock = cluster->world().clock();
  TimeNs revoked_ns = -1;
  std::vector<TimeNs> ended_ns(kRanks, -1);
  std::vector<std::vector<Starter>> scripts(kRanks);
  for (uint32_t r = 0; r < kRanks; ++r) {
    scripts[r].push_back(*c.starter(r));
    // Started the instant the all-sum ended.
    scripts[r].push_back([&, r](Group& g) {
      ended_ns[r] = clock.now_ns();
      return g.barrier_async();
    });
  }
  scripts[kOrigin][0] = [&](Group& g) {
    Operation op = (*c.starter(kOrigin))(g);
    revoked_ns = clock.now_ns();
    g.revoke("timed");
    return op;
  };
  ScriptRun run = cluster->run_scripts(std::move(scripts));
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  const sim::LinkModel link = sim::LinkModel::tb5();
  const TimeNs flight_ns =
      link.latency_ns + link.per_message_ns +
      link.serialisation_ns(kAbortFrameBytesForTest) +
      link.serialisation_ns(cluster->group_options().send_queue_bytes);
  for (uint32_t r = 0; r < kRanks; ++r) {
    expect_revoked(run.results[r][0], r, kOrigin, "timed");
    const uint32_t hops =
        r == kOrigin ? 0 : (GetParam() ? std::min(r, kRanks - r) : 1);
    ASSERT_GE(ended_ns[r], revoked_ns);
    EXPECT_LE(ended_ns[r] - revoked_ns, hops * flight_ns)
        << "rank " << r << ", " << hops << " hop(s) of " << flight_ns << " ns";
  }
}

INSTANTIATE_TEST_SUITE_P(MeshAndRing, GroupRevoke, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Ring" : "Mesh";
                         });

TEST(GroupRevokeOnce, TheFirstReasonStands) {
  absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::mesh(2));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ScriptRun run =
      cluster->run_scripts({{[](Group& g) {
                              g.revoke("the first reason");
                              g.revoke("the second reason");
                              return g.barrier_async();
                            }},
                            {[](Group& g) { return g.barrier_async(); }}});
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < 2; ++r) {
    expect_revoked(run.results[r][0], r, 0, "the first reason");
    EXPECT_THAT(std::string(run.results[r][0].message()),
                Not(HasSubstr("second")));
  }
}

TEST(GroupRevokeOnce, AGroupThatFailedKeepsItsFirstError) {
  absl::StatusOr<SimCluster> cluster = cluster_of(*Topology::mesh(2));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Group& zero = cluster->group(0);
  zero.abort();
  Operation first = zero.barrier_async();
  (void)first.progress();
  ASSERT_TRUE(first.done());
  ASSERT_EQ(error_place(zero.health())->cause, ErrorCause::kCancelled);
  zero.revoke("too late");
  Operation later = zero.barrier_async();
  (void)later.progress();
  ASSERT_TRUE(later.done());
  EXPECT_EQ(error_place(zero.health())->cause, ErrorCause::kCancelled);
  EXPECT_EQ(error_place(later.status())->cause, ErrorCause::kGroupFailed);
  EXPECT_THAT(std::string(later.status().message()),
              Not(HasSubstr("too late")));
}

}  // namespace
}  // namespace weft::testing
