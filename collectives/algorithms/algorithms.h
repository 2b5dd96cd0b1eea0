// The algorithms: for one rank and one operation, the Plan (plan.h) of what
// moves where. Mesh algorithms talk to every peer directly; ring algorithms
// only to the two neighbours. Each runs once per stripe: the data is cut
// into stripes, one per cable (and, for the ring, per direction), and every
// stripe's items use their own lanes.
//
// What `PlanInput::bytes` means, per kind: all-reduce, broadcast, reduce,
// send/recv: the buffer; all-gather: one rank's block (the output is size
// blocks); reduce-scatter: one rank's block (the input is size blocks);
// all-to-all: the whole buffer (size blocks); barrier: 0.
#ifndef WEFT_COLLECTIVES_ALGORITHMS_ALGORITHMS_H_
#define WEFT_COLLECTIVES_ALGORITHMS_ALGORITHMS_H_

#include <cstddef>
#include <cstdint>

#include "collectives/group_options.h"
#include "collectives/algorithms/layout.h"
#include "collectives/internal/op_kind.h"
#include "collectives/algorithms/plan.h"

namespace weft::collectives::internal {

struct PlanInput {
  OpKind kind = OpKind::kAllReduce;
  uint32_t rank = 0;  // group ranks
  uint32_t size = 1;
  size_t elem = 1;
  uint64_t bytes = 0;
  uint32_t root = 0;  // broadcast, reduce; send/recv: the other rank
  bool in_place = false;
  bool sending = false;  // send/recv: this rank is the sender
};

// How stripes map onto lanes.
struct Striping {
  uint32_t lanes = 1;       // cables used per peer
  uint32_t directions = 1;  // ring only: 1 or 2
  uint32_t stripes() const { return lanes * directions; }
};

// One stripe's context, shared by the builders.
struct StripeContext {
  const PlanInput& in;
  StripeLayout layout;
  uint32_t lane = 0;
  int direction = 1;  // ring: +1 clockwise, -1 counter-clockwise
};

// REQUIRES: the input passed validation (sizes, root, in-place layout) and
// `algorithm` is resolved (not kAuto).
Plan build_plan(const PlanInput& in, Algorithm algorithm, Striping striping);

// Builders, one stripe at a time.
void mesh_exchange_stripe(PlanBuilder& pb, const StripeContext& c);
void mesh_scatter_stripe(PlanBuilder& pb, const StripeContext& c);
void ring_stripe(PlanBuilder& pb, const StripeContext& c);
void send_recv_stripe(PlanBuilder& pb, const StripeContext& c);

// Bytes of the largest item an operation moves, the same on every rank (so
// every rank picks the same frame size).
uint64_t nominal_item_bytes(const PlanInput& in, Algorithm algorithm,
                            Striping striping);

// Payload bytes per frame for items of `nominal_bytes` under `algorithm`:
// at most kTargetFramesPerItem frames each (so sends pipeline), the least
// power of two in [GroupOptions::kMinFrameBytes, max_frame_bytes] that
// holds a quarter of the item and a header; the header rides besides.
// A mesh exchange forwards nothing it receives, so an item of up to
// kWholeItemBytes goes whole, in one frame: every further frame costs the
// link's per-message time (tb5: 437 ns, the wire time of 4.4 KB) and wins
// only overlap of the reduction with the arrival, worth that from about a
// quarter of kWholeItemBytes a frame.
inline constexpr uint64_t kTargetFramesPerItem = 4;
inline constexpr uint64_t kWholeItemBytes = 256 << 10;
uint32_t chunk_payload_bytes(uint64_t nominal_bytes, Algorithm algorithm,
                             uint32_t max_frame_bytes);

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ALGORITHMS_ALGORITHMS_H_
