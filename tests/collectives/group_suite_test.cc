// The shared collectives suite (tests/collectives_suite) over the
// simulator: a TestCluster on a sim::World, its ranks stepped by the
// world's scheduler in virtual time.
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "sim_cluster.h"
#include "tests/collectives_suite/suite.h"

namespace weft::testing {
namespace {

class SimTestCluster final : public TestCluster {
 public:
  explicit SimTestCluster(SimCluster cluster) : c_(std::move(cluster)) {}

  uint32_t size() const override { return c_.size(); }
  Group& group(uint32_t rank) override { return *c_.groups[rank]; }
  ScriptRun run_scripts(std::vector<std::vector<Starter>> scripts) override {
    return weft::testing::run_scripts(c_, std::move(scripts));
  }
  bool crashed(uint32_t rank) const override { return c_.world->crashed(rank); }
  uint64_t trace_hash() const override { return c_.world->trace().hash(); }
  std::optional<uint64_t> faults_injected() const override {
    return c_.world->counters().faults_total();
  }

 private:
  SimCluster c_;
};

class SimFactory final : public ClusterFactory {
 public:
  const char* name() const override { return "sim"; }
  absl::StatusOr<std::unique_ptr<TestCluster>> create(
      const ClusterSpec& spec, const GroupOptions& options) const override {
    sim::WorldOptions w;
    w.topology = spec.topology;
    w.link = spec.link == LinkKind::kIdeal ? sim::LinkModel::ideal()
                                           : sim::LinkModel::tb5();
    w.faults = spec.faults;
    w.seed = spec.seed;
    w.time_limit_ns = spec.time_limit_ns;
    w.keep_trace_events = false;  // the hash is kept either way
    absl::StatusOr<SimCluster> c = make_cluster(std::move(w), options);
    if (!c.ok()) return c.status();
    return std::make_unique<SimTestCluster>(*std::move(c));
  }
  uint64_t fault_seeds() const override { return 240; }
};

const SimFactory kSim;

}  // namespace

WEFT_COLLECTIVES_SUITE_OVER(&kSim);

}  // namespace weft::testing
