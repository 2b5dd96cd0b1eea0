// gloo_allreduce: one rank of Gloo's ring all-reduce (float32 sum) over
// Gloo's TCP transport, measured the way weft-bench measures weft's, so the
// two tables sit side by side (scripts/compare-gloo.sh). Start one process
// per rank; they meet through a FileStore in a directory all can reach:
//
//   gloo_allreduce --rank=R --size=N --store=DIR --iface=127.0.0.1
//       --sizes=64K,1M,16M,64M
//
// Per size, out of place then in place: warm-up iterations, then timed
// ones. Each iteration's input depends on the rank and the iteration, and
// its output is checked against the sum computed here element by element,
// outside the timed span (a barrier re-aligns the ranks before each timed
// call). Time per iteration is averaged over ranks; busbw is weft-bench's
// (algbw * 2(n-1)/n, from harness::shape_of). Rank 0 prints weft-bench's
// table (tools/weft-bench/weft_bench_table.h) and, with --json, its JSON.
// Exit status 0 when every output was right, 1 when one was wrong or Gloo
// failed (its message on stderr), 2 for bad flags.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/absl_compat.h"
#include "bench/gloo/gloo_measure.h"
#include "tools/cli/byte_size.h"
#include "tools/cli/exit_status.h"
#include "tools/weft-bench/weft_bench_options.h"
#include "tools/weft-bench/weft_bench_result.h"
#include "tools/weft-bench/weft_bench_table.h"

ABSL_FLAG(int, rank, -1, "this process's rank, 0..size-1");
ABSL_FLAG(int, size, 0, "number of ranks (processes)");
ABSL_FLAG(std::string, store, "",
          "directory for Gloo's FileStore, shared by all ranks; empty or "
          "fresh for each run");
ABSL_FLAG(std::string, iface, "127.0.0.1",
          "address Gloo's TCP device binds and announces");
ABSL_FLAG(std::string, sizes, "64K,1M,16M,64M",
          "buffer sizes, comma-separated (K, M, G suffixes); multiples of 4");
ABSL_FLAG(int, warmup_iters, 3, "-w: untimed iterations per measurement");
ABSL_FLAG(int, iters, 10, "-n: timed iterations per measurement");
ABSL_FLAG(int, timeout_s, 120,
          "deadline of the rendezvous and of every Gloo call, seconds");
ABSL_FLAG(std::string, json, "", "rank 0 also writes the results here");

namespace weft::bench {
namespace {

using tools::cli::kExitBadInput;
using tools::cli::kExitFailed;
constexpr uint32_t kMaxIters = 100'000;

absl::StatusOr<GlooRun> run_from_flags() {
  GlooRun run;
  const int rank = absl::GetFlag(FLAGS_rank);
  const int size = absl::GetFlag(FLAGS_size);
  if (size < 2 || rank < 0 || rank >= size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--rank=%d --size=%d: give --size of at least 2 and a --rank from 0 "
        "to size-1",
        rank, size));
  }
  run.rank = static_cast<uint32_t>(rank);
  run.ranks = static_cast<uint32_t>(size);
  run.store_dir = absl::GetFlag(FLAGS_store);
  if (run.store_dir.empty()) {
    return absl::InvalidArgumentError(
        "--store is empty: give a directory every rank can reach");
  }
  run.address = absl::GetFlag(FLAGS_iface);
  for (absl::string_view piece :
       absl::StrSplit(absl::GetFlag(FLAGS_sizes), ',', absl::SkipEmpty())) {
    absl::StatusOr<uint64_t> bytes =
        tools::cli::parse_byte_size("sizes", base::to_std(piece));
    if (!bytes.ok()) return bytes.status();
    if (*bytes == 0 || *bytes % sizeof(float) != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--sizes: %u bytes is not a positive multiple of 4 (float32)",
          *bytes));
    }
    run.sizes_bytes.push_back(*bytes);
  }
  if (run.sizes_bytes.empty()) {
    return absl::InvalidArgumentError("--sizes names no size");
  }
  const int warmup = absl::GetFlag(FLAGS_warmup_iters);
  const int iters = absl::GetFlag(FLAGS_iters);
  if (warmup < 0 || iters < 1 || static_cast<uint32_t>(warmup) > kMaxIters ||
      static_cast<uint32_t>(iters) > kMaxIters) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--warmup_iters=%d --iters=%d: give 0..%u warm-up and 1..%u timed",
        warmup, iters, kMaxIters, kMaxIters));
  }
  run.warmup_iters = static_cast<uint32_t>(warmup);
  run.iters = static_cast<uint32_t>(iters);
  const int timeout_s = absl::GetFlag(FLAGS_timeout_s);
  if (timeout_s < 1) {
    return absl::InvalidArgumentError("--timeout_s must be at least 1");
  }
  run.timeout = std::chrono::seconds(timeout_s);
  return run;
}

// weft-bench's options for the header line and the JSON's "config".
BenchOptions header_options(const GlooRun& run) {
  BenchOptions o;
  o.sizes = run.sizes_bytes;
  o.min_bytes = run.sizes_bytes.front();
  o.max_bytes = run.sizes_bytes.back();
  o.step_factor = run.sizes_bytes.size() > 1 && o.min_bytes > 0
                      ? run.sizes_bytes[1] / o.min_bytes
                      : 1;
  o.warmup_iters = run.warmup_iters;
  o.iters = run.iters;
  return o;
}

int print_results(const GlooRun& run, const BenchBlock& block) {
  const BenchOptions options = header_options(run);
  const std::string where =
      absl::StrFormat("Gloo ring all-reduce, tcp transport on %s, %u processes",
                      run.address, run.ranks);
  // weft-bench's header names weft-bench; this table is Gloo's.
  std::string out = block_header(block, options, where);
  constexpr std::string_view kTool = "# weft-bench";
  if (out.starts_with(kTool)) out.replace(0, kTool.size(), "# gloo_allreduce");
  for (const BenchRow& row : block.rows) out += row_lines(row, false);
  out += block_footer(block);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  const std::string json_path = absl::GetFlag(FLAGS_json);
  if (!json_path.empty()) {
    if (absl::Status s = write_gloo_json(json_path, block, options, run);
        !s.ok()) {
      std::fprintf(stderr, "gloo_allreduce: %s\n", s.ToString().c_str());
      return kExitFailed;
    }
  }
  return 0;
}

int run_main() {
  absl::StatusOr<GlooRun> run = run_from_flags();
  if (!run.ok()) {
    std::fprintf(stderr, "gloo_allreduce: %s\n",
                 run.status().ToString().c_str());
    return kExitBadInput;
  }
  absl::StatusOr<BenchBlock> block = measure_all_reduce(*run);
  if (!block.ok()) {
    std::fprintf(stderr, "gloo_allreduce: rank %u: %s\n", run->rank,
                 block.status().ToString().c_str());
    return kExitFailed;
  }
  int code = 0;
  if (run->rank == 0) code = print_results(*run, *block);
  if (wrong_total(*block) > 0 || error_count(*block) > 0) return kExitFailed;
  return code;
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Gloo's ring all-reduce over TCP, one rank per process, in "
      "weft-bench's table");
  absl::ParseCommandLine(argc, argv);
  return weft::bench::run_main();
}
