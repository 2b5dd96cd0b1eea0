// Ring algorithms: each rank talks only to its two neighbours. Ranks sit at
// positions 0..n-1 around the ring (reversed for the counter-clockwise
// direction); data moves from position p to p+1. Each step's send waits,
// frame by frame, for the receive that produced its data, so frames stream
// around the ring (pipelining) without any algorithm waiting itself.
//
// The 2(n-1) steps of the reduce-scatter and all-gather are not listed
// with the plan: RingSteps makes them as the engine reaches them, so a
// rank's plan costs the same at 4096 ranks as at 4.
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "collectives/algorithms/algorithms.h"
#include "fabric/assert.h"

namespace weft::collectives::internal {
namespace {

using L = StripeLayout;

class RingView {
 public:
  RingView(uint32_t n, int direction, uint32_t rank)
      : n_(n), direction_(direction), pos_(to_pos(rank)) {}
  uint32_t n() const { return n_; }
  uint32_t pos() const { return pos_; }
  // The rank at position pos() + delta (any integer delta).
  uint32_t rank_at(int64_t delta) const {
    const uint32_t p = static_cast<uint32_t>(
        ((static_cast<int64_t>(pos_) + delta) % n_ + n_) % n_);
    return direction_ > 0 ? p : (n_ - p) % n_;
  }
  uint32_t right() const { return rank_at(1); }
  uint32_t left() const { return rank_at(-1); }
  // Steps from `rank` to this rank along the ring.
  uint32_t distance_from(uint32_t rank) const {
    return (pos_ + n_ - to_pos(rank)) % n_;
  }

 private:
  uint32_t to_pos(uint32_t rank) const {
    return direction_ > 0 ? rank : (n_ - rank) % n_;
  }
  uint32_t n_;
  int direction_;
  uint32_t pos_;
};

// The ring's steps, `reduce_steps` of reduce-scatter and then
// `gather_steps` of all-gather, each a send to the right and a receive from
// the left. Chunks are named by position offset q (chunk q belongs to the
// rank q places ahead).
//
// Reduce-scatter: at step s this rank sends chunk shift - s and reduces the
// arriving chunk shift - s - 1 into `acc`; `src(q)` is this rank's own
// contribution (read by the first send), `acc(q)` where chunk q
// accumulates. With `fused`, the arriving chunk is reduced with src(q)
// straight into acc(q) (acc = op(src, x), one pass); otherwise acc(q)
// already holds this rank's part (in place, or after item `init(q)`). The
// last receive completes chunk shift + 1.
//
// All-gather of chunk q into `dst(q)`, starting from this rank's finished
// chunk `first_q` (`first_src`, ready after the reduce-scatter's last
// receive, if any).
//
// With `skip_empty`, a step's send or receive of an empty chunk (an
// all-reduce of fewer elements than ranks, but some) is left out on every
// rank alike, so no frame carries nothing; the chunks that hold data
// still pass every rank. Each send waits for the receive of the same
// chunk one step before, so a chunk's sends and receives are either all
// made or all left out and the waits between them still hold.
struct RingPhases {
  uint32_t reduce_steps = 0;
  int64_t shift = 0;
  bool fused = false;
  std::function<Slice(int64_t)> src;
  std::function<Slice(int64_t)> acc;
  std::function<int32_t(int64_t)> init;
  uint32_t gather_steps = 0;
  int64_t first_q = 0;
  Slice first_src;
  std::function<Slice(int64_t)> dst;
  bool skip_empty = false;
};

// Makes the steps one item at a time, as the engine reaches them. Step s
// is made of positions 2s (the send) and 2s + 1 (the receive).
class RingSteps final : public ItemSource {
 public:
  RingSteps(RingPhases phases, const RingView& ring, uint32_t lane,
            int32_t base)
      : p_(std::move(phases)),
        right_(ring.right()),
        left_(ring.left()),
        lane_(lane),
        base_(base) {
    const uint64_t positions =
        2 * (uint64_t{p_.reduce_steps} + p_.gather_steps);
    uint64_t sends = positions / 2;
    uint64_t recvs = positions / 2;
    bool send_first = true;
    if (p_.skip_empty) {
      // Which positions move nothing, found once: next() would otherwise
      // ask each slice again (most of a 4096-rank ring's 4 KiB are empty).
      skip_.resize(positions);
      sends = recvs = 0;
      for (uint64_t k = 0; k < positions; ++k) {
        skip_[k] = moved(k).bytes == 0;
        if (skip_[k]) continue;
        if (sends + recvs == 0) send_first = k % 2 == 0;
        ++(k % 2 == 0 ? sends : recvs);
      }
    }
    size_ = sends + recvs;
    if (size_ == 0) return;
    if (right_ == left_) {
      lanes_.push_back({right_, lane_, sends, recvs});
      return;
    }
    const LaneUse out{right_, lane_, sends, 0};
    const LaneUse in{left_, lane_, 0, recvs};
    for (const LaneUse& use : send_first ? std::vector{out, in}
                                         : std::vector{in, out}) {
      if (use.sends + use.recvs > 0) lanes_.push_back(use);
    }
  }
  uint64_t size() const override { return size_; }
  const std::vector<LaneUse>& lanes() const override { return lanes_; }
  Item next() override {
    WEFT_ASSERT(made_ < size_, "a ring step asked for past the last one");
    uint64_t k = position_++;
    while (skipped(k)) k = position_++;
    const int32_t index = base_ + static_cast<int32_t>(made_++);
    const bool sending = k % 2 == 0;
    const int64_t step = static_cast<int64_t>(k / 2);
    const Slice slice = moved(k);
    if (step < p_.reduce_steps) {
      if (sending) return send_item(right_, lane_, slice, frame_of(prev_));
      prev_ = index;
      const int64_t q = p_.shift - step - 1;
      return p_.fused ? recv_with_item(left_, lane_, slice,
                                       Apply::kReduceAfter, p_.src(q))
                      : recv_item(left_, lane_, slice, Apply::kReduce,
                                  all_of(p_.init(q)));
    }
    if (sending) return send_item(right_, lane_, slice, frame_of(prev_));
    prev_ = index;
    return recv_item(left_, lane_, slice, Apply::kCopy);
  }

