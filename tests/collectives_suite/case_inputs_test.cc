// The determinism tests mean something only if the order of a float sum
// changes its bits with their inputs (case_inputs.h).
#include "tests/collectives_suite/case_inputs.h"

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace weft::testing {
namespace {

TEST(CaseInputs, SensitiveInputsReallyDependOnOrder) {
  constexpr uint32_t kRanks = 5;
  constexpr uint64_t kCount = 10007;
  std::vector<ByteVec> inputs;
  for (uint32_t r = 0; r < kRanks; ++r) {
    inputs.push_back(sensitive_input(DType::kFloat32, kCount, r, 1));
  }
  std::vector<ByteVec> reversed(inputs.rbegin(), inputs.rend());
  EXPECT_NE(reference_reduce(DType::kFloat32, ReduceOp::kSum, inputs),
            reference_reduce(DType::kFloat32, ReduceOp::kSum, reversed));
}

TEST(CaseInputs, ExactInputsDoNotDependOnOrder) {
  constexpr uint32_t kRanks = 5;
  const std::vector<ByteVec> inputs =
      exact_inputs(CollectiveKind::kAllReduce, DType::kBFloat16, ReduceOp::kSum,
                   4099, kRanks, 3);
  std::vector<ByteVec> reversed(inputs.rbegin(), inputs.rend());
  EXPECT_EQ(reference_reduce(DType::kBFloat16, ReduceOp::kSum, inputs),
            reference_reduce(DType::kBFloat16, ReduceOp::kSum, reversed));
}

}  // namespace
}  // namespace weft::testing
