// Property, over every fabric: with the simulator's faults on (loss,
// duplication, reordering, error completions, queue pairs forced into
// error, crashed ranks, dead links, stalls), every collective on every
// surviving rank ENDS within the virtual-time limit, either with the
// bit-exact result or with a typed error naming the rank, a peer and the
// cause; the first error a rank sees is never a bare refusal. Wrong data
// fails; a hang fails. Every seed replays exactly (the verbs path runs its
// deadlines on the provider's virtual time).
#include <cstdint>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/prng.h"
#include "tests/collectives_suite/cases.h"
#include "tests/collectives_suite/suite.h"

namespace weft::testing {
namespace {

constexpr TimeNs kOpTimeoutNs = 2 * kNsPerMs;
constexpr int kOpsPerSeed = 4;
constexpr char kRefusalFirst[] = "a first error that is a refusal";

struct Scenario {
  ClusterSpec world;
  GroupOptions options;
  std::vector<Case> cases;
  std::string summary;
};

// On a ring, send/recv only reaches neighbours.
Case random_case(sim::Prng& rng, uint32_t n, bool ring, uint64_t salt) {
  constexpr Kind kKinds[] = {
      Kind::kAllReduce,     Kind::kAllReduce, Kind::kAllGather,
      Kind::kReduceScatter, Kind::kBroadcast, Kind::kReduce,
      Kind::kAllToAll,      Kind::kSendRecv,  Kind::kBarrier};
  constexpr DType kTypes[] = {DType::kInt32,   DType::kFloat32,
                              DType::kFloat64, DType::kBFloat16,
                              DType::kUint8,   DType::kComplex64};
  constexpr uint64_t kCounts[] = {0, 1, 5, 333, 4099, 20000};
  Case c;
  c.kind = kKinds[rng.below(std::size(kKinds))];
  c.dtype = kTypes[rng.below(std::size(kTypes))];
  c.op = static_cast<ReduceOp>(rng.below(kReduceOpCount));
  c.count = kCounts[rng.below(std::size(kCounts))];
  c.root = static_cast<uint32_t>(rng.below(n));
  c.peer = ring ? (c.root + 1) % n
                : (c.root + 1 + static_cast<uint32_t>(rng.below(n - 1))) % n;
  c.in_place = rng.chance(0.5);
  c.salt = salt;
  return c;
}

Scenario scenario(uint64_t seed) {
  sim::Prng rng(seed);
  Scenario s;
  const auto n = static_cast<uint32_t>(2 + rng.below(5));
  const bool ring = rng.chance(0.4);
  const auto cables = static_cast<uint32_t>(1 + rng.below(2));
  s.world.topology =
      ring ? *Topology::ring(n, cables) : *Topology::mesh(n, cables);
  s.world.link = rng.chance(0.5) ? LinkKind::kTb5 : LinkKind::kIdeal;
  s.world.seed = seed;
  s.world.time_limit_ns = 10 * kOpsPerSeed * kOpTimeoutNs;
  sim::FaultRates& rates = s.world.faults.rates;
  const double scale = rng.chance(0.3) ? 0.0 : 0.02 * rng.unit();
  rates.loss = scale * rng.unit();
  rates.duplicate = scale * rng.unit() * 0.5;
  rates.reorder = scale * rng.unit() * 0.5;
  rates.error_completion = scale * rng.unit() * 0.2;
  const uint64_t timed = rng.below(6);
  if (timed > 0 && timed <= 4) {
    sim::ScriptedFault f;
    f.kind = timed == 1   ? sim::FaultKind::kCrash
             : timed == 2 ? sim::FaultKind::kLinkDown
             : timed == 3 ? sim::FaultKind::kQpError
                          : sim::FaultKind::kStall;
    f.rank = static_cast<uint32_t>(rng.below(n));
    f.peer = (f.rank + 1) % n;
    f.at_ns = static_cast<TimeNs>(rng.below(200 * kNsPerUs));
    f.duration_ns = static_cast<TimeNs>(rng.below(3 * kOpTimeoutNs));
    s.world.faults.script.push_back(f);
  }
  s.options.timeout_ns = kOpTimeoutNs;
  if (rng.chance(0.5)) {
    s.options.max_frame_bytes = GroupOptions::kMinFrameBytes;
    s.options.depth = GroupOptions::kMinDepth;
  }
  for (int i = 0; i < kOpsPerSeed; ++i)
    s.cases.push_back(random_case(rng, n, ring, seed * 100 + i));
  s.summary =
      absl::StrFormat("seed %u: %u ranks %s x%u, faults:\n%s", seed, n,
                      ring ? "ring" : "mesh", cables, s.world.faults.to_text());
  return s;
}

// What one rank's results may be: correct outputs while OK, then the first
// error naming this rank, a peer and a fault-related cause, then refusals.
// A first error that is a refusal (kGroupFailed: the operation was refused
// for an error it never saw) is counted in *refusals_first; the test
// requires that count to be 0.
std::string check_rank(const std::vector<absl::Status>& results,
                       std::vector<PreparedCase>& cases, uint32_t rank,
                       const std::vector<size_t>& case_of_step,
                       int* refusals_first) {
  bool failed = false;
  for (size_t i = 0; i < results.size(); ++i) {
    const absl::Status& s = results[i];
    if (s.ok()) {
      if (failed)
        return absl::StrFormat("step %u OK after the group failed", i);
      const std::string wrong = cases[case_of_step[i]].check(rank);
      if (!wrong.empty()) return "WRONG DATA: " + wrong;
      continue;
    }
    const std::optional<ErrorPlace> place = error_place(s);
    if (!place || place->rank != rank)
      return "error without this rank: " + s.ToString();
    if (failed) {
      if (place->cause != ErrorCause::kGroupFailed)
        return "not a refusal: " + s.ToString();
      continue;
    }
    failed = true;
    const ErrorCause c = place->cause;
    if (c == ErrorCause::kGroupFailed) {
      ++*refusals_first;
      continue;
    }
    const bool fault_cause =
        c == ErrorCause::kCompletionError || c == ErrorCause::kSequence ||
        c == ErrorCause::kDeadline || c == ErrorCause::kPeerUnavailable;
    if (!fault_cause || place->peer == kNoPeer)
      return "untyped error: " + s.ToString();
  }
  return "";
}

// One line per step, for failure messages.
std::string describe(const std::vector<absl::Status>& results) {
  std::string out;
  for (size_t i = 0; i < results.size(); ++i) {
    out += absl::StrFormat("  step %u: %s\n", i, results[i].ToString());
  }
  return out;
}

// Runs one seed's scenario; counts what happened in `outcomes`.
void run_seed(const ClusterFactory& fabric, uint64_t seed,
              std::map<std::string, int>& outcomes) {
  Scenario sc = scenario(seed);
  absl::StatusOr<std::unique_ptr<Cluster>> made =
      fabric.create(sc.world, sc.options);
  ASSERT_TRUE(made.ok()) << made.status();
  Cluster& cluster = **made;
  const uint32_t n = cluster.size();
  std::vector<PreparedCase> cases;
  for (const Case& c : sc.cases) cases.emplace_back(c, n);
  std::vector<std::vector<size_t>> case_of_step(n);
  for (size_t i = 0; i < cases.size(); ++i) {
    for (uint32_t r = 0; r < n; ++r) {
      if (cases[i].starter(r)) case_of_step[r].push_back(i);
    }
  }
  ScriptRun run = run_cases(cluster, cases);
  ASSERT_TRUE(run.run.completed()) << sc.summary << "\n"
                                   << sim::outcome_name(run.run.outcome) << "\n"
                                   << run.run.report;
  bool any_error = false;
  for (uint32_t r = 0; r < n; ++r) {
    if (cluster.crashed(r)) continue;
    ASSERT_EQ(run.results[r].size(), case_of_step[r].size()) << sc.summary;
    int refusals_first = 0;
    const std::string bad =
        check_rank(run.results[r], cases, r, case_of_step[r], &refusals_first);
    ASSERT_EQ(bad, "") << sc.summary << "\nrank " << r << ":\n"
                       << describe(run.results[r]);
    EXPECT_EQ(refusals_first, 0) << kRefusalFirst << "\n"
                                 << sc.summary << "\nrank " << r << ":\n"
                                 << describe(run.results[r]);
    outcomes[kRefusalFirst] += refusals_first;
    for (const auto& s : run.results[r]) {
      if (s.ok() || any_error) continue;
      any_error = true;
      ++outcomes[absl::StrFormat("first error: %s",
                                 error_cause_name(error_place(s)->cause))];
    }
  }
  if (cluster.faults_injected().value_or(0) > 0) ++outcomes["faults injected"];
  // Without faults, nothing may fail: flow control alone must keep every
  // frame landing in a posted receive.
  ASSERT_FALSE(any_error && sc.world.faults.empty()) << sc.summary;
  ++outcomes[any_error ? "typed error on some rank" : "all correct"];
  if (!run.run.crashed_ranks.empty()) ++outcomes["with a crashed rank"];
}

TEST_P(CollectivesFaultProperty, EveryOperationEndsCorrectOrWithTypedError) {
  const uint64_t seeds = GetParam()->fault_seeds();
  std::map<std::string, int> outcomes;
  for (uint64_t seed = 1; seed <= seeds; ++seed) {
    run_seed(*GetParam(), seed, outcomes);
    if (HasFatalFailure()) return;
  }
  for (const auto& [what, count] : outcomes) {
    std::cout << "[ property ] " << what << ": " << count << " of " << seeds
              << " seeds\n";
  }
  EXPECT_EQ(outcomes[kRefusalFirst], 0);
  EXPECT_GT(outcomes["all correct"], 0);
  EXPECT_GT(outcomes["typed error on some rank"], 0);
}

}  // namespace
}  // namespace weft::testing
