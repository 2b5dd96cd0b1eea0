// The inputs gloo_allreduce gives each rank and the check of each output:
// small integers, so every partial sum is exact in float32 whatever order
// the reduction adds in, and the expected sum is computed here, element by
// element over the ranks, independently of the library measured.
#ifndef WEFT_BENCH_GLOO_CHECK_ALL_REDUCE_CHECK_H_
#define WEFT_BENCH_GLOO_CHECK_ALL_REDUCE_CHECK_H_

#include <cstdint>
#include <span>

namespace weft::bench {

// Element `element` of rank `rank`'s input at iteration `iteration`.
float input_value(uint32_t rank, uint64_t element, uint32_t iteration);
void fill_input(uint32_t rank, uint32_t iteration, std::span<float> data);
// Elements of `out` that differ from the sum of all `ranks` ranks' inputs
// at `iteration` (a NaN counts as wrong).
uint64_t wrong_elements(uint32_t ranks, uint32_t iteration,
                        std::span<const float> out);

}  // namespace weft::bench

#endif  // WEFT_BENCH_GLOO_CHECK_ALL_REDUCE_CHECK_H_
