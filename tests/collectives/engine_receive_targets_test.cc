// ReceiveTargets on its own, over a receive window and a manual clock:
// a receive posted behind k others targets the (k + 1)-th data frame not
// delivered yet (skipping frames held early), across the wrap of sequence
// numbers; never one delivered, never one another posted receive
// targets, never a frame that does not fill the receive's payload room,
// never a number outside the operation's; a completed receive hands back
// its target once. In a Debug build, a broken invariant aborts.
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/engine/lane_protocol.h"
#include "collectives/engine/receive_targets.h"
#include "collectives/engine/receive_window.h"
#include "fabric/clock.h"
#include "fabric/slab.h"
#include "gtest/gtest.h"

namespace weft::collectives::internal {
namespace {

constexpr uint32_t kDepth = 8;  // a window of 6 data frames
constexpr uint32_t kRoom = 192;
constexpr uint32_t kFirst = 0xfffffffe;  // two numbers before 0

class ReceiveTargetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Slab>> slab = Slab::create(16 * kRoom);
    ASSERT_TRUE(slab.ok()) << slab.status();
    slab_ = *std::move(slab);
    // Frames for numbers kFirst .. kFirst + 9; the one for kFirst + 7 is
    // short (an item's last frame) and kFirst + 8 has none.
    for (uint32_t i = 0; i < 10; ++i) {
      const uint32_t bytes = i == 7 ? kRoom / 2 : kRoom;
      frames_.push_back(i == 8 ? Frame() : *slab_->frame(i * kRoom, bytes));
    }
  }
  // The number the receive in `slot` targets, or nullopt.
  std::optional<uint32_t> choose(uint32_t slot, uint32_t ahead) {
    const Frame* f = targets_.choose(slot, ahead, window_, kRoom);
    if (f == nullptr) return std::nullopt;
    const uint32_t index = static_cast<uint32_t>(f->offset() / kRoom);
    EXPECT_EQ(*f, frames_[index]);
    return kFirst + index;
  }

  ManualClock clock_;
  ReceiveWindow window_{LaneConfig{kDepth, 4096}, clock_, kFirst};
  ReceiveTargets targets_{kDepth};
  std::unique_ptr<Slab> slab_;
  std::vector<Frame> frames_;
};

TEST_F(ReceiveTargetsTest, NothingIsTargetedBeforeTheOperationNamesFrames) {
  EXPECT_EQ(choose(0, 0), std::nullopt);
  EXPECT_EQ(targets_.posted(), 0u);
}

TEST_F(ReceiveTargetsTest, AReceiveTargetsTheNextNumberNotDeliveredBehindIt) {
  targets_.set(kFirst, frames_);
  EXPECT_EQ(choose(0, 0), kFirst);
  EXPECT_EQ(choose(1, 1), kFirst + 1);  // 0xffffffff
  // Number 1 arrives early in slot 5; 0 is still missing.
  EXPECT_EQ(window_.place(1, 5), ReceiveWindow::Placement::kEarly);
  EXPECT_EQ(choose(2, 2), 0u);
  EXPECT_EQ(choose(3, 3), 2u);  // 1 is delivered: skipped
  EXPECT_EQ(targets_.posted(), 4u);
  // The receive in slot 0 took an acknowledgement: its target comes back,
  // and a receive posted now behind the three others targets the fourth
  // number not delivered (2, targeted already by slot 3: none).
  const std::optional<ReceiveTargets::Target> t = targets_.complete(0);
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->seq, kFirst);
  EXPECT_EQ(t->user, frames_[0]);
  EXPECT_FALSE(targets_.complete(0).has_value());
  EXPECT_EQ(choose(0, 3), std::nullopt);
  // Behind four: number 3.
  EXPECT_EQ(choose(4, 4), 3u);
  EXPECT_EQ(targets_.posted(), 4u);
}

TEST_F(ReceiveTargetsTest, OnlyFramesFillingTheRoomOfTheOperationsNumbers) {
  targets_.set(kFirst, frames_);
  // kFirst + 7 is short, kFirst + 8 has no frame, kFirst + 10 is past the
  // operation's frames.
  EXPECT_EQ(choose(0, 7), std::nullopt);
  EXPECT_EQ(choose(0, 8), std::nullopt);
  EXPECT_EQ(choose(0, 10), std::nullopt);
  EXPECT_EQ(choose(0, 9), kFirst + 9);
  // Numbers before the operation's first are never targeted either.
  ReceiveTargets later(kDepth);
  later.set(kFirst + 2, frames_);
  EXPECT_EQ(later.choose(1, 0, window_, kRoom), nullptr);
  EXPECT_EQ(later.choose(1, 1, window_, kRoom), nullptr);
  const Frame* first = later.choose(1, 2, window_, kRoom);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(*first, frames_[0]);
}

TEST_F(ReceiveTargetsTest, DeliveredAndConsumedNumbersAreNeverTargeted) {
  targets_.set(kFirst, frames_);
  EXPECT_EQ(window_.place(kFirst, 0), ReceiveWindow::Placement::kNext);
  EXPECT_EQ(window_.place(kFirst + 1, 1), ReceiveWindow::Placement::kNext);
  EXPECT_EQ(window_.consume_front(false), 0u);
  // Number kFirst consumed, kFirst + 1 in the inbox: the first number not
  // delivered is 0.
  EXPECT_EQ(choose(0, 0), 0u);
  // After clear() nothing more is chosen; the posted one stays.
  targets_.clear();
  EXPECT_EQ(choose(2, 1), std::nullopt);
  EXPECT_EQ(targets_.posted(), 1u);
  targets_.cancel(0);
  EXPECT_EQ(targets_.posted(), 0u);
}

}  // namespace
}  // namespace weft::collectives::internal
