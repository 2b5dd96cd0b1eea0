// Discovery and the check over the simulator, every rank stepped in
// process (harness/sim_wiring.h).
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/sim_wiring.h"
#include "sim/faults.h"
#include "sim/world.h"
#include "wiring/check.h"
#include "wiring/discovery.h"

namespace weft::wiring {
namespace {

// Each rank's devices as the topology lists them.
std::vector<std::vector<std::string>> devices_of(const Topology& t) {
  std::vector<std::vector<std::string>> out(t.ranks());
  for (uint32_t i = 0; i < t.ranks(); ++i) {
    for (uint32_t j = 0; j < t.ranks(); ++j) {
      for (const std::string& d : t.devices(i, j)) out[i].push_back(d);
    }
  }
  return out;
}

TEST(DiscoverySimTest, ARightFileIsConfirmedInOneRoundUnderLoss) {
  const Topology mesh = *Topology::mesh(4, 2);
  sim::WorldOptions options;
  options.topology = mesh;
  options.apple_limits = true;
  options.seed = 7;
  options.faults.rates.loss = 0.2;
  absl::StatusOr<std::unique_ptr<sim::World>> world =
      sim::World::create(options);
  ASSERT_TRUE(world.ok()) << world.status();
  DiscoveryOptions discovery;
  discovery.declared = mesh;
  discovery.probe_all = false;
  absl::StatusOr<std::vector<Discovery>> found =
      harness::discover_in_process(**world, devices_of(mesh), discovery);
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 4u);
  for (const Discovery& d : *found) {
    EXPECT_FALSE(d.complete);
    EXPECT_EQ(d.wiring, found->front().wiring);  // every rank agrees
    EXPECT_EQ(d.stats.rounds, 1u);
    const CheckReport r = check_wiring(mesh, d.wiring, "mesh.json");
    EXPECT_TRUE(r.ok()) << r.findings.front().text;
    EXPECT_EQ(r.corrected.to_json(), mesh.to_json());
  }
  // 6 pairs of ranks, 2 cables each; probes were lost and retried.
  EXPECT_EQ(found->front().stats.pairs_probed, 12u);
  EXPECT_GT((*world)->counters().frames_dropped, 0u);
}

}  // namespace
}  // namespace weft::wiring
