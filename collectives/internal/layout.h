// Layout: how an operation's buffers are cut into stripes (one per lane or
// ring direction), blocks (one per rank) and chunks (one per ring or mesh
// step), always on element boundaries and with 64-bit offsets. Counts that do
// not divide evenly give the first pieces one element more.
#ifndef WEFT_COLLECTIVES_INTERNAL_LAYOUT_H_
#define WEFT_COLLECTIVES_INTERNAL_LAYOUT_H_

#include <cstddef>
#include <cstdint>

#include "collectives/internal/plan.h"

namespace weft::internal {

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
  size_t elem_;
  uint32_t stripe_;
  uint32_t stripes_;
};

}  // namespace weft::internal

#endif  // WEFT_COLLECTIVES_INTERNAL_LAYOUT_H_
