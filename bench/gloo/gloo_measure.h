// Gloo's ring all-reduce measured as weft-bench measures weft's: the run's
// parameters, the measuring loop (one Gloo context over its TCP transport,
// met through a FileStore) and the JSON writer, for gloo_allreduce.cc.
#ifndef WEFT_BENCH_GLOO_GLOO_MEASURE_H_
#define WEFT_BENCH_GLOO_GLOO_MEASURE_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tools/weft-bench/weft_bench_options.h"
#include "tools/weft-bench/weft_bench_result.h"

namespace weft::bench {

struct GlooRun {
  uint32_t rank = 0;
  uint32_t ranks = 0;
  std::string store_dir;  // FileStore directory, shared by all ranks
  std::string address;    // the TCP device's address, e.g. 127.0.0.1
  std::vector<uint64_t> sizes_bytes;
  uint32_t warmup_iters = 0;
  uint32_t iters = 0;
  // The rendezvous' and every Gloo call's deadline.
  std::chrono::milliseconds timeout{0};
};

// Connects the ranks, then per size measures out of place and in place.
// Every rank returns the same block: times averaged over ranks, #wrong
// summed. An error when Gloo throws (its message: a peer that left, a
// deadline passed).
absl::StatusOr<BenchBlock> measure_all_reduce(const GlooRun& run);

// weft-bench's JSON (tools/weft-bench/weft_bench_json.h) with "tool":
// "gloo_allreduce" and "fabric": "gloo-tcp".
absl::Status write_gloo_json(const std::string& path, const BenchBlock& block,
                             const BenchOptions& options, const GlooRun& run);

}  // namespace weft::bench

#endif  // WEFT_BENCH_GLOO_GLOO_MEASURE_H_
