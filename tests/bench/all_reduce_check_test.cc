// gloo_allreduce's inputs and output check
// (bench/gloo/check/all_reduce_check.h): the check passes the true sum and
// catches a wrong, stale or NaN element.
#include "bench/gloo/check/all_reduce_check.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace weft::bench {
namespace {

TEST(AllReduceCheck, InputsAreSmallIntegersThatDifferByRankAndIteration) {
  // (rank + 1) * (element % 251 + 1) + iteration.
  EXPECT_EQ(input_value(0, 0, 0), 1.0f);
  EXPECT_EQ(input_value(1, 2, 0), 6.0f);
  EXPECT_EQ(input_value(1, 2, 5), 11.0f);
  EXPECT_EQ(input_value(3, 251, 0), 4.0f);
}

// The sum of three ranks' inputs, added here in the opposite rank order.
std::vector<float> true_sum(uint32_t iteration, size_t count) {
  std::vector<float> sum(count, 0.0f);
  for (uint32_t r = 3; r-- > 0;) {
    std::vector<float> in(count);
    fill_input(r, iteration, in);
    for (size_t j = 0; j < count; ++j) sum[j] += in[j];
  }
  return sum;
}

TEST(AllReduceCheck, TheTrueSumHasNoWrongElement) {
  const std::vector<float> sum = true_sum(7, 1000);
  EXPECT_EQ(sum[0], 1 * 1 + 2 * 1 + 3 * 1 + 3 * 7.0f);
  EXPECT_EQ(wrong_elements(3, 7, sum), 0u);
}

TEST(AllReduceCheck, CountsEveryWrongStaleOrNanElement) {
  std::vector<float> sum = true_sum(7, 1000);
  sum[10] += 1;
  sum[999] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(wrong_elements(3, 7, sum), 2u);
  // Another iteration's result is stale everywhere.
  EXPECT_EQ(wrong_elements(3, 8, true_sum(7, 1000)), 1000u);
  // A sum over fewer ranks is wrong everywhere.
  EXPECT_EQ(wrong_elements(4, 7, true_sum(7, 1000)), 1000u);
}

}  // namespace
}  // namespace weft::bench
