#include "tools/weft-bench/weft_bench_run.h"

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/group_options.h"
#include "harness/collective_spec.h"
#include "tools/cli/output_file.h"
#include "tools/weft-bench/svg_plot.h"
#include "tools/weft-bench/weft_bench_args.h"
#include "tools/weft-bench/weft_bench_json.h"
#include "tools/weft-bench/weft_bench_model.h"
#include "tools/weft-bench/weft_bench_sizes.h"
#include "tools/weft-bench/weft_bench_table.h"

namespace weft::tools::weft_bench {
namespace {

constexpr double kNsPerUs = 1e3;

absl::StatusOr<BenchRow> measure_row(BenchRunner& runner, const BenchOp& op,
                                     harness::AlgorithmRequest algorithm,
                                     uint64_t bytes,
                                     const BenchOptions& options) {
  MeasureRequest request;
  request.spec = spec_of(op, algorithm, bytes, options);
  request.warmup_iters = options.warmup_iters;
  request.iters = options.iters;
  request.check = options.check;
  request.registered = options.registered;
  if (absl::Status s = runner.check(request.spec); !s.ok()) return s;
  const harness::CollectiveShape shape =
      *harness::shape_of(request.spec, runner.ranks());
  BenchRow row;
  row.size_bytes = shape.size_bytes;
  row.count = shape.count;
  row.type = std::string(nccl_type_name(dtype_name(op.dtype)));
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
    if (!options.model || !m->ok()) continue;
    const CostModel model = runner.cost_model();
    if (resolved == Algorithm::kRing) {
      if (const auto ring = model.cost(op.kind, resolved, shape.size_bytes))
        m->model_us = ring->step_by_step_ns / kNsPerUs;
    }
    if (const auto bound = model.bound(op.kind, shape.size_bytes)) {
      m->bound_us = bound->lower_bound_ns / kNsPerUs;
      m->bound_algorithm = std::string(algorithm_name(bound->algorithm));
    }
  }
  return row;
}

std::vector<PlotSeries> plot_series(const std::vector<BenchBlock>& blocks) {
  std::vector<PlotSeries> out;
  // -d all and -o all give an op and algorithm several blocks: their lines
  // are told apart by type and reduction.
  std::map<std::string, int> blocks_named;
  for (const BenchBlock& block : blocks) {
    ++blocks_named[absl::StrCat(block.op, " ", block.algorithm)];
  }
  for (const BenchBlock& block : blocks) {
    PlotSeries s;
    s.name = absl::StrCat(block.op, " ", block.algorithm);
    if (blocks_named[s.name] > 1 && !block.rows.empty()) {
      absl::StrAppend(&s.name, " ", block.rows[0].type,
                      block.rows[0].redop == "none"
                          ? ""
                          : absl::StrCat(" ", block.rows[0].redop));
    }
    for (const BenchRow& row : block.rows) {
      const std::optional<double> busbw = busbw_gbs(row, row.out_of_place);
      if (!busbw) continue;
      s.points.push_back({static_cast<double>(row.size_bytes), *busbw});
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

absl::Status write_outputs(const std::vector<BenchBlock>& blocks,
                           const BenchOptions& options,
                           const BenchRunner& runner) {
  if (!options.json_path.empty()) {
    const JsonContext context{
        fabric_name(options.fabric), runner.virtual_time() ? "virtual" : "wall",
        runner.ranks(), runner.describe(), runner.registration_caches()};
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
  return cli::write_text_file(options.plot_path,
                              svg_chart(plot_series(blocks), labels));
}

harness::CollectiveSpec spec_of(const BenchOp& op,
                                harness::AlgorithmRequest algorithm,
                                uint64_t bytes, const BenchOptions& options) {
  return {op.kind, op.redop, op.dtype, bytes, options.root, algorithm, false};
}

namespace {

// Says once per op and type, on stderr, that sizes below what it carries
// were raised.
void note_raised(const BenchBlock& block, const BlockSizes& sizes, DType dtype,
                 uint32_t ranks) {
  const std::string line = absl::StrFormat(
      "weft-bench: %s of %s on %u ranks moves at least %u bytes (count 1); "
      "smaller sizes are measured at %u bytes\n",
      block.op, nccl_type_name(dtype_name(dtype)), ranks, sizes.smallest_bytes,
      sizes.smallest_bytes);
  std::fputs(line.c_str(), stderr);
}

}  // namespace

BenchRun run_blocks(BenchRunner& runner, const BenchOptions& options) {
  BenchRun run;
  const bool print = runner.reports();
  // Ops (and types) whose raised sizes were reported.
  std::set<std::string> noted;
  for (const BenchOp& op : options.ops) {
    for (harness::AlgorithmRequest algorithm : options.algorithms) {
      BenchBlock block;
      block.op = std::string(harness::collective_name(op.kind));
      block.algorithm = std::string(harness::algorithm_request_name(algorithm));
      const BlockSizes sizes = block_sizes(spec_of(op, algorithm, 0, options),
                                           options.sizes, runner.ranks());
      if (sizes.raised && print &&
          noted.insert(absl::StrCat(block.op, " ", static_cast<int>(op.dtype)))
              .second) {
        note_raised(block, sizes, op.dtype, runner.ranks());
      }
      if (print) {
        std::fputs(block_header(block, options, runner.describe()).c_str(),
                   stdout);
      }
      for (uint64_t bytes : sizes.bytes) {
        absl::StatusOr<BenchRow> row =
            measure_row(runner, op, algorithm, bytes, options);
        if (!row.ok()) {
          run.status = row.status();
          run.failed_row = absl::StrFormat("%s %s %u bytes", block.op,
                                           block.algorithm, bytes);
          run.blocks.push_back(std::move(block));
          return run;
        }
        if (print) std::fputs(row_lines(*row, options.model).c_str(), stdout);
        std::fflush(stdout);
        block.rows.push_back(*std::move(row));
        ++run.rows;
      }
      if (print) std::fputs(block_footer(block).c_str(), stdout);
      run.blocks.push_back(std::move(block));
    }
  }
  return run;
}

std::string model_tables(const BenchRunner& runner,
                         const BenchOptions& options) {
  const CostModel model = runner.cost_model();
  std::string out;
  std::set<harness::CollectiveKind> done;
  for (const BenchOp& op : options.ops) {
    if (!done.insert(op.kind).second) continue;  // -d all, -o all: once
    const std::string_view name = harness::collective_name(op.kind);
    const harness::CollectiveSpec spec =
        spec_of(op, harness::AlgorithmRequest::kAuto, 0, options);
    const BlockSizes sizes = block_sizes(spec, options.sizes, runner.ranks());
    if (!model.bound(op.kind, sizes.bytes.empty() ? 0 : sizes.bytes[0])) {
      absl::StrAppendFormat(&out,
                            "# weft-bench: the cost model does not "
                            "cover %s on %u rank(s)\n",
                            name, runner.ranks());
      continue;
    }
    absl::StrAppendFormat(
        &out,
        "# weft-bench cost model, %s, on %s\n"
        "# alpha %.0f ns (latency + overhead), beta %.4f ns/B, %u cable(s) "
        "per pair, %u ring direction(s)%s\n"
        "# step by step = steps x (alpha + bytes/step x beta); lower bound =\n"
        "# max(steps x alpha, alpha + steps x bytes/step x beta); \"bound\": "
        "the lowest lower bound\n"
        "# %10s  %-14s  %6s  %12s  %12s  %11s\n",
        name, runner.describe(), model.alpha_ns, model.beta_ns_per_byte,
        model.cables, model.ring_directions,
        model.full_mesh ? "" : ", not fully connected (no mesh algorithm)",
        "size", "algorithm", "steps", "bytes/step", "by step (us)",
        "lower (us)");
    for (uint64_t bytes : sizes.bytes) {
      const std::optional<CostModel::Cost> bound = model.bound(op.kind, bytes);
      for (Algorithm a : {Algorithm::kMeshExchange, Algorithm::kMeshScatter,
                          Algorithm::kRing}) {
        const std::optional<CostModel::Cost> c = model.cost(op.kind, a, bytes);
        if (!c) continue;
        absl::StrAppendFormat(
            &out, "  %10u  %-14s  %6u  %12.2f  %12.2f  %11.2f%s\n", bytes,
            algorithm_name(a), c->steps, c->bytes_per_step,
            c->step_by_step_ns / kNsPerUs, c->lower_bound_ns / kNsPerUs,
            bound && bound->algorithm == a ? "  bound" : "");
      }
    }
  }
  return out;
}

std::string stopped_line(const BenchRun& run, const BenchOptions& options,
                         const BenchRunner& runner) {
  const absl::Status& why = run.status;
  std::string line =
      absl::StrCat("row ", run.failed_row, " failed: ",
                   absl::IsInvalidArgument(why) ? std::string(why.message())
                                                : why.ToString());
  std::vector<std::string> files;
  for (const std::string& path : {options.json_path, options.plot_path}) {
    if (!path.empty()) files.push_back(path);
  }
  if (!runner.reports() || files.empty()) return line;
  if (absl::Status s = write_outputs(run.blocks, options, runner); !s.ok()) {
    return absl::StrCat(line, "; ", s.message());
  }
  return absl::StrCat(line, "; ", absl::StrJoin(files, " and "),
                      files.size() == 1 ? " holds" : " hold", " the ", run.rows,
                      " row(s) measured before it");
}

}  // namespace weft::tools::weft_bench
