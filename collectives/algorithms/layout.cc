#include "collectives/algorithms/layout.h"

#include <algorithm>

namespace weft::collectives::internal {

Range split_range(uint64_t count, uint64_t parts, uint64_t i) {
  const uint64_t base = count / parts;
  const uint64_t extra = count % parts;
  return {i * base + std::min(i, extra), base + (i < extra ? 1 : 0)};
}

Slice StripeLayout::block(BufferId buffer, uint64_t block_bytes,
                          uint64_t j) const {
  const Range r = stripe_range(block_bytes / elem_);
  return {buffer, j * block_bytes + r.begin * elem_, r.count * elem_};
}

Slice StripeLayout::chunk(BufferId buffer, uint64_t bytes, uint64_t j,
                          uint64_t n) const {
  const Range s = stripe_range(bytes / elem_);
  const Range c = split_range(s.count, n, j);
  return {buffer, (s.begin + c.begin) * elem_, c.count * elem_};
}

}  // namespace weft::collectives::internal
