#include "fabric/clock.h"

#include "gtest/gtest.h"

namespace weft {
namespace {

TEST(ManualClock, MovesOnlyWhenAdvanced) {
  ManualClock clock(100);
  EXPECT_EQ(clock.now_ns(), 100);
  clock.advance_to(250);
  EXPECT_EQ(clock.now_ns(), 250);
  clock.advance_to(250);
  EXPECT_EQ(clock.now_ns(), 250);
}

TEST(WallClock, IsMonotonic) {
  WallClock clock;
  TimeNs last = clock.now_ns();
  for (int i = 0; i < 1000; ++i) {
    const TimeNs now = clock.now_ns();
    EXPECT_GE(now, last);
    last = now;
  }
}

TEST(DeadlineAfter, SaturatesInsteadOfOverflowing) {
  EXPECT_EQ(deadline_after(10, 5), 15);
  EXPECT_EQ(deadline_after(10, -5), 10);
  EXPECT_EQ(deadline_after(kNeverNs - 3, 10), kNeverNs);
  EXPECT_EQ(deadline_after(1, kNeverNs), kNeverNs);
}

}  // namespace
}  // namespace weft
