#include "tools/weft-sim/study_table.h"

#include <algorithm>
#include <cstddef>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "tools/cli/memory_check.h"
#include "tools/cli/world_flags.h"

namespace weft::tools::weft_sim {
namespace {

// The op column is as wide as the longest op name (op_width()).
constexpr char kRowFormat[] =
    "%-8s %-*s %10s %-9s %-13s %12s %7s %7s %8s %6s %8s  %s";
constexpr double kBytesPerGigabyte = 1e9;
constexpr double kNsPerUs = 1e3;

// The longest harness::api_name() of any collective and reduction
// ("reduce_scatter/prod"), so that no op name pushes its row out of line.
int op_width() {
  static const int width = [] {
    size_t longest = 0;
    for (int k = 0; k < harness::kCollectiveKindCount; ++k) {
      for (int op = 0; op < kReduceOpCount; ++op) {
        harness::CollectiveSpec spec;
        spec.kind = static_cast<harness::CollectiveKind>(k);
        spec.op = static_cast<ReduceOp>(op);
        longest = std::max(longest, harness::api_name(spec).size());
      }
    }
    return static_cast<int>(longest);
  }();
  return width;
}

}  // namespace

std::string world_summary(const sim::WorldOptions& world,
                          const std::string& link_name) {
  const sim::FaultRates& r = world.faults.rates;
  std::string faults = "none";
  if (r.any()) {
    faults = absl::StrFormat("loss=%g duplicate=%g reorder=%g error=%g", r.loss,
                             r.duplicate, r.reorder, r.error_completion);
  }
  if (!world.faults.script.empty()) {
    absl::StrAppendFormat(&faults, " + %u scripted",
                          world.faults.script.size());
  }
  return absl::StrFormat("link %s (%s), faults %s, seed %u", link_name,
                         world.link.to_string(), faults, world.seed);
}

std::string study_header() {
  const std::string names = absl::StrFormat(
      kRowFormat, "topology", op_width(), "op", "bytes", "dtype", "algorithm",
      "time (us)", "algbw", "busbw", "frames", "faults", "detected", "outcome");
  const std::string units =
      absl::StrFormat(kRowFormat, "", op_width(), "", "", "", "", "simulated",
                      "GB/s", "GB/s", "", "inject", "", "");
  return absl::StrCat(names, "\n", units, "\n");
}

RowFigures row_figures(const StudyRow& row) {
  const harness::CaseRun& run = row.run;
  const double per_iteration_ns =
      static_cast<double>(run.elapsed_ns) / row.iterations;
  RowFigures out;
  out.time_us = per_iteration_ns / kNsPerUs;
  const bool moved_bytes = run.shape.size_bytes > 0 && run.shape.bus_factor > 0;
  if (run.outcome.verdict == harness::Verdict::kCorrect && moved_bytes &&
      per_iteration_ns > 0) {
    const double per_s = static_cast<double>(run.shape.size_bytes) /
                         (per_iteration_ns / kNsPerS);
    out.algbw_gb_per_s = per_s / kBytesPerGigabyte;
    out.busbw_gb_per_s = per_s * run.shape.bus_factor / kBytesPerGigabyte;
  }
  return out;
}

std::string study_row_line(const StudyRow& row) {
  const harness::CaseRun& run = row.run;
  const RowFigures figures = row_figures(row);
  const auto cell = [](std::optional<double> gb_per_s) {
    return gb_per_s ? absl::StrFormat("%.2f", *gb_per_s) : std::string("-");
  };
  return absl::StrFormat(
      kRowFormat, row.topology, op_width(), harness::api_name(row.spec),
      absl::StrCat(run.shape.size_bytes), dtype_name(row.spec.dtype),
      harness::resolved_algorithm_name(run.algorithm),
      absl::StrFormat("%.2f", figures.time_us), cell(figures.algbw_gb_per_s),
      cell(figures.busbw_gb_per_s), absl::StrCat(run.frames),
      absl::StrCat(run.faults_injected), absl::StrCat(run.outcome.detections),
      run.outcome.summary());
}

std::string reproduce_command(const StudyRow& row,
                              const std::string& world_args) {
  const harness::CollectiveSpec& s = row.spec;
  std::string out = absl::StrCat(
      "weft-sim run --op=", base::to_absl(harness::collective_name(s.kind)),
      " --bytes=", row.run.shape.size_bytes,
      " --dtype=", base::to_absl(dtype_name(s.dtype)));
  if (row.run.algorithm != Algorithm::kAuto) {
    absl::StrAppend(&out, " --algorithm=",
                    base::to_absl(algorithm_name(row.run.algorithm)));
  }
  if (harness::reduces(s.kind))
    absl::StrAppend(&out, " --redop=", base::to_absl(reduce_op_name(s.op)));
  if (harness::has_root(s.kind)) absl::StrAppend(&out, " --root=", s.root);
  if (s.in_place) absl::StrAppend(&out, " --in_place");
  if (row.iterations > 1)
    absl::StrAppend(&out, " --iterations=", row.iterations);
  if (!world_args.empty()) absl::StrAppend(&out, " ", world_args);
  return out;
}

namespace {

// Whether `arg` (--name, --name=value, --noname) sets a world flag or the
// memory check.
bool run_takes(const std::string& arg) {
  const size_t start = arg.find_first_not_of('-');
  if (start == 0 || start == std::string::npos) return false;
  const std::string name = arg.substr(start, arg.find('=') - start);
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  if (flag == nullptr && name.rfind("no", 0) == 0) {
    flag = absl::FindCommandLineFlag(name.substr(2));
  }
  return flag != nullptr && (cli::kWorldFlags.contains(*flag) ||
                             cli::kMemoryFlags.contains(*flag));
}

}  // namespace

std::string reproduce_world_args(const std::vector<std::string>& args,
                                 bool without_seed) {
  std::string out;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!run_takes(a) || a.rfind("--trace", 0) == 0 ||
        (without_seed && a.rfind("--seed", 0) == 0)) {
      continue;
    }
    absl::StrAppend(&out, out.empty() ? "" : " ", a);
  }
  return out;
}

}  // namespace weft::tools::weft_sim
