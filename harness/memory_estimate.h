// How much memory one simulated collective run needs at its peak, worked
// out before the run from the sizes the harness, the collectives and the
// simulator allocate: every rank's input and output buffers and the
// reference's reduction (rank_call.h, reference.h), the slab pages the
// run's frames write (collectives/group_builder.h: one region per endpoint
// of 2 x depth frames), each endpoint's bookkeeping (the simulated queue
// pair and the engine's lane), the simulator's copies of frames in flight
// (sim/internal/payload_pool.h), every rank's plan of the operation and
// the scratch space it asks for (collectives/algorithms/plan.h: partial
// sums, blocks a ring all-to-all holds to forward, an in-place
// operation's copy of its input), the kept trace events, and the process
// itself. Tools refuse a run whose estimate exceeds the machine's memory
// instead of letting it swap or be killed (tools/cli/memory_check.h).
//
// The figure is resident memory, not address space: a slab is mapped
// whole but only the frames a run writes occupy memory, so the estimate
// counts, per endpoint, the bytes the rank sends over it (twice: the send
// frames and the peer's receive frames), or a page per frame up to the
// depth if that is more (a frame of a few bytes still writes a page of
// its slot), up to the whole region, and once more for the copies in
// flight.
#ifndef WEFT_HARNESS_MEMORY_ESTIMATE_H_
#define WEFT_HARNESS_MEMORY_ESTIMATE_H_

#include <cstdint>

#include "collectives/group_options.h"
#include "harness/collective_spec.h"
#include "sim/world.h"

namespace weft::harness {

// The process before any world exists: code, libraries, the allocator's
// arenas (weft-sim --version peaks near 5 MiB; the rest is headroom).
inline constexpr uint64_t kProcessBaselineBytes = uint64_t{16} << 20;

// One endpoint's bookkeeping outside the slab: the simulated queue pair
// (its rings of requests and completions, as large as the most it had
// outstanding) and the engine's lane (send and receive windows, per-slot
// and per-sequence tables of about `depth` entries). The 256-rank mesh's
// all-sum of 4 KiB (65,280 endpoints) measures about 6 KiB each on the
// heap and in the endpoints' arena; this rounds up, and also covers the
// 1024-rank ring's heap beyond its plans (610 MiB measured at 4 KiB).
inline constexpr uint64_t kEndpointStateBytes = uint64_t{16} << 10;

// One item of a rank's plan held whole (collectives/algorithms/plan.h: a
// send, a receive or a local step, 64 bytes) with the engine's state for
// it (collectives/engine/op_runner.h). The mesh algorithms hold their plans
// whole: about 2 items per peer on each rank.
inline constexpr uint64_t kPlanItemBytes = 128;

// One stripe of a ring of 3 ranks or more, whose steps are made as they
// are reached (collectives/algorithms/ring.cc): the step source, the
// engine's windows of steps and item states in flight and the lanes'
// cursors. Beside it, only half a byte per rank grows with the world (which
// steps move nothing, for rings of empty chunks).
inline constexpr uint64_t kRingStripePlanBytes = 4 << 10;

// Trace events kept per frame when a trace file is asked for: the send's
// post, departure, delivery and completion, and the receive's post and
// completion.
inline constexpr uint64_t kTraceEventsPerFrame = 6;

struct MemoryEstimate {
  uint64_t baseline_bytes = 0;  // kProcessBaselineBytes
  uint64_t buffer_bytes = 0;    // every rank's input and output, reference
  uint64_t slab_bytes = 0;      // frames: slab pages written, copies in flight
  uint64_t endpoint_bytes = 0;  // endpoints x kEndpointStateBytes
  uint64_t plan_bytes = 0;      // plans: items held x kPlanItemBytes, ring
                                // stripes x kRingStripePlanBytes
  uint64_t scratch_bytes = 0;   // every rank's plan's scratch space
  uint64_t trace_bytes = 0;     // kept trace events (world.keep_trace_events)

  uint64_t total_bytes() const {
    return baseline_bytes + buffer_bytes + slab_bytes + endpoint_bytes +
           plan_bytes + scratch_bytes + trace_bytes;
  }
};

// The peak of one run of `spec` on a fresh SimCluster of `world` and
// `group`. REQUIRES: check_collective(spec, world.topology, group) is OK.
MemoryEstimate estimate_memory(const sim::WorldOptions& world,
                               const GroupOptions& group,
                               const CollectiveSpec& spec);

}  // namespace weft::harness

#endif  // WEFT_HARNESS_MEMORY_ESTIMATE_H_
