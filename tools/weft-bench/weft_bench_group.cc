#include "tools/weft-bench/weft_bench_group.h"

#include <array>
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "harness/rank_call.h"
#include "harness/reference.h"
#include "harness/sim_cluster.h"
#include "verbs/verbs_fabric.h"

namespace weft::tools::weft_bench {
namespace {

constexpr double kNsPerUs = 1e3;
constexpr uint64_t kDataSeed = 1;

// Whether the environment names a ring hostfile (rendezvous/config.h).
bool has_hostfile(const EnvLookup& getenv) {
  for (const char* name : {"WEFT_HOSTFILE", "MLX_HOSTFILE"}) {
    const char* value = getenv(name);
    if (value != nullptr && *value != '\0') return true;
  }
  return false;
}

// The environment the group is formed from: the process's, with
// --fabric's choice as WEFT_FABRIC where a hostfile is set (so a device
// JSON set too is not an error). InvalidArgument when the environment
// cannot form a group on `fabric`: no hostfile for tcp (say how to start
// it), or a WEFT_FABRIC that says otherwise.
absl::StatusOr<EnvLookup> group_environment(FabricKind fabric,
                                            const EnvLookup& getenv) {
  const char* name = fabric_name(fabric);
  const char* chosen = getenv("WEFT_FABRIC");
  if (chosen != nullptr && *chosen != '\0' && std::strcmp(chosen, name) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--fabric=%s, but WEFT_FABRIC=%s: unset WEFT_FABRIC or run with "
        "--fabric=%s",
        name, chosen, chosen));
  }
  const bool hostfile = has_hostfile(getenv);
  if (fabric == FabricKind::kTcp && !hostfile) {
    return absl::InvalidArgumentError(
        "--fabric=tcp runs one rank of a group over TCP and needs its "
        "hostfile: start every rank under weft-sim launch --fabric=tcp "
        "--ranks=N -- weft-bench --fabric=tcp ..., or set MLX_HOSTFILE (a "
        "JSON list of \"ip:port\" lists, one per rank) and MLX_RANK");
  }
  if (!hostfile) return getenv;
  return EnvLookup([getenv, name](const char* variable) -> const char* {
    const char* value = getenv(variable);
    if (std::strcmp(variable, "WEFT_FABRIC") == 0 && value == nullptr) {
      return name;
    }
    return value;
  });
}

}  // namespace

GroupRunner::GroupRunner(FabricKind fabric,
                         std::unique_ptr<ProcessGroup> process_group,
                         const sim::LinkModel& model_link, GroupOptions group)
    : fabric_(fabric),
      process_group_(std::move(process_group)),
      model_link_(model_link),
      group_options_(group) {}

GroupRunner::~GroupRunner() = default;

absl::StatusOr<std::unique_ptr<GroupRunner>> GroupRunner::create(
    FabricKind fabric, const sim::LinkModel& model_link,
    const GroupOptions& options, const EnvLookup& getenv) {
  absl::StatusOr<EnvLookup> environment = group_environment(fabric, getenv);
  if (!environment.ok()) return environment.status();
  // The group's deadlines and recovery are the command line's, not
  // WEFT_TIMEOUT_S's.
  StartOptions start;
  start.group = options;
  start.keep_timeouts = true;
  start.getenv = *environment;
  absl::StatusOr<std::unique_ptr<ProcessGroup>> pg =
      ProcessGroup::from_environment(start);
  if (!pg.ok()) return pg.status();
  return std::unique_ptr<GroupRunner>(
      new GroupRunner(fabric, *std::move(pg), model_link, options));
}

std::string GroupRunner::describe() const {
  const bool simulated = virtual_time();
  return absl::StrFormat(
      "a group of %u on %s (this is rank %u), %s%s: %s", config().size,
      fabric_name(fabric_), config().rank,
      config().devices.is_full_mesh() ? "mesh" : "ring",
      config().ring ? " (JACCL_RING)" : "",
      simulated ? "virtual time (weft's simulated provider)" : "wall time");
}

bool GroupRunner::virtual_time() const {
  return process_group_->virtual_time();
}

bool GroupRunner::mesh_allowed() const {
  return config().devices.is_full_mesh() && !config().ring;
}

