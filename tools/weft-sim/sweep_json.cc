#include "tools/weft-sim/sweep_json.h"

#include <cstdint>
#include <utility>

#include "absl/strings/str_cat.h"
#include "harness/collective_spec.h"
#include "sim/faults.h"
#include "tools/weft-sim/row_runner.h"
#include "tools/weft-sim/sim_json.h"

namespace weft::tools::weft_sim {
namespace {

using Json = nlohmann::ordered_json;

Json op_json(const harness::ProgramOp& op) {
  const harness::CollectiveSpec& s = op.spec;
  Json j;
  j["op"] = harness::api_name(s);
  j["bytes"] = s.bytes;
  j["dtype"] = std::string(dtype_name(s.dtype));
  j["algorithm"] = std::string(harness::algorithm_request_name(s.algorithm));
  j["root"] = harness::has_root(s.kind) ? Json(s.root) : Json(nullptr);
  j["in_place"] = s.in_place;
  j["group"] = op.group;
  j["async"] = op.async;
  j["registered"] = op.registered;
  return j;
}

Json faults_json(const sim::FaultPlan& plan) {
  Json j;
  j["loss"] = plan.rates.loss;
  j["duplicate"] = plan.rates.duplicate;
  j["reorder"] = plan.rates.reorder;
  j["error"] = plan.rates.error_completion;
  j["until_ns"] = plan.rates.until_ns == kNeverNs ? Json(nullptr)
                                                  : Json(plan.rates.until_ns);
  j["scripted"] = Json::array();
  for (const sim::ScriptedFault& f : plan.script)
    j["scripted"].push_back(f.to_text());
  return j;
}

Json case_json(const SweepCase& c) {
  const Topology& t = c.world.topology;
  Json j;
  j["ranks"] = t.ranks();
  j["topology"] = c.topology_name;
  j["cables"] = t.ranks() > 1 ? t.devices(0, 1).size() : 1;
  j["max_frame_bytes"] = c.group.max_frame_bytes;
  j["depth"] = c.group.depth;
  j["ring_directions"] = c.group.ring_directions;
  j["send_queue_bytes"] = c.group.send_queue_bytes;
  j["mesh_exchange_max_bytes"] = c.group.mesh_exchange_max_bytes;
  j["recovery"] = {{"min_rto_ns", c.group.recovery.min_rto_ns},
                   {"initial_rto_ns", c.group.recovery.initial_rto_ns},
                   {"max_rto_ns", c.group.recovery.max_rto_ns},
                   {"max_retries", c.group.recovery.max_retries}};
  j["link"] = c.world.link.to_string();
  j["subgroups"] = c.program.subgroups;
  j["ops"] = Json::array();
  for (const harness::ProgramOp& op : c.program.ops) {
    j["ops"].push_back(op_json(op));
  }
  j["expected_ns"] = c.expected_ns;
  j["deadline_ns"] = c.deadline_ns;
  j["faults"] = faults_json(c.world.faults);
  return j;
}

// {"drop": n, ...}: every kind of fault but "none".
Json faults_by_kind_json(const SweepRun& run) {
  Json j = Json::object();
  for (size_t k = 1; k < run.faults_by_kind.size(); ++k) {
    j[std::string(sim::fault_kind_name(static_cast<sim::FaultKind>(k)))] =
        run.faults_by_kind[k];
  }
  return j;
}

}  // namespace

Json sweep_seed_json(const SweepCase& c, const SweepRun& run,
                     const std::string& why, const std::string& replay) {
  Json j;
  j["seed"] = c.seed;
  j["case"] = case_json(c);
  j["outcome"] = {{"verdict", std::string(harness::verdict_name(run.verdict))},
                  {"summary", run.summary}};
  j["ops_correct"] = run.ops_correct;
  j["fatal"] = run.fatal;
  j["end_ns"] = run.end_ns;
  j["faults_by_kind"] = faults_by_kind_json(run);
  j["failure"] = why.empty() ? Json(nullptr) : Json(why);
  j["replay"] = why.empty() ? Json(nullptr) : Json(replay);
  return j;
}

Json sweep_json(const SweepFlags& flags, Json cases, const SweepTally& tally) {
  Json doc = json_document("sweep", kSweepJsonFormatVersion);
  doc["seeds"] = flags.seeds;
  doc["first_seed"] = flags.first_seed;
  doc["shard"] = absl::StrCat(flags.shard_index, "/", flags.shard_count);
  doc["recovery"] = flags.recovery;
  doc["cases"] = std::move(cases);
  doc["outcome_counts"] = verdict_counts_json(tally.by_verdict);
  doc["ranks_disagree"] = tally.disagree;
  doc["nondeterministic"] =
      flags.check_determinism ? Json(tally.nondeterministic) : Json(nullptr);
  doc["not_live"] = tally.not_live;
  doc["liveness"] = {{"seeds", tally.nonfatal_seeds},
                     {"correct", tally.nonfatal_correct}};
  doc["failed"] = tally.failed;
  doc["trace_hash"] = hash_hex(tally.folded_hash);
  return doc;
}

}  // namespace weft::tools::weft_sim
