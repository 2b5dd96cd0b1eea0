// Benchmarks of whole collectives on the simulator's `ideal` link (zero
// latency, infinite bandwidth): virtual time stays at zero, so the wall time
// is what weft's engine and the simulator cost the CPU, every rank running
// on this one core.
//
// Rows <api name>/<mesh|ring>/<size>: all_sum, all_gather, sum_scatter,
// broadcast (root 0) and all_to_all, float32, out of place, on 4 ranks of a
// full mesh, sizes 64 KiB..64 MiB in nccl-tests' terms (the larger of one
// rank's input and output). "mesh" is the algorithm a mesh group picks
// itself (the exchange up to 64 KiB, the scatter above), "ring" the ring in
// both directions; the label names the algorithm that ran. Each rank's
// buffers and calls come from weft-sim's collective harness, and every
// rank's output is compared with the harness's independently computed
// reference after an untimed first run: a wrong element fails the row.
//
// bytes_per_second counts the size on every rank (4 x size) per CPU second
// (Google Benchmark's default; the Time column is wall-clock); for all_sum
// that is the input bytes of all ranks. vs_memcpy is that rate over the
// rate of baseline/memcpy/64MiB measured in this process, both per CPU
// second, and vs_memcpy_wall the same per wall-clock second (issue 6's
// CPU-cost target: all_sum/mesh/64MiB at least 0.30). On an idle machine
// the two agree; on a shared one the CPU ratio leaves out the neighbours.
//
// Rows all_sum/<mesh|ring>/<size>/registered run the same all_sum with
// every rank's buffers registered (Group::register_memory): payloads are
// sent straight from the input instead of through weft's frames.
// zero_copy_share is the part of the payload bytes sent that way. The
// simulator's own wire copy (its payload_bytes_copied counter) is part of
// every row's CPU time; vs_memcpy_weft leaves it out, its time estimated
// as those bytes at the memcpy baseline's rate: weft's share alone.
//
//   weft_collectives_bench --benchmark_filter='memcpy|all_sum/mesh/64MiB'
//                          --benchmark_repetitions=3
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "bench/bench_support.h"
#include "benchmark/benchmark.h"
#include "collectives/group.h"
#include "collectives/inprocess_bootstrap.h"
#include "collectives/registered_memory.h"
#include "fabric/clock.h"
#include "harness/call_program.h"
#include "harness/collective_spec.h"
#include "harness/rank_call.h"
#include "harness/reference.h"
#include "sim/world.h"

namespace weft::bench {
namespace {

using bench::fail_row;
using bench::kKiB;
using bench::kMiB;
using bench::PageBuffer;
using bench::size_label;
using harness::AlgorithmRequest;
using harness::CallProgram;
using harness::CollectiveKind;
using harness::CollectiveShape;
using harness::CollectiveSpec;
using harness::RankCall;
using harness::Reference;

constexpr uint32_t kRanks = 4;
constexpr uint64_t kMinBytes = 64 * kKiB;
constexpr uint64_t kMaxBytes = 64 * kMiB;
constexpr uint64_t kSizeFactor = 4;
constexpr uint64_t kMemcpyBytes = 64 * kMiB;
constexpr uint64_t kDataSeed = 1;
// Copies timed when vs_memcpy is wanted but the baseline row was filtered
// out of this run.
constexpr int kFallbackCopies = 5;

constexpr CollectiveKind kKinds[] = {
    CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
    CollectiveKind::kReduceScatter, CollectiveKind::kBroadcast,
    CollectiveKind::kAllToAll};
constexpr AlgorithmRequest kAlgorithms[] = {AlgorithmRequest::kMesh,
                                            AlgorithmRequest::kRing};

// Wall-clock and CPU seconds since construction. This machine is shared:
// CPU time leaves out the time other processes held the core, and the
// simulator runs every rank on this one thread, so on an idle machine the
// two agree.
class Stopwatch {
 public:
  Stopwatch() : wall_(std::chrono::steady_clock::now()), cpu_(cpu_now()) {}
  double wall_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         wall_)
        .count();
  }
  double cpu_s() const { return cpu_now() - cpu_; }

