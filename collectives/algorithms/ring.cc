// Ring algorithms: each rank talks only to its two neighbours. Ranks sit at
// positions 0..n-1 around the ring (reversed for the counter-clockwise
// direction); data moves from position p to p+1. Each step's send waits,
// frame by frame, for the receive that produced its data, so frames stream
// around the ring (pipelining) without any algorithm waiting itself.
#include <cstdint>
#include <vector>

#include "collectives/algorithms/algorithms.h"

namespace weft::internal {
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

// The ring's reduce-scatter. Chunks are named by position offset q (chunk q
// belongs to the rank q places ahead). At step s this rank sends chunk
// shift - s and reduces the arriving chunk shift - s - 1 into `acc`; `src(q)`
// is this rank's own contribution (read by the first send), `acc(q)` where
// chunk q accumulates. With `fused`, the arriving chunk is reduced with
// src(q) straight into acc(q) (acc = op(src, x), one pass); otherwise acc(q)
// already holds this rank's part (in place, or after item `init(q)`).
// The last receive (step n-2) completes chunk shift + 1; it is returned.
template <typename SrcFn, typename AccFn, typename InitFn>
int32_t reduce_scatter_steps(PlanBuilder& pb, const RingView& ring,
                             uint32_t lane, int64_t shift, SrcFn src, AccFn acc,
                             InitFn init, bool fused) {
  int32_t prev = kNoItem;
  for (int64_t s = 0; s + 1 < ring.n(); ++s) {
    const int64_t out_q = shift - s;
    pb.send(ring.right(), lane, s == 0 ? src(out_q) : acc(out_q),
            frame_of(prev));
    const int64_t q = out_q - 1;
    prev = fused ? pb.recv_with(ring.left(), lane, acc(q), Apply::kReduceAfter,
                                src(q))
                 : pb.recv(ring.left(), lane, acc(q), Apply::kReduce,
                           all_of(init(q)));
  }
  return prev;
}

// Ring all-gather of chunk q into `dst(q)`, starting from this rank's
// finished chunk `first_q` (ready after item `ready`).
template <typename DstFn>
void all_gather_steps(PlanBuilder& pb, const RingView& ring, uint32_t lane,
                      int64_t first_q, Slice first_src, int32_t ready,
                      DstFn dst) {
  int32_t prev = ready;
  for (int64_t t = 0; t + 1 < ring.n(); ++t) {
    pb.send(ring.right(), lane, t == 0 ? first_src : dst(first_q - t),
            frame_of(prev));
    prev = pb.recv(ring.left(), lane, dst(first_q - t - 1), Apply::kCopy);
  }
}

void all_reduce(PlanBuilder& pb, const StripeContext& c, const RingView& ring) {
  const PlanInput& in = c.in;
  auto chunk = [&](BufferId b, int64_t q) {
    return c.layout.chunk(b, in.bytes, ring.rank_at(q), ring.n());
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
  const int32_t done = reduce_scatter_steps(
      pb, ring, c.lane, 0, [&](int64_t q) { return chunk(BufferId::kIn, q); },
      [&](int64_t q) { return chunk(BufferId::kOut, q); },
      [&](int64_t) { return init; }, fused);
  all_gather_steps(pb, ring, c.lane, 1, chunk(BufferId::kOut, 1), done,
                   [&](int64_t q) { return chunk(BufferId::kOut, q); });
}

void reduce_scatter(PlanBuilder& pb, const StripeContext& c,
                    const RingView& ring) {
  const PlanInput& in = c.in;
  const uint32_t n = ring.n();
  auto block = [&](int64_t q) {
    return c.layout.block(BufferId::kIn, in.bytes, ring.rank_at(q));
  };
  // Chunk -d accumulates in scratch, except this rank's own (d = 0) which
  // accumulates in the output; chunk -1 is only ever sent from the input.
  // Out of place every arriving chunk is reduced with this rank's block
  // into its accumulator in one pass; in place the own chunk is already in
  // the output, so the other blocks are copied to scratch first.
  const bool fused = !in.in_place && n > 1;  // alone: a copy
  std::vector<Slice> acc(n);
  std::vector<int32_t> init(n, kNoItem);
  for (uint32_t d = 0; d < n; ++d) {
    if (d == 1) continue;
    const Slice own = block(-static_cast<int64_t>(d));
    acc[d] = d == 0 ? c.layout.whole(BufferId::kOut, in.bytes)
                    : pb.scratch(own.bytes);
    if (!fused && (d != 0 || !in.in_place)) {
      init[d] = pb.local(own, acc[d], Apply::kCopy);
    }
  }
  auto index = [n](int64_t q) {
    return static_cast<size_t>(((-q) % n + n) % n);
  };
  reduce_scatter_steps(
      pb, ring, c.lane, -1, block, [&](int64_t q) { return acc[index(q)]; },
      [&](int64_t q) { return init[index(q)]; }, fused);
}

void all_gather(PlanBuilder& pb, const StripeContext& c, const RingView& ring) {
  const PlanInput& in = c.in;
  auto block = [&](int64_t q) {
    return c.layout.block(BufferId::kOut, in.bytes, ring.rank_at(q));
  };
  const Slice own = c.layout.whole(BufferId::kIn, in.bytes);
  if (!in.in_place) pb.local(own, block(0), Apply::kCopy);
  all_gather_steps(pb, ring, c.lane, 0, own, kNoItem, block);
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

}  // namespace weft::internal
