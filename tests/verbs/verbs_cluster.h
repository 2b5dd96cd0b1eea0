// Test harness: the collectives over VerbsFabric loaded through the
// simulated verbs provider (libweft_sim_verbs.so), all ranks in one process
// and one thread: the shared collectives suite's Cluster
// (harness/cluster.h) for this fabric. The provider's world
// is configured from a Topology, a link model and a fault plan, each rank
// gets a VerbsFabric clocked by the world's virtual time, the groups form
// through form_groups_in_process (the two-phase GroupBuilder path the
// simulator tests use), and rank scripts (ScriptProgram) are stepped in
// turn from this thread. The provider's world moves only when an endpoint
// polls its completion queue, so a run is a fixed sequence of verbs calls:
// a rerun gives the same bytes and the same trace hash.
#ifndef WEFT_TESTS_VERBS_VERBS_CLUSTER_H_
#define WEFT_TESTS_VERBS_VERBS_CLUSTER_H_

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/group.h"
#include "collectives/inprocess_bootstrap.h"
#include "fabric/topology.h"
#include "gtest/gtest.h"
#include "harness/cluster.h"
#include "harness/script_program.h"
#include "sim/faults.h"
#include "tests/support/scratch.h"
#include "tests/verbs/sim_provider.h"

namespace weft::verbs::testing {

using weft::harness::ClusterSpec;
using weft::harness::LinkKind;
using weft::harness::ScriptProgram;
using weft::harness::ScriptRun;
using weft::harness::Starter;

using ::weft::testing::ScratchFile;

class VerbsCluster final : public weft::harness::Cluster {
 public:
  // Rounds in a row without virtual time moving (no rank polled) before a
  // run is reported as kLivelock: a rank spinning without its fabric.
  static constexpr uint64_t kMaxStillRounds = 1 << 16;

  // Rebuilds the provider's world as `world` describes (its
  // WEFT_SIM_VERBS_* variables), opens a VerbsFabric per rank and forms a
  // Group per rank with `options`. Formation errors (bad options included)
  // are returned as they are.
  static absl::StatusOr<std::unique_ptr<VerbsCluster>> create(
      const ClusterSpec& world, const GroupOptions& options = {}) {
    std::unique_ptr<VerbsCluster> c(new VerbsCluster(world));
    if (absl::Status s = c->open_fabrics(world); !s.ok()) return s;
    std::vector<Fabric*> fabrics;
    for (const auto& f : c->fabrics_) fabrics.push_back(f.get());
    absl::StatusOr<std::vector<std::unique_ptr<Group>>> groups =
        form_groups_in_process(fabrics, world.topology, options);
    if (!groups.ok()) return groups.status();
    c->groups_ = *std::move(groups);
    return c;
  }

  ~VerbsCluster() override {
    groups_.clear();  // endpoints before their fabrics
    fabrics_.clear();
  }
  VerbsCluster(const VerbsCluster&) = delete;
  VerbsCluster& operator=(const VerbsCluster&) = delete;

  uint32_t size() const override {
    return static_cast<uint32_t>(groups_.size());
  }
  Group& group(uint32_t rank) override { return *groups_[rank]; }
  bool crashed(uint32_t rank) const override { return provider_.crashed(rank); }
  // The provider's trace hash so far.
  uint64_t trace_hash() const override { return provider_.trace_hash(); }
  std::optional<int> queue_pairs(uint32_t rank) const override {
    return provider_.live("qps", rank);
  }

