// OpRunner: executes one operation's Plan over the group's lanes, one
// non-blocking step at a time. It is the only place where items become
// frames: it cuts each item into chunks, copies a chunk into a send frame
// when the item's dependency and the lane's credits allow, checks every
// arriving frame's header against what this rank expects next on that lane
// (a different collective, size, dtype, root or algorithm is a kMismatch),
// and copies or reduces checked frames into place in plan order.
//
// It holds only the items in flight: a plan part's ItemSource makes a
// lane's next item when the lane reaches it, and items leave once done, so
// a 4096-rank ring's 16,380 steps per rank never exist at once.
#ifndef WEFT_COLLECTIVES_ENGINE_OP_RUNNER_H_
#define WEFT_COLLECTIVES_ENGINE_OP_RUNNER_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "collectives/algorithms/plan.h"
#include "collectives/dtype.h"
#include "collectives/engine/frame_header.h"
#include "collectives/engine/lane.h"
#include "collectives/engine/op_lane.h"
#include "collectives/engine/position_ring.h"
#include "collectives/engine/user_memory.h"
#include "collectives/kernels/cache_lines.h"
#include "fabric/errors.h"
#include "fabric/slab.h"

namespace weft::collectives::internal {

// The caller's buffers, as the call gave them (empty: none).
struct OpBuffers {
  std::span<const std::byte> in;
  std::span<std::byte> out;
  // The registrations of user memory holding all of `in` and `out`
  // (UserMemory::find), or nullptr: frames are then sent straight from
  // there (DataFrame::registered) instead of through the lanes' own frames.
  const Slab* in_slab = nullptr;
  const Slab* out_slab = nullptr;
};

class OpRunner {
 public:
  // Finds the lane to group rank `peer` over cable `cable`; never null for
  // the peers and cables a validated plan names. The runner sees it only
  // through an OpLane.
  using LaneFinder = std::function<Lane*(uint32_t peer, uint32_t cable)>;
  // No lane (departed_needed(), outstanding()).
  static constexpr uint32_t kNoLane = 0xffffffff;

  // `identity` goes into every frame (chunk_bytes is the payload per frame).
  OpRunner(Plan plan, OpIdentity identity, DType dtype, ReduceOp op,
           OpBuffers buffers, uint32_t rank, const LaneFinder& find_lane);

  // Keeps `use` (the registrations the buffers lie in) until the runner
  // is destroyed.
  void keep(std::unique_ptr<UserMemory::Use> use) { use_ = std::move(use); }
  // Allocates scratch; called when the operation starts running.
  absl::Status start();
  // Makes every lane of the operation stop reading its user memory
  // (OpLane::detach): an unacknowledged frame sent from there is copied
  // into its lane's own frame, so a resend after the operation returned
  // sends what was sent first, whatever the caller wrote there since; and
  // stop receiving into it (OpLane::stop_receiving_into). True when done; false
  // while a send from there has not completed or a receive posted there
  // has not (only after a failure: done() waits for every send, and
  // consuming every frame completes every such receive).
  bool detach_user_memory();
  // Does everything possible now; *advanced when anything moved.
  absl::Status advance(bool* advanced);
  bool done() const;
  // Sets waiting[lane->index()] for each lane this operation still needs
  // something on (frames to send or receive, acknowledgements): a silent
  // peer there is probed. Leaves the other entries alone.
  void mark_waiting(std::span<uint8_t> waiting) const;
  // The index (Lane::index()) of a lane whose peer departed
  // (Lane::peer_departed()) while this operation still needs something of
  // it: a frame not arrived yet, a credit to send, a consumption report.
  // kNoLane when none: a peer that has done its part may leave. REQUIRES:
  // advance() ran since the last poll (arrivals are checked). O(lanes).
  uint32_t departed_needed() const;
  // What is still outstanding; *blame is the index of the lane it waits
  // on most directly (kNoLane when none).
  std::string outstanding(uint32_t* blame) const;
  const OpIdentity& identity() const { return identity_; }
  // For engines whose state goes cold between steps (many ranks on one
  // core): at the end of a step, asks the cache for what the next step
  // reads and lists it (hot_); at the start of the next, asks for the
  // listed lines all at once.
  void prefetch_next();
  void prefetch_state() const {
    for (uint32_t i = 0; i < hot_count_; ++i) __builtin_prefetch(hot_[i]);
  }

