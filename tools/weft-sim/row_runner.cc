#include "tools/weft-sim/row_runner.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "harness/memory_estimate.h"
#include "harness/sim_cluster.h"
#include "tools/cli/memory_check.h"

namespace weft::tools::weft_sim {

absl::StatusOr<StudyRow> run_row(const RowRequest& request) {
  sim::WorldOptions world = request.world;
  world.keep_trace_events = !request.trace_path.empty();
  const uint64_t seed = world.seed;
  absl::StatusOr<harness::SimCluster> cluster =
      harness::SimCluster::create(std::move(world), request.group);
  if (!cluster.ok()) return cluster.status();
  harness::RunOptions options;
  options.iterations = request.iterations;
  // In place, each iteration's output is the next one's input.
  options.check = !request.spec.in_place || request.iterations == 1;
  options.data_seed = seed;
  options.timeout_ns = request.timeout_ns;
  absl::StatusOr<harness::CaseRun> run = cluster->run(request.spec, options);
  if (!run.ok()) return run.status();
  StudyRow row;
  row.topology = request.topology_name;
  row.spec = request.spec;
  row.iterations = request.iterations;
  row.run = *std::move(run);
  const sim::Trace& trace = cluster->world().trace();
  row.trace_hash = trace.hash();
  if (!request.trace_path.empty()) {
    if (absl::Status s = trace.write_perfetto_json(request.trace_path);
        !s.ok()) {
      return s;
    }
  }
  return row;
}

std::optional<harness::MemoryEstimate> row_memory_estimate(
    const RowRequest& request) {
  if (!harness::check_collective(request.spec, request.world.topology,
                                 request.group)
           .ok()) {
    return std::nullopt;
  }
  sim::WorldOptions world = request.world;
  world.keep_trace_events = !request.trace_path.empty();
  return harness::estimate_memory(world, request.group, request.spec);
}

absl::Status check_row_memory(const RowRequest& request,
                              const std::string& what, bool announce) {
  const std::optional<harness::MemoryEstimate> estimate =
      row_memory_estimate(request);
  if (!estimate) return absl::OkStatus();
  absl::StatusOr<cli::MemoryLimit> limit = cli::memory_limit();
  if (!limit.ok()) return limit.status();
  absl::Status s = cli::check_memory(*estimate, *limit, what);
  // A refused run's line already says the estimate.
  if (s.ok() && announce) {
    cli::announce_memory(*estimate, request.world.topology.ranks(), *limit,
                         what);
  }
  return s;
}

uint64_t fold_hash(uint64_t folded, uint64_t hash) {
  constexpr uint64_t kFnvPrime = 0x100000001b3ull;
  constexpr int kBitsPerByte = 8;
  for (int i = 0; i < 8; ++i) {
    folded ^= (hash >> (kBitsPerByte * i)) & 0xffu;
    folded *= kFnvPrime;
  }
  return folded;
}

std::string hash_hex(uint64_t hash) { return absl::StrFormat("%016x", hash); }

}  // namespace weft::tools::weft_sim
