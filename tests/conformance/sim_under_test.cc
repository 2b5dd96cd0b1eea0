// The simulator in the conformance suite: two ranks of one world over a
// tb5 cable; the world runs until idle between polls.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "gtest/gtest.h"
#include "sim/link_model.h"
#include "sim/world.h"
#include "tests/conformance/fabric_under_test.h"

namespace weft::testing {
namespace {

// Rounds of run_until_idle() one wait may take: each runs the world until
// nothing is left to happen, so a wait that needs more is a hang.
constexpr int kMaxRounds = 8;

class SimPair final : public ConformancePair {
 public:
  bool open() {
    sim::WorldOptions options;
    options.topology = *Topology::mesh(2);
    options.link = sim::LinkModel::tb5();
    absl::StatusOr<std::unique_ptr<sim::World>> world =
        sim::World::create(std::move(options));
    EXPECT_TRUE(world.ok()) << world.status();
    if (!world.ok()) return false;
    world_ = *std::move(world);
    for (uint32_t r = 0; r < 2; ++r) {
      Fabric& fabric = world_->fabric(r);
      absl::StatusOr<Slab*> slab = fabric.create_slab(kConformanceSlabBytes);
      absl::StatusOr<std::unique_ptr<Endpoint>> endpoint = fabric.open(
          world_->options().topology.devices(r, 1 - r)[0], 1 - r);
      EXPECT_TRUE(slab.ok() && endpoint.ok());
      if (!slab.ok() || !endpoint.ok()) return false;
      side[r].fabric = &fabric;
      side[r].slab = *slab;
      side[r].endpoint = *std::move(endpoint);
    }
    return true;
  }
  // Endpoints go before their world.
  ~SimPair() override {
    for (ConformanceSide& s : side) s.endpoint.reset();
  }

  bool advance(int round) override {
    world_->run_until_idle();
    return round < kMaxRounds;
  }
  void settle() override { world_->run_until_idle(); }

 private:
  std::unique_ptr<sim::World> world_;
};

class SimUnderTest final : public FabricUnderTest {
 public:
  std::string name() const override { return "sim"; }
  Offers offers() const override {
    return {.send_without_immediate = true, .move_to_error = true};
  }
  std::unique_ptr<ConformancePair> make() const override {
    auto pair = std::make_unique<SimPair>();
    return pair->open() ? std::move(pair) : nullptr;
  }
};

const SimUnderTest kSimUnderTest;

INSTANTIATE_TEST_SUITE_P(Sim, EndpointConformance,
                         ::testing::Values(&kSimUnderTest), fabric_name);

}  // namespace
}  // namespace weft::testing
