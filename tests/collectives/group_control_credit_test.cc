// Control credits (collectives/engine/control_credit.h; docs/faults.md,
// "Recovery"): with recovery off nothing repairs a frame that found no
// posted receive, so a lane's acknowledgements and probes must never
// overrun the receives its peer keeps for them, however long the peer
// stalls or however slowly it consumes. The simulator counts every frame
// dropped for want of a receive (sim::Counters::dropped_no_receive); a
// fault-free run must count none.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

constexpr TimeNs kTimeoutNs = kNsPerS;

struct StallRun {
  bool completed = false;
  std::vector<absl::Status> first;  // per rank, its first result
  std::vector<std::string> wrong;   // per rank, "" when the bytes are right
  uint64_t dropped_no_receive = 0;
  uint64_t probes_sent = 0;  // summed over ranks
  TimeNs end_ns = 0;
};

sim::ScriptedFault stall(uint32_t rank, TimeNs at_ns, TimeNs for_ns) {
  sim::ScriptedFault f;
  f.kind = sim::FaultKind::kStall;
  f.rank = rank;
  f.at_ns = at_ns;
  f.duration_ns = for_ns;
  return f;
}

StallRun run_with(const Topology& topology, const Case& c,
                  sim::FaultPlan faults, bool recovery,
                  sim::LinkModel link = sim::LinkModel::tb5()) {
  sim::WorldOptions w;
  w.topology = topology;
  w.faults = std::move(faults);
  w.link = link;
  w.time_limit_ns = 10 * kTimeoutNs;
  GroupOptions o;
  o.timeout_ns = kTimeoutNs;
  o.recovery.enabled = recovery;
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w, o);
  EXPECT_TRUE(cluster.ok()) << cluster.status();
  if (!cluster.ok()) return {};
  std::vector<PreparedCase> cases;
  cases.emplace_back(c, cluster->size());
  ScriptRun script = run_cases(*cluster, cases);
  StallRun out;
  out.completed = script.run.completed();
  EXPECT_TRUE(out.completed) << script.run.report;
  out.end_ns = script.run.end_ns;
  out.dropped_no_receive = cluster->world().counters().dropped_no_receive;
  for (uint32_t r = 0; r < cluster->size(); ++r) {
    out.first.push_back(script.results[r].empty() ? absl::OkStatus()
                                                  : script.results[r][0]);
    out.wrong.push_back(script.results[r].empty() ? "" : cases[0].check(r));
    out.probes_sent += cluster->group(r).counters().total.probes_sent;
  }
  return out;
}

void expect_correct(const StallRun& r, const std::string& what) {
  ASSERT_TRUE(r.completed) << what;
  for (size_t rank = 0; rank < r.first.size(); ++rank) {
    EXPECT_TRUE(r.first[rank].ok())
        << what << ", rank " << rank << ": " << r.first[rank];
    EXPECT_EQ(r.wrong[rank], "") << what << ", rank " << rank;
  }
}

const Case k16MiB{.kind = Kind::kAllReduce,
                  .dtype = DType::kFloat32,
                  .count = (16u << 20) / 4};

// `weft-sim run --ranks=2 --recovery=off --bytes=16M` with rank 1 stalled
// for 100 ms from 2 us: rank 0 probes the silent rank, and before control
// credits its third probe found no receive posted; with recovery off the
// next frame's sequence number then showed a gap ("sequence gap expected 8
// received 9", DATA_LOSS).
TEST(ControlCredit, AStalledPeerWithRecoveryOffLosesNoFrame) {
  sim::FaultPlan plan;
  plan.script.push_back(stall(1, 2 * kNsPerUs, 100 * kNsPerMs));
  const StallRun r =
      run_with(*Topology::mesh(2), k16MiB, plan, /*recovery=*/false);
  expect_correct(r, "stall of 100 ms");
  EXPECT_EQ(r.dropped_no_receive, 0u);
  EXPECT_GT(r.end_ns, 100 * kNsPerMs) << "the stall did not delay the run";
  // Rank 0 probed while waiting, but one probe at a time: the rest waited
  // for the first one's answer.
  EXPECT_GE(r.probes_sent, 1u);
}

// The same stall with recovery on: a probe that found no receive is a loss
// like any other (the simulator counts it), and the run still ends right.
TEST(ControlCredit, WithRecoveryOnADroppedProbeIsCountedAndSurvived) {
  sim::FaultPlan plan;
  plan.script.push_back(stall(1, 2 * kNsPerUs, 100 * kNsPerMs));
  const StallRun r =
      run_with(*Topology::mesh(2), k16MiB, plan, /*recovery=*/true);
  expect_correct(r, "stall of 100 ms, recovery on");
  EXPECT_GT(r.dropped_no_receive, 0u)
      << "recovery-on runs keep sending probes to a stalled peer; the "
         "simulator must count the ones it drops";
}

// A slow rank: stepped only 30 us of every 50 us, for `for_ns`.
sim::FaultPlan slow_rank(uint32_t rank, TimeNs for_ns) {
  constexpr TimeNs kPeriodNs = 50 * kNsPerUs;
  constexpr TimeNs kStalledNs = 20 * kNsPerUs;
  sim::FaultPlan plan;
  for (TimeNs at = kNsPerUs; at < for_ns; at += kPeriodNs) {
    plan.script.push_back(stall(rank, at, kStalledNs));
  }
  return plan;
}

// A small sweep with recovery off and no loss: stalls of each rank at
// several instants and lengths, and slow ranks, on a mesh and a ring, over
// the tb5 link and one four times slower: every run ends right and no
// frame is ever dropped for want of a receive.
TEST(ControlCredit, StallsSlowRanksAndSlowLinksWithRecoveryOffDropNothing) {
  const Case c{.kind = Kind::kAllReduce,
               .dtype = DType::kFloat32,
               .count = (1u << 20) / 4};
  sim::LinkModel slow = sim::LinkModel::tb5();
  slow.latency_ns *= 4;
  slow.per_message_ns *= 4;
  slow.bandwidth_bytes_per_s /= 4;
  const Topology topologies[] = {*Topology::mesh(3), *Topology::ring(4)};
  const TimeNs starts[] = {1 * kNsPerUs, 40 * kNsPerUs, 300 * kNsPerUs};
  const TimeNs lengths[] = {50 * kNsPerUs, 5 * kNsPerMs, 150 * kNsPerMs};
  for (const Topology& t : topologies) {
    for (const sim::LinkModel& link : {sim::LinkModel::tb5(), slow}) {
      for (uint32_t rank = 0; rank < t.ranks(); rank += 2) {
        for (TimeNs at : starts) {
          for (TimeNs length : lengths) {
            sim::FaultPlan plan;
            plan.script.push_back(stall(rank, at, length));
            const std::string what = absl::StrFormat(
                "%u ranks, stall of rank %u at %d ns for %d ns, latency %d",
                t.ranks(), rank, at, length, link.latency_ns);
            const StallRun r = run_with(t, c, plan, /*recovery=*/false, link);
            expect_correct(r, what);
            EXPECT_EQ(r.dropped_no_receive, 0u) << what;
          }
        }
        const std::string what =
            absl::StrFormat("%u ranks, rank %u slow, latency %d", t.ranks(),
                            rank, link.latency_ns);
        const StallRun r = run_with(t, c, slow_rank(rank, 10 * kNsPerMs),
                                    /*recovery=*/false, link);
        expect_correct(r, what);
        EXPECT_EQ(r.dropped_no_receive, 0u) << what;
      }
    }
  }
}

}  // namespace
}  // namespace weft::testing
