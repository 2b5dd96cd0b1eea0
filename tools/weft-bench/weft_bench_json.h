// weft-bench's results as JSON (--json FILE), for tools, in weft's shared
// JSON vocabulary (docs/json.md):
//
//   {"format_version": 2, "tool": "weft-bench", "fabric": "sim",
//    "clock": "virtual", "ranks": 8, "where": "...",
//    "config": {"min_bytes", "max_bytes", "step_bytes", "step_factor",
//               "warmup_iters", "iters", "check", "registered", "datatype",
//               "model"},
//    "blocks": [{"op": "all_reduce", "algorithm": "auto",
//                "results": [{"bytes", "count", "type", "redop", "root",
//                             "algorithm", "bus_factor",
//                             "out_of_place": {"error", "time_us",
//                                "algbw_gb_per_s", "busbw_gb_per_s",
//                                "nwrong", "counters", "model_us",
//                                "ratio", "bound_us", "bound_ratio",
//                                "bound_algorithm"} or null,
//                             "in_place": {...} or null}],
//                "average_busbw_gb_per_s", "wrong_total", "errors"}],
//    "registration_caches": [{"device", "budget", "regions",
//                             "registrations", "hits", "misses",
//                             "evictions"}]}
//
// nwrong is null when unchecked; algbw_gb_per_s and busbw_gb_per_s are null
// where the table shows "-" (size 0, or no time: --link=ideal); model_us
// and ratio (the ring's cost, rows that ran the ring) and bound_us,
// bound_ratio and bound_algorithm (the link model's lower bound, the lowest
// over the algorithms the group can run: weft_bench_model.h) only with
// --model and where the model covers the op; a measurement that did not
// run (in-place send/recv) is null. registration_caches is on
// verbs only: the printing rank's cache per RDMA device it opened, over the
// whole run.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_JSON_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_JSON_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/weft-bench/weft_bench_options.h"
#include "tools/weft-bench/weft_bench_result.h"

namespace weft::tools::weft_bench {

struct JsonContext {
  std::string fabric;  // "sim", "verbs" or "tcp"
  std::string time;    // "virtual" or "wall"
  uint32_t ranks = 0;
  std::string where;
  // Verbs: the printing rank's registration caches.
  std::vector<RegistrationCacheReport> registration_caches;
};

std::string results_json(const std::vector<BenchBlock>& blocks,
                         const BenchOptions& options,
                         const JsonContext& context);
// Writes results_json() to `path`; an error names the path.
absl::Status write_results_json(const std::string& path,
                                const std::vector<BenchBlock>& blocks,
                                const BenchOptions& options,
                                const JsonContext& context);

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_JSON_H_
