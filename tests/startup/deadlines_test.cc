// The deadline arithmetic of ProcessGroup: decimal seconds, and recovery
// limits that outlast the operation's deadline.
#include "startup/internal/deadlines.h"

#include <cstdint>

#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "gtest/gtest.h"

namespace weft::startup::internal {
namespace {

TEST(ParseSeconds, DecimalSecondsToNanoseconds) {
  EXPECT_EQ(*parse_seconds("T", "600", GroupOptions::kMaxTimeoutNs),
            600'000'000'000);
  EXPECT_EQ(*parse_seconds("T", "2.5", GroupOptions::kMaxTimeoutNs),
            2'500'000'000);
  EXPECT_EQ(*parse_seconds("T", "0.000000001", GroupOptions::kMaxTimeoutNs), 1);
  EXPECT_EQ(*parse_seconds("T", "86400", GroupOptions::kMaxTimeoutNs),
            86'400'000'000'000);
  EXPECT_FALSE(
      parse_seconds("T", "86400.000000001", GroupOptions::kMaxTimeoutNs).ok());
}

// The worst case, counted here by hand: the timeout starts at min_rto_ns
// (20 us) and doubles to max_rto_ns (500 ms): 20 us * 2^k for k = 0..14
// (15 retries, 655.34 ms in all), then 500 ms each.
TEST(Outlast, DefaultsAlreadyOutlastThirtySeconds) {
  const RecoveryOptions defaults;
  // 655.34 ms + 85 * 500 ms = 43.16 s.
  EXPECT_EQ(unreachable_after_ns(defaults),
            TimeNs{655'340'000} + TimeNs{85} * 500'000'000);
  const RecoveryOptions r = outlast(defaults, 30 * kNsPerS);
  EXPECT_EQ(r.max_retries, defaults.max_retries);
  EXPECT_EQ(r.max_rto_ns, defaults.max_rto_ns);
}

TEST(Outlast, MoreRetriesForAHundredSeconds) {
  // 655.34 ms + m * 500 ms >= 100 s first at m = 199: 214 retries.
  const RecoveryOptions r = outlast(RecoveryOptions{}, 100 * kNsPerS);
  EXPECT_EQ(r.max_retries, 214u);
  EXPECT_EQ(r.max_rto_ns, RecoveryOptions{}.max_rto_ns);
  EXPECT_TRUE(r.validate().ok());
}

TEST(Outlast, HigherCeilingPastAThousandRetries) {
  // 600 s needs 15 + 1199 retries at 500 ms, past the 1000 allowed: the
  // ceiling becomes 2 * 600 s / 1000 + 1 ns.
  const RecoveryOptions r = outlast(RecoveryOptions{}, 600 * kNsPerS);
  EXPECT_EQ(r.max_retries, RecoveryOptions::kMaxRetries);
  EXPECT_EQ(r.max_rto_ns, 1'200'000'001);
  EXPECT_GE(unreachable_after_ns(r), 600 * kNsPerS);
  EXPECT_TRUE(r.validate().ok());
}

TEST(Outlast, TheLongestDeadlineStaysValid) {
  const RecoveryOptions r =
      outlast(RecoveryOptions{}, GroupOptions::kMaxTimeoutNs);
  EXPECT_GE(unreachable_after_ns(r), GroupOptions::kMaxTimeoutNs);
  EXPECT_TRUE(r.validate().ok()) << r.validate();
}

}  // namespace
}  // namespace weft::startup::internal