 private:
  static double cpu_now() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) +
           static_cast<double>(t.tv_nsec) / static_cast<double>(kNsPerS);
  }
  std::chrono::steady_clock::time_point wall_;
  double cpu_;
};

// Bytes per wall-clock and per CPU second.
struct Rate {
  double wall = 0;
  double cpu = 0;
};

Rate rate_of(double bytes, const Stopwatch& watch) {
  return Rate{bytes / watch.wall_s(), bytes / watch.cpu_s()};
}

// ---------------------------------------------------------------------------
// The memcpy baseline: 64 MiB between two page-aligned, pre-faulted buffers.

struct CopyBuffers {
  PageBuffer src{kMemcpyBytes, 1};
  PageBuffer dst{kMemcpyBytes, 0};
};

CopyBuffers& copy_buffers() {
  static CopyBuffers* b = new CopyBuffers();
  return *b;
}

// Every run of the memcpy baseline in this process.
std::vector<Rate>& memcpy_rates() {
  static auto* rates = new std::vector<Rate>();
  return *rates;
}

double median(std::vector<double> values) {
  std::nth_element(values.begin(), values.begin() + values.size() / 2,
                   values.end());
  return values[values.size() / 2];
}

// The median memcpy rates so far; measured now if the baseline did not run.
Rate memcpy_rate() {
  std::vector<Rate>& rates = memcpy_rates();
  if (rates.empty()) {
    CopyBuffers& b = copy_buffers();
    const Stopwatch watch;
    for (int i = 0; i < kFallbackCopies; ++i) {
      std::memcpy(b.dst.data(), b.src.data(), kMemcpyBytes);
      benchmark::ClobberMemory();
    }
    rates.push_back(
        rate_of(kFallbackCopies * static_cast<double>(kMemcpyBytes), watch));
  }
  std::vector<double> wall, cpu;
  for (const Rate& r : rates) {
    wall.push_back(r.wall);
    cpu.push_back(r.cpu);
  }
  return Rate{median(wall), median(cpu)};
}

void bm_memcpy(benchmark::State& state) {
  CopyBuffers& b = copy_buffers();
  const Stopwatch watch;
  for (auto _ : state) {
    std::memcpy(b.dst.data(), b.src.data(), kMemcpyBytes);
    benchmark::ClobberMemory();
  }
  const double bytes = static_cast<double>(state.iterations()) * kMemcpyBytes;
  memcpy_rates().push_back(rate_of(bytes, watch));
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
}

// ---------------------------------------------------------------------------
// One collective on kRanks simulated ranks: the world, one Group per rank,
// and each rank's buffers and calls from the harness.

class CollectiveCase {
 public:
  // Forms the group, runs the collective once and checks every output.
  // `registered`: every rank's buffers are registered with its group.
  static absl::StatusOr<std::unique_ptr<CollectiveCase>> create(
      const CollectiveSpec& spec, bool registered);

  const CollectiveSpec& spec() const { return spec_; }
  bool registered() const { return !handles_.empty(); }
  // Payload bytes sent zero-copy and staged, over every rank, so far.
  uint64_t zero_copy_bytes() const;
  uint64_t staged_bytes() const;
  // Payload bytes the simulator copied so far.
  uint64_t wire_bytes() const {
    return world_->counters().payload_bytes_copied;
  }
  const CollectiveShape& shape() const { return reference_.shape(); }
  Algorithm algorithm() const { return call_.algorithm; }

  // One run of the collective on every rank.
  absl::Status run();

 private:
  CollectiveCase(const CollectiveSpec& spec, const CollectiveShape& shape)
      : spec_(spec), reference_(spec, shape, kRanks, kDataSeed) {}
  absl::Status form();
  absl::Status register_buffers();
  absl::Status check_outputs();