 private:
  struct ItemState {
    uint32_t frames = 1;
    uint32_t done = 0;
  };
  // What an item needs at each of its frames, copied from the plan in lane
  // order: a lane's steps are then read one after another, and the plan's
  // 64-byte items are not kept.
  struct Step {
    uint64_t src_offset = 0;  // send, local; recv that combines with src
    uint64_t dst_offset = 0;  // recv, local
    uint64_t bytes = 0;       // the item's slice length
    int32_t item = kNoItem;
    int32_t after = kNoItem;  // an item of the same part
    uint32_t frames = 1;
    uint32_t part = 0;  // parts_ position
    BufferId src_buffer = BufferId::kIn;
    BufferId dst_buffer = BufferId::kOut;
    Apply apply = Apply::kCopy;
    Wait wait = Wait::kNone;
  };
  static constexpr int32_t kNoPart = -1;
  struct LaneWork {
    OpLane lane;
    // The steps made and not yet passed, by position in lane order.
    PositionRing<Step> sends;
    PositionRing<Step> recvs;
    uint64_t send_total = 0;  // steps in all
    uint64_t recv_total = 0;
    // The part whose source makes the steps not made yet, or kNoPart.
    int32_t send_feed = kNoPart;
    int32_t recv_feed = kNoPart;
    uint64_t send_pos = 0;
    uint64_t recv_pos = 0;
    // Frames of the items at send_pos and recv_pos done (the item states
    // mirror them for dependants).
    uint32_t send_frame = 0;
    uint32_t recv_frame = 0;
    // Validation cursor: the next arrival to check is inbox(checked).
    uint64_t check_pos = 0;
    uint32_t check_frame = 0;
    uint32_t checked = 0;  // checked arrivals not consumed yet
    bool needs_ack = false;
  };
  // One part of the plan: the states of its items from the oldest not
  // done to the newest made, and the source making the rest.
  struct PartWork {
    explicit PartWork(uint64_t first_item)
        : first(first_item), state(first_item) {}
    uint64_t first;  // the index of its first item
    PositionRing<ItemState> state;
    std::unique_ptr<ItemSource> source;  // null once it has made all
    uint64_t left = 0;                   // items the source has yet to make
    struct SourceLane {
      uint32_t peer = 0;
      uint32_t cable = 0;
      uint32_t work = 0;  // lanes_ position
    };
    std::vector<SourceLane> lanes;  // source->lanes()
  };

