// Mesh algorithms: every rank talks to every peer directly. Reductions run
// in rank order (acc = x0, acc = op(acc, x1), ...), so every rank and every
// run gets the same bytes, whatever order frames arrive in.
#include <cstdint>
#include <vector>

#include "collectives/algorithms/algorithms.h"

namespace weft::collectives::internal {
namespace {

using L = StripeLayout;

// Accumulates chunk `acc` in rank order: rank k's part comes from peer k
// (or from `own` for this rank). `first` orders the first step after an
// earlier item (a copy into scratch). Returns the last item.
int32_t rank_order_chain(PlanBuilder& pb, const StripeContext& c, Slice own,
                         Slice acc, int32_t first) {
  int32_t prev = first;
  uint32_t k = 0;
  // Ranks 0 and 1 hold one of the first two parts themselves: acc = op(x0,
  // x1) in one pass as the other part arrives, instead of a copy and then a
  // reduce.
  if (c.in.size > 1 && c.in.rank < 2) {
    const uint32_t peer = 1 - c.in.rank;
    const Apply apply =
        c.in.rank == 0 ? Apply::kReduceAfter : Apply::kReduceBefore;
    prev = pb.recv_with(peer, c.lane, acc, apply, own, frame_of(prev));
    k = 2;
  }
  for (; k < c.in.size; ++k) {
    const Apply apply = k == 0 ? Apply::kCopy : Apply::kReduce;
    prev = k == c.in.rank ? pb.local(own, acc, apply, frame_of(prev))
                          : pb.recv(k, c.lane, acc, apply, frame_of(prev));
  }
  return prev;
}

// Keeps this rank's own contribution readable while `acc` (the same
// memory, in place) is overwritten by the rank-order chain.
int32_t preserve(PlanBuilder& pb, Slice* own) {
  const Slice copy = pb.scratch(own->bytes);
  const int32_t item = pb.local(*own, copy, Apply::kCopy);
  *own = copy;
  return item;
}

void all_reduce_exchange(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  Slice own = c.layout.whole(BufferId::kIn, in.bytes);
  const Slice out = c.layout.whole(BufferId::kOut, in.bytes);
  const int32_t copied = in.in_place ? preserve(pb, &own) : kNoItem;
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) pb.send(k, c.lane, own, frame_of(copied));
  }
  rank_order_chain(pb, c, own, out, copied);
}

void all_gather_exchange(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  const Slice own = c.layout.whole(BufferId::kIn, in.bytes);
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) pb.send(k, c.lane, own);
  }
  if (!in.in_place) {
    pb.local(own, c.layout.block(BufferId::kOut, in.bytes, in.rank),
             Apply::kCopy);
  }
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) {
      pb.recv(k, c.lane, c.layout.block(BufferId::kOut, in.bytes, k),
              Apply::kCopy);
    }
  }
}

void broadcast_exchange(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  const Slice out = c.layout.whole(BufferId::kOut, in.bytes);
  if (in.rank != in.root) {
    pb.recv(in.root, c.lane, out, Apply::kCopy);
    return;
  }
  const Slice src = c.layout.whole(BufferId::kIn, in.bytes);
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) pb.send(k, c.lane, src);
  }
  if (!in.in_place) pb.local(src, out, Apply::kCopy);
}

void reduce_exchange(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  Slice own = c.layout.whole(BufferId::kIn, in.bytes);
  if (in.rank != in.root) {
    pb.send(in.root, c.lane, own);
    return;
  }
  const int32_t copied = in.in_place ? preserve(pb, &own) : kNoItem;
  rank_order_chain(pb, c, own, c.layout.whole(BufferId::kOut, in.bytes),
                   copied);
}

void all_to_all_direct(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  const uint64_t block = in.bytes / in.size;
  std::vector<Slice> src(in.size);
  std::vector<int32_t> copied(in.size, kNoItem);
  for (uint32_t j = 0; j < in.size; ++j) {
    src[j] = c.layout.block(BufferId::kIn, block, j);
    if (in.in_place) copied[j] = preserve(pb, &src[j]);
  }
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) pb.send(k, c.lane, src[k], frame_of(copied[k]));
  }
  pb.local(src[in.rank], c.layout.block(BufferId::kOut, block, in.rank),
           Apply::kCopy, frame_of(copied[in.rank]));
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) {
      pb.recv(k, c.lane, c.layout.block(BufferId::kOut, block, k), Apply::kCopy,
              frame_of(copied[k]));
    }
  }
}

// Reduce-scatter with each chunk owner reducing in rank order. `chunk(j)`
// is rank j's chunk in the input; the owner accumulates into `acc`.
// Returns the last item of the chain.
template <typename ChunkFn>
int32_t scatter_reduce(PlanBuilder& pb, const StripeContext& c, ChunkFn chunk,
                       Slice acc, bool preserve_own) {
  Slice own = chunk(c.in.rank);
  const int32_t copied = preserve_own ? preserve(pb, &own) : kNoItem;
  for (uint32_t k = 0; k < c.in.size; ++k) {
    if (k != c.in.rank) pb.send(k, c.lane, chunk(k));
  }
  return rank_order_chain(pb, c, own, acc, copied);
}

