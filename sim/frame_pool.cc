#include "sim/frame_pool.h"

#include <algorithm>
#include <bit>

namespace weft::sim {

absl::StatusOr<Frame> FramePool::take(uint32_t bytes) {
  const uint64_t size =
      std::bit_ceil(uint64_t{std::max(bytes, kMinFrameBytes)});
  std::vector<Frame>& free = free_[size];
  if (free.empty()) {
    const uint64_t chunk = std::max(size, kMinChunkBytes);
    absl::StatusOr<Slab*> slab = fabric_.create_slab(chunk);
    if (!slab.ok()) return slab.status();
    for (uint64_t at = (*slab)->bytes(); at >= size; at -= size) {
      // Pushed from the end, so frames go out in address order.
      absl::StatusOr<Frame> f =
          (*slab)->frame(at - size, static_cast<uint32_t>(size));
      if (f.ok()) free.push_back(*f);
    }
  }
  Frame out = free.back();
  free.pop_back();
  return out;
}

void FramePool::give(const Frame& frame) {
  free_[frame.bytes()].push_back(frame);
}

}  // namespace weft::sim
