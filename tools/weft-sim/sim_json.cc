#include "tools/weft-sim/sim_json.h"

#include <optional>
#include <utility>

#include "absl/flags/flag.h"
#include "fabric/errors.h"
#include "tools/cli/output_file.h"
#include "tools/weft-sim/row_runner.h"

ABSL_FLAG(std::string, json, "",
          "study, run, sweep: also write the results as JSON to this file "
          "(docs/simulator.md, \"JSON output\")");

namespace weft::tools::weft_sim {

const cli::FlagSet kJsonFlags("json", "results as JSON", FLAGS_json);

namespace {

constexpr int kIndent = 2;

nlohmann::ordered_json optional_json(const std::optional<double>& value) {
  return value ? nlohmann::ordered_json(*value)
               : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json id_json(uint32_t id) {
  return id == kNoPeer ? nlohmann::ordered_json(nullptr)
                       : nlohmann::ordered_json(id);
}

}  // namespace

absl::StatusOr<std::string> json_path() {
  const std::string path = absl::GetFlag(FLAGS_json);
  if (path.empty()) return path;
  if (absl::Status s = cli::check_writable("json", path); !s.ok()) return s;
  return path;
}

nlohmann::ordered_json json_document(const std::string& command,
                                     int format_version) {
  nlohmann::ordered_json doc;
  doc["format_version"] = format_version;
  doc["tool"] = "weft-sim";
  doc["command"] = command;
  return doc;
}

nlohmann::ordered_json outcome_json(const harness::Outcome& outcome) {
  nlohmann::ordered_json j;
  j["verdict"] = std::string(harness::verdict_name(outcome.verdict));
  j["summary"] = outcome.summary();
  j["cause"] = nullptr;
  j["rank"] = nullptr;
  j["peer"] = nullptr;
  if (outcome.place) {
    j["cause"] = std::string(error_cause_name(outcome.place->cause));
    j["rank"] = id_json(outcome.place->rank);
    j["peer"] = id_json(outcome.place->peer);
  }
  return j;
}

nlohmann::ordered_json row_json(const StudyRow& row) {
  const harness::CaseRun& run = row.run;
  const RowFigures figures = row_figures(row);
  nlohmann::ordered_json j;
  j["topology"] = row.topology;
  j["op"] = harness::api_name(row.spec);
  j["bytes"] = run.shape.size_bytes;
  j["dtype"] = std::string(dtype_name(row.spec.dtype));
  j["algorithm"] = std::string(harness::resolved_algorithm_name(run.algorithm));
  j["time_us"] = figures.time_us;
  j["algbw_gb_per_s"] = optional_json(figures.algbw_gb_per_s);
  j["busbw_gb_per_s"] = optional_json(figures.busbw_gb_per_s);
  j["frames"] = run.frames;
  j["faults_injected"] = run.faults_injected;
  j["detected"] = run.outcome.detections;
  j["outcome"] = outcome_json(run.outcome);
  j["trace_hash"] = hash_hex(row.trace_hash);
  return j;
}

nlohmann::ordered_json verdict_counts_json(
    std::span<const uint64_t> by_verdict) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (size_t v = 0; v < by_verdict.size(); ++v) {
    j[std::string(harness::verdict_name(static_cast<harness::Verdict>(v)))] =
        by_verdict[v];
  }
  return j;
}

absl::Status write_json(const std::string& path,
                        const nlohmann::ordered_json& doc) {
  return cli::write_text_file(
      path, doc.dump(kIndent, ' ', /*ensure_ascii=*/false,
                     nlohmann::json::error_handler_t::replace) +
                "\n");
}

}  // namespace weft::tools::weft_sim
