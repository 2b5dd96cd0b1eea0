// Element arithmetic for the reference outputs, written as plain scalar
// loops independent of weft's reduction kernels: float16 and bfloat16
// conversions (round to nearest even), and acc = op(acc, x) element-wise
// for every dtype (16-bit floats through float32; bool sum/max is OR and
// prod/min is AND; complex64 max/min compare real then imaginary part).
#ifndef WEFT_HARNESS_PLAIN_ARITHMETIC_H_
#define WEFT_HARNESS_PLAIN_ARITHMETIC_H_

#include <cstddef>
#include <cstdint>

#include "collectives/dtype.h"

namespace weft::harness {

uint16_t float_to_half(float value);
float half_to_float(uint16_t bits);
uint16_t float_to_bfloat16(float value);
float bfloat16_to_float(uint16_t bits);

// acc[i] = op(acc[i], x[i]) for `count` elements of `dtype`.
void plain_reduce(DType dtype, ReduceOp op, std::byte* acc, const std::byte* x,
                  uint64_t count);

}  // namespace weft::harness

#endif  // WEFT_HARNESS_PLAIN_ARITHMETIC_H_
