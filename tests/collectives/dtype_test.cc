#include "collectives/dtype.h"

#include <cstdint>

#include "gtest/gtest.h"

namespace weft {
namespace {

TEST(DType, SizesAndNamesOfAllFourteen) {
  struct Row {
    DType dtype;
    const char* name;
    size_t size;
  };
  const Row rows[] = {
      {DType::kBool, "bool", sizeof(bool)},
      {DType::kInt8, "int8", sizeof(int8_t)},
      {DType::kInt16, "int16", sizeof(int16_t)},
      {DType::kInt32, "int32", sizeof(int32_t)},
      {DType::kInt64, "int64", sizeof(int64_t)},
      {DType::kUint8, "uint8", sizeof(uint8_t)},
      {DType::kUint16, "uint16", sizeof(uint16_t)},
      {DType::kUint32, "uint32", sizeof(uint32_t)},
      {DType::kUint64, "uint64", sizeof(uint64_t)},
      {DType::kFloat16, "float16", 2},
      {DType::kBFloat16, "bfloat16", 2},
      {DType::kFloat32, "float32", sizeof(float)},
      {DType::kFloat64, "float64", sizeof(double)},
      {DType::kComplex64, "complex64", 2 * sizeof(float)},
  };
  ASSERT_EQ(std::size(rows), static_cast<size_t>(kDTypeCount));
  for (const Row& r : rows) {
    EXPECT_EQ(dtype_size(r.dtype), r.size) << r.name;
    EXPECT_EQ(dtype_name(r.dtype), r.name);
    DType back{};
    ASSERT_TRUE(parse_dtype(r.name, &back));
    EXPECT_EQ(back, r.dtype);
  }
}

TEST(DType, UnknownValuesAreRejected) {
  const auto bad = static_cast<DType>(200);
  EXPECT_FALSE(is_valid(bad));
  EXPECT_EQ(dtype_size(bad), 0u);
  EXPECT_EQ(dtype_name(bad), "unknown");
  DType d{};
  EXPECT_FALSE(parse_dtype("float8", &d));
  ReduceOp op{};
  EXPECT_FALSE(parse_reduce_op("avg", &op));
  EXPECT_TRUE(parse_reduce_op("max", &op));
  EXPECT_EQ(op, ReduceOp::kMax);
  EXPECT_FALSE(is_valid(static_cast<ReduceOp>(9)));
}

}  // namespace
}  // namespace weft
