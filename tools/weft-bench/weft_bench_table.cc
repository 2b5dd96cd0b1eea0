#include "tools/weft-bench/weft_bench_table.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"

namespace weft::tools::weft_bench {
namespace {

constexpr int kTimeWidth = 7;
constexpr int kBandwidthWidth = 6;
constexpr int kDecimalBase = 10;

std::string centred(std::string_view text, int width) {
  const int pad = width - static_cast<int>(text.size());
  const int left = pad > 0 ? pad / 2 : 0;
  const int right = pad > 0 ? pad - left : 0;
  return absl::StrCat(std::string(left, ' '), base::to_absl(text),
                      std::string(right, ' '));
}

// The cells --model adds: the ring's cost and time / it, the bound and
// time / it.
struct ModelCells {
  std::string model = "-", ratio = "-", bound = "-", bound_ratio = "-";
};

std::string placement_columns(const char* time, const char* algbw,
                              const char* busbw, const char* wrong,
                              const ModelCells& model, bool with_model) {
  std::string out =
      absl::StrFormat("  %7s  %6s  %6s  %6s", time, algbw, busbw, wrong);
  if (with_model) {
    absl::StrAppendFormat(&out, "  %7s  %6s  %7s  %7s", model.model,
                          model.ratio, model.bound, model.bound_ratio);
  }
  return out;
}

ModelCells all_cells(const char* text) { return {text, text, text, text}; }

std::string placement_cells(const BenchRow& row, const Measurement& m,
                            bool model) {
  if (!m.ran) {
    return placement_columns("N/A", "N/A", "N/A", "N/A", all_cells("N/A"),
                             model);
  }
  if (!m.error.empty()) {
    return placement_columns("-", "-", "-", "error", all_cells("-"), model);
  }
  const std::string time = format_number(m.time_us, kTimeWidth);
  const std::optional<double> algbw_value = algbw_gbs(row, m);
  const std::optional<double> busbw_value = busbw_gbs(row, m);
  const std::string algbw =
      algbw_value ? format_number(*algbw_value, kBandwidthWidth) : "-";
  const std::string busbw =
      busbw_value ? format_number(*busbw_value, kBandwidthWidth) : "-";
  const std::string wrong =
      m.checked ? absl::StrFormat("%6g", static_cast<double>(m.wrong)) : "N/A";
  ModelCells cells;
  if (m.model_us > 0) {
    cells.model = format_number(m.model_us, kTimeWidth);
    cells.ratio = format_number(m.time_us / m.model_us, kBandwidthWidth);
  }
  if (m.bound_us > 0) {
    cells.bound = format_number(m.bound_us, kTimeWidth);
    cells.bound_ratio = format_number(m.time_us / m.bound_us, kTimeWidth);
  }
  return placement_columns(time.c_str(), algbw.c_str(), busbw.c_str(),
                           wrong.c_str(), cells, model);
}

}  // namespace

std::string format_number(double value, int width) {
  int digits = 0;  // digits before the decimal point
  for (double v = 1; value >= v && digits < 64; v *= kDecimalBase) ++digits;
  if (digits < width - 2) return absl::StrFormat("%*.2f", width, value);
  if (digits < width - 1) return absl::StrFormat("%*.1f", width, value);
  if (digits < width + 1) return absl::StrFormat("%*.0f", width, value);
  return absl::StrFormat("%*.1e", width, value);
}

std::string block_header(const BenchBlock& block, const BenchOptions& options,
                         const std::string& where) {
  const bool model = options.model;
  const bool factor = options.step_factor > 1;
  std::string out = absl::StrFormat(
      "# weft-bench %s, algorithm %s, on %s\n"
      "# minBytes %u maxBytes %u step: %u(%s) warmup iters: %u iters: %u "
      "validation: %d\n#\n",
      block.op, block.algorithm, where, options.min_bytes, options.max_bytes,
      factor ? options.step_factor : options.step_bytes,
      factor ? "factor" : "bytes", options.warmup_iters, options.iters,
      options.check ? 1 : 0);
  const int width =
      static_cast<int>(placement_columns("", "", "", "", {}, model).size());
  absl::StrAppendFormat(&out, "# %10s  %12s  %8s  %6s  %6s%s%s\n", "", "", "",
                        "", "", centred("out-of-place", width),
                        centred("in-place", width));
  const std::string names =
      placement_columns("time", "algbw", "busbw", "#wrong",
                        {"model", "ratio", "bound", "t/bound"}, model);
  const std::string units = placement_columns("(us)", "(GB/s)", "(GB/s)", "",
                                              {"(us)", "", "(us)", ""}, model);
  absl::StrAppendFormat(&out, "# %10s  %12s  %8s  %6s  %6s%s%s\n", "size",
                        "count", "type", "redop", "root", names, names);
  absl::StrAppendFormat(&out, "# %10s  %12s  %8s  %6s  %6s%s%s\n", "(B)",
                        "(elements)", "", "", "", units, units);
  return out;
}

std::string row_lines(const BenchRow& row, bool model) {
  std::string out = absl::StrFormat(
      "%12u  %12u  %8s  %6s  %6d%s%s\n", row.size_bytes, row.count, row.type,
      row.redop, row.root, placement_cells(row, row.out_of_place, model),
      placement_cells(row, row.in_place, model));
  for (const auto& [name, m] : {std::pair{"out-of-place", &row.out_of_place},
                                std::pair{"in-place", &row.in_place}}) {
    if (!m->error.empty()) {
      absl::StrAppendFormat(&out, "# ^ %s %u bytes: %s\n", name, row.size_bytes,
                            m->error);
    }
  }
  return out;
}

std::string block_footer(const BenchBlock& block) {
  const uint64_t wrong = wrong_total(block);
  const uint64_t errors = error_count(block);
  const std::optional<double> busbw = average_busbw_gbs(block);
  std::string out = absl::StrFormat(
      "# %-20s : %u %s\n# %-20s : %s \n# %-20s : %u\n", "Out of bounds values",
      wrong, wrong == 0 ? "OK" : "FAILED", "Avg bus bandwidth",
      busbw ? absl::StrFormat("%g", *busbw) : std::string("-"), "#wrong total",
      wrong);
  if (errors > 0) {
    absl::StrAppendFormat(&out, "# %-20s : %u (see the # ^ lines)\n",
                          "Failed measurements", errors);
  }
  absl::StrAppend(&out, "#\n");
  return out;
}

std::string registration_footer(
    const std::vector<RegistrationCacheReport>& caches, uint32_t rank) {
  if (caches.empty()) return "";
  std::string out = absl::StrFormat(
      "# Registration cache of rank %u (memory regions per device):\n"
      "# %-16s %8s %8s %10s %12s %10s %10s\n",
      rank, "device", "budget", "regions", "registered", "hits", "misses",
      "evictions");
  for (const RegistrationCacheReport& c : caches) {
    absl::StrAppendFormat(&out, "# %-16s %8u %8u %10u %12u %10u %10u\n",
                          c.device, c.budget, c.regions,
                          c.counters.registrations, c.counters.hits,
                          c.counters.misses, c.counters.evictions);
  }
  absl::StrAppend(&out, "#\n");
  return out;
}

}  // namespace weft::tools::weft_bench