void all_reduce_scatter(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  auto chunk = [&](uint32_t j) {
    return c.layout.chunk(BufferId::kIn, in.bytes, j, in.size);
  };
  const Slice mine =
      L::at(chunk(in.rank), BufferId::kOut, chunk(in.rank).offset);
  const int32_t last = scatter_reduce(pb, c, chunk, mine, in.in_place);
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) pb.send(k, c.lane, mine, frame_of(last));
  }
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) {
      pb.recv(k, c.lane, L::at(chunk(k), BufferId::kOut, chunk(k).offset),
              Apply::kCopy);
    }
  }
}

void reduce_scatter_mesh(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  auto chunk = [&](uint32_t j) {
    return c.layout.block(BufferId::kIn, in.bytes, j);
  };
  scatter_reduce(pb, c, chunk, c.layout.whole(BufferId::kOut, in.bytes),
                 in.in_place);
}

// Large reduce: reduce-scatter, then every owner sends its chunk to root.
void reduce_scatter_gather(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  auto chunk = [&](uint32_t j) {
    return c.layout.chunk(BufferId::kIn, in.bytes, j, in.size);
  };
  const bool root = in.rank == in.root;
  const Slice mine = chunk(in.rank);
  const Slice acc =
      root ? L::at(mine, BufferId::kOut, mine.offset) : pb.scratch(mine.bytes);
  const int32_t last = scatter_reduce(pb, c, chunk, acc, root && in.in_place);
  if (!root) {
    pb.send(in.root, c.lane, acc, frame_of(last));
    return;
  }
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank) {
      pb.recv(k, c.lane, L::at(chunk(k), BufferId::kOut, chunk(k).offset),
              Apply::kCopy);
    }
  }
}

// Large broadcast: root scatters one chunk to each rank, then every rank
// sends its chunk to every rank that lacks it.
void broadcast_scatter(PlanBuilder& pb, const StripeContext& c) {
  const PlanInput& in = c.in;
  auto chunk = [&](BufferId b, uint32_t j) {
    return c.layout.chunk(b, in.bytes, j, in.size);
  };
  if (in.rank == in.root) {
    for (uint32_t k = 0; k < in.size; ++k) {
      if (k != in.rank) pb.send(k, c.lane, chunk(BufferId::kIn, k));
    }
    for (uint32_t k = 0; k < in.size; ++k) {
      if (k != in.rank) pb.send(k, c.lane, chunk(BufferId::kIn, in.rank));
    }
    if (!in.in_place) {
      pb.local(c.layout.whole(BufferId::kIn, in.bytes),
               c.layout.whole(BufferId::kOut, in.bytes), Apply::kCopy);
    }
    return;
  }
  const Slice mine = chunk(BufferId::kOut, in.rank);
  const int32_t got = pb.recv(in.root, c.lane, mine, Apply::kCopy);
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank && k != in.root) pb.send(k, c.lane, mine, frame_of(got));
  }
  for (uint32_t k = 0; k < in.size; ++k) {
    if (k != in.rank)
      pb.recv(k, c.lane, chunk(BufferId::kOut, k), Apply::kCopy);
  }
}

}  // namespace

void mesh_exchange_stripe(PlanBuilder& pb, const StripeContext& c) {
  switch (c.in.kind) {
    case OpKind::kAllReduce:
      return all_reduce_exchange(pb, c);
    case OpKind::kAllGather:
    case OpKind::kBarrier:
      return all_gather_exchange(pb, c);
    case OpKind::kReduceScatter:
      return reduce_scatter_mesh(pb, c);
    case OpKind::kBroadcast:
      return broadcast_exchange(pb, c);
    case OpKind::kReduce:
      return reduce_exchange(pb, c);
    case OpKind::kAllToAll:
      return all_to_all_direct(pb, c);
    case OpKind::kSendRecv:
      return send_recv_stripe(pb, c);
  }
}

void mesh_scatter_stripe(PlanBuilder& pb, const StripeContext& c) {
  switch (c.in.kind) {
    case OpKind::kAllReduce:
      return all_reduce_scatter(pb, c);
    case OpKind::kBroadcast:
      return broadcast_scatter(pb, c);
    case OpKind::kReduce:
      return reduce_scatter_gather(pb, c);
    default:
      return mesh_exchange_stripe(pb, c);
  }
}

void send_recv_stripe(PlanBuilder& pb, const StripeContext& c) {
  if (c.in.sending) {
    pb.send(c.in.root, c.lane, c.layout.whole(BufferId::kIn, c.in.bytes));
  } else {
    pb.recv(c.in.root, c.lane, c.layout.whole(BufferId::kOut, c.in.bytes),
            Apply::kCopy);
  }
}

}  // namespace weft::collectives::internal
