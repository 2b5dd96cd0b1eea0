#include "collectives/float16.h"

#include <cstdint>

#include "collectives/kernels/half.h"

namespace weft {

uint16_t float_to_float16_bits(float value) {
  return collectives::internal::float_to_float16(value);
}
float float16_bits_to_float(uint16_t bits) {
  return collectives::internal::float16_to_float(bits);
}
uint16_t float_to_bfloat16_bits(float value) {
  return collectives::internal::float_to_bfloat16(value);
}
float bfloat16_bits_to_float(uint16_t bits) {
  return collectives::internal::bfloat16_to_float(bits);
}

}  // namespace weft
