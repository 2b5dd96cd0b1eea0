// create_group() over a MockBootstrap (collectives/testing): what each
// failure of the side channel becomes, exchange by exchange, with no
// sockets or threads.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "collectives/group_builder.h"
#include "collectives/group_options.h"
#include "collectives/testing/mock_bootstrap.h"
#include "fabric/clock.h"
#include "fabric/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/world.h"

namespace weft::testing {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Return;
using Blobs = std::vector<std::vector<uint8_t>>;

// A world of two simulated ranks; the bootstrap under test plays rank 0.
class MockBootstrapGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.topology = *Topology::mesh(2);
    absl::StatusOr<std::unique_ptr<sim::World>> world =
        sim::World::create(options_);
    ASSERT_TRUE(world.ok()) << world.status();
    world_ = *std::move(world);
    ON_CALL(bootstrap_, rank).WillByDefault(Return(0));
    ON_CALL(bootstrap_, size).WillByDefault(Return(2));
  }

  absl::StatusOr<std::unique_ptr<Group>> create() {
    return create_group(world_->fabric(0), bootstrap_, options_.topology,
                        GroupOptions{}, kNsPerS);
  }

  sim::WorldOptions options_;
  std::unique_ptr<sim::World> world_;
  ::testing::NiceMock<MockBootstrap> bootstrap_;
};

TEST_F(MockBootstrapGroup, AnotherRankIsRefusedBeforeAnyExchange) {
  ON_CALL(bootstrap_, rank).WillByDefault(Return(1));
  EXPECT_CALL(bootstrap_, all_gather).Times(0);
  absl::StatusOr<std::unique_ptr<Group>> group = create();
  EXPECT_EQ(group.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      std::string(group.status().message()),
      HasSubstr("the bootstrap is rank 1 of 2 but the fabric is rank 0"));
}

TEST_F(MockBootstrapGroup, FailedExchangeIsReturnedAndEndsFormation) {
  EXPECT_CALL(bootstrap_, all_gather(_, kNsPerS))
      .WillOnce(Return(absl::DeadlineExceededError("rank 1 never answered")));
  absl::StatusOr<std::unique_ptr<Group>> group = create();
  EXPECT_EQ(group.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(group.status().message()),
              HasSubstr("rank 1 never answered"));
}

TEST_F(MockBootstrapGroup, MalformedPeerAddressIsRefused) {
  EXPECT_CALL(bootstrap_, all_gather)
      .WillOnce([](std::span<const uint8_t> mine, TimeNs) {
        return Blobs{{mine.begin(), mine.end()}, {1, 2, 3}};
      });
  absl::StatusOr<std::unique_ptr<Group>> group = create();
  EXPECT_EQ(group.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(group.status().message()), HasSubstr("shorter than"));
}

TEST_F(MockBootstrapGroup, LostRankAfterConnectingFailsTheReadyExchange) {
  // Rank 1's real address, from a builder of its own on the same world.
  absl::StatusOr<std::unique_ptr<GroupBuilder>> peer =
      GroupBuilder::open(world_->fabric(1), options_.topology, GroupOptions{});
  ASSERT_TRUE(peer.ok()) << peer.status();
  const std::vector<uint8_t> peer_address = (*peer)->address();
  EXPECT_CALL(bootstrap_, all_gather)
      .WillOnce([&](std::span<const uint8_t> mine, TimeNs) {
        return Blobs{{mine.begin(), mine.end()}, peer_address};
      })
      .WillOnce(Return(absl::UnavailableError("rank 1 closed its channel")));
  absl::StatusOr<std::unique_ptr<Group>> group = create();
  EXPECT_EQ(group.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(group.status().message()),
              HasSubstr("rank 1 closed its channel"));
}

}  // namespace
}  // namespace weft::testing