  static Step step_of(const Item& item, int32_t index, uint32_t part,
                      uint32_t frames);
  // Takes item `index` of part `part` in: its state, and its step on its
  // lane (lanes_[work]) or among the locals.
  void take_in(const Item& item, uint32_t part, uint32_t work);
  // Has part `part`'s source make its next item.
  void make_next(uint32_t part);
  // Makes steps until `steps` holds position `pos` (fed by `feed`).
  // REQUIRES: pos is below the lane's total.
  void make_until(PositionRing<Step>& steps, int32_t feed, uint64_t pos) {
    while (steps.end() <= pos) make_next(static_cast<uint32_t>(feed));
  }
  // After a cursor moved past a step: lets the passed steps go, and makes
  // sure the step at the cursor is held.
  void pass_send(LaneWork& w);
  void pass_recv(LaneWork& w);
  // Lets the part's leading items that are done go.
  void retire(uint32_t part);
  ItemState& state_of(const Step& step) {
    return parts_[step.part].state.at(static_cast<uint64_t>(step.item));
  }
  uint32_t frame_bytes(const Step& step, uint32_t frame) const {
    const uint64_t start = uint64_t{frame} * identity_.chunk_bytes;
    return start >= step.bytes
               ? 0
               : static_cast<uint32_t>(std::min<uint64_t>(identity_.chunk_bytes,
                                                          step.bytes - start));
  }
  // Frame `frame` of `step` may go: the item it waits on is far enough.
  bool ready(const Step& step, uint32_t frame) const;
  // Buffer `b` of the operation: the caller's input or output, or scratch.
  std::span<std::byte> buffer(BufferId b) const;
  std::byte* at(BufferId b, uint64_t offset) const {
    const std::span<std::byte> buf = buffer(b);
    WEFT_ASSERT(offset <= buf.size(), "a plan's slice lies outside its buffer");
    return buf.data() + offset;
  }
  std::byte* src_at(const Step& step, uint32_t frame) const {
    return at(step.src_buffer,
              step.src_offset + uint64_t{frame} * identity_.chunk_bytes);
  }
  // The bytes frame `frame` of `step` sends (or a local step reads).
  std::span<const std::byte> source(const Step& step, uint32_t frame) const {
    return {src_at(step, frame), frame_bytes(step, frame)};
  }
  // Writes frame `frame` of `step` from `src` (its payload) into place.
  absl::Status apply(const Step& step, uint32_t frame,
                     std::span<const std::byte> src);
  // The registration frames of buffer `b` are sent from, or nullptr.
  const Slab* user_slab(BufferId b) const {
    return b == BufferId::kIn    ? buffers_.in_slab
           : b == BufferId::kOut ? buffers_.out_slab
                                 : nullptr;
  }
  // Whether frame `frame` of `step` may be written to its destination
  // now: no lane still sends from there (frames of user memory being
  // sent are first detached; one whose send has not completed waits).
  bool writable(const Step& step, uint32_t frame);
  // dst = op(first, second) over `bytes`, in one pass (reduce_to).
  absl::Status combine(std::byte* dst, const std::byte* first,
                       const std::byte* second, uint32_t bytes) const;
  // Per plan item: whether a receive's frames may land straight in its
  // destination (OpLane::receive_into): a copy into registered output that
  // no later item reads or writes, but for sends forwarding the same slice
  // after it, frame by frame or whole. `needs` lists the earlier items
  // that touch the slice (a ring's partial sums, reduced there and sent
  // on before the all-gather brings the finished chunk): the receive may
  // land there only once they are done (open_gates()).
  struct InPlace {
    bool ok = false;
    std::vector<int32_t> needs;
  };
  std::vector<InPlace> receivable_in_place(const std::vector<Item>& items);
  // Tells each lane where its frames of this operation may be received
  // into (frames of a full receive's payload only): now, for receives that
  // need nothing first, and through open_gates() for the others.
  void receive_into_user_memory();
  // A receive that may land in place once `needs` are done and no lane
  // still sends from [begin, end).
  struct Gate {
    uint32_t work = 0;       // lanes_ position
    uint32_t first_seq = 0;  // the lane's number of its first frame
    std::vector<Frame> frames;
    const std::byte* begin = nullptr;
    const std::byte* end = nullptr;
    std::vector<int32_t> needs;
  };
  bool item_done(int32_t item) const;
  // Hands the lanes the frames of each gate whose needs are met, in lane
  // order (a lane's later gates wait for its earlier ones).
  void open_gates();
  absl::Status check_arrivals(LaneWork& w);
  absl::Status mismatch(const LaneWork& w, const FrameHeader& got,
                        uint32_t want_bytes) const;
  absl::Status receive(LaneWork& w, bool* advanced);
  absl::Status send(LaneWork& w, bool* advanced);
  absl::Status run_locals(bool* advanced);
  bool lane_done(const LaneWork& w) const;
  void note_hot(const void* p, size_t bytes);
  // Lines listed by prefetch_next(); the first member, so that the
  // object's first line holds the start of the list.
  static constexpr uint32_t kHotLines = 30;
  std::array<const void*, kHotLines> hot_{};
  uint32_t hot_count_ = 0;
  // Lines of the next receive's destination asked for (a frame may be
  // far larger; the hardware prefetcher follows a copy once it runs).
  static constexpr uint32_t kPrefetchLines = 8;

  OpIdentity identity_;
  DType dtype_;
  ReduceOp op_;
  OpBuffers buffers_;
  uint32_t rank_;
  uint64_t scratch_bytes_ = 0;
  std::unique_ptr<std::byte[]> scratch_;
  std::vector<PartWork> parts_;
  std::vector<LaneWork> lanes_;
  std::vector<Step> locals_;  // local items not finished, in order
  bool pure_sender_ = false;
  // Frames may be sent from user memory (buffers_ has a registration).
  bool zero_copy_ = false;
  std::unique_ptr<UserMemory::Use> use_;
  // receivable_in_place() of the plan, until start() (empty: none is).
  std::vector<InPlace> in_place_;
  // Receives waiting to land in place, grouped by lane in lane order:
  // lane i's not opened yet are gates_[gate_next_[i], gate_end_[i]).
  std::vector<Gate> gates_;
  std::vector<uint32_t> gate_next_;
  std::vector<uint32_t> gate_end_;
  uint32_t gates_left_ = 0;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_OP_RUNNER_H_
