// weft-bench's measuring loop: every (op, algorithm) block over its sizes
// (weft_bench_sizes.h), each row printed as it is measured, and the outputs
// (--json, --plot) written from what was measured. A row that stops the
// run (a failed group on hardware) leaves the blocks before it, and the
// rows of its own block before it, in the result, so the outputs keep
// what was measured.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RUN_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RUN_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tools/weft-bench/weft_bench_options.h"
#include "tools/weft-bench/weft_bench_result.h"
#include "tools/weft-bench/weft_bench_runner.h"

namespace weft::tools::weft_bench {

struct BenchRun {
  std::vector<BenchBlock> blocks;  // the last one partial when !status.ok()
  absl::Status status;             // what stopped the run, if anything
  std::string failed_row;          // "all_reduce auto 4096 bytes"
  size_t rows = 0;                 // rows measured, in every block
};

// The collective one row measures.
harness::CollectiveSpec spec_of(const BenchOp& op,
                                harness::AlgorithmRequest algorithm,
                                uint64_t bytes, const BenchOptions& options);

// Measures every block; prints the table when runner.reports(), and on
// stderr, once per op, when sizes too small for it were raised.
BenchRun run_blocks(BenchRunner& runner, const BenchOptions& options);

// --model_only: per op the model covers, a table of each size's costs for
// every algorithm the group can run (steps, bytes per step per link, the
// step-by-step cost and the lower bound), the lowest lower bound marked
// "bound"; ops it does not cover get one line saying so.
std::string model_tables(const BenchRunner& runner,
                         const BenchOptions& options);

// Writes --json and --plot (those given) from `blocks`.
absl::Status write_outputs(const std::vector<BenchBlock>& blocks,
                           const BenchOptions& options,
                           const BenchRunner& runner);

// After a row stopped `run`: writes --json and --plot (those given) from
// the rows measured before it, when runner.reports(), and returns the one
// line to print: which row failed, why, and what the files hold.
std::string stopped_line(const BenchRun& run, const BenchOptions& options,
                         const BenchRunner& runner);

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RUN_H_
