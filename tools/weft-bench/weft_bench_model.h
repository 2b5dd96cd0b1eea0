// The link model's cost of weft's algorithms, on a link with per-message
// cost alpha (latency plus per-message overhead) and per-byte cost beta
// (1 / bandwidth), for p ranks and n bytes (the all-gather output, the
// reduce-scatter input, the all-reduce buffer: nccl-tests' size). Each
// algorithm is S steps, each sending B bytes on every link it uses, with c
// cables per pair of ranks (every algorithm stripes over them) and d ring
// directions (weft's ring sends half the data each way round when p > 2):
//
//   all-reduce      mesh_exchange  1 step          n / c
//                   mesh_scatter   2 steps         n / (p c)
//                   ring           2(p-1) steps    n / (p d c)
//   all-gather,     mesh_exchange  1 step          n / (p c)
//   reduce-scatter  ring           (p-1) steps     n / (p d c)
//
// (an all-gather or reduce-scatter on the mesh is one algorithm, the
// exchange, whichever mesh algorithm was asked for; the mesh algorithms
// run only on a fully connected group). Two costs follow:
//
// - step by step, no step starting before the one ahead of it ended:
//     S (alpha + B beta)
//   For the ring this is the Thakur-Rabenseifner-Gropp cost (Int. J. High
//   Perform. Comput. Appl. 19(1), 2005), 2(p-1) alpha + 2 n (p-1)/p beta
//   for the all-reduce, beta divided by the d c parallel paths.
// - the lower bound, however the steps overlap: a chain of S messages, each
//   waiting for the one before (S alpha), and one link carrying all S B
//   bytes, its last byte a latency behind (alpha + S B beta):
//     max(S alpha, alpha + S B beta)
//   weft's engine pipelines frames across steps, so its runs fall between
//   the two.
//
// The bound of a size and world is the lowest lower bound over the
// algorithms the group can run.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_MODEL_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_MODEL_H_

#include <cstdint>
#include <optional>

#include "collectives/group_options.h"
#include "harness/collective_spec.h"
#include "sim/link_model.h"

namespace weft::tools::weft_bench {

struct CostModel {
  double alpha_ns = 0;
  double beta_ns_per_byte = 0;  // 0: infinite bandwidth
  uint32_t ranks = 0;
  uint32_t cables = 1;           // per pair of ranks
  uint32_t ring_directions = 1;  // 1 or 2
  bool full_mesh = false;        // the mesh algorithms can run

  // alpha = latency + per-message overhead, beta = 1 / bandwidth;
  // `ring_directions` is the group's option (one for two ranks, whatever
  // it says).
  static CostModel of(const sim::LinkModel& link, uint32_t ranks,
                      uint32_t cables, uint32_t ring_directions,
                      bool full_mesh);

  struct Cost {
    Algorithm algorithm = Algorithm::kAuto;
    uint32_t steps = 0;
    double bytes_per_step = 0;  // per link
    double step_by_step_ns = 0;
    double lower_bound_ns = 0;
  };

  // The table above for `kind` moving `bytes` with `algorithm`; nullopt for
  // kinds it does not cover, a group of one rank, or a mesh algorithm on a
  // group that is not fully connected.
  std::optional<Cost> cost(harness::CollectiveKind kind, Algorithm algorithm,
                           uint64_t bytes) const;
  // The algorithm with the lowest lower bound this group can run.
  std::optional<Cost> bound(harness::CollectiveKind kind, uint64_t bytes) const;
};

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_MODEL_H_
