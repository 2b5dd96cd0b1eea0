// Discovery and the check over the simulator, every rank stepped in
// process (harness/sim_wiring.h).
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
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

// The wiring a topology's cables make: cable c of a pair joins entry c of
// cell [i][j] to entry c of cell [j][i]; `one_way` lists the (from, to,
// cable) directions that carry nothing.
Wiring wiring_of(const Topology& t,
                 const std::vector<std::array<uint32_t, 3>>& one_way = {}) {
  std::vector<std::vector<std::string>> devices(t.ranks());
  std::vector<Cable> cables;
  for (uint32_t i = 0; i < t.ranks(); ++i) {
    devices[i] = t.device_names(i);
    for (uint32_t j = i + 1; j < t.ranks(); ++j) {
      for (uint32_t c = 0; c < t.devices(i, j).size(); ++c) {
        Cable cable{{i, t.devices(i, j)[c]}, {j, t.devices(j, i)[c]}};
        for (const auto& [from, to, k] : one_way) {
          if (k != c) continue;
          if (from == i && to == j) cable.a_to_b = false;
          if (from == j && to == i) cable.b_to_a = false;
        }
        cables.push_back(cable);
      }
    }
  }
  absl::StatusOr<Wiring> w = Wiring::create(devices, cables);
  EXPECT_TRUE(w.ok()) << w.status();
  return *w;
}

absl::StatusOr<std::unique_ptr<sim::World>> world_of(
    const Topology& truth, double loss, sim::FaultPlan faults = {}) {
  sim::WorldOptions options;
  options.topology = truth;
  options.apple_limits = true;
  options.seed = 11;
  options.faults = std::move(faults);
  options.faults.rates.loss = loss;
  return sim::World::create(options);
}

TEST(DiscoverySimTest, FindsEveryCableAndItsDirectionsOnNeutralNames) {
  const Topology truth = Topology::mesh(5, 3)->with_neutral_names(4);
  absl::StatusOr<sim::FaultPlan> faults =
      sim::FaultPlan::parse("link_down from=1 to=3 cable=2 at_ns=0\n");
  ASSERT_TRUE(faults.ok()) << faults.status();
  absl::StatusOr<std::unique_ptr<sim::World>> world =
      world_of(truth, 0.1, *faults);
  ASSERT_TRUE(world.ok()) << world.status();
  absl::StatusOr<std::vector<Discovery>> found =
      harness::discover_in_process(**world, {});
  ASSERT_TRUE(found.ok()) << found.status();
  const Wiring want = wiring_of(truth, {{1, 3, 2}});
  for (const Discovery& d : *found) {
    EXPECT_TRUE(d.complete);
    EXPECT_EQ(d.wiring, want) << d.wiring.table() << "\nwant:\n"
                              << want.table();
  }
  // 5 ranks of 12 devices: 10 pairs of ranks of 144 device pairs each at
  // most, and never more than 10 queue pairs on a device (apple_limits
  // refuses the 11th).
  EXPECT_LE(found->front().stats.pairs_probed, 10u * 144u);
  EXPECT_GT(found->front().stats.rounds, 1u);
}

TEST(DiscoverySimTest, ACheckNamesACrossedCableAndGivesTheTruth) {
  const Topology truth = Topology::mesh(3, 1)->with_neutral_names(9);
  // The file swaps rank 0's two devices.
  absl::StatusOr<Topology> file = Topology::unjoined(3);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(file->add_device(0, 1, truth.devices(0, 2)[0]).ok());
  ASSERT_TRUE(file->add_device(0, 2, truth.devices(0, 1)[0]).ok());
  for (auto [i, j] : {std::pair{1u, 0u}, {1u, 2u}, {2u, 0u}, {2u, 1u}}) {
    ASSERT_TRUE(file->add_device(i, j, truth.devices(i, j)[0]).ok());
  }
  absl::StatusOr<std::unique_ptr<sim::World>> world = world_of(truth, 0.05);
  ASSERT_TRUE(world.ok()) << world.status();
  DiscoveryOptions options;
  options.declared = *file;
  options.probe_all = false;  // as WEFT_CHECK_WIRING=1 runs it
  absl::StatusOr<std::vector<Discovery>> found =
      harness::discover_in_process(**world, options);
  ASSERT_TRUE(found.ok()) << found.status();
  const CheckReport r = check_wiring(*file, found->front().wiring, "f.json");
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].text,
            "f.json: rank 0's " + truth.devices(0, 2)[0] +
                " reaches rank 2, not rank 1 as f.json says (cell [0][1]; "
                "its other end is rank 2's " +
                truth.devices(2, 0)[0] + ")");
  EXPECT_EQ(r.corrected.to_json(), wiring_of(truth).topology().to_json());
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
      harness::discover_in_process(**world, discovery);
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
