#include "collectives/dtype.h"

#include <array>
#include <string_view>

namespace weft {
namespace {

struct DTypeInfo {
  std::string_view name;
  size_t size;
};

constexpr std::array<DTypeInfo, kDTypeCount> kDTypes = {{
    {"bool", 1},
    {"int8", 1},
    {"int16", 2},
    {"int32", 4},
    {"int64", 8},
    {"uint8", 1},
    {"uint16", 2},
    {"uint32", 4},
    {"uint64", 8},
    {"float16", 2},
    {"bfloat16", 2},
    {"float32", 4},
    {"float64", 8},
    {"complex64", 8},
}};

constexpr std::array<std::string_view, kReduceOpCount> kOps = {"sum", "prod",
                                                               "max", "min"};

}  // namespace

bool is_valid(DType dtype) { return static_cast<int>(dtype) < kDTypeCount; }
bool is_valid(ReduceOp op) { return static_cast<int>(op) < kReduceOpCount; }

size_t dtype_size(DType dtype) {
  return is_valid(dtype) ? kDTypes[static_cast<size_t>(dtype)].size : 0;
}

std::string_view dtype_name(DType dtype) {
  return is_valid(dtype) ? kDTypes[static_cast<size_t>(dtype)].name : "unknown";
}

std::string_view reduce_op_name(ReduceOp op) {
  return is_valid(op) ? kOps[static_cast<size_t>(op)] : "unknown";
}

bool parse_dtype(std::string_view text, DType* out) {
  for (int i = 0; i < kDTypeCount; ++i) {
    if (kDTypes[static_cast<size_t>(i)].name == text) {
      *out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

bool parse_reduce_op(std::string_view text, ReduceOp* out) {
  for (int i = 0; i < kReduceOpCount; ++i) {
    if (kOps[static_cast<size_t>(i)] == text) {
      *out = static_cast<ReduceOp>(i);
      return true;
    }
  }
  return false;
}

}  // namespace weft
