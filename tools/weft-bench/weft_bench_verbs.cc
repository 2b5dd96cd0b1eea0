#include "tools/weft-bench/weft_bench_verbs.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/group_builder.h"
#include "collectives/tcp_bootstrap.h"
#include "harness/rank_call.h"
#include "harness/reference.h"
#include "harness/sim_cluster.h"
#include "verbs/verbs_fabric.h"

namespace weft::bench {
namespace {

constexpr double kNsPerUs = 1e3;
constexpr uint64_t kDataSeed = 1;

}  // namespace

VerbsRunner::VerbsRunner(Config config, const sim::LinkModel& model_link,
                         GroupOptions group)
    : config_(std::move(config)),
      model_link_(model_link),
      group_options_(group) {}

VerbsRunner::~VerbsRunner() = default;

absl::StatusOr<std::unique_ptr<VerbsRunner>> VerbsRunner::create(
    const sim::LinkModel& model_link, const GroupOptions& options) {
  absl::StatusOr<Config> config = Config::from_environment();
  if (!config.ok()) return config.status();
  auto runner = std::unique_ptr<VerbsRunner>(
      new VerbsRunner(*config, model_link, options));
  absl::StatusOr<std::unique_ptr<TcpBootstrap>> bootstrap =
      TcpBootstrap::connect(runner->config_);
  if (!bootstrap.ok()) return bootstrap.status();
  runner->bootstrap_ = *std::move(bootstrap);
  absl::StatusOr<std::unique_ptr<verbs::VerbsFabric>> fabric =
      verbs::VerbsFabric::open(runner->config_.rank);
  if (!fabric.ok()) return fabric.status();
  // On weft's simulated provider the fabric's clock is its virtual time.
  runner->virtual_time_ = (*fabric)->library().api().sim_now_ns != nullptr;
  runner->fabric_ = *std::move(fabric);
  absl::StatusOr<std::unique_ptr<Group>> group =
      create_group(*runner->fabric_, *runner->bootstrap_,
                   runner->config_.devices, runner->group_options_);
  if (!group.ok()) return group.status();
  runner->group_ = *std::move(group);
  return runner;
}

std::string VerbsRunner::describe() const {
  const bool simulated = virtual_time();
  return absl::StrFormat(
      "a group of %u on verbs (this is rank %u), %s%s: %s", config_.size,
      config_.rank, config_.devices.is_full_mesh() ? "mesh" : "ring",
      config_.ring ? " (JACCL_RING)" : "",
      simulated ? "virtual time (weft's simulated provider)" : "wall time");
}

bool VerbsRunner::virtual_time() const { return virtual_time_; }

bool VerbsRunner::mesh_allowed() const {
  return config_.devices.is_full_mesh() && !config_.ring;
}

absl::Status VerbsRunner::check(const harness::CollectiveSpec& spec) const {
  harness::CollectiveSpec s = spec;
  if (!mesh_allowed() && s.algorithm == harness::AlgorithmRequest::kAuto)
    s.algorithm = harness::AlgorithmRequest::kRing;
  return harness::check_collective(s, config_.devices, group_options_);
}

Algorithm VerbsRunner::algorithm(const harness::CollectiveSpec& spec) const {
  absl::StatusOr<harness::CollectiveShape> shape =
      harness::shape_of(spec, ranks());
  if (!shape.ok()) return Algorithm::kAuto;
  return harness::resolve_algorithm(spec, *shape, mesh_allowed(),
                                    group_options_);
}

RingModel VerbsRunner::ring_model() const {
  const uint32_t n = config_.size;
  const auto cables =
      static_cast<uint32_t>(n > 1 ? config_.devices.devices(0, 1).size() : 1);
  const uint32_t directions = n > 2 ? group_options_.ring_directions : 1;
  return RingModel::of(model_link_, n, directions * cables);
}

absl::Status VerbsRunner::run_blocking(
    const std::vector<harness::Starter>& starters, uint32_t iterations) {
  for (uint32_t i = 0; i < iterations; ++i) {
    for (const harness::Starter& start : starters) {
      Operation op = start(*group_);
      if (absl::Status s = op.wait(); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Measurement> VerbsRunner::measure(
    const MeasureRequest& request) {
  Measurement m;
  const harness::CollectiveSpec& spec = request.spec;
  if (spec.in_place && spec.kind == harness::CollectiveKind::kSendRecv) {
    return m;
  }
  absl::StatusOr<harness::CollectiveShape> shape =
      harness::shape_of(spec, ranks());
  if (!shape.ok()) return shape.status();
  harness::Reference reference(spec, *shape, ranks(), kDataSeed);
  const CallOptions call{algorithm(spec), 0};
  auto timed = std::make_unique<harness::RankCall>(reference, config_.rank);
  const std::vector<harness::Starter> starters = timed->starters(call);
  const LinkCounters before = group_->counters().total;
  if (absl::Status s = run_blocking(starters, request.warmup_iters); !s.ok())
    return s;
  const TimeNs start_ns = fabric_->clock().now_ns();
  if (absl::Status s = run_blocking(starters, request.iters); !s.ok()) return s;
  const TimeNs elapsed_ns = fabric_->clock().now_ns() - start_ns;
  uint64_t wrong = 0;
  if (request.check && spec.in_place) {
    harness::RankCall fresh(reference, config_.rank);
    if (absl::Status s = run_blocking(fresh.starters(call), 1); !s.ok())
      return s;
    wrong = reference.wrong_elements(config_.rank, fresh.output());
  } else if (request.check) {
    wrong = reference.wrong_elements(config_.rank, timed->output());
  }
  // Every rank's time, #wrong and counters, added up (exact as doubles
  // below 2^53).
  LinkCounters counted = group_->counters().total;
  counted -= before;
  constexpr size_t kSums = 2 + LinkCounters::kFields.size();
  std::array<double, kSums> mine = {static_cast<double>(elapsed_ns),
                                    static_cast<double>(wrong)};
  for (size_t i = 0; i < LinkCounters::kFields.size(); ++i) {
    mine[2 + i] = static_cast<double>(counted.*LinkCounters::kFields[i].value);
  }
  std::array<double, kSums> sums{};
  if (absl::Status s = group_->all_sum(std::as_bytes(std::span(mine)),
                                       std::as_writable_bytes(std::span(sums)),
                                       DType::kFloat64);
      !s.ok()) {
    return s;
  }
  m.ran = true;
  m.time_us = sums[0] / ranks() / request.iters / kNsPerUs;
  m.checked = request.check;
  m.wrong = static_cast<uint64_t>(sums[1]);
  for (size_t i = 0; i < LinkCounters::kFields.size(); ++i) {
    m.counters.*LinkCounters::kFields[i].value =
        static_cast<uint64_t>(sums[2 + i]);
  }
  return m;
}

}  // namespace weft::bench
