#include "tools/weft-bench/weft_bench_result.h"

namespace weft::tools::weft_bench {
namespace {

constexpr double kBytesPerGigabyte = 1e9;
constexpr double kUsPerS = 1e6;

}  // namespace

std::optional<double> algbw_gbs(const BenchRow& row, const Measurement& m) {
  if (!m.ok() || m.time_us <= 0 || row.size_bytes == 0) return std::nullopt;
  return static_cast<double>(row.size_bytes) / kBytesPerGigabyte /
         (m.time_us / kUsPerS);
}

std::optional<double> busbw_gbs(const BenchRow& row, const Measurement& m) {
  const std::optional<double> algbw = algbw_gbs(row, m);
  if (!algbw) return std::nullopt;
  return *algbw * row.bus_factor;
}

std::optional<double> average_busbw_gbs(const BenchBlock& block) {
  double sum = 0;
  uint64_t n = 0;
  for (const BenchRow& row : block.rows) {
    for (const Measurement* m : {&row.out_of_place, &row.in_place}) {
      const std::optional<double> busbw = busbw_gbs(row, *m);
      if (!busbw) continue;
      sum += *busbw;
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / static_cast<double>(n);
}

uint64_t wrong_total(const BenchBlock& block) {
  uint64_t total = 0;
  for (const BenchRow& row : block.rows) {
    total += row.out_of_place.wrong + row.in_place.wrong;
  }
  return total;
}

uint64_t error_count(const BenchBlock& block) {
  uint64_t n = 0;
  for (const BenchRow& row : block.rows) {
    n += !row.out_of_place.error.empty();
    n += !row.in_place.error.empty();
  }
  return n;
}

}  // namespace weft::tools::weft_bench
