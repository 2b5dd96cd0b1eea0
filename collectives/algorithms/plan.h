// Plan: what one rank does in one collective, as a list of items that only
// DESCRIBE data movement: send this slice to that peer over that cable;
// receive the next slice from a peer and copy or reduce it into here; copy or
// reduce locally. The engine (op_runner.h) executes plans; no algorithm
// polls, waits or touches an endpoint.
//
// Ordering rules the engine relies on and algorithms must keep:
//  - Items on one lane (peer, cable) run in item order: a rank's send items
//    to a lane, in order, match the peer's receive items from that lane.
//  - Each item moves its slice in frames of the op's chunk size (an empty
//    slice still moves one empty frame, so every peer sees every item).
//  - `after` orders items: with kFrame, frame f of this item waits for frame
//    f of item `after` (same slice length); with kWhole, for all of it.
//
// A plan need not exist whole: a part of it may end in an ItemSource that
// makes its items as the engine reaches them (a ring's 2(n-1) steps), so a
// rank's plan occupies memory for the items in flight, not for every peer.
#ifndef WEFT_COLLECTIVES_ALGORITHMS_PLAN_H_
#define WEFT_COLLECTIVES_ALGORITHMS_PLAN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace weft::collectives::internal {

enum class BufferId : uint8_t { kIn, kOut, kScratch };

struct Slice {
  BufferId buffer = BufferId::kIn;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

enum class ItemKind : uint8_t { kSend, kRecv, kLocal };
// What a receive or local item does with each frame x of its data:
// kCopy dst = x; kReduce dst = op(dst, x). Receives only, where `src` is a
// slice of this rank's own (as long as dst): kReduceAfter dst = op(src, x)
// and kReduceBefore dst = op(x, src), one pass where a copy of `src` into
// dst and a kReduce (or a copy of x and a reduce of `src`) would take two,
// with the same operand order and so the same bytes.
enum class Apply : uint8_t { kCopy, kReduce, kReduceAfter, kReduceBefore };
enum class Wait : uint8_t { kNone, kFrame, kWhole };

inline constexpr int32_t kNoItem = -1;

// One cache line: a 1024-rank ring holds eight thousand per rank.
struct Item {
  uint32_t peer = 0;  // group rank (send, recv)
  uint32_t lane = 0;  // cable index towards `peer`
  int32_t after = kNoItem;
  ItemKind kind = ItemKind::kLocal;
  Apply apply = Apply::kCopy;
  Wait wait = Wait::kNone;
  // send, local; recv with kReduceAfter or kReduceBefore: the other operand
  // (a slice of this rank's own, as long as dst).
  Slice src;
  Slice dst;  // recv, local
};
static_assert(sizeof(Item) <= 64);

struct Dep {
  int32_t item = kNoItem;
  Wait wait = Wait::kNone;
};
inline Dep frame_of(int32_t item) {
  return {item, item == kNoItem ? Wait::kNone : Wait::kFrame};
}
inline Dep all_of(int32_t item) {
  return {item, item == kNoItem ? Wait::kNone : Wait::kWhole};
}

// Items made one at a time, in plan order, as they are reached: the long
// regular tail of a plan part. A source makes only sends and receives, and
// each lane it sends on (receives on) is used for sending (receiving) by no
// other part of the plan, so the engine can make a lane's next item by
// asking this source alone.
class ItemSource {
 public:
  struct LaneUse {
    uint32_t peer = 0;
    uint32_t lane = 0;
    uint64_t sends = 0;
    uint64_t recvs = 0;
  };
  virtual ~ItemSource() = default;
  // Items made in all.
  virtual uint64_t size() const = 0;
  // The lanes the items use, in the order of their first use.
  virtual const std::vector<LaneUse>& lanes() const = 0;
  // The next item; `after` is an index in the whole plan.
  // REQUIRES: fewer than size() made.
  virtual Item next() = 0;
};

// A run of items made with the plan, then (if any) those `rest` makes.
struct PlanPart {
  std::vector<Item> items;
  std::unique_ptr<ItemSource> rest;
  uint64_t size() const {
    return items.size() + (rest != nullptr ? rest->size() : 0);
  }
};

// Items are numbered across the parts in order.
struct Plan {
  std::vector<PlanPart> parts;
  uint64_t scratch_bytes = 0;
  uint64_t size() const;
};

// `plan` with every source drained into its part's items: for a reader
// that must see the whole plan before it starts (the engine's check of
// which receives may land in registered output).
Plan whole_plan(Plan plan);
// Every item of `plan` in order, its sources drained (tests, reports).
std::vector<Item> all_items(Plan plan);

// Items as PlanBuilder makes them (`dep` sets after and wait).
Item send_item(uint32_t peer, uint32_t lane, Slice src, Dep dep = {});
Item recv_item(uint32_t peer, uint32_t lane, Slice dst, Apply apply,
               Dep dep = {});
// A receive that combines each frame with `other` (kReduceAfter or
// kReduceBefore; it becomes the item's src).
Item recv_with_item(uint32_t peer, uint32_t lane, Slice dst, Apply apply,
                    Slice other, Dep dep = {});

// Appends items and hands out scratch space.
class PlanBuilder {
 public:
  int32_t send(uint32_t peer, uint32_t lane, Slice src, Dep dep = {}) {
    return add(send_item(peer, lane, src, dep));
  }
  int32_t recv(uint32_t peer, uint32_t lane, Slice dst, Apply apply,
               Dep dep = {}) {
    return add(recv_item(peer, lane, dst, apply, dep));
  }
  int32_t recv_with(uint32_t peer, uint32_t lane, Slice dst, Apply apply,
                    Slice other, Dep dep = {}) {
    return add(recv_with_item(peer, lane, dst, apply, other, dep));
  }
  int32_t local(Slice src, Slice dst, Apply apply, Dep dep = {});
  // A fresh scratch region of `bytes`, 64-byte aligned.
  Slice scratch(uint64_t bytes);
  // Index the next item gets.
  int32_t next_index() const { return static_cast<int32_t>(size_); }
  // Ends the current part: later items start a new one.
  void end_part();
  // The items of `source` come next; with `lazy` they are made as the
  // engine reaches them, otherwise now. Returns the last one's index.
  int32_t append(std::unique_ptr<ItemSource> source, bool lazy);

  // Room for `items` items of the current part without reallocation.
  void reserve(uint64_t items) { part().items.reserve(items); }
  Plan take() { return std::move(plan_); }

 private:
  PlanPart& part();
  int32_t add(Item item);
  Plan plan_;
  uint64_t size_ = 0;
  bool part_open_ = false;
};

// "send to 2 lane 0 out[0, 4096) after #3 frame" for tests and reports.
std::string describe_item(const Item& item);

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ALGORITHMS_PLAN_H_
