// The sizes one (op, algorithm) block of weft-bench measures. A collective
// carries whole elements, per rank for all-gather, reduce-scatter and
// all-to-all (harness::shape_of rounds the size down to them), so several
// of the sizes asked for can come to the same size, or to nothing: each
// size the op can carry is measured once, and a size too small to carry
// one element is raised to the smallest size that does (`-b 1` on
// all_to_all over 8 ranks of floats starts at 32 bytes).
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_SIZES_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_SIZES_H_

#include <cstdint>
#include <span>
#include <vector>

#include "harness/collective_spec.h"

namespace weft::tools::weft_bench {

struct BlockSizes {
  std::vector<uint64_t> bytes;  // ascending, each once, as shape_of rounds
  uint64_t smallest_bytes = 0;  // the op's smallest size carrying data
  bool raised = false;          // some size was below smallest_bytes (not 0)
};

// `requested` (ascending) as `spec` (its bytes ignored) carries them on
// `ranks` ranks. A requested 0 stays 0 (a row that moves nothing).
// REQUIRES: harness::shape_of(spec, ranks) is ok.
BlockSizes block_sizes(const harness::CollectiveSpec& spec,
                       std::span<const uint64_t> requested, uint32_t ranks);

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_SIZES_H_
