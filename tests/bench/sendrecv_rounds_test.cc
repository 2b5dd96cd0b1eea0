// tcp_sendrecv's parts that need no group: the median it reports. The
// plain stream it measures weft against is net/stream.h's, tested in
// tests/net.
#include "bench/tcp_compare/sendrecv_rounds.h"

#include "gtest/gtest.h"

namespace weft::bench {
namespace {

TEST(SendRecvRounds, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median_ns({30, 10, 20}), 20.0);
  EXPECT_EQ(median_ns({40, 10, 30, 20}), 25.0);
  EXPECT_EQ(median_ns({5}), 5.0);
}

}  // namespace
}  // namespace weft::bench