absl::Status GroupRunner::check(const harness::CollectiveSpec& spec) const {
  harness::CollectiveSpec s = spec;
  if (!mesh_allowed() && s.algorithm == harness::AlgorithmRequest::kAuto)
    s.algorithm = harness::AlgorithmRequest::kRing;
  return harness::check_collective(
      s, config().devices, group_options_,
      {.source = "device JSON", .use_ring = "use --algorithm=ring or auto"});
}

Algorithm GroupRunner::algorithm(const harness::CollectiveSpec& spec) const {
  absl::StatusOr<harness::CollectiveShape> shape =
      harness::shape_of(spec, ranks());
  if (!shape.ok()) return Algorithm::kAuto;
  return harness::resolve_algorithm(spec, *shape, mesh_allowed(),
                                    group_options_);
}

CostModel GroupRunner::cost_model() const {
  const uint32_t n = config().size;
  const auto cables =
      static_cast<uint32_t>(n > 1 ? config().devices.devices(0, 1).size() : 1);
  return CostModel::of(model_link_, n, cables, group_options_.ring_directions,
                       mesh_allowed());
}

std::vector<RegistrationCacheReport> GroupRunner::registration_caches() const {
  std::vector<RegistrationCacheReport> out;
  const auto* fabric =
      dynamic_cast<const verbs::VerbsFabric*>(&process_group_->fabric());
  if (fabric == nullptr) return out;
  for (const std::string& device : fabric->device_names()) {
    const size_t regions = fabric->memory_regions(device);
    const verbs::RegistrationCounters c = fabric->registration_counters(device);
    // A device this rank never opened has neither.
    if (regions == 0 && c.registrations == 0) continue;
    out.push_back({device, fabric->memory_region_budget(), regions, c});
  }
  return out;
}

absl::Status GroupRunner::register_buffers(harness::RankCall& call,
                                           std::vector<RegisteredMemory>* out) {
  return call.register_with(process_group_->group(), out);
}

absl::Status GroupRunner::run_blocking(
    const std::vector<harness::Starter>& starters, uint32_t iterations) {
  for (uint32_t i = 0; i < iterations; ++i) {
    for (const harness::Starter& start : starters) {
      Operation op = start(process_group_->group());
      if (absl::Status s = op.wait(); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Measurement> GroupRunner::measure(
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
  auto timed = std::make_unique<harness::RankCall>(reference, config().rank);
  const std::vector<harness::Starter> starters = timed->starters(call);
  std::vector<RegisteredMemory> registrations;
  if (request.registered) {
    if (absl::Status s = register_buffers(*timed, &registrations); !s.ok())
      return s;
  }
  const LinkCounters before = process_group_->group().counters().total;
  if (absl::Status s = run_blocking(starters, request.warmup_iters); !s.ok())
    return s;
  const TimeNs start_ns = process_group_->fabric().clock().now_ns();
  if (absl::Status s = run_blocking(starters, request.iters); !s.ok()) return s;
  const TimeNs elapsed_ns =
      process_group_->fabric().clock().now_ns() - start_ns;
  uint64_t wrong = 0;
  if (request.check && spec.in_place) {
    harness::RankCall fresh(reference, config().rank);
    std::vector<RegisteredMemory> fresh_registrations;
    if (request.registered) {
      if (absl::Status s = register_buffers(fresh, &fresh_registrations);
          !s.ok())
        return s;
    }
    if (absl::Status s = run_blocking(fresh.starters(call), 1); !s.ok())
      return s;
    wrong = reference.wrong_elements(config().rank, fresh.output());
  } else if (request.check) {
    wrong = reference.wrong_elements(config().rank, timed->output());
  }
  // Every rank's time, #wrong and counters, added up (exact as doubles
  // below 2^53).
  LinkCounters counted = process_group_->group().counters().total;
  counted -= before;
  constexpr size_t kSums = 2 + LinkCounters::kFields.size();
  std::array<double, kSums> mine = {static_cast<double>(elapsed_ns),
                                    static_cast<double>(wrong)};
  for (size_t i = 0; i < LinkCounters::kFields.size(); ++i) {
    mine[2 + i] = static_cast<double>(counted.*LinkCounters::kFields[i].value);
  }
  std::array<double, kSums> sums{};
  if (absl::Status s = process_group_->group().all_sum(
          std::as_bytes(std::span(mine)),
          std::as_writable_bytes(std::span(sums)), DType::kFloat64);
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

}  // namespace weft::tools::weft_bench
