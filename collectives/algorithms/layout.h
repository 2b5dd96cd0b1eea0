// Layout: how an operation's buffers are cut into stripes (one per lane or
// ring direction), blocks (one per rank) and chunks (one per ring or mesh
// step), always on element boundaries and with 64-bit offsets. Counts that do
// not divide evenly give the first pieces one element more.
#ifndef WEFT_COLLECTIVES_ALGORITHMS_LAYOUT_H_
#define WEFT_COLLECTIVES_ALGORITHMS_LAYOUT_H_

#include <cstddef>
#include <cstdint>

#include "collectives/algorithms/plan.h"

namespace weft::collectives::internal {

struct Range {
  uint64_t begin = 0;  // elements
  uint64_t count = 0;
};

// Piece i of `count` elements cut into `parts`. REQUIRES: i < parts.
Range split_range(uint64_t count, uint64_t parts, uint64_t i);

// One stripe's view of the buffers.
class StripeLayout {
 public:
  StripeLayout(size_t elem, uint32_t stripe, uint32_t stripes)
      : elem_(elem), stripe_(stripe), stripes_(stripes) {}

  // The stripe's part of block j of a buffer made of blocks of
  // `block_bytes`.
  Slice block(BufferId buffer, uint64_t block_bytes, uint64_t j) const;
  // The stripe's part of a buffer of `bytes`.
  Slice whole(BufferId buffer, uint64_t bytes) const {
    return block(buffer, bytes, 0);
  }
  // Chunk j of n of the stripe's part of a buffer of `bytes`.
  Slice chunk(BufferId buffer, uint64_t bytes, uint64_t j, uint64_t n) const;
  // `slice` moved to another buffer and offset (same length).
  static Slice at(Slice slice, BufferId buffer, uint64_t offset) {
    return {buffer, offset, slice.bytes};
  }

 private:
  // The stripe's range of a buffer of `elements`: plans ask for the same
  // buffer size over and over, and each split costs two divisions.
  Range stripe_range(uint64_t elements) const {
    if (elements != cached_elements_) {
      cached_ = split_range(elements, stripes_, stripe_);
      cached_elements_ = elements;
    }
    return cached_;
  }

  size_t elem_;
  uint32_t stripe_;
  uint32_t stripes_;
  mutable uint64_t cached_elements_ = ~uint64_t{0};
  mutable Range cached_;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ALGORITHMS_LAYOUT_H_