 private:
  // What position k sends, or where it receives.
  Slice moved(uint64_t k) const {
    const bool sending = k % 2 == 0;
    const int64_t step = static_cast<int64_t>(k / 2);
    if (step < p_.reduce_steps) {
      const int64_t out_q = p_.shift - step;
      if (!sending) return p_.acc(out_q - 1);
      return step == 0 ? p_.src(out_q) : p_.acc(out_q);
    }
    const int64_t t = step - p_.reduce_steps;
    if (!sending) return p_.dst(p_.first_q - t - 1);
    return t == 0 ? p_.first_src : p_.dst(p_.first_q - t);
  }
  bool skipped(uint64_t k) const { return !skip_.empty() && skip_[k]; }

  RingPhases p_;
  uint32_t right_;
  uint32_t left_;
  uint32_t lane_;
  int32_t base_;
  std::vector<LaneUse> lanes_;
  uint64_t size_ = 0;
  uint64_t position_ = 0;  // the next position to look at
  uint64_t made_ = 0;      // items made
  std::vector<bool> skip_;  // by position, with skip_empty: moves nothing
  int32_t prev_ = kNoItem;  // the last receive made
};

// Appends the steps: made as they are reached from 3 ranks up (with two,
// both directions of a stripe pair would share a lane), otherwise now.
void append_steps(PlanBuilder& pb, const StripeContext& c, const RingView& ring,
                  RingPhases phases) {
  pb.append(std::make_unique<RingSteps>(std::move(phases), ring, c.lane,
                                        pb.next_index()),
            /*lazy=*/ring.n() >= 3);
}

void all_reduce(PlanBuilder& pb, const StripeContext& c, const RingView& ring) {
  const PlanInput& in = c.in;
  auto chunk = [layout = c.layout, bytes = in.bytes, ring](BufferId b,
                                                           int64_t q) {
    return layout.chunk(b, bytes, ring.rank_at(q), ring.n());
  };
  // Out of place, every chunk but this rank's own (which the all-gather
  // fills) is reduced from the input into the output as it arrives: no
  // copy of the input first. Alone, the input is copied.
  const bool fused = !in.in_place && ring.n() > 1;
  const int32_t init =
      in.in_place || fused
          ? kNoItem
          : pb.local(c.layout.whole(BufferId::kIn, in.bytes),
                     c.layout.whole(BufferId::kOut, in.bytes), Apply::kCopy);
  auto out = [chunk](int64_t q) { return chunk(BufferId::kOut, q); };
  append_steps(
      pb, c, ring,
      RingPhases{.reduce_steps = ring.n() - 1,
                 .shift = 0,
                 .fused = fused,
                 .src = [chunk](int64_t q) { return chunk(BufferId::kIn, q); },
                 .acc = out,
                 .init = [init](int64_t) { return init; },
                 .gather_steps = ring.n() - 1,
                 .first_q = 1,
                 .first_src = out(1),
                 .dst = out,
                 // The last chunk is the smallest (layout.h). An
                 // all-reduce of nothing keeps its steps: an operation
                 // with no frame at all would leave a rank's next poll
                 // nothing to find (the simulated verbs provider then
                 // waits at its server for what never comes).
                 .skip_empty = in.bytes > 0 &&
                               c.layout.chunk(BufferId::kOut, in.bytes,
                                              ring.n() - 1, ring.n())
                                       .bytes == 0});
}

void reduce_scatter(PlanBuilder& pb, const StripeContext& c,
                    const RingView& ring) {
  const PlanInput& in = c.in;
  const uint32_t n = ring.n();
  auto block = [layout = c.layout, bytes = in.bytes, ring](int64_t q) {
    return layout.block(BufferId::kIn, bytes, ring.rank_at(q));
  };
  // Chunk -d accumulates in scratch, except this rank's own (d = 0) which
  // accumulates in the output; chunk -1 is only ever sent from the input.
  // Out of place every arriving chunk is reduced with this rank's block
  // into its accumulator in one pass; in place the own chunk is already in
  // the output, so the other blocks are copied to scratch first.
  const bool fused = !in.in_place && n > 1;  // alone: a copy
  auto acc = std::make_shared<std::vector<Slice>>(n);
  auto init = std::make_shared<std::vector<int32_t>>(n, kNoItem);
  for (uint32_t d = 0; d < n; ++d) {
    if (d == 1) continue;
    const Slice own = block(-static_cast<int64_t>(d));
    (*acc)[d] = d == 0 ? c.layout.whole(BufferId::kOut, in.bytes)
                       : pb.scratch(own.bytes);
    if (!fused && (d != 0 || !in.in_place)) {
      (*init)[d] = pb.local(own, (*acc)[d], Apply::kCopy);
    }
  }
  auto index = [n](int64_t q) {
    return static_cast<size_t>(((-q) % n + n) % n);
  };
  append_steps(
      pb, c, ring,
      RingPhases{
          .reduce_steps = n - 1,
          .shift = -1,
          .fused = fused,
          .src = block,
          .acc = [acc, index](int64_t q) { return (*acc)[index(q)]; },
          .init = [init, index](int64_t q) { return (*init)[index(q)]; }});
}

void all_gather(PlanBuilder& pb, const StripeContext& c, const RingView& ring) {
  const PlanInput& in = c.in;
  const Slice own = c.layout.whole(BufferId::kIn, in.bytes);
  auto block = [layout = c.layout, bytes = in.bytes, ring](int64_t q) {
    return layout.block(BufferId::kOut, bytes, ring.rank_at(q));
  };
  if (!in.in_place) pb.local(own, block(0), Apply::kCopy);
  append_steps(pb, c, ring,
               RingPhases{.gather_steps = ring.n() - 1,
                          .first_q = 0,
                          .first_src = own,
                          .dst = block});
}

void broadcast(PlanBuilder& pb, const StripeContext& c, const RingView& ring) {
  const PlanInput& in = c.in;
  const uint32_t d = ring.distance_from(in.root);
  const Slice out = c.layout.whole(BufferId::kOut, in.bytes);
  if (d == 0) {
    const Slice src = c.layout.whole(BufferId::kIn, in.bytes);
    if (!in.in_place) pb.local(src, out, Apply::kCopy);
    if (ring.n() > 1) pb.send(ring.right(), c.lane, src);
    return;
  }
  const int32_t got = pb.recv(ring.left(), c.lane, out, Apply::kCopy);
  if (d + 1 < ring.n()) pb.send(ring.right(), c.lane, out, frame_of(got));
}

// The partial sum starts at the root's right neighbour and travels round
// to the root, each rank reducing the arriving partial into its own input.
void reduce(PlanBuilder& pb, const StripeContext& c, const RingView& ring) {
  const PlanInput& in = c.in;
  const uint32_t d = ring.distance_from(in.root);
  const Slice src = c.layout.whole(BufferId::kIn, in.bytes);
  if (d == 0) {
    const Slice out = c.layout.whole(BufferId::kOut, in.bytes);
    const int32_t init =
        in.in_place ? kNoItem : pb.local(src, out, Apply::kCopy);
    if (ring.n() > 1)
      pb.recv(ring.left(), c.lane, out, Apply::kReduce, all_of(init));
    return;
  }
  if (d == 1) {
    pb.send(ring.right(), c.lane, src);
    return;
  }
  const Slice acc = pb.scratch(src.bytes);
  const int32_t init = pb.local(src, acc, Apply::kCopy);
  const int32_t got =
      pb.recv(ring.left(), c.lane, acc, Apply::kReduce, all_of(init));
  pb.send(ring.right(), c.lane, acc, frame_of(got));
}

// Store and forward: at step s a rank receives, from the rank s positions
// behind, the blocks that rank holds for positions p .. p+n-s-1; it keeps
// the first and forwards the rest at step s+1.
void all_to_all(PlanBuilder& pb, const StripeContext& c, const RingView& ring) {
  const PlanInput& in = c.in;
  const uint32_t n = ring.n();
  const uint64_t block = in.bytes / n;
  std::vector<Slice> src(n);
  std::vector<int32_t> copied(n, kNoItem);
  for (uint32_t j = 0; j < n; ++j) {
    src[j] = c.layout.block(BufferId::kIn, block, j);
    if (in.in_place) {
      const Slice s = pb.scratch(src[j].bytes);
      copied[j] = pb.local(src[j], s, Apply::kCopy);
      src[j] = s;
    }
  }
  pb.local(src[in.rank], c.layout.block(BufferId::kOut, block, in.rank),
           Apply::kCopy, frame_of(copied[in.rank]));
  // held[i]: where the block for position p+i (received last step) is.
  std::vector<int32_t> held_item(n, kNoItem);
  std::vector<Slice> held(n);
  for (uint32_t i = 1; i < n; ++i) {
    held[i] = src[ring.rank_at(i)];
    held_item[i] = copied[ring.rank_at(i)];
  }
  for (uint32_t s = 1; s < n; ++s) {
    for (uint32_t i = 1; i + s <= n; ++i) {
      pb.send(ring.right(), c.lane, held[i], frame_of(held_item[i]));
    }
    const uint32_t origin = ring.rank_at(-static_cast<int64_t>(s));
    pb.recv(ring.left(), c.lane, c.layout.block(BufferId::kOut, block, origin),
            Apply::kCopy, frame_of(copied[origin]));
    for (uint32_t i = 1; i + s < n; ++i) {
      held[i] = pb.scratch(held[i].bytes);
      held_item[i] = pb.recv(ring.left(), c.lane, held[i], Apply::kCopy);
    }
  }
}

}  // namespace

void ring_stripe(PlanBuilder& pb, const StripeContext& c) {
  const RingView ring(c.in.size, c.direction, c.in.rank);
  switch (c.in.kind) {
    case OpKind::kAllReduce:
      return all_reduce(pb, c, ring);
    case OpKind::kReduceScatter:
      return reduce_scatter(pb, c, ring);
    case OpKind::kAllGather:
    case OpKind::kBarrier:
      return all_gather(pb, c, ring);
    case OpKind::kBroadcast:
      return broadcast(pb, c, ring);
    case OpKind::kReduce:
      return reduce(pb, c, ring);
    case OpKind::kAllToAll:
      return all_to_all(pb, c, ring);
    case OpKind::kSendRecv:
      return send_recv_stripe(pb, c);
  }
}

}  // namespace weft::collectives::internal
