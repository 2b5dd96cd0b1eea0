#include "bench/gloo/check/all_reduce_check.h"

namespace weft::bench {
namespace {

// Below 2^24 summed over up to 64 ranks: exact in float32.
constexpr uint32_t kValueSpan = 251;
constexpr uint32_t kIterationSpan = 1000;

}  // namespace

float input_value(uint32_t rank, uint64_t element, uint32_t iteration) {
  return static_cast<float>((rank + 1) * (element % kValueSpan + 1) +
                            iteration % kIterationSpan);
}

void fill_input(uint32_t rank, uint32_t iteration, std::span<float> data) {
  for (uint64_t j = 0; j < data.size(); ++j) {
    data[j] = input_value(rank, j, iteration);
  }
}

uint64_t wrong_elements(uint32_t ranks, uint32_t iteration,
                        std::span<const float> out) {
  uint64_t wrong = 0;
  for (uint64_t j = 0; j < out.size(); ++j) {
    float expected = 0;
    for (uint32_t r = 0; r < ranks; ++r) {
      expected += input_value(r, j, iteration);
    }
    wrong += !(out[j] == expected);
  }
  return wrong;
}

}  // namespace weft::bench
