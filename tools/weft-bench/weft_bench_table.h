// weft-bench's text output in nccl-tests' format, so tools that read
// nccl-tests' tables read weft-bench's: per block a header of '#' lines, one
// row per size with `size count type redop root` and, out of place then in
// place, `time algbw busbw #wrong` (numbers formatted as nccl-tests does:
// at most 7 or 6 characters), and the footer with `# Out of bounds
// values` (the #wrong total, OK or FAILED) and `# Avg bus bandwidth`. With
// --model each placement also shows `model` (the cost model's time, us) and
// `ratio` (time / model).
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_TABLE_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "tools/weft-bench/weft_bench_options.h"
#include "tools/weft-bench/weft_bench_result.h"

namespace weft::tools::weft_bench {

// `value` in at most `width` characters, right-aligned: two decimals when
// they fit, then one, then none, then exponent notation.
std::string format_number(double value, int width);

// The '#' lines before a block's rows. `where` says what ran it.
std::string block_header(const BenchBlock& block, const BenchOptions& options,
                         const std::string& where);
// One row (and a "# ^" line per failed measurement saying why).
std::string row_lines(const BenchRow& row, bool model);
std::string block_footer(const BenchBlock& block);
// After the blocks, on verbs: rank `rank`'s registration cache, one '#'
// line per device (budget, regions registered now, registrations, hits,
// misses, evictions). Empty when `caches` is.
std::string registration_footer(
    const std::vector<RegistrationCacheReport>& caches, uint32_t rank);

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_TABLE_H_