  CollectiveSpec spec_;
  Reference reference_;
  CallOptions call_;
  std::unique_ptr<sim::World> world_;
  std::vector<std::unique_ptr<Group>> groups_;  // destroyed before world_
  std::vector<std::unique_ptr<RankCall>> calls_;
  std::vector<std::vector<harness::Starter>> starters_;
  std::vector<RegisteredMemory> handles_;  // released before groups_ go
};

absl::StatusOr<std::unique_ptr<CollectiveCase>> CollectiveCase::create(
    const CollectiveSpec& spec, bool registered) {
  absl::StatusOr<CollectiveShape> shape = harness::shape_of(spec, kRanks);
  if (!shape.ok()) return shape.status();
  auto c = std::unique_ptr<CollectiveCase>(new CollectiveCase(spec, *shape));
  if (absl::Status s = c->form(); !s.ok()) return s;
  if (registered) {
    if (absl::Status s = c->register_buffers(); !s.ok()) return s;
  }
  if (absl::Status s = c->run(); !s.ok()) return s;
  if (absl::Status s = c->check_outputs(); !s.ok()) return s;
  return c;
}

absl::Status CollectiveCase::form() {
  absl::StatusOr<Topology> mesh = Topology::mesh(kRanks);
  if (!mesh.ok()) return mesh.status();
  sim::WorldOptions options;
  options.topology = *mesh;
  options.link = sim::LinkModel::ideal();
  options.keep_trace_events = false;
  const Topology topology = options.topology;
  absl::StatusOr<std::unique_ptr<sim::World>> world =
      sim::World::create(std::move(options));
  if (!world.ok()) return world.status();
  world_ = *std::move(world);
  std::vector<Fabric*> fabrics;
  for (uint32_t r = 0; r < kRanks; ++r) fabrics.push_back(&world_->fabric(r));
  const GroupOptions group_options;
  absl::StatusOr<std::vector<std::unique_ptr<Group>>> groups =
      form_groups_in_process(fabrics, topology, group_options);
  if (!groups.ok()) return groups.status();
  groups_ = *std::move(groups);
  call_.algorithm = harness::resolve_algorithm(
      spec_, reference_.shape(), topology.is_full_mesh(), group_options);
  for (uint32_t r = 0; r < kRanks; ++r) {
    calls_.push_back(std::make_unique<RankCall>(reference_, r));
    starters_.push_back(calls_.back()->starters(call_));
  }
  return absl::OkStatus();
}

