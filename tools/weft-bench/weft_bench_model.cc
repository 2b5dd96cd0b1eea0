#include "tools/weft-bench/weft_bench_model.h"

#include <algorithm>

namespace weft::tools::weft_bench {

CostModel CostModel::of(const sim::LinkModel& link, uint32_t ranks,
                        uint32_t cables, uint32_t ring_directions,
                        bool full_mesh) {
  CostModel m;
  m.alpha_ns = static_cast<double>(link.latency_ns + link.per_message_ns);
  m.beta_ns_per_byte =
      link.bandwidth_bytes_per_s > 0
          ? static_cast<double>(kNsPerS) / link.bandwidth_bytes_per_s
          : 0;
  m.ranks = ranks;
  m.cables = std::max(cables, 1u);
  m.ring_directions = ranks > 2 ? std::max(ring_directions, 1u) : 1;
  m.full_mesh = full_mesh;
  return m;
}

std::optional<CostModel::Cost> CostModel::cost(harness::CollectiveKind kind,
                                               Algorithm algorithm,
                                               uint64_t bytes) const {
  if (ranks < 2 || algorithm == Algorithm::kAuto) return std::nullopt;
  const bool mesh = algorithm != Algorithm::kRing;
  if (mesh && !full_mesh) return std::nullopt;
  const bool all_reduce = kind == harness::CollectiveKind::kAllReduce;
  if (!all_reduce && kind != harness::CollectiveKind::kAllGather &&
      kind != harness::CollectiveKind::kReduceScatter) {
    return std::nullopt;
  }
  // An all-gather or reduce-scatter asked to scatter runs the exchange:
  // one mesh algorithm, counted once.
  if (!all_reduce && algorithm == Algorithm::kMeshScatter) return std::nullopt;
  const double p = ranks;
  const double n = static_cast<double>(bytes);
  Cost c;
  c.algorithm = algorithm;
  if (!mesh) {
    c.steps = (all_reduce ? 2 : 1) * (ranks - 1);
    c.bytes_per_step = n / (p * ring_directions * cables);
  } else if (all_reduce && algorithm == Algorithm::kMeshExchange) {
    c.steps = 1;
    c.bytes_per_step = n / cables;
  } else {
    // The mesh all-reduce's scatter and gather, or the one step of a mesh
    // all-gather or reduce-scatter.
    c.steps = all_reduce ? 2 : 1;
    c.bytes_per_step = n / (p * cables);
  }
  const double bytes_ns = c.bytes_per_step * beta_ns_per_byte;
  c.step_by_step_ns = c.steps * (alpha_ns + bytes_ns);
  c.lower_bound_ns =
      std::max(c.steps * alpha_ns, alpha_ns + c.steps * bytes_ns);
  return c;
}

std::optional<CostModel::Cost> CostModel::bound(harness::CollectiveKind kind,
                                                uint64_t bytes) const {
  std::optional<Cost> best;
  for (Algorithm a :
       {Algorithm::kMeshExchange, Algorithm::kMeshScatter, Algorithm::kRing}) {
    const std::optional<Cost> c = cost(kind, a, bytes);
    if (c && (!best || c->lower_bound_ns < best->lower_bound_ns)) best = c;
  }
  return best;
}

}  // namespace weft::tools::weft_bench