  // Runs scripts[r] on rank r's group, stepping every unfinished rank once
  // per round from this thread (a crashed rank no longer, as in the
  // simulator), until all are done, world.time_limit_ns of virtual time has
  // passed (kTimeLimit) or no rank polls any more (kLivelock); the report
  // says what each rank still waits for.
  ScriptRun run_scripts(std::vector<std::vector<Starter>> scripts) override {
    std::vector<std::unique_ptr<ScriptProgram>> programs;
    for (uint32_t r = 0; r < scripts.size(); ++r) {
      programs.push_back(
          std::make_unique<ScriptProgram>(*groups_[r], std::move(scripts[r])));
    }
    ScriptRun out;
    std::vector<bool> done(programs.size(), false);
    out.run.outcome = step_until_done(programs, done);
    for (size_t r = 0; r < programs.size(); ++r) {
      if (provider_.crashed(static_cast<uint32_t>(r))) {
        out.run.crashed_ranks.push_back(static_cast<uint32_t>(r));
      } else if (!done[r]) {
        out.run.report += programs[r]->outstanding() + "\n";
      }
      out.results.push_back(programs[r]->results());
    }
    out.run.end_ns = clock_.now_ns();
    return out;
  }

 private:
  using Outcome = sim::RunResult::Outcome;

  explicit VerbsCluster(const ClusterSpec& world)
      : clock_(provider_), time_limit_ns_(world.time_limit_ns) {}

  // Configures the provider and opens rank r's fabric as rank r.
  absl::Status open_fabrics(const ClusterSpec& world) {
    // A one-rank group opens no endpoint, but VerbsFabric refuses a library
    // that lists no devices: give the lone rank a peer it never uses.
    const Topology simulated =
        world.topology.ranks() == 1 ? *Topology::mesh(2) : world.topology;
    ScratchFile topology("devices.json", simulated.to_json());
    ScratchFile faults("faults.txt", world.faults.to_text());
    provider_.configure({{"WEFT_SIM_VERBS_TOPOLOGY", topology.path()},
                         {"WEFT_SIM_VERBS_FAULTS_FILE", faults.path()},
                         {"WEFT_SIM_VERBS_LINK",
                          world.link == LinkKind::kIdeal ? "ideal" : "tb5"},
                         {"WEFT_SIM_VERBS_SEED", std::to_string(world.seed)}});
    for (uint32_t r = 0; r < world.topology.ranks(); ++r) {
      // The first set_rank builds the world from the files above.
      if (provider_.set_rank(r) != 0) {
        return absl::InternalError(absl::StrFormat(
            "the provider has no rank %u: %s", r, provider_.last_error()));
      }
      VerbsFabric::Options o = SimProvider::options();
      o.clock = &clock_;
      absl::StatusOr<std::unique_ptr<VerbsFabric>> fabric =
          VerbsFabric::open(r, o);
      if (!fabric.ok()) return fabric.status();
      fabrics_.push_back(*std::move(fabric));
    }
    return absl::OkStatus();
  }

  Outcome step_until_done(
      const std::vector<std::unique_ptr<ScriptProgram>>& programs,
      std::vector<bool>& done) {
    const TimeNs limit_ns = deadline_after(clock_.now_ns(), time_limit_ns_);
    TimeNs last_ns = clock_.now_ns();
    uint64_t still_rounds = 0;  // rounds in a row in which no rank polled
    for (size_t left = programs.size(); left > 0;) {
      for (size_t r = 0; r < programs.size(); ++r) {
        if (done[r]) continue;
        if (provider_.crashed(static_cast<uint32_t>(r)) ||
            programs[r]->step().is_done()) {
          done[r] = true;
          --left;
        }
      }
      const TimeNs now_ns = clock_.now_ns();
      if (left > 0 && now_ns >= limit_ns) return Outcome::kTimeLimit;
      still_rounds = now_ns == last_ns ? still_rounds + 1 : 0;
      if (left > 0 && still_rounds > kMaxStillRounds) return Outcome::kLivelock;
      last_ns = now_ns;
    }
    return Outcome::kCompleted;
  }

  mutable SimProvider provider_;  // live() is not const
  ProviderClock clock_;
  TimeNs time_limit_ns_;
  std::vector<std::unique_ptr<VerbsFabric>> fabrics_;
  std::vector<std::unique_ptr<Group>> groups_;  // destroyed first
};

}  // namespace weft::verbs::testing

#endif  // WEFT_TESTS_VERBS_VERBS_CLUSTER_H_
