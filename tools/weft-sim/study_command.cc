// weft-sim's default command, the study: 8 simulated Macs over the tb5
// link, mesh and ring, every collective at sizes from 4 KiB to 64 MiB with
// low-rate faults on (study_plan.h), one table, a Perfetto trace of one
// representative run, and one hash of every run's trace. Exits 0 only when
// every outcome was an allowed one. As the default command (no command
// named), given any of `run`'s flags (--op, --bytes, ...), it runs that
// single collective instead; `weft-sim study` refuses them.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/absl_compat.h"
#include "fabric/topology_check.h"
#include "tools/cli/byte_size.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/progress.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-sim/collective_flags.h"
#include "tools/weft-sim/commands.h"
#include "tools/weft-sim/row_runner.h"
#include "tools/weft-sim/sim_json.h"
#include "tools/weft-sim/study_plan.h"

ABSL_FLAG(std::string, max_bytes, "64M",
          "study: leave out the rows larger than this (K, M, G suffixes), "
          "for a quicker study");

namespace weft::tools::weft_sim {

const cli::FlagSet kStudyFlags("study", "the default study", FLAGS_max_bytes);

namespace {

constexpr char kDefaultTracePath[] = "weft-sim-trace.json";

struct StudyTopology {
  std::string name;
  Topology topology;
};

struct StudyConfig {
  sim::WorldOptions world;  // topology replaced per row
  std::string link_name;
  std::vector<StudyTopology> topologies;
  std::string trace_path;
  std::string world_args;  // for reproduce lines, without the topology
};

bool given(const std::vector<std::string>& args, std::string_view flag) {
  for (const std::string& a : args) {
    if (a == absl::StrCat("--", base::to_absl(flag)) ||
        a.rfind(absl::StrCat("--", base::to_absl(flag), "="), 0) == 0) {
      return true;
    }
  }
  return false;
}

absl::StatusOr<StudyConfig> study_config(const std::vector<std::string>& args,
                                         const cli::WorldFlags& flags) {
  StudyConfig c;
  c.world = flags.options;
  c.link_name = flags.link_name;
  c.world_args = reproduce_world_args(args, /*without_seed=*/true);
  const Topology& given_topology = flags.options.topology;
  if (given(args, "topology") || given(args, "devices")) {
    c.topologies.push_back({flags.topology_name, given_topology});
  } else {
    const uint32_t n = given_topology.ranks();
    const auto cables =
        static_cast<uint32_t>(n > 1 ? given_topology.devices(0, 1).size() : 1);
    absl::StatusOr<Topology> ring = Topology::ring(n, cables);
    if (!ring.ok()) return ring.status();
    c.topologies.push_back({"mesh", given_topology});
    c.topologies.push_back({"ring", *std::move(ring)});
  }
  constexpr std::string_view kFaultFlags[] = {"loss", "duplicate", "reorder",
                                              "error", "faults"};
  bool fault_flags = false;
  for (std::string_view f : kFaultFlags) fault_flags |= given(args, f);
  if (!fault_flags) {
    c.world.faults.rates = study_fault_rates();
    const sim::FaultRates& r = c.world.faults.rates;
    absl::StrAppendFormat(&c.world_args,
                          "%s--loss=%g --duplicate=%g "
                          "--reorder=%g --error=%g",
                          c.world_args.empty() ? "" : " ", r.loss, r.duplicate,
                          r.reorder, r.error_completion);
  }
  c.trace_path = given(args, "trace") ? flags.trace_path : kDefaultTracePath;
  return c;
}

bool is_trace_candidate(const harness::CollectiveSpec& spec) {
  return spec.kind == harness::CollectiveKind::kAllReduce &&
         spec.op == ReduceOp::kSum && spec.dtype == DType::kFloat32 &&
         spec.bytes <= kStudyTraceBytes;
}

// One row to run: which topology, what, with which seed.
struct PlannedRow {
  size_t topology = 0;
  harness::CollectiveSpec spec;
  uint64_t seed = 0;
  bool traced = false;
};

// Every topology's plan without rows over --max_bytes; row r gets seed
// (--seed) + r; the trace goes to the last topology's largest all-sum of
// at most kStudyTraceBytes.
std::vector<PlannedRow> plan_rows(const StudyConfig& c, uint64_t max_bytes) {
  std::vector<PlannedRow> rows;
  for (size_t t = 0; t < c.topologies.size(); ++t) {
    for (const harness::CollectiveSpec& spec : study_plan()) {
      if (spec.bytes > max_bytes) continue;
      rows.push_back({t, spec, c.world.seed + rows.size(), false});
    }
  }
  PlannedRow* traced = nullptr;
  for (PlannedRow& row : rows) {
    const bool last = row.topology + 1 == c.topologies.size();
    if (last && is_trace_candidate(row.spec) &&
        (traced == nullptr || row.spec.bytes > traced->spec.bytes)) {
      traced = &row;
    }
  }
  if (traced != nullptr && !c.trace_path.empty()) traced->traced = true;
  return rows;
}

struct StudyTally {
  uint64_t folded_hash = kFoldHashStart;
  uint64_t by_verdict[harness::kVerdictCount] = {};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  std::vector<std::string> reproduce;
  std::string traced;  // which row the trace shows
};

// `weft-sim run` flags that rerun `row` alone, after the row's own flags.
std::string row_world_args(const StudyConfig& c, const StudyTopology& t,
                           uint64_t seed) {
  std::vector<std::string> parts;
  // A generated topology is not among the flags given: name it.
  if (t.name == "mesh" || t.name == "ring")
    parts.push_back(absl::StrCat("--topology=", t.name));
  if (!c.world_args.empty()) parts.push_back(c.world_args);
  parts.push_back(absl::StrCat("--seed=", seed));
  return absl::StrJoin(parts, " ");
}

RowRequest row_request(const StudyConfig& c, const PlannedRow& planned) {
  const StudyTopology& t = c.topologies[planned.topology];
  RowRequest request;
  request.world = c.world;
  request.world.topology = t.topology;
  request.world.seed = planned.seed;
  request.topology_name = t.name;
  request.spec = planned.spec;
  if (planned.traced) request.trace_path = c.trace_path;
  return request;
}

// Every row's memory estimate against the limit, before the first row
// runs; the largest row's estimate is printed first when it is big.
absl::Status check_study_memory(const StudyConfig& c,
                                const std::vector<PlannedRow>& rows) {
  const PlannedRow* largest = nullptr;
  uint64_t largest_bytes = 0;
  for (const PlannedRow& planned : rows) {
    const std::optional<harness::MemoryEstimate> estimate =
        row_memory_estimate(row_request(c, planned));
    if (estimate && estimate->total_bytes() > largest_bytes) {
      largest = &planned;
      largest_bytes = estimate->total_bytes();
    }
  }
  for (const PlannedRow& planned : rows) {
    const std::string what =
        absl::StrFormat("the study's row %s of %u bytes over %s",
                        harness::api_name(planned.spec), planned.spec.bytes,
                        c.topologies[planned.topology].name);
    if (absl::Status s = check_row_memory(row_request(c, planned), what,
                                          &planned == largest);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status run_planned(const StudyConfig& c, const PlannedRow& planned,
                         StudyTally* tally) {
  const StudyTopology& t = c.topologies[planned.topology];
  absl::StatusOr<StudyRow> row = run_row(row_request(c, planned));
  if (!row.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s over %s: %s", harness::api_name(planned.spec),
                        t.name, row.status().message()));
  }
  std::printf("%s\n", study_row_line(*row).c_str());
  std::fflush(stdout);
  tally->folded_hash = fold_hash(tally->folded_hash, row->trace_hash);
  ++tally->by_verdict[static_cast<size_t>(row->run.outcome.verdict)];
  tally->rows.push_back(row_json(*row));
  if (!row->run.outcome.allowed()) {
    tally->reproduce.push_back(
        reproduce_command(*row, row_world_args(c, t, planned.seed)));
  }
  if (planned.traced) {
    // Row r (from 0) runs with --seed + r, so the traced row's seed is not
    // the header's: say where it comes from.
    tally->traced = absl::StrFormat(
        "%s %s %u bytes over the %s (seed %u: each row runs with --seed plus "
        "its place in the table, here %u + %u)",
        harness::api_name(planned.spec), dtype_name(planned.spec.dtype),
        planned.spec.bytes, t.name, planned.seed, c.world.seed,
        planned.seed - c.world.seed);
  }
  return absl::OkStatus();
}

void print_footer(const StudyConfig& c, const StudyTally& tally) {
  uint64_t total = 0;
  for (uint64_t n : tally.by_verdict) total += n;
  std::string counts;
  for (int v = 0; v < harness::kVerdictCount; ++v) {
    absl::StrAppendFormat(
        &counts, "%s%u %s", v == 0 ? "" : ", ", tally.by_verdict[v],
        harness::verdict_name(static_cast<harness::Verdict>(v)));
  }
  std::printf("%llu runs: %s\n", static_cast<unsigned long long>(total),
              counts.c_str());
  for (const std::string& line : tally.reproduce) {
    std::printf("reproduce: %s\n", line.c_str());
  }
  if (!tally.traced.empty()) {
    std::printf("trace of %s written to %s (open it in ui.perfetto.dev)\n",
                tally.traced.c_str(), c.trace_path.c_str());
  }
  std::printf("trace hash: %s\n", hash_hex(tally.folded_hash).c_str());
}

// What the study printed, as JSON (sim_json.h).
nlohmann::ordered_json study_json(const StudyConfig& c, uint32_t ranks,
                                  StudyTally tally) {
  nlohmann::ordered_json doc = json_document("study");
  doc["ranks"] = ranks;
  doc["world"] = world_summary(c.world, c.link_name);
  doc["rows"] = std::move(tally.rows);
  doc["outcome_counts"] = verdict_counts_json(tally.by_verdict);
  doc["reproduce"] = tally.reproduce;
  doc["trace_file"] = tally.traced.empty()
                          ? nlohmann::ordered_json(nullptr)
                          : nlohmann::ordered_json(c.trace_path);
  doc["trace_hash"] = hash_hex(tally.folded_hash);
  return doc;
}

// Runs the rows, printing each as it ends, with progress on stderr.
absl::Status run_rows(const StudyConfig& c, const std::vector<PlannedRow>& rows,
                      StudyTally* tally) {
  cli::Progress progress("study", "rows", rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    progress.clear();  // the row prints on a clean line
    if (absl::Status s = run_planned(c, rows[i], tally); !s.ok()) return s;
    progress.update(i + 1, "");
  }
  progress.finish(rows.size(), "");
  return absl::OkStatus();
}

}  // namespace

int run_study(int argc, char** argv) {
  absl::StatusOr<std::vector<std::string>> args =
      cli::normalise_flags(argc, argv);
  if (!args.ok()) return cli::bad_input(args.status());
  // `weft-sim --op=...` is one collective; `weft-sim study --op=...` is
  // refused below (--op is run's), never silently another command.
  if (named_command().empty() && sets_collective_flag(*args)) {
    return run_collective(argc, argv);
  }
  const CommandArgs parsed = parse_command_flags(argc, argv, "study");
  if (parsed.exit_code) return *parsed.exit_code;
  const std::vector<std::string>& given_args = parsed.given;
  absl::StatusOr<cli::WorldFlags> flags = cli::world_flags();
  if (!flags.ok()) return cli::bad_input(flags.status());
  // Every row runs with the automatic algorithm: a given topology neither
  // the mesh nor the ring runs on is refused before the table's header.
  if (absl::Status s =
          check_topology(flags->options.topology, TopologyNeeds::kMeshOrRing,
                         flags->wording());
      !s.ok()) {
    return cli::bad_input(s);
  }
  absl::StatusOr<StudyConfig> config = study_config(given_args, *flags);
  if (!config.ok()) return cli::bad_input(config.status());
  std::string names;
  for (const StudyTopology& t : config->topologies) {
    absl::StrAppend(&names, names.empty() ? "" : " and ", t.name);
  }
  absl::StatusOr<uint64_t> max_bytes =
      cli::parse_byte_size("max_bytes", absl::GetFlag(FLAGS_max_bytes));
  if (!max_bytes.ok()) return cli::bad_input(max_bytes.status());
  absl::StatusOr<std::string> json = json_path();
  if (!json.ok()) return cli::bad_input(json.status());
  const std::vector<PlannedRow> rows = plan_rows(*config, *max_bytes);
  if (absl::Status s = check_study_memory(*config, rows); !s.ok())
    return cli::bad_input(s);
  std::printf("weft-sim study: %u ranks, %s, %s\n",
              flags->options.topology.ranks(), names.c_str(),
              world_summary(config->world, config->link_name).c_str());
  std::fputs(study_header().c_str(), stdout);
  StudyTally tally;
  if (absl::Status s = run_rows(*config, rows, &tally); !s.ok())
    return cli::bad_input(s);
  print_footer(*config, tally);
  if (!json->empty()) {
    const uint32_t ranks = flags->options.topology.ranks();
    if (absl::Status s = write_json(*json, study_json(*config, ranks, tally));
        !s.ok()) {
      return cli::bad_input(s);
    }
  }
  return cli::verdicts_exit_code(tally.by_verdict);
}

}  // namespace weft::tools::weft_sim
