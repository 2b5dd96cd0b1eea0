// Pacing of a Lane's data sends: at most GroupOptions::send_queue_bytes
// posted and not yet sent, acknowledgements never held back, and after a
// gap the next kLossyFrames frames one at a time.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/lane_fixture.h"

namespace weft::collectives::internal::lane_test {
namespace {

// The fixture with frames big enough for the default send queue (1 MiB)
// to bind.
class PacedLaneTest : public LaneTest {
 protected:
  void SetUp() override {
    frame_bytes_ = 512 << 10;
    LaneTest::SetUp();
  }
  absl::Status send_full() {
    const std::vector<std::byte> bytes(frame_bytes_ - kHeaderBytes);
    return send_data(*lane_, bytes);
  }
};

TEST_F(PacedLaneTest, KeepsAboutTwoFullFramesQueuedAndAcksPassThem) {
  ASSERT_EQ(config().send_queue_bytes, uint64_t{1} << 20);
  ASSERT_TRUE(send_full().ok());
  ASSERT_TRUE(lane_->can_send_data());
  ASSERT_TRUE(send_full().ok());
  // Credits remain (a window of 4), but two full frames are queued.
  EXPECT_FALSE(lane_->can_send_data());
  // An acknowledgement owed to the peer does not wait for room.
  arrive(0, 0, data(0, kFlagAckNow));
  ASSERT_TRUE(poll().ok());
  ASSERT_TRUE(service().ok());
  ASSERT_EQ(sent_.size(), 3u);
  EXPECT_EQ(sent_header(2).type, FrameType::kAck);
  // The first frame left: room for one more.
  Completion left;
  left.id = sent_[0].id;
  pending_.push_back(left);
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->can_send_data());
  ASSERT_TRUE(send_full().ok());
  EXPECT_FALSE(lane_->can_send_data());
  EXPECT_EQ(lane_->data_sends_in_flight(), 2u);
}

TEST_F(LaneTest, AfterAGapDataFramesGoOneAtATime) {
  ASSERT_TRUE(send(0).ok());
  EXPECT_TRUE(lane_->can_send_data());  // small frames: many fit the queue
  complete_sends();
  arrive(0, 0, data(1));  // number 0 is missing: a gap
  ASSERT_TRUE(poll().ok());
  // Each of the next kLossyFrames frames is posted alone: none may join
  // it until it left.
  for (uint32_t i = 1; i <= kLossyFrames; ++i) {
    ASSERT_TRUE(lane_->can_send_data()) << i;
    ASSERT_TRUE(send(static_cast<uint8_t>(i)).ok());
    EXPECT_EQ(lane_->can_send_data(), i == kLossyFrames) << i;
    complete_sends();
    arrive(2, i, ack(i + 1, i + 1));  // received and consumed: credit back
    ASSERT_TRUE(poll().ok());
  }
}

// A send queue of one full frame.
class OneFrameQueueLaneTest : public PacedLaneTest {
 protected:
  void SetUp() override {
    send_queue_bytes_ = 512 << 10;
    PacedLaneTest::SetUp();
  }
};

TEST_F(OneFrameQueueLaneTest, SendsOneFullFrameAtATime) {
  ASSERT_TRUE(send_full().ok());
  EXPECT_FALSE(lane_->can_send_data());
  complete_sends();
  ASSERT_TRUE(poll().ok());
  EXPECT_TRUE(lane_->can_send_data());
  // Smaller frames: several fit.
  const std::byte small[1000] = {};
  ASSERT_TRUE(send_data(*lane_, small).ok());
  EXPECT_TRUE(lane_->can_send_data());
}

}  // namespace
}  // namespace weft::collectives::internal::lane_test
