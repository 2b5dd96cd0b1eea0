// DiscoverySession's bad input: options, devices, a declared file of
// another size, and a rank whose blob is out of step.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/world.h"
#include "wiring/discovery.h"

namespace weft::wiring {
namespace {

using ::testing::HasSubstr;

class SessionTest : public ::testing::Test {
 protected:
  SessionTest() {
    sim::WorldOptions options;
    options.topology = *Topology::mesh(2);
    world_ = *sim::World::create(options);
  }
  absl::StatusOr<std::unique_ptr<DiscoverySession>> start(
      uint32_t rank, std::vector<std::string> devices,
      DiscoveryOptions options = {}) {
    return DiscoverySession::start(world_->fabric(rank), 2, std::move(devices),
                                   std::move(options));
  }
  std::unique_ptr<sim::World> world_;
};

TEST_F(SessionTest, RefusesBadOptions) {
  DiscoveryOptions o;
  o.attempts = 0;
  EXPECT_THAT(std::string(validate(o).message()), HasSubstr("attempts is 0"));
  o = {};
  o.qps_per_device = 0;
  EXPECT_EQ(validate(o).code(), absl::StatusCode::kInvalidArgument);
  o = {};
  o.probe_interval_ns = 0;
  EXPECT_EQ(start(0, {"sim_0_1_0"}, o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SessionTest, RefusesADeviceListedTwiceAndADeclaredFileOfAnotherSize) {
  absl::StatusOr<std::unique_ptr<DiscoverySession>> s =
      start(0, {"rdma_en2", "rdma_en2"});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()), HasSubstr("\"rdma_en2\""));
  DiscoveryOptions o;
  o.declared = *Topology::mesh(3);
  s = start(0, {"sim_0_1_0"}, o);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("the device file has 3 ranks but the group 2"));
}

TEST_F(SessionTest, ARankOutOfStepIsAnErrorNamingIt) {
  std::unique_ptr<DiscoverySession> a = *start(0, {"sim_0_1_0"});
  std::unique_ptr<DiscoverySession> b = *start(1, {"sim_1_0_0"});
  ASSERT_EQ(a->need(), DiscoverySession::Need::kExchange);
  std::vector<std::vector<uint8_t>> blobs = {a->blob(), b->blob()};
  ASSERT_TRUE(a->exchanged(blobs).ok());
  ASSERT_TRUE(b->exchanged(blobs).ok());
  // Round 1's destinations; rank 1 sends its device list again instead.
  ASSERT_EQ(a->need(), DiscoverySession::Need::kExchange);
  const std::vector<std::vector<uint8_t>> wrong = {a->blob(), blobs[1]};
  const absl::Status s = a->exchanged(wrong);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("what rank 1 sent over the side channel is of "
                        "another step"));
  ASSERT_EQ(a->need(), DiscoverySession::Need::kDone);
  EXPECT_EQ(a->result().status(), s);
}

TEST_F(SessionTest, ABlobCutShortIsAnError) {
  std::unique_ptr<DiscoverySession> a = *start(0, {"sim_0_1_0"});
  std::vector<uint8_t> cut = a->blob();
  cut.resize(cut.size() - 3);
  const absl::Status s = a->exchanged({{a->blob(), cut}});
  EXPECT_THAT(std::string(s.message()), HasSubstr("rank 1"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("cut short"));
}

}  // namespace
}  // namespace weft::wiring
