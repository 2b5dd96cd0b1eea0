// Destroying an Engine lingers: frames not yet acknowledged are resent
// for up to Engine::kLingerNs, an acknowledgement ends that at once, and a
// clock that stands still (the simulator's) ends it without waiting.
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "collectives/engine/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/lane_fixture.h"

namespace weft::collectives::internal::lane_test {
namespace {

// An engine owning the fixture's lane, destroyed with one data frame sent
// and not acknowledged: it lingers.
class LingerTest : public LaneTest {
 protected:
  // Sends one frame that leaves at once, then destroys an engine that owns
  // the lane; returns the sends posted during the destruction.
  size_t destroy_with_one_unacknowledged(TimeNs tick_ns) {
    EXPECT_TRUE(send(7).ok());
    complete_sends();
    std::vector<std::unique_ptr<Lane>> lanes;
    lanes.push_back(std::move(lane_));
    auto engine = std::make_unique<Engine>(clock_, 0, std::move(lanes));
    const size_t before = sent_.size();
    clock_.tick_ns = tick_ns;
    auto_complete_ = true;
    engine.reset();
    auto_complete_ = false;
    clock_.tick_ns = 0;
    return sent_.size() - before;
  }
};

TEST_F(LingerTest, ALostFrameIsResentWhileTheEngineIsDestroyed) {
  const size_t sent = destroy_with_one_unacknowledged(10 * kNsPerUs);
  // Resent at each timeout (100, 200, 400 us) until the retries ran out
  // (the peer never answers), then the abort: all well inside the linger.
  const uint32_t retries = config().recovery.max_retries;
  ASSERT_EQ(sent, retries + 1u);
  for (size_t i = 1; i <= retries; ++i) {
    EXPECT_EQ(sent_header(i).type, FrameType::kData);
    EXPECT_EQ(sent_header(i).seq, 0u);
  }
  EXPECT_EQ(sent_header(retries + 1).type, FrameType::kAbort);
  EXPECT_LT(clock_.now_ns(), Engine::kLingerNs);
}

TEST_F(LingerTest, AnAcknowledgementEndsTheLingerAtOnce) {
  arrive(0, 0, ack(1, 1));  // waiting in the completion queue
  EXPECT_EQ(destroy_with_one_unacknowledged(10 * kNsPerUs), 0u);
  EXPECT_LT(clock_.now_ns(), kRtoNs);
}

TEST_F(LingerTest, AClockThatStandsStillEndsTheLinger) {
  // The simulator's clock moves only while its world runs.
  EXPECT_EQ(destroy_with_one_unacknowledged(0), 0u);
  EXPECT_EQ(clock_.now_ns(), 0);
}

}  // namespace
}  // namespace weft::collectives::internal::lane_test