absl::Status CollectiveCase::register_buffers() {
  for (uint32_t r = 0; r < kRanks; ++r) {
    if (absl::Status s = calls_[r]->register_with(*groups_[r], &handles_);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

uint64_t CollectiveCase::zero_copy_bytes() const {
  uint64_t bytes = 0;
  for (const auto& g : groups_) bytes += g->counters().payload_bytes_zero_copy;
  return bytes;
}

uint64_t CollectiveCase::staged_bytes() const {
  uint64_t bytes = 0;
  for (const auto& g : groups_) bytes += g->counters().payload_bytes_staged;
  return bytes;
}

absl::Status CollectiveCase::run() {
  std::vector<std::unique_ptr<CallProgram>> programs;
  std::vector<sim::RankProgram*> raw;
  for (uint32_t r = 0; r < kRanks; ++r) {
    programs.push_back(
        std::make_unique<CallProgram>(*groups_[r], starters_[r], 1));
    raw.push_back(programs.back().get());
  }
  const sim::RunResult result = world_->run(raw);
  if (!result.completed()) {
    return absl::InternalError(
        absl::StrFormat("the simulated run ended (%s) before every rank "
                        "finished its collective: %s",
                        sim::outcome_name(result.outcome), result.report));
  }
  for (const auto& p : programs) {
    if (absl::Status s = p->first_error(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status CollectiveCase::check_outputs() {
  for (uint32_t r = 0; r < kRanks; ++r) {
    const uint64_t wrong = reference_.wrong_elements(r, calls_[r]->output());
    if (wrong > 0) {
      return absl::InternalError(absl::StrFormat(
          "rank %u: %u element(s) differ from the reference", r, wrong));
    }
  }
  return absl::OkStatus();
}

// The case of the row running now, kept between Google Benchmark's calls of
// the same row (one case at a time: the 64 MiB ones hold ~0.5 GiB).
absl::StatusOr<CollectiveCase*> case_for(const CollectiveSpec& spec,
                                         bool registered) {
  static auto* current = new std::unique_ptr<CollectiveCase>();
  const auto same = [&](const CollectiveCase& c) {
    const CollectiveSpec& s = c.spec();
    return s.kind == spec.kind && s.bytes == spec.bytes &&
           s.algorithm == spec.algorithm && c.registered() == registered;
  };
  if (*current == nullptr || !same(**current)) {
    current->reset();
    absl::StatusOr<std::unique_ptr<CollectiveCase>> made =
        CollectiveCase::create(spec, registered);
    if (!made.ok()) return made.status();
    *current = *std::move(made);
  }
  return current->get();
}

void bm_collective(benchmark::State& state, CollectiveSpec spec,
                   bool registered) {
  absl::StatusOr<CollectiveCase*> c = case_for(spec, registered);
  if (!c.ok()) return fail_row(state, c.status());
  const double bytes_per_run = static_cast<double>(kRanks) *
                               static_cast<double>((*c)->shape().size_bytes);
  const uint64_t zero_copy_before = (*c)->zero_copy_bytes();
  const uint64_t staged_before = (*c)->staged_bytes();
  const uint64_t wire_before = (*c)->wire_bytes();
  const Stopwatch watch;
  for (auto _ : state) {
    if (absl::Status s = (*c)->run(); !s.ok()) return fail_row(state, s);
  }
  const double bytes = bytes_per_run * static_cast<double>(state.iterations());
  const Rate rate = rate_of(bytes, watch);
  const double cpu_s = watch.cpu_s();
  const Rate copy = memcpy_rate();
  state.SetBytesProcessed(static_cast<int64_t>(bytes));
  state.counters["vs_memcpy"] = rate.cpu / copy.cpu;
  state.counters["vs_memcpy_wall"] = rate.wall / copy.wall;
  // The simulator's wire copy at the memcpy baseline's rate, left out.
  const double wire_s =
      static_cast<double>((*c)->wire_bytes() - wire_before) / copy.cpu;
  if (cpu_s > wire_s) {
    state.counters["vs_memcpy_weft"] = bytes / (cpu_s - wire_s) / copy.cpu;
  }
  const double zero_copy =
      static_cast<double>((*c)->zero_copy_bytes() - zero_copy_before);
  const double staged =
      static_cast<double>((*c)->staged_bytes() - staged_before);
  if (zero_copy + staged > 0) {
    state.counters["zero_copy_share"] = zero_copy / (zero_copy + staged);
  }
  state.SetLabel(std::string(algorithm_name((*c)->algorithm())));
}

void register_all() {
  benchmark::RegisterBenchmark(
      ("baseline/memcpy/" + size_label(kMemcpyBytes)).c_str(), bm_memcpy);
  for (CollectiveKind kind : kKinds) {
    for (AlgorithmRequest algorithm : kAlgorithms) {
      for (uint64_t bytes = kMinBytes; bytes <= kMaxBytes;
           bytes *= kSizeFactor) {
        const CollectiveSpec spec{
            .kind = kind, .bytes = bytes, .algorithm = algorithm};
        const std::string name = absl::StrFormat(
            "%s/%s/%s", harness::api_name(spec),
            harness::algorithm_request_name(algorithm), size_label(bytes));
        benchmark::RegisterBenchmark(name.c_str(), bm_collective, spec, false)
            ->Unit(benchmark::kMillisecond);
        if (kind == CollectiveKind::kAllReduce) {
          benchmark::RegisterBenchmark((name + "/registered").c_str(),
                                       bm_collective, spec, true)
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::register_all();
  return weft::bench::run_benchmarks(argc, argv);
}
