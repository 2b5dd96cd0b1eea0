// Apple's per-device limits (MLX #3162, #4209) when the world enforces them,
// and what else a simulated rank's fabric reports about its machine.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/world.h"

namespace weft::sim {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<World> world_with_limits(bool apple) {
  WorldOptions options;
  options.topology = *Topology::mesh(2);
  options.apple_limits = apple;
  return *World::create(options);
}

TEST(AppleLimits, TenQueuePairsPerDevice) {
  auto world = world_with_limits(true);
  std::vector<std::unique_ptr<Endpoint>> eps;
  for (uint32_t i = 0; i < kAppleMaxQpsPerDevice; ++i) {
    auto ep = world->fabric(0).open("sim_0_1_0", 1);
    ASSERT_TRUE(ep.ok()) << i << ep.status();
    eps.push_back(*std::move(ep));
  }
  auto over = world->fabric(0).open("sim_0_1_0", 1);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(over.status().message()),
              HasSubstr("device sim_0_1_0"));
  EXPECT_THAT(std::string(over.status().message()),
              HasSubstr("10 queue pairs"));
  // The other rank's devices are counted separately; closing frees a slot.
  EXPECT_TRUE(world->fabric(1).open("sim_1_0_0", 0).ok());
  eps.pop_back();
  EXPECT_TRUE(world->fabric(0).open("sim_0_1_0", 1).ok());
}

TEST(AppleLimits, HundredMemoryRegionsPerDevice) {
  auto world = world_with_limits(true);
  for (uint32_t i = 0; i < kAppleMaxMrsPerDevice; ++i) {
    ASSERT_TRUE(world->fabric(0).create_slab(4096).ok()) << i;
  }
  auto over = world->fabric(0).create_slab(4096);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(over.status().message()),
              HasSubstr("100 per device"));
}

TEST(AppleLimits, OffByDefault) {
  auto world = world_with_limits(false);
  std::vector<std::unique_ptr<Endpoint>> eps;
  for (uint32_t i = 0; i <= kAppleMaxQpsPerDevice; ++i) {
    auto ep = world->fabric(0).open("sim_0_1_0", 1);
    ASSERT_TRUE(ep.ok());
    eps.push_back(*std::move(ep));
  }
  for (uint32_t i = 0; i <= kAppleMaxMrsPerDevice; ++i) {
    ASSERT_TRUE(world->fabric(0).create_slab(4096).ok());
  }
}

TEST(SimFabric, EveryRankSharesItsCoreWithTheWholeWorld) {
  // The scheduler steps every rank on one thread; hardware fabrics keep
  // Fabric's default of 1.
  WorldOptions options;
  options.topology = *Topology::ring(5);
  auto world = *World::create(options);
  for (uint32_t r = 0; r < 5; ++r) {
    EXPECT_EQ(world->fabric(r).ranks_sharing_core(), 5u) << "rank " << r;
  }
}

}  // namespace
}  // namespace weft::sim
