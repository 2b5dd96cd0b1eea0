#include "tools/weft-bench/weft_bench_json.h"

#include <optional>
#include <utility>

#include "collectives/dtype.h"
#include "nlohmann/json.hpp"
#include "tools/cli/output_file.h"

namespace weft::tools::weft_bench {
namespace {

// Keys in the order written: format_version and tool first (docs/json.md).
using Json = nlohmann::ordered_json;

// 2: the shared vocabulary (docs/json.md): format_version (was version),
// clock (was time), bytes (was size), min_bytes, max_bytes, step_bytes,
// step_factor, *_gb_per_s (was *_gbs).
constexpr int kJsonFormatVersion = 2;
constexpr int kIndent = 1;

Json measurement_json(const BenchRow& row, const Measurement& m) {
  if (!m.ran) return nullptr;
  Json j;
  j["error"] = m.error.empty() ? Json(nullptr) : Json(m.error);
  if (!m.error.empty()) return j;
  j["time_us"] = m.time_us;
  const std::optional<double> algbw = algbw_gbs(row, m);
  const std::optional<double> busbw = busbw_gbs(row, m);
  j["algbw_gb_per_s"] = algbw ? Json(*algbw) : Json(nullptr);
  j["busbw_gb_per_s"] = busbw ? Json(*busbw) : Json(nullptr);
  j["nwrong"] = m.checked ? Json(m.wrong) : Json(nullptr);
  Json counters;
  for (const LinkCounters::Field& f : LinkCounters::kFields) {
    counters[f.name] = m.counters.*f.value;
  }
  j["counters"] = std::move(counters);
  if (m.model_us > 0) {
    j["model_us"] = m.model_us;
    j["ratio"] = m.time_us / m.model_us;
  }
  if (m.bound_us > 0) {
    j["bound_us"] = m.bound_us;
    j["bound_ratio"] = m.time_us / m.bound_us;
    j["bound_algorithm"] = m.bound_algorithm;
  }
  return j;
}

Json row_json(const BenchRow& row) {
  return {{"bytes", row.size_bytes},
          {"count", row.count},
          {"type", row.type},
          {"redop", row.redop},
          {"root", row.root},
          {"algorithm", row.algorithm},
          {"bus_factor", row.bus_factor},
          {"out_of_place", measurement_json(row, row.out_of_place)},
          {"in_place", measurement_json(row, row.in_place)}};
}

Json block_json(const BenchBlock& block) {
  Json results = Json::array();
  for (const BenchRow& row : block.rows) results.push_back(row_json(row));
  const std::optional<double> busbw = average_busbw_gbs(block);
  return {{"op", block.op},
          {"algorithm", block.algorithm},
          {"results", std::move(results)},
          {"average_busbw_gb_per_s", busbw ? Json(*busbw) : Json(nullptr)},
          {"wrong_total", wrong_total(block)},
          {"errors", error_count(block)}};
}

}  // namespace

std::string results_json(const std::vector<BenchBlock>& blocks,
                         const BenchOptions& options,
                         const JsonContext& context) {
  Json doc;
  doc["format_version"] = kJsonFormatVersion;
  doc["tool"] = "weft-bench";
  doc["fabric"] = context.fabric;
  doc["clock"] = context.time;
  doc["ranks"] = context.ranks;
  doc["where"] = context.where;
  doc["config"] = {
      {"min_bytes", options.min_bytes},
      {"max_bytes", options.max_bytes},
      {"step_bytes", options.step_bytes},
      {"step_factor", options.step_factor},
      {"warmup_iters", options.warmup_iters},
      {"iters", options.iters},
      {"check", options.check},
      {"registered", options.registered},
      {"datatype", options.all_dtypes ? std::string("all")
                                      : std::string(dtype_name(options.dtype))},
      {"model", options.model}};
  Json out = Json::array();
  for (const BenchBlock& block : blocks) out.push_back(block_json(block));
  doc["blocks"] = std::move(out);
  if (context.fabric == "verbs") {
    Json caches = Json::array();
    for (const RegistrationCacheReport& c : context.registration_caches) {
      caches.push_back({{"device", c.device},
                        {"budget", c.budget},
                        {"regions", c.regions},
                        {"registrations", c.counters.registrations},
                        {"hits", c.counters.hits},
                        {"misses", c.counters.misses},
                        {"evictions", c.counters.evictions}});
    }
    doc["registration_caches"] = std::move(caches);
  }
  return doc.dump(kIndent, ' ', false, Json::error_handler_t::replace) + "\n";
}

absl::Status write_results_json(const std::string& path,
                                const std::vector<BenchBlock>& blocks,
                                const BenchOptions& options,
                                const JsonContext& context) {
  return cli::write_text_file(path, results_json(blocks, options, context));
}

}  // namespace weft::tools::weft_bench
