#include "collectives/algorithms/algorithms.h"

#include <algorithm>
#include <bit>

#include "collectives/engine/frame_header.h"
#include "collectives/group_options.h"

namespace weft::collectives::internal {

Plan build_plan(const PlanInput& in, Algorithm algorithm, Striping striping) {
  PlanBuilder pb;
  const uint32_t stripes = striping.stripes();
  // Enough for every mesh algorithm (a hint only; the ring's steps are
  // made as they are reached).
  constexpr uint64_t kItemsPerRank = 4;
  for (uint32_t s = 0; s < stripes; ++s) {
    pb.end_part();  // a part per stripe
    if (algorithm != Algorithm::kRing) {
      pb.reserve(kItemsPerRank * in.size + kItemsPerRank);
    }
    const StripeContext c{in, StripeLayout(in.elem, s, stripes),
                          s / striping.directions,
                          s % striping.directions == 0 ? 1 : -1};
    switch (algorithm) {
      case Algorithm::kMeshScatter:
        mesh_scatter_stripe(pb, c);
        break;
      case Algorithm::kRing:
        ring_stripe(pb, c);
        break;
      case Algorithm::kAuto:
      case Algorithm::kMeshExchange:
        mesh_exchange_stripe(pb, c);
        break;
    }
  }
  return pb.take();
}

uint64_t nominal_item_bytes(const PlanInput& in, Algorithm algorithm,
                            Striping striping) {
  const uint64_t per_stripe =
      (in.bytes + striping.stripes() - 1) / striping.stripes();
  const uint64_t per_rank = (per_stripe + in.size - 1) / in.size;
  const bool chunked =
      algorithm == Algorithm::kRing || algorithm == Algorithm::kMeshScatter;
  switch (in.kind) {
    case OpKind::kAllReduce:
      return chunked ? per_rank : per_stripe;
    case OpKind::kBroadcast:
    case OpKind::kReduce:
      return algorithm == Algorithm::kMeshScatter ? per_rank : per_stripe;
    case OpKind::kAllToAll:
      return per_rank;
    case OpKind::kAllGather:
    case OpKind::kReduceScatter:
    case OpKind::kSendRecv:
    case OpKind::kBarrier:
      return per_stripe;
  }
  return per_stripe;
}

uint32_t chunk_payload_bytes(uint64_t nominal_bytes, Algorithm algorithm,
                             uint32_t max_frame_bytes) {
  // A frame on the wire of at least a quarter of the item (an exchange's
  // small item: all of it), header included, rounded up: the payload is
  // that power of two.
  const uint64_t frames =
      algorithm == Algorithm::kMeshExchange && nominal_bytes <= kWholeItemBytes
          ? 1
          : kTargetFramesPerItem;
  const uint64_t want = (nominal_bytes + frames - 1) / frames + kHeaderBytes;
  return static_cast<uint32_t>(std::clamp<uint64_t>(
      std::bit_ceil(want), GroupOptions::kMinFrameBytes, max_frame_bytes));
}

}  // namespace weft::collectives::internal
