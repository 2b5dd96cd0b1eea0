// The Thakur-Rabenseifner-Gropp cost model (Int. J. High Perform. Comput.
// Appl. 19(1), 2005) of the ring algorithms, on a link with per-message
// cost alpha (latency plus per-message overhead) and per-byte cost beta
// (1 / bandwidth), for p ranks and n bytes (the all-gather output, the
// reduce-scatter input, the all-reduce buffer: nccl-tests' size):
//
//   ring all-gather      (p-1) alpha +   n (p-1)/p beta
//   ring reduce-scatter  (p-1) alpha +   n (p-1)/p beta
//   ring all-reduce     2(p-1) alpha + 2 n (p-1)/p beta
//
// weft's ring may send half the data each way round and stripe it over
// several cables; those paths share the bytes, so the beta term is divided
// by the number of parallel paths.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_MODEL_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_MODEL_H_

#include <cstdint>
#include <optional>

#include "harness/collective_spec.h"
#include "sim/link_model.h"

namespace weft::tools::weft_bench {

struct RingModel {
  double alpha_ns = 0;
  double beta_ns_per_byte = 0;  // 0: infinite bandwidth
  uint32_t ranks = 0;
  uint32_t parallel_paths = 1;  // ring directions x cables per neighbour

  // alpha = latency + per-message overhead, beta = 1 / bandwidth.
  static RingModel of(const sim::LinkModel& link, uint32_t ranks,
                      uint32_t parallel_paths);

  // The formula above for `kind` moving `bytes`; nullopt for kinds it does
  // not cover or a group of one rank.
  std::optional<double> cost_ns(harness::CollectiveKind kind,
                                uint64_t bytes) const;
};

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_MODEL_H_
