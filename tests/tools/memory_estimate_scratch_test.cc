// The memory estimate's scratch term against the algorithms themselves:
// for every kind of collective, algorithm, placement and root, the scratch
// space the plans of all ranks ask for (collectives/algorithms: the plan
// each rank runs, built as Group::start builds it) is summed and compared
// with harness::estimate_memory's scratch_bytes. The estimate must never be
// below it (a run it lets start could then swap or be killed) and stay
// within the rounding it allows for.
#include <cstdint>
#include <string>

#include "absl/strings/str_format.h"
#include "collectives/algorithms/algorithms.h"
#include "collectives/dtype.h"
#include "collectives/internal/op_kind.h"
#include "fabric/topology.h"
#include "gtest/gtest.h"
#include "harness/collective_spec.h"
#include "harness/memory_estimate.h"
#include "sim/world.h"

namespace weft::harness {
namespace {

using collectives::internal::OpKind;
using collectives::internal::PlanInput;

OpKind op_kind_of(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return OpKind::kAllReduce;
    case CollectiveKind::kAllGather:
      return OpKind::kAllGather;
    case CollectiveKind::kReduceScatter:
      return OpKind::kReduceScatter;
    case CollectiveKind::kBroadcast:
      return OpKind::kBroadcast;
    case CollectiveKind::kReduce:
      return OpKind::kReduce;
    case CollectiveKind::kAllToAll:
      return OpKind::kAllToAll;
    case CollectiveKind::kSendRecv:
      return OpKind::kSendRecv;
    case CollectiveKind::kBarrier:
      return OpKind::kBarrier;
  }
  return OpKind::kAllReduce;
}

// PlanInput::bytes per kind (collectives/algorithms/algorithms.h): one
// rank's block for the all-gather and the reduce-scatter, nothing for the
// barrier, the buffer otherwise.
uint64_t plan_bytes_of(const CollectiveSpec& spec,
                       const CollectiveShape& shape) {
  switch (spec.kind) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
      return shape.block_bytes;
    case CollectiveKind::kBarrier:
      return 0;
    default:
      return shape.size_bytes;
  }
}

// Scratch bytes of every rank's plan, summed.
uint64_t planned_scratch(const CollectiveSpec& spec, const Topology& topology,
                         Algorithm algorithm, const GroupOptions& group) {
  const uint32_t n = topology.ranks();
  const CollectiveShape shape = *shape_of(spec, n);
  const bool ring = algorithm == Algorithm::kRing;
  const collectives::internal::Striping striping{
      static_cast<uint32_t>(topology.devices(0, 1).size()),
      ring && n > 2 ? group.ring_directions : 1};
  uint64_t total = 0;
  for (uint32_t r = 0; r < n; ++r) {
    PlanInput in;
    in.kind = op_kind_of(spec.kind);
    in.rank = r;
    in.size = n;
    in.elem = dtype_size(spec.dtype);
    in.bytes = plan_bytes_of(spec, shape);
    in.root = spec.root;
    in.in_place = spec.in_place;
    total += collectives::internal::build_plan(in, algorithm, striping)
                 .scratch_bytes;
  }
  return total;
}

struct World {
  const char* name;
  Topology topology;
};

TEST(MemoryEstimateScratch, CoversWhatEveryRanksPlanAsksFor) {
  const CollectiveKind kKinds[] = {
      CollectiveKind::kAllReduce,     CollectiveKind::kAllGather,
      CollectiveKind::kReduceScatter, CollectiveKind::kBroadcast,
      CollectiveKind::kReduce,        CollectiveKind::kAllToAll,
      CollectiveKind::kBarrier};
  const World kWorlds[] = {
      {"2-rank mesh", *Topology::mesh(2)},
      {"3-rank ring", *Topology::ring(3)},
      {"8-rank mesh", *Topology::mesh(8)},
      {"12-rank ring", *Topology::ring(12)},
      {"8-rank mesh of 2 cables", *Topology::mesh(8, 2)},
      {"9-rank ring of 2 cables", *Topology::ring(9, 2)},
  };
  // Sizes that divide evenly and ones that leave ragged chunks.
  const uint64_t kBytes[] = {4096, 1 << 20, (1 << 20) + 4 * 7, 3 * 1000 * 4};
  const GroupOptions group;
  int checked = 0;
  for (const World& w : kWorlds) {
    const uint32_t n = w.topology.ranks();
    const bool mesh = w.topology.is_full_mesh();
    for (const CollectiveKind kind : kKinds) {
      for (const uint64_t bytes : kBytes) {
        for (const bool in_place : {false, true}) {
          for (const uint32_t root : {0u, n - 1}) {
            if (root != 0 && !has_root(kind)) continue;
            for (const AlgorithmRequest request :
                 {AlgorithmRequest::kMeshExchange,
                  AlgorithmRequest::kMeshScatter, AlgorithmRequest::kRing}) {
              if (request != AlgorithmRequest::kRing && !mesh) continue;
              CollectiveSpec spec;
              spec.kind = kind;
              spec.bytes = kind == CollectiveKind::kBarrier ? 0 : bytes;
              spec.in_place = in_place;
              spec.root = root;
              spec.algorithm = request;
              const CollectiveShape shape = *shape_of(spec, n);
              const Algorithm algorithm =
                  resolve_algorithm(spec, shape, mesh, group);
              sim::WorldOptions world;
              world.topology = w.topology;
              const uint64_t planned =
                  planned_scratch(spec, w.topology, algorithm, group);
              const uint64_t estimated =
                  estimate_memory(world, group, spec).scratch_bytes;
              const std::string what =
                  absl::StrFormat("%s, %s of %u bytes, %s, %s, root %u", w.name,
                                  collective_name(kind), bytes,
                                  resolved_algorithm_name(algorithm),
                                  in_place ? "in place" : "out of place", root);
              EXPECT_GE(estimated, planned) << what;
              // Rounding: at most 64 bytes and an element per request, a
              // request per block at most.
              EXPECT_LE(estimated, planned + uint64_t{n} * n * n * 128 + 4096)
                  << what;
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 300);
}

// The ring all-to-all holds (n - 1)(n - 2) / 2 blocks on every rank to
// forward them: the term that grows fastest with the world.
TEST(MemoryEstimateScratch, RingAllToAllHoldsTheBlocksItForwards) {
  CollectiveSpec spec;
  spec.kind = CollectiveKind::kAllToAll;
  spec.bytes = 12 << 20;
  spec.algorithm = AlgorithmRequest::kRing;
  sim::WorldOptions world;
  world.topology = *Topology::ring(12);
  const MemoryEstimate estimate = estimate_memory(world, GroupOptions{}, spec);
  // 12 ranks x 55 blocks of 1 MiB.
  const uint64_t held = uint64_t{12} * 55 * (1 << 20);
  EXPECT_GE(estimate.scratch_bytes, held);
  EXPECT_LE(estimate.scratch_bytes, held + (1 << 20));
}

}  // namespace
}  // namespace weft::harness
