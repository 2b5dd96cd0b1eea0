// Inputs and reference reductions for the collectives tests, from the
// harness's reference (harness/reference.h, plain_arithmetic.h):
// never computed by weft's own kernels. Exact inputs are the harness
// Reference's (every reduction order gives the same bits); the one thing
// added here is float input whose sums depend on the order of addition,
// for the determinism tests.
#ifndef WEFT_TESTS_COLLECTIVES_SUITE_CASE_INPUTS_H_
#define WEFT_TESTS_COLLECTIVES_SUITE_CASE_INPUTS_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "collectives/dtype.h"
#include "harness/collective_spec.h"
#include "harness/plain_arithmetic.h"
#include "harness/reference.h"

namespace weft::testing {

using ByteVec = std::vector<std::byte>;
using harness::CollectiveKind;

// Every rank's input of `in_count` elements for a collective of `kind`
// with `op` on `ranks` ranks, from the harness Reference seeded with
// `salt`. Only reductions shape the data (see reference.h), so the other
// kinds take an all-gather's.
inline std::vector<ByteVec> exact_inputs(CollectiveKind kind, DType dtype,
                                         ReduceOp op, uint64_t in_count,
                                         uint32_t ranks, uint64_t salt) {
  harness::CollectiveSpec spec;
  spec.kind = harness::reduces(kind) ? kind : CollectiveKind::kAllGather;
  spec.dtype = dtype;
  spec.op = op;
  const uint64_t in_bytes = in_count * dtype_size(dtype);
  // nccl-tests' size: the all-gather's output, the others' input.
  spec.bytes =
      spec.kind == CollectiveKind::kAllGather ? in_bytes * ranks : in_bytes;
  const harness::Reference reference(spec, *harness::shape_of(spec, ranks),
                                     ranks, salt);
  std::vector<ByteVec> inputs(ranks, ByteVec(in_bytes));
  for (uint32_t r = 0; r < ranks; ++r) reference.fill_input(r, inputs[r]);
  return inputs;
}

// Rank `rank`'s input of `count` elements, exact under any reduction order
// (the harness Reference's data for a group of rank + 1).
inline ByteVec exact_input(DType dtype, uint64_t count, uint32_t rank,
                           uint64_t salt) {
  return exact_inputs(CollectiveKind::kAllGather, dtype, ReduceOp::kSum, count,
                      rank + 1, salt)[rank];
}

// float32/float64 input whose sums depend on the order of addition:
// mantissas of 24 random bits over exponents -20..19.
inline ByteVec sensitive_input(DType dtype, uint64_t count, uint32_t rank,
                               uint64_t salt) {
  const size_t size = dtype_size(dtype);
  ByteVec out(count * size);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t h = salt * 1'000'003 + rank * 7'919 + i + 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;  // splitmix64's finaliser
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
    const double mantissa = static_cast<double>(h & 0xffffff) / 0x1000000 + 1.0;
    const int exponent = static_cast<int>((h >> 24) % 40) - 20;
    const double v = ((h >> 40) & 1 ? -1 : 1) * std::ldexp(mantissa, exponent);
    std::byte* p = out.data() + i * size;
    if (dtype == DType::kFloat32) {
      const auto f = static_cast<float>(v);
      std::memcpy(p, &f, sizeof f);
    } else {
      std::memcpy(p, &v, sizeof v);
    }
  }
  return out;
}

// Element-wise op over inputs[0], inputs[1], ... in that order, with the
// harness's plain arithmetic.
inline ByteVec reference_reduce(DType dtype, ReduceOp op,
                                const std::vector<ByteVec>& inputs) {
  ByteVec acc = inputs.at(0);
  const uint64_t count = acc.size() / dtype_size(dtype);
  for (size_t k = 1; k < inputs.size(); ++k) {
    harness::plain_reduce(dtype, op, acc.data(), inputs[k].data(), count);
  }
  return acc;
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_SUITE_CASE_INPUTS_H_
