#include "tools/weft-bench/weft_bench_sizes.h"

#include <cassert>

#include "absl/status/statusor.h"
#include "collectives/dtype.h"

namespace weft::tools::weft_bench {
namespace {

uint64_t carried_bytes(harness::CollectiveSpec spec, uint64_t bytes,
                       uint32_t ranks) {
  spec.bytes = bytes;
  const absl::StatusOr<harness::CollectiveShape> shape =
      harness::shape_of(spec, ranks);
  assert(shape.ok());
  return shape.ok() ? shape->size_bytes : 0;
}

}  // namespace

BlockSizes block_sizes(const harness::CollectiveSpec& spec,
                       std::span<const uint64_t> requested, uint32_t ranks) {
  BlockSizes out;
  // One element per rank is enough for every op; the size per count (one
  // element, or one per rank) is the smallest size that carries data.
  harness::CollectiveSpec probe = spec;
  probe.bytes = dtype_size(spec.dtype) * ranks;
  const absl::StatusOr<harness::CollectiveShape> shape =
      harness::shape_of(probe, ranks);
  assert(shape.ok() && shape->count > 0);
  out.smallest_bytes =
      shape.ok() && shape->count > 0 ? shape->size_bytes / shape->count : 0;
  for (uint64_t bytes : requested) {
    uint64_t carried = carried_bytes(spec, bytes, ranks);
    if (carried == 0 && bytes > 0) {
      carried = out.smallest_bytes;
      out.raised = true;
    }
    if (!out.bytes.empty() && out.bytes.back() >= carried) continue;
    out.bytes.push_back(carried);
  }
  return out;
}

}  // namespace weft::tools::weft_bench
