// Element types and reduction operations of the collectives: JACCL's 14
// dtypes and the four reductions.
#ifndef WEFT_COLLECTIVES_DTYPE_H_
#define WEFT_COLLECTIVES_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace weft {

enum class DType : uint8_t {
  kBool = 0,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUint8,
  kUint16,
  kUint32,
  kUint64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
};
inline constexpr int kDTypeCount = 14;

enum class ReduceOp : uint8_t { kSum = 0, kProd, kMax, kMin };
inline constexpr int kReduceOpCount = 4;

// Bytes per element; 0 for a value outside the enum.
size_t dtype_size(DType dtype);
// "float32", "bfloat16", ...; "unknown" outside the enum.
std::string_view dtype_name(DType dtype);
std::string_view reduce_op_name(ReduceOp op);  // "sum", "prod", "max", "min"
bool parse_dtype(std::string_view text, DType* out);
bool parse_reduce_op(std::string_view text, ReduceOp* out);
bool is_valid(DType dtype);
bool is_valid(ReduceOp op);

}  // namespace weft

#endif  // WEFT_COLLECTIVES_DTYPE_H_
