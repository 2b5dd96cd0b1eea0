// FramePool: frames of any size carved from one fabric's slabs and reused,
// by power-of-two size class, for code that moves messages of sizes it
// does not know in advance through a simulated fabric (which moves only
// frames of its own slabs): the simulation server, and the simulated verbs
// provider's gathered sends and scattered receives.
#ifndef WEFT_SIM_FRAME_POOL_H_
#define WEFT_SIM_FRAME_POOL_H_

#include <cstdint>
#include <map>
#include <vector>

#include "absl/status/statusor.h"
#include "fabric/fabric.h"
#include "fabric/slab.h"

namespace weft::sim {

class FramePool {
 public:
  // Smallest frame handed out, and the least mapped at once.
  static constexpr uint32_t kMinFrameBytes = 64;
  static constexpr uint64_t kMinChunkBytes = uint64_t{1} << 20;

  // REQUIRES: `fabric` outlives the pool.
  explicit FramePool(Fabric& fabric) : fabric_(fabric) {}

  // A frame of at least `bytes` (its size class's size); the error of
  // Fabric::create_slab when a new slab cannot be made.
  absl::StatusOr<Frame> take(uint32_t bytes);
  // Returns a frame take() handed out (the whole of it).
  void give(const Frame& frame);

 private:
  Fabric& fabric_;
  std::map<uint64_t, std::vector<Frame>> free_;  // by size class
};

}  // namespace weft::sim

#endif  // WEFT_SIM_FRAME_POOL_H_
