// Conversions between float32 and the collectives' 16-bit floats (IEEE
// binary16 "float16" and bfloat16), bit for bit as the reduction kernels do
// them: round to nearest, ties to even; subnormals and infinities kept; a
// NaN stays a NaN with its top payload bits and the quiet bit set. For
// code that fills or reads kFloat16 and kBFloat16 buffers.
#ifndef WEFT_COLLECTIVES_FLOAT16_H_
#define WEFT_COLLECTIVES_FLOAT16_H_

#include <cstdint>

namespace weft {

uint16_t float_to_float16_bits(float value);
float float16_bits_to_float(uint16_t bits);
uint16_t float_to_bfloat16_bits(float value);
float bfloat16_bits_to_float(uint16_t bits);

}  // namespace weft

#endif  // WEFT_COLLECTIVES_FLOAT16_H_
