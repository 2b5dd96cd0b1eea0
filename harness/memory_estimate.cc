#include "harness/memory_estimate.h"

#include <unistd.h>

#include <algorithm>

#include "collectives/dtype.h"
#include "collectives/group_builder.h"
#include "fabric/topology.h"
#include "sim/trace.h"

namespace weft::harness {
namespace {

uint64_t page_bytes() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

uint64_t round_up(uint64_t bytes, uint64_t unit) {
  return (bytes + unit - 1) / unit * unit;
}

// Every rank's RankCall buffers, as rank_call.cc lays them out, and the
// Reference's element-wise reduction (one input's size) for reductions.
uint64_t buffer_bytes(const CollectiveSpec& spec, const CollectiveShape& shape,
                      uint32_t ranks) {
  uint64_t total = reduces(spec.kind) ? shape.in_bytes : 0;
  for (uint32_t r = 0; r < ranks; ++r) {
    if (spec.in_place) {
      total += shape.size_bytes;
      continue;
    }
    const bool reads_input =
        spec.kind != CollectiveKind::kBroadcast || r == spec.root;
    total += (reads_input ? shape.in_bytes : 0) + out_bytes_of(spec, shape, r);
  }
  return total;
}

// Bytes a rank sends in the whole run, on average over the ranks (the
// estimate spreads them over all endpoints). The exchange: an all-reduce
// or all-gather sends its input to every peer; broadcast and reduce move
// the buffer between the root and each peer once; reduce-scatter and
// all-to-all send each peer its block. The mesh scatter and the ring: an
// all-reduce moves each byte about twice (reduce-scatter, then
// all-gather), the others once, except the ring all-to-all, whose blocks
// travel (n - 1) / 2 hops on average. Send/recv sends the buffer once.
uint64_t bytes_sent_per_rank(const CollectiveSpec& spec,
                             const CollectiveShape& shape, Algorithm algorithm,
                             uint32_t ranks) {
  const uint64_t n = ranks;
  switch (spec.kind) {
    case CollectiveKind::kBarrier:
      return 0;
    case CollectiveKind::kSendRecv:
      return shape.size_bytes;
    case CollectiveKind::kAllReduce:
      return algorithm == Algorithm::kMeshExchange ? shape.in_bytes * (n - 1)
                                                   : 2 * shape.size_bytes;
    case CollectiveKind::kAllGather:
      return shape.in_bytes * (n - 1);
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kReduceScatter:
      return shape.size_bytes;
    case CollectiveKind::kAllToAll:
      return algorithm == Algorithm::kRing ? shape.block_bytes * n * (n - 1) / 2
                                           : shape.size_bytes;
  }
  return 2 * shape.size_bytes;
}

// Scratch bytes every rank's plan asks for, summed over the ranks, as the
// algorithms (collectives/algorithms/mesh.cc, ring.cc) lay it out; each
// request is rounded up to 64 bytes, and each stripe asks for its share.
// The ring: a reduce-scatter accumulates n - 2 chunks (all but its own
// and the one it only sends) in scratch; a reduce, on each rank two or
// more hops from the root, the buffer; an all-to-all holds the
// (n - 1)(n - 2) / 2 blocks it forwards (and in place copies its input
// first). The mesh: in place, the exchange's all-reduce and all-to-all
// and the root of its reduce copy the input, its reduce-scatter the
// rank's own block; the scatter's all-reduce copies the rank's chunk in
// place, and its reduce accumulates a chunk in scratch off the root (and
// copies it on the root in place).
uint64_t scratch_bytes_all_ranks(const CollectiveSpec& spec,
                                 const CollectiveShape& shape,
                                 Algorithm algorithm, uint32_t ranks,
                                 uint64_t stripes) {
  constexpr uint64_t kAlign = 64;
  const uint64_t n = ranks;
  const uint64_t chunk = (shape.size_bytes + n - 1) / n;
  // Per rank: bytes and requests (each up to kAlign - 1 bytes of rounding,
  // once per stripe).
  uint64_t bytes = 0;
  uint64_t requests = 0;
  uint64_t ranks_asking = n;
  const bool in_place = spec.in_place;
  if (algorithm == Algorithm::kRing) {
    switch (spec.kind) {
      case CollectiveKind::kReduceScatter:
        if (n >= 3) {
          bytes = (n - 2) * shape.block_bytes;
          requests = n - 2;
        }
        break;
      case CollectiveKind::kReduce:
        ranks_asking = n >= 3 ? n - 2 : 0;
        bytes = shape.size_bytes;
        requests = 1;
        break;
      case CollectiveKind::kAllToAll: {
        const uint64_t held = n >= 2 ? (n - 1) * (n - 2) / 2 : 0;
        bytes = held * shape.block_bytes + (in_place ? shape.size_bytes : 0);
        requests = held + (in_place ? n : 0);
        break;
      }
      default:
        break;
    }
  } else if (in_place || (algorithm == Algorithm::kMeshScatter &&
                          spec.kind == CollectiveKind::kReduce)) {
    const bool scatter = algorithm == Algorithm::kMeshScatter;
    switch (spec.kind) {
      case CollectiveKind::kAllReduce:
        bytes = scatter ? chunk : shape.size_bytes;
        requests = 1;
        break;
      case CollectiveKind::kReduce:
        // The scatter: every rank but an out-of-place root; the exchange:
        // the root.
        ranks_asking = scatter ? (in_place ? n : n - 1) : 1;
        bytes = scatter ? chunk : shape.size_bytes;
        requests = 1;
        break;
      case CollectiveKind::kAllToAll:
        bytes = shape.size_bytes;
        requests = n;
        break;
      case CollectiveKind::kReduceScatter:
        bytes = shape.block_bytes;
        requests = 1;
        break;
      default:
        break;
    }
  }
  // A stripe's share of a buffer is rounded up to whole elements.
  const uint64_t elem = dtype_size(spec.dtype);
  const uint64_t rounding = requests * stripes * (kAlign - 1 + elem);
  return ranks_asking * (bytes + rounding);
}

// Frames one endpoint sends, at least: one per item it sends (an item is
// never less than a frame) and its bytes in the largest frames.
// The ring sends two items per step of each chunk that holds data, one
// in each phase; the mesh scatter two per peer, the exchange one.
uint64_t frames_per_endpoint(const CollectiveSpec& spec,
                             const CollectiveShape& shape, Algorithm algorithm,
                             uint32_t ranks, uint64_t endpoints,
                             uint64_t bytes_per_endpoint,
                             uint64_t max_payload_bytes) {
  uint64_t items = 1;
  if (spec.kind != CollectiveKind::kBarrier &&
      spec.kind != CollectiveKind::kSendRecv) {
    if (algorithm == Algorithm::kRing) {
      const uint64_t elements = shape.size_bytes / dtype_size(spec.dtype);
      const uint64_t per_stripe =
          std::max<uint64_t>(1, elements * ranks / endpoints);
      items = 2 * std::min<uint64_t>(ranks - 1, per_stripe);
    } else if (algorithm == Algorithm::kMeshScatter) {
      items = 2;
    }
  }
  return std::max(items,
                  (bytes_per_endpoint + max_payload_bytes - 1) /
                      max_payload_bytes);
}

// The payload of the frames the operation picks (frame_payload_bytes), its
// item taken from the whole buffer (at least the operation's own, so
// frames are not underestimated).
uint64_t op_frame_bytes(const CollectiveSpec& spec,
                        const CollectiveShape& shape, Algorithm algorithm,
                        uint32_t ranks, uint32_t cables,
                        const GroupOptions& group) {
  const bool ring = algorithm == Algorithm::kRing;
  const uint64_t stripes =
      uint64_t{cables} * (ring && ranks > 2 ? group.ring_directions : 1);
  const uint64_t per_stripe = (shape.size_bytes + stripes - 1) / stripes;
  const uint64_t per_rank = (per_stripe + ranks - 1) / ranks;
  const bool chunked = ring || algorithm == Algorithm::kMeshScatter;
  uint64_t item = per_stripe;
  if ((spec.kind == CollectiveKind::kAllReduce && chunked) ||
      spec.kind == CollectiveKind::kAllToAll ||
      ((spec.kind == CollectiveKind::kBroadcast ||
        spec.kind == CollectiveKind::kReduce) &&
       algorithm == Algorithm::kMeshScatter)) {
    item = per_rank;
  }
  return frame_payload_bytes(item, algorithm, group.max_frame_bytes);
}

// One rank's plan: a send and a receive per peer held whole for the
// exchange and the barrier, two of each (reduce-scatter, all-gather) for
// the mesh scatter and a ring of two; from 3 ranks the ring's steps are
// made as they are reached, a fixed cost per stripe (a direction over a
// cable). The ring all-to-all (store and forward) is held whole; counted
// here like the scatter, it is not estimated closely.
uint64_t plan_bytes_per_rank(const CollectiveSpec& spec, Algorithm algorithm,
                             const Topology& topology,
                             const GroupOptions& group) {
  constexpr uint64_t kSendAndReceive = 2;
  const uint32_t ranks = topology.ranks();
  if (spec.kind == CollectiveKind::kSendRecv) {
    return kSendAndReceive * kPlanItemBytes;
  }
  if (algorithm == Algorithm::kRing && ranks >= 3 &&
      spec.kind != CollectiveKind::kAllToAll) {
    // The reduce-scatter keeps where each chunk accumulates (a slice and
    // an item, 32 bytes) per rank; a ring of empty chunks, a bit per step
    // and direction of each phase (4 per rank) saying which move nothing.
    const uint64_t per_stripe =
        kRingStripePlanBytes + ranks / 2 +
        (spec.kind == CollectiveKind::kReduceScatter ? 32 * ranks : 0);
    return topology.devices(0, 1).size() * group.ring_directions * per_stripe;
  }
  const uint64_t peers = ranks - 1;
  if (spec.kind == CollectiveKind::kBarrier ||
      algorithm == Algorithm::kMeshExchange) {
    return kSendAndReceive * peers * kPlanItemBytes;
  }
  return 2 * kSendAndReceive * peers * kPlanItemBytes;
}

}  // namespace

MemoryEstimate estimate_memory(const sim::WorldOptions& world,
                               const GroupOptions& group,
                               const CollectiveSpec& spec) {
  const Topology& topology = world.topology;
  const uint32_t n = topology.ranks();
  const CollectiveShape shape = *shape_of(spec, n);
  const Algorithm algorithm =
      resolve_algorithm(spec, shape, topology.is_full_mesh(), group);
  uint64_t endpoints = 0;
  for (uint32_t i = 0; i < n; ++i) endpoints += topology.devices_of(i);
  MemoryEstimate out;
  out.baseline_bytes = kProcessBaselineBytes;
  out.buffer_bytes = buffer_bytes(spec, shape, n);
  out.endpoint_bytes = endpoints * kEndpointStateBytes;
  out.plan_bytes = n * plan_bytes_per_rank(spec, algorithm, topology, group);
  if (endpoints == 0) return out;
  const uint32_t cables =
      n > 1 ? static_cast<uint32_t>(topology.devices(0, 1).size()) : 1;
  const uint64_t stripes =
      uint64_t{std::max(cables, 1u)} *
      (algorithm == Algorithm::kRing && n > 2 ? group.ring_directions : 1);
  out.scratch_bytes =
      scratch_bytes_all_ranks(spec, shape, algorithm, n, stripes);
  // Each endpoint's region, at the frame size formation settles on.
  GroupOptions fitted = group;
  fitted.max_frame_bytes =
      std::max(fitted_max_frame_bytes(group, max_lanes_per_rank(topology)),
               GroupOptions::kMinFrameBytes);
  const uint64_t region_bytes = lane_slab_bytes(fitted);
  // Beyond the 2 x depth data frames: the control frames and headers.
  const uint64_t control_bytes =
      region_bytes - uint64_t{2} * fitted.depth * fitted.max_frame_bytes;
  // The rank's bytes spread over its endpoints. Each endpoint writes them
  // into its send frames and the peer's receive frames (a page more for
  // a last frame's few bytes), and each frame writes at least the first
  // page of its slot: a message lands in the oldest posted receive, so
  // after `depth` frames every receive slot has been written (the 4096-rank
  // ring at 4 KiB sends about 1,500 frames of a float over each endpoint).
  // A side writes at most `depth` frames of the size the operation picks
  // (the 8-rank ring of 4 MiB moves 64 KiB frames through 512 KiB slots),
  // and never more than its half of the region. The simulator copies the
  // frames still in flight when their sender reuses them (at most a
  // window); and the headers and acknowledgements
  // go to the endpoint's control frames (lane.h: a simulated endpoint
  // takes two-part messages), counted whole.
  const uint64_t page = page_bytes();
  const uint64_t per_endpoint_bytes =
      bytes_sent_per_rank(spec, shape, algorithm, n) * n / endpoints;
  const uint64_t frame_pages_bytes = round_up(per_endpoint_bytes, page) + page;
  const uint64_t op_frame =
      op_frame_bytes(spec, shape, algorithm, n, std::max(cables, 1u), fitted);
  const uint64_t frames =
      frames_per_endpoint(spec, shape, algorithm, n, endpoints,
                          per_endpoint_bytes, op_frame);
  // A side writes no more than its depth's frames of the operation's
  // size (reused frame after frame), nor more than its half of the region.
  const uint64_t side_cap =
      std::min(region_bytes / 2, fitted.depth * round_up(op_frame, page));
  const uint64_t side_bytes =
      std::min(side_cap,
               std::max(frame_pages_bytes,
                        std::min<uint64_t>(fitted.depth, frames) * page));
  const uint64_t written_bytes =
      2 * side_bytes + std::min(side_cap, frame_pages_bytes) + control_bytes;
  out.slab_bytes = endpoints * written_bytes;
  if (world.keep_trace_events) {
    const uint64_t frames =
        endpoints * (per_endpoint_bytes / GroupOptions::kMinFrameBytes + 1);
    out.trace_bytes = frames * kTraceEventsPerFrame * sizeof(sim::TraceEvent);
  }
  return out;
}

}  // namespace weft::harness
