#include "tools/weft-bench/weft_bench_sim.h"

#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "harness/memory_estimate.h"
#include "tools/cli/memory_check.h"

namespace weft::tools::weft_bench {
namespace {

constexpr double kNsPerUs = 1e3;
// Seed of the data every measurement checks.
constexpr uint64_t kDataSeed = 1;

}  // namespace

SimRunner::SimRunner(cli::WorldFlags flags, GroupOptions group)
    : flags_(std::move(flags)), group_options_(group) {
  flags_.options.keep_trace_events = false;
}

uint32_t SimRunner::ranks() const { return flags_.options.topology.ranks(); }

std::string SimRunner::describe() const {
  return absl::StrFormat(
      "%u simulated ranks, %s, link %s (%s), seed %u: virtual time", ranks(),
      flags_.topology_name, flags_.link_name, flags_.options.link.to_string(),
      flags_.options.seed);
}

absl::Status SimRunner::check(const harness::CollectiveSpec& spec) const {
  if (absl::Status s = harness::check_collective(
          spec, flags_.options.topology, group_options_, flags_.wording());
      !s.ok()) {
    return s;
  }
  // Refused before the first measurement, like a bad collective.
  absl::StatusOr<cli::MemoryLimit> limit = cli::memory_limit();
  if (!limit.ok()) return limit.status();
  return cli::check_memory(
      harness::estimate_memory(flags_.options, group_options_, spec), *limit,
      absl::StrFormat("%s of %u bytes", harness::api_name(spec), spec.bytes));
}

Algorithm SimRunner::algorithm(const harness::CollectiveSpec& spec) const {
  absl::StatusOr<harness::CollectiveShape> shape =
      harness::shape_of(spec, ranks());
  if (!shape.ok()) return Algorithm::kAuto;
  return harness::resolve_algorithm(
      spec, *shape, flags_.options.topology.is_full_mesh(), group_options_);
}

CostModel SimRunner::cost_model() const {
  const Topology& t = flags_.options.topology;
  const uint32_t n = t.ranks();
  const auto cables = static_cast<uint32_t>(n > 1 ? t.devices(0, 1).size() : 1);
  return CostModel::of(flags_.options.link, n, cables,
                       group_options_.ring_directions, t.is_full_mesh());
}

absl::StatusOr<harness::SimCluster*> SimRunner::cluster() {
  if (cluster_ == nullptr) {
    absl::StatusOr<harness::SimCluster> made =
        harness::SimCluster::create(flags_.options, group_options_);
    if (!made.ok()) return made.status();
    cluster_ = std::make_unique<harness::SimCluster>(*std::move(made));
  }
  return cluster_.get();
}

bool SimRunner::run_into(const MeasureRequest& request, uint32_t iterations,
                         bool check, Measurement* m, harness::CaseRun* out) {
  harness::RunOptions options;
  options.iterations = iterations;
  options.check = check;
  options.data_seed = kDataSeed;
  options.registered = request.registered;
  absl::StatusOr<harness::SimCluster*> c = cluster();
  absl::StatusOr<harness::CaseRun> run =
      c.ok() ? (*c)->run(request.spec, options)
             : absl::StatusOr<harness::CaseRun>(c.status());
  if (!run.ok()) {
    m->error = std::string(run.status().message());
    cluster_.reset();
    return false;
  }
  const harness::Verdict verdict = run->outcome.verdict;
  if (verdict != harness::Verdict::kCorrect &&
      verdict != harness::Verdict::kCorrupt) {
    m->error = run->outcome.summary();
    cluster_.reset();  // its groups failed
    return false;
  }
  *out = *std::move(run);
  return true;
}

absl::StatusOr<Measurement> SimRunner::measure(const MeasureRequest& request) {
  Measurement m;
  if (request.spec.in_place &&
      request.spec.kind == harness::CollectiveKind::kSendRecv) {
    return m;  // no such form
  }
  m.ran = true;
  const LinkCounters before = counted();
  harness::CaseRun run;
  if (request.warmup_iters > 0 &&
      !run_into(request, request.warmup_iters, false, &m, &run)) {
    return m;
  }
  // In place, every iteration changes the next one's input: check a fresh
  // single iteration instead.
  const bool check_timed = request.check && !request.spec.in_place;
  if (!run_into(request, request.iters, check_timed, &m, &run)) return m;
  m.time_us = static_cast<double>(run.elapsed_ns) / request.iters / kNsPerUs;
  if (request.check && request.spec.in_place &&
      !run_into(request, 1, true, &m, &run)) {
    return m;
  }
  m.checked = request.check;
  m.wrong = request.check ? run.wrong_elements : 0;
  m.counters = counted();
  m.counters -= before;
  return m;
}

LinkCounters SimRunner::counted() const {
  LinkCounters sum;
  if (cluster_ == nullptr) return sum;
  for (uint32_t r = 0; r < cluster_->size(); ++r) {
    sum += cluster_->group(r).counters().total;
  }
  return sum;
}

}  // namespace weft::tools::weft_bench
