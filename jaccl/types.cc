// The conversions behind jaccl::float16_t and bfloat16_t (weft's, as its
// reduction kernels do them) and JACCL's element sizes.
#include "jaccl/types.h"

#include <cstddef>
#include <cstdint>

#include "collectives/dtype.h"
#include "collectives/float16.h"

namespace jaccl {
namespace detail {

uint16_t float_to_float16_bits(float value) {
  return weft::float_to_float16_bits(value);
}
float float16_bits_to_float(uint16_t bits) {
  return weft::float16_bits_to_float(bits);
}
uint16_t float_to_bfloat16_bits(float value) {
  return weft::float_to_bfloat16_bits(value);
}
float bfloat16_bits_to_float(uint16_t bits) {
  return weft::bfloat16_bits_to_float(bits);
}

}  // namespace detail

size_t dtype_size(int dtype) {
  if (dtype < 0 || dtype >= weft::kDTypeCount) return 0;
  return weft::dtype_size(static_cast<weft::DType>(dtype));
}

}  // namespace jaccl
