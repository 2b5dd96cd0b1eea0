// OpRunner: executes one operation's Plan over the group's lanes, one
// non-blocking step at a time. It is the only place where items become
// frames: it cuts each item into chunks, copies a chunk into a send frame
// when the item's dependency and the lane's credits allow, checks every
// arriving frame's header against what this rank expects next on that lane
// (a different collective, size, dtype, root or algorithm is a kMismatch),
// and copies or reduces checked frames into place in plan order.
#ifndef WEFT_COLLECTIVES_INTERNAL_OP_RUNNER_H_
#define WEFT_COLLECTIVES_INTERNAL_OP_RUNNER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collectives/dtype.h"
#include "collectives/internal/frame_header.h"
#include "collectives/internal/lane.h"
#include "collectives/internal/plan.h"
#include "fabric/errors.h"

namespace weft::internal {

struct OpBuffers {
  const std::byte* in = nullptr;
  std::byte* out = nullptr;
};

class OpRunner {
 public:
  // Finds the lane to group rank `peer` over cable `cable`; never null for
  // the peers and cables a validated plan names.
  using LaneFinder = std::function<Lane*(uint32_t peer, uint32_t cable)>;

  // `identity` goes into every frame (chunk_bytes is the payload per frame).
  OpRunner(Plan plan, OpIdentity identity, DType dtype, ReduceOp op,
           OpBuffers buffers, uint32_t rank, const LaneFinder& find_lane);

  // Allocates scratch; called when the operation starts running.
  absl::Status start();
  // Does everything possible now; *advanced when anything moved.
  absl::Status advance(bool* advanced);
  bool done() const;
  // Sets waiting[lane->index()] for each lane this operation still needs
  // something on (frames to send or receive, acknowledgements): a silent
  // peer there is probed. Leaves the other entries alone.
  void mark_waiting(std::span<uint8_t> waiting) const;
  // What is still outstanding; *blame is the lane it waits on most
  // directly (nullptr when none).
  std::string outstanding(const Lane** blame) const;
  const OpIdentity& identity() const { return identity_; }

 private:
  struct ItemState {
    uint32_t frames = 1;
    uint32_t done = 0;
  };
  struct LaneWork {
    Lane* lane = nullptr;
    std::vector<int32_t> sends;  // item indices in lane order
    std::vector<int32_t> recvs;
    size_t send_pos = 0;
    size_t recv_pos = 0;
    // Validation cursor: the next arrival to check is inbox(checked).
    size_t check_pos = 0;
    uint32_t check_frame = 0;
    uint32_t checked = 0;  // checked arrivals not consumed yet
    bool needs_ack = false;
    // The dependency of the send item at send_pos, copied from the plan so
    // that a lane waiting to send touches no item (a 1024-rank ring has
    // eight thousand per rank, cold in the cache at each step).
    struct NextSend {
      size_t pos = ~size_t{0};
      int32_t after = kNoItem;
      Wait wait = Wait::kNone;
      uint32_t done = 0;  // its frames sent
    } next_send;
  };

  uint32_t frame_bytes(const Item& item, uint32_t frame) const;
  bool ready(const Item& item, uint32_t frame) const {
    return dep_ready(item.after, item.wait, frame);
  }
  // Frame `frame` of an item waiting on item `after` (as `wait`) may go.
  bool dep_ready(int32_t after, Wait wait, uint32_t frame) const;
  std::byte* at(BufferId b, uint64_t offset) const;
  absl::Status apply(const Item& item, uint32_t frame, const std::byte* src);
  // dst = op(first, second) over `bytes`.
  absl::Status combine(std::byte* dst, const std::byte* first,
                       const std::byte* second, uint32_t bytes) const;
  // combine() works in pieces of this size (fits a core's L1 data cache).
  static constexpr uint32_t kCombinePieceBytes = 16 << 10;
  absl::Status check_arrivals(LaneWork& w);
  absl::Status mismatch(const LaneWork& w, const FrameHeader& got,
                        uint32_t want_bytes) const;
  absl::Status receive(LaneWork& w, bool* advanced);
  absl::Status send(LaneWork& w, bool* advanced);
  absl::Status run_locals(bool* advanced);
  bool lane_done(const LaneWork& w) const;

  Plan plan_;
  OpIdentity identity_;
  DType dtype_;
  ReduceOp op_;
  OpBuffers buffers_;
  uint32_t rank_;
  std::unique_ptr<std::byte[]> scratch_;
  std::vector<ItemState> state_;
  std::vector<LaneWork> lanes_;
  std::vector<int32_t> locals_;  // local items not finished, in order
  bool pure_sender_ = false;
};

}  // namespace weft::internal

#endif  // WEFT_COLLECTIVES_INTERNAL_OP_RUNNER_H_
