// weft-bench: nccl-tests' interface and table for weft's collectives, on
// any fabric. With no fabric flags it runs 8 simulated ranks over the tb5
// link and reports virtual time; --fabric verbs makes this process one rank
// of a group formed from JACCL's environment and reports wall time.
// docs/benchmarking.md shows how to run it and compare with other tools.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fabric/absl_compat.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/flag_scope.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-bench/svg_plot.h"
#include "tools/weft-bench/weft_bench_args.h"
#include "tools/weft-bench/weft_bench_json.h"
#include "tools/weft-bench/weft_bench_options.h"
#include "tools/weft-bench/weft_bench_sim.h"
#include "tools/weft-bench/weft_bench_table.h"
#include "tools/weft-bench/weft_bench_text_file.h"
#include "tools/weft-bench/weft_bench_verbs.h"

namespace weft::bench {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;    // a measurement failed or was wrong
constexpr int kExitBadInput = 2;  // the command line or environment is wrong
constexpr double kNsPerUs = 1e3;

int report(int code, std::string_view what) {
  std::string line(what);
  for (char& c : line) {
    if (c == '\n') c = ' ';
  }
  std::fprintf(stderr, "weft-bench: %s\n", line.c_str());
  return code;
}

// The flag sets weft-bench accepts: its own, and the simulated world's.
constexpr const sim::cli::FlagSet* kFlagSets[] = {&kBenchFlags,
                                                  &sim::cli::kWorldFlags};

constexpr char kUsage[] =
    "nccl-tests' benchmark for weft's collectives\n\n"
    "usage: weft-bench [-b min] [-e max] [-f factor] [-i step] [-w warmup] "
    "[-n iters] [-c 0|1] [-d type] [-o redop] [-r root] [--op=...] "
    "[--algorithm=...] [--json=FILE] [--plot=FILE.svg] [--model] "
    "[--fabric=sim|verbs] [simulator flags: --ranks, --topology, "
    "--devices, --link, --loss, ...]\n"
    "Short options are nccl-tests' (-b 8 means --minbytes=8).";

// --help and -h: the usage, then every flag, set by set. Exits 0.
int print_help() {
  std::printf("weft-bench: %s\n\n%s\n", kUsage,
              sim::cli::flags_help(kFlagSets, {}).c_str());
  std::printf("--helpfull also lists absl's own flags (--flagfile, ...).\n");
  return kExitOk;
}

absl::StatusOr<std::unique_ptr<BenchRunner>> make_runner(
    const BenchOptions& options) {
  absl::StatusOr<sim::cli::WorldFlags> flags = sim::cli::world_flags();
  if (!flags.ok()) return flags.status();
  if (!flags->trace_path.empty()) {
    return absl::InvalidArgumentError(
        "--trace is weft-sim's; trace one run with weft-sim run --op=... "
        "--bytes=... --trace=FILE");
  }
  if (options.fabric == FabricKind::kSim) {
    return std::make_unique<SimRunner>(*std::move(flags), options.group);
  }
  absl::StatusOr<std::unique_ptr<VerbsRunner>> verbs =
      VerbsRunner::create(flags->options.link, options.group);
  if (!verbs.ok()) return verbs.status();
  return std::unique_ptr<BenchRunner>(*std::move(verbs));
}

// The collective one row measures.
harness::CollectiveSpec spec_of(const BenchOp& op,
                                harness::AlgorithmRequest algorithm,
                                uint64_t bytes, const BenchOptions& options) {
  return {op.kind,      op.redop,  options.dtype, bytes,
          options.root, algorithm, false};
}

// Everything that can be checked before the first measurement: each row's
// collective on this group (a root outside it, an op the group's size does
// not allow), and that --json and --plot can be written. So bad input never
// costs a sweep's results.
absl::Status check_before_measuring(const BenchRunner& runner,
                                    const BenchOptions& options) {
  for (const BenchOp& op : options.ops) {
    for (harness::AlgorithmRequest algorithm : options.algorithms) {
      for (uint64_t bytes : options.sizes) {
        if (absl::Status s = runner.check(spec_of(op, algorithm, bytes, options));
            !s.ok()) {
          return s;
        }
      }
    }
  }
  for (const auto& [flag, path] : {std::pair<const char*, std::string>{
                                       "json", options.json_path},
                                   {"plot", options.plot_path}}) {
    if (path.empty()) continue;
    const std::filesystem::path file(path);
    const std::filesystem::path dir =
        file.has_parent_path() ? file.parent_path() : ".";
    std::error_code ec;
    const bool writable =
        std::filesystem::is_directory(dir, ec) &&
        ::access(dir.c_str(), W_OK) == 0 &&
        (!std::filesystem::exists(file, ec) ||
         ::access(file.c_str(), W_OK) == 0);
    if (!writable) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, "=", path,
          ": cannot write there (is the directory there and writable?); "
          "checked before measuring"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<BenchRow> measure_row(BenchRunner& runner, const BenchOp& op,
                                     harness::AlgorithmRequest algorithm,
                                     uint64_t bytes,
                                     const BenchOptions& options) {
  MeasureRequest request;
  request.spec = spec_of(op, algorithm, bytes, options);
  request.warmup_iters = options.warmup_iters;
  request.iters = options.iters;
  request.check = options.check;
  if (absl::Status s = runner.check(request.spec); !s.ok()) return s;
  const harness::CollectiveShape shape =
      *harness::shape_of(request.spec, runner.ranks());
  BenchRow row;
  row.size_bytes = shape.size_bytes;
  row.count = shape.count;
  row.type = std::string(nccl_type_name(dtype_name(options.dtype)));
  row.redop = harness::reduces(op.kind) ? std::string(reduce_op_name(op.redop))
                                        : "none";
  row.root = harness::has_root(op.kind) ? int64_t{options.root} : -1;
  row.bus_factor = shape.bus_factor;
  const Algorithm resolved = runner.algorithm(request.spec);
  row.algorithm = std::string(harness::resolved_algorithm_name(resolved));
  for (Measurement* m : {&row.out_of_place, &row.in_place}) {
    request.spec.in_place = m == &row.in_place;
    absl::StatusOr<Measurement> measured = runner.measure(request);
    if (!measured.ok()) return measured.status();
    *m = *std::move(measured);
    const std::optional<double> model_ns =
        resolved == Algorithm::kRing
            ? runner.ring_model().cost_ns(op.kind, shape.size_bytes)
            : std::nullopt;
    if (options.model && model_ns && m->ok())
      m->model_us = *model_ns / kNsPerUs;
  }
  return row;
}

std::vector<PlotSeries> plot_series(const std::vector<BenchBlock>& blocks) {
  std::vector<PlotSeries> out;
  for (const BenchBlock& block : blocks) {
    PlotSeries s;
    s.name = absl::StrCat(block.op, " ", block.algorithm);
    for (const BenchRow& row : block.rows) {
      if (!row.out_of_place.ok() || row.size_bytes == 0) continue;
      s.points.push_back({static_cast<double>(row.size_bytes),
                          busbw_gbs(row, row.out_of_place)});
    }
    out.push_back(std::move(s));
  }
  return out;
}

absl::Status write_outputs(const std::vector<BenchBlock>& blocks,
                           const BenchOptions& options,
                           const BenchRunner& runner) {
  const bool sim = options.fabric == FabricKind::kSim;
  if (!options.json_path.empty()) {
    const JsonContext context{sim ? "sim" : "verbs",
                              runner.virtual_time() ? "virtual" : "wall",
                              runner.ranks(), runner.describe()};
    if (absl::Status s =
            write_results_json(options.json_path, blocks, options, context);
        !s.ok()) {
      return s;
    }
  }
  if (options.plot_path.empty()) return absl::OkStatus();
  const PlotLabels labels{"weft-bench: bus bandwidth against size",
                          runner.describe(), "size (bytes, out of place)",
                          "bus bandwidth (GB/s)"};
  return write_text_file(options.plot_path,
                         svg_chart(plot_series(blocks), labels));
}

// Runs every (op, algorithm) block, printing each row as it is measured.
absl::StatusOr<std::vector<BenchBlock>> run_blocks(
    BenchRunner& runner, const BenchOptions& options) {
  std::vector<BenchBlock> blocks;
  const bool print = runner.reports();
  for (const BenchOp& op : options.ops) {
    for (harness::AlgorithmRequest algorithm : options.algorithms) {
      BenchBlock block;
      block.op = std::string(harness::collective_name(op.kind));
      block.algorithm = std::string(harness::algorithm_request_name(algorithm));
      if (print) {
        std::fputs(block_header(block, options, runner.describe()).c_str(),
                   stdout);
      }
      for (uint64_t bytes : options.sizes) {
        absl::StatusOr<BenchRow> row =
            measure_row(runner, op, algorithm, bytes, options);
        if (!row.ok()) return row.status();
        if (print) std::fputs(row_lines(*row, options.model).c_str(), stdout);
        std::fflush(stdout);
        block.rows.push_back(*std::move(row));
      }
      if (print) std::fputs(block_footer(block).c_str(), stdout);
      blocks.push_back(std::move(block));
    }
  }
  return blocks;
}

int run(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  absl::StatusOr<std::vector<std::string>> args = translate_args(argc, argv);
  if (!args.ok()) return report(kExitBadInput, to_std(args.status().message()));
  if (sim::cli::wants_help(*args)) return print_help();
  if (sim::cli::wants_version(*args)) {
    std::printf("%s\n", sim::cli::version_line("weft-bench").c_str());
    return kExitOk;
  }
  if (absl::Status s = sim::cli::parse_flags(*args); !s.ok())
    return report(kExitBadInput, to_std(s.message()));
  absl::StatusOr<BenchOptions> options = bench_options();
  if (!options.ok()) {
    return report(kExitBadInput, to_std(options.status().message()));
  }
  absl::StatusOr<std::unique_ptr<BenchRunner>> runner = make_runner(*options);
  if (!runner.ok()) {
    const bool input = absl::IsInvalidArgument(runner.status()) ||
                       absl::IsNotFound(runner.status());
    return report(input ? kExitBadInput : kExitFailed,
                  to_std(runner.status().message()));
  }
  if (absl::Status s = check_before_measuring(**runner, *options); !s.ok()) {
    return report(kExitBadInput, to_std(s.message()));
  }
  absl::StatusOr<std::vector<BenchBlock>> blocks =
      run_blocks(**runner, *options);
  if (!blocks.ok()) {
    const bool input = absl::IsInvalidArgument(blocks.status());
    return report(
        input ? kExitBadInput : kExitFailed,
        input ? to_std(blocks.status().message()) : blocks.status().ToString());
  }
  if (!(*runner)->reports()) return kExitOk;
  if (absl::Status s = write_outputs(*blocks, *options, **runner); !s.ok())
    return report(kExitFailed, to_std(s.message()));
  for (const BenchBlock& block : *blocks) {
    if (wrong_total(block) > 0 || error_count(block) > 0) return kExitFailed;
  }
  return kExitOk;
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) { return weft::bench::run(argc, argv); }
