// weft_sim_bench, speed: how fast the simulator runs (wall clock, one core).
//  - BM_SimStream: the simulator alone. 8 ranks in a ring each stream small
//    frames to their right neighbour through raw endpoints; items/s is
//    fabric events (posts plus completions) per wall-clock second.
//  - BM_SimSparse: one streaming pair among 1024 ranks that wait: the cost
//    of idle ranks.
//  - BM_AllReduceLoop: 8 ranks (mesh) running all_sum after all_sum
//    through weft::Group, on the ideal and tb5 links; fabric_events is the
//    same rate, with the collectives engine's own cost included.
//  - BM_RingAllSum/ranks:1024: one all_sum of 1 MiB float32 over a
//    1024-rank ring (tb5 link): the wall time of the run (group formation
//    excluded, and reported as setup_s), its fabric events per wall
//    second and the process's peak resident memory so far.
//  - BM_RingScale: the 128-rank and the 1024-rank all_sum in one process,
//    and rate_ratio, the 1024-rank run's fabric events per wall second over
//    the 128-rank run's (the median of six, three before and three after):
//    how much dearer an event is in the bigger world.
// The fidelity cases are in sim_fidelity_bench.cc.
//
//   weft_sim_bench --benchmark_filter='BM_AllReduceLoop'
//                  --benchmark_repetitions=3
//                  --benchmark_report_aggregates_only=true
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/bench_support.h"
#include "bench/sim_bench_support.h"
#include "benchmark/benchmark.h"
#include "collectives/group.h"
#include "sim/world.h"

namespace weft::bench {
namespace {

using sim::RankProgram;
using sim::World;

// Fabric events per second two ways: per second of this thread's CPU time
// (Google Benchmark's rate; what one otherwise idle core achieves) and per
// second of wall-clock time (lower when other work shares the machine).
void report_event_rates(benchmark::State& state, uint64_t events,
                        double wall_s) {
  state.counters["events_per_cpu_s"] = benchmark::Counter(
      static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["events_per_wall_s"] = static_cast<double>(events) / wall_s;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// The process's peak resident memory so far (getrusage), in MiB.
double peak_rss_mib() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  constexpr double kBytesPerKiB = 1024;
#ifdef __APPLE__
  const double kib = static_cast<double>(usage.ru_maxrss) / kBytesPerKiB;
#else
  const auto kib = static_cast<double>(usage.ru_maxrss);  // Linux: KiB
#endif
  return kib / kBytesPerKiB;
}

// ---------------------------------------------------------------------------
// BM_SimStream: each rank sends `frames` frames to its right neighbour with
// up to kWindow sends outstanding, and receives as many from its left one
// with kDepth receives kept posted (always enough: frames arrive one
// serialisation apart and are re-posted at once). BM_SimSparse: the same
// stream from rank 0 to rank 1 only, in a world of 1024 ranks where the
// others wait for a wake-up long after it ends: the cost of idle ranks.

class StreamProgram final : public RankProgram {
 public:
  static constexpr uint32_t kWindow = 8;
  static constexpr uint32_t kDepth = 32;
  static constexpr uint32_t kFrameBytes = 64;

  // Sends `send_frames` and receives `recv_frames`.
  StreamProgram(RawRing& ring, uint32_t rank, uint64_t send_frames,
                uint64_t recv_frames)
      : ring_(ring),
        rank_(rank),
        send_frames_(send_frames),
        recv_frames_(recv_frames),
        tx_(ring.tx(rank)),
        rx_(ring.rx(rank)),
        send_frame_(ring.frame(rank, 0, kFrameBytes)) {}

  Progress step() override {
    bool advanced = false;
    const bool ok = poll_both(tx_, rx_, batch_, [&](const Completion& c) {
      advanced = true;
      if (c.id.kind == WorkKind::kSend) {
        --in_flight_;
      } else {
        ++received_;
        post_recv(c.id.slot);
      }
    });
    if (!ok) return Progress::done();
    if (!started_) {
      started_ = true;
      for (uint32_t slot = 0; slot < kDepth; ++slot) post_recv(slot);
    }
    while (sent_ < send_frames_ && in_flight_ < kWindow) {
      if (!tx_.post_send(WorkId{WorkKind::kSend, ring_.right(rank_), 0},
                         send_frame_, kFrameBytes, static_cast<uint32_t>(sent_))
               .ok()) {
        return Progress::done();
      }
      ++sent_;
      ++in_flight_;
      advanced = true;
    }
    if (received_ == recv_frames_ && sent_ == send_frames_ && in_flight_ == 0)
      return Progress::done();
    return advanced ? Progress::advanced() : Progress::waiting();
  }
  std::string outstanding() const override {
    return absl::StrFormat("rank %u: %u of %u received", rank_, received_,
                           recv_frames_);
  }

 private:
  void post_recv(uint32_t slot) {
    if (recvs_posted_ == recv_frames_) return;
    const Frame f = ring_.frame(rank_, kFrameBytes * (1 + slot), kFrameBytes);
    if (rx_.post_recv(WorkId{WorkKind::kRecv, ring_.left(rank_), slot}, f)
            .ok()) {
      ++recvs_posted_;
    }
  }

  RawRing& ring_;
  uint32_t rank_;
  uint64_t send_frames_;
  uint64_t recv_frames_;
  Endpoint& tx_;
  Endpoint& rx_;
  Frame send_frame_;
  CompletionBatch batch_;
  bool started_ = false;
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
  uint64_t recvs_posted_ = 0;
  uint32_t in_flight_ = 0;
};

void BM_SimStream(benchmark::State& state) {
  constexpr uint32_t kRanks = 8;
  constexpr uint64_t kFramesPerRun = 2000;
  const sim::LinkModel link =
      state.range(0) == 0 ? sim::LinkModel::ideal() : sim::LinkModel::tb5();
  std::unique_ptr<RawRing> ring = RawRing::create(kRanks, link, 64 * kKiB);
  if (ring == nullptr) return fail_row(state, "world setup failed");
  const uint64_t before = fabric_events(ring->world().counters());
  const auto wall_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::vector<std::unique_ptr<RankProgram>> programs;
    for (uint32_t r = 0; r < kRanks; ++r) {
      programs.push_back(std::make_unique<StreamProgram>(
          *ring, r, kFramesPerRun, kFramesPerRun));
    }
    if (!run_all(state, ring->world(), programs)) return;
  }
  const uint64_t events = fabric_events(ring->world().counters()) - before;
  report_event_rates(state, events, seconds_since(wall_start));
  state.counters["dropped"] =
      static_cast<double>(ring->world().counters().frames_dropped);
  state.SetLabel(state.range(0) == 0 ? "ideal" : "tb5");
}
BENCHMARK(BM_SimStream)
    ->ArgName("tb5")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

// Waits, with nothing to do, until `wake_ns`.
class IdleProgram final : public RankProgram {
 public:
  IdleProgram(const Clock& clock, TimeNs wake_ns)
      : clock_(clock), wake_ns_(wake_ns) {}
  Progress step() override {
    return clock_.now_ns() >= wake_ns_ ? Progress::done()
                                       : Progress::waiting(wake_ns_);
  }
  std::string outstanding() const override { return "idle"; }

 private:
  const Clock& clock_;
  TimeNs wake_ns_;
};

void BM_SimSparse(benchmark::State& state) {
  constexpr uint32_t kRanks = 1024;
  constexpr uint64_t kFramesPerRun = 2000;
  constexpr TimeNs kIdleNs = 10 * kNsPerMs;  // the stream takes about 1 ms
  std::unique_ptr<RawRing> ring =
      RawRing::create(kRanks, sim::LinkModel::tb5(), 4 * kKiB);
  if (ring == nullptr) return fail_row(state, "world setup failed");
  World& world = ring->world();
  const uint64_t before = fabric_events(world.counters());
  const auto wall_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    std::vector<std::unique_ptr<RankProgram>> programs;
    programs.push_back(
        std::make_unique<StreamProgram>(*ring, 0, kFramesPerRun, 0));
    programs.push_back(
        std::make_unique<StreamProgram>(*ring, 1, 0, kFramesPerRun));
    const TimeNs wake_ns = world.clock().now_ns() + kIdleNs;
    for (uint32_t r = 2; r < kRanks; ++r) {
      programs.push_back(std::make_unique<IdleProgram>(world.clock(), wake_ns));
    }
    if (!run_all(state, world, programs)) return;
  }
  report_event_rates(state, fabric_events(world.counters()) - before,
                     seconds_since(wall_start));
}
BENCHMARK(BM_SimSparse)->Unit(benchmark::kMillisecond);

// Per-rank float32 input and output buffers for all_sum.
struct SumBuffers {
  std::vector<std::vector<float>> in, out;
  SumBuffers(uint32_t ranks, uint64_t bytes)
      : in(ranks, std::vector<float>(bytes / sizeof(float), 1.0f)),
        out(ranks, std::vector<float>(bytes / sizeof(float))) {}
  Starter all_sum(uint32_t r) {
    return [this, r](Group& g) {
      return g.all_reduce_async(std::as_bytes(std::span(in[r])),
                                std::as_writable_bytes(std::span(out[r])),
                                DType::kFloat32, ReduceOp::kSum);
    };
  }
};

// ---------------------------------------------------------------------------
// BM_AllReduceLoop: 8 ranks, a mesh, all_sum after all_sum, with the
// group's choice of algorithm (mesh exchange up to 64 KiB, mesh scatter
// above) or the ring forced.

void BM_AllReduceLoop(benchmark::State& state) {
  constexpr uint32_t kRanks = 8;
  constexpr uint32_t kOpsPerRun = 20;
  const sim::LinkModel link =
      state.range(0) == 0 ? sim::LinkModel::ideal() : sim::LinkModel::tb5();
  const auto bytes = static_cast<uint64_t>(state.range(1));
  GroupOptions options;
  if (state.range(2) != 0) options.algorithm = Algorithm::kRing;
  std::unique_ptr<SimCluster> c =
      make_cluster(*Topology::mesh(kRanks), link, options);
  if (c == nullptr) return fail_row(state, "group formation failed");
  SumBuffers buffers(kRanks, bytes);
  std::vector<Starter> starts;
  for (uint32_t r = 0; r < kRanks; ++r) starts.push_back(buffers.all_sum(r));
  const sim::Counters before = c->world().counters();
  TimeNs virtual_ns = 0;
  uint64_t steps = 0;
  const auto wall_start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    const LoopResult run = run_loops(state, *c, starts, kOpsPerRun);
    if (!run.ok) return;
    virtual_ns += run.virtual_ns;
    steps += run.steps;
  }
  const double wall_s = seconds_since(wall_start);
  const uint64_t events =
      fabric_events(c->world().counters()) - fabric_events(before);
  const double ops = static_cast<double>(state.iterations()) * kOpsPerRun;
  report_event_rates(state, events, wall_s);
  state.counters["events_per_op"] = static_cast<double>(events) / ops;
  state.counters["steps_per_op"] = static_cast<double>(steps) / ops;
  state.counters["virtual_us_per_op"] =
      static_cast<double>(virtual_ns) / ops / kNsPerUs;
  state.SetBytesProcessed(static_cast<int64_t>(ops * bytes * kRanks));
  state.SetLabel(absl::StrFormat("%s %s", state.range(0) == 0 ? "ideal" : "tb5",
                                 state.range(2) == 0 ? "auto" : "ring"));
}
BENCHMARK(BM_AllReduceLoop)
    ->ArgNames({"tb5", "bytes", "ring"})
    ->ArgsProduct({{0, 1}, {256, 4 * kKiB, 64 * kKiB, 1 * kMiB}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// ---------------------------------------------------------------------------
// BM_RingAllSum: one all_sum of 1 MiB over a ring of 1024 ranks (and 128,
// to see how the cost grows). BM_RingScale: both in one process, one after
// the other, and the ratio of their fabric events per wall second: absolute
// times move with the machine's load, the ratio much less.

struct RingRun {
  bool ok = false;
  double setup_s = 0;  // group formation
  double wall_s = 0;   // the all_sum alone
  TimeNs virtual_ns = 0;
  uint64_t fabric_events = 0;
  uint64_t sim_events = 0;
  uint64_t steps = 0;
};

// One 1 MiB float32 all_sum over a `ranks`-rank ring on tb5, its sum
// checked. Not ok (and the row failed) on any failure.
RingRun run_ring_all_sum(benchmark::State& state, uint32_t ranks) {
  const uint64_t bytes = 1 * kMiB;
  RingRun out;
  const auto setup_start = std::chrono::steady_clock::now();
  std::unique_ptr<SimCluster> c = make_cluster(
      *Topology::ring(ranks), sim::LinkModel::tb5(), GroupOptions{});
  if (c == nullptr) {
    fail_row(state, "group formation failed");
    return out;
  }
  out.setup_s = seconds_since(setup_start);
  // Ranks share one input (it is only read); each has its own output.
  std::vector<float> in(bytes / sizeof(float), 1.0f);
  std::vector<std::vector<float>> sums(ranks, std::vector<float>(in.size()));
  std::vector<Starter> starts;
  for (uint32_t r = 0; r < ranks; ++r) {
    starts.push_back([&in, &sums, r](Group& g) {
      return g.all_reduce_async(std::as_bytes(std::span(in)),
                                std::as_writable_bytes(std::span(sums[r])),
                                DType::kFloat32, ReduceOp::kSum);
    });
  }
  const sim::Counters before = c->world().counters();
  const auto wall_start = std::chrono::steady_clock::now();
  const LoopResult run = run_loops(state, *c, starts, 1);
  out.wall_s = seconds_since(wall_start);
  if (!run.ok) return out;
  for (uint32_t r = 0; r < ranks; ++r) {
    if (sums[r].front() != ranks || sums[r].back() != ranks) {
      fail_row(state, "wrong sum");
      return out;
    }
  }
  const sim::Counters& after = c->world().counters();
  out.virtual_ns = run.virtual_ns;
  out.fabric_events = fabric_events(after) - fabric_events(before);
  out.sim_events = after.events - before.events;
  out.steps = run.steps;
  out.ok = true;
  return out;
}

void BM_RingAllSum(benchmark::State& state) {
  const auto ranks = static_cast<uint32_t>(state.range(0));
  RingRun run;
  for (auto _ : state) {
    run = run_ring_all_sum(state, ranks);
    if (!run.ok) return;
    state.SetIterationTime(run.wall_s);
  }
  state.counters["setup_s"] = run.setup_s;
  state.counters["virtual_ms"] = static_cast<double>(run.virtual_ns) / kNsPerMs;
  state.counters["fabric_events"] = static_cast<double>(run.fabric_events);
  state.counters["events_per_wall_s"] =
      static_cast<double>(run.fabric_events) / run.wall_s;
  state.counters["sim_events"] = static_cast<double>(run.sim_events);
  state.counters["steps"] = static_cast<double>(run.steps);
  state.counters["peak_rss_mib"] = peak_rss_mib();
}
BENCHMARK(BM_RingAllSum)
    ->ArgName("ranks")
    ->Arg(128)
    ->Arg(1024)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

void BM_RingScale(benchmark::State& state) {
  constexpr uint32_t kSmallRanks = 128;
  constexpr uint32_t kLargeRanks = 1024;
  // The 128-rank run takes a fraction of a second, so one run of it moves
  // with a moment's load; it runs kSmallRuns times, half before and half
  // after the 1024-rank run, and its median rate is the ratio's
  // denominator (min and max reported beside it).
  constexpr int kSmallRuns = 6;
  std::vector<double> small_rates;
  RingRun large;
  auto run_small = [&] {
    const RingRun small = run_ring_all_sum(state, kSmallRanks);
    if (small.ok) {
      small_rates.push_back(static_cast<double>(small.fabric_events) /
                            small.wall_s);
    }
    return small.ok;
  };
  for (auto _ : state) {
    small_rates.clear();
    for (int i = 0; i < kSmallRuns / 2; ++i) {
      if (!run_small()) return;
    }
    large = run_ring_all_sum(state, kLargeRanks);
    if (!large.ok) return;
    for (int i = 0; i < kSmallRuns / 2; ++i) {
      if (!run_small()) return;
    }
    state.SetIterationTime(large.wall_s);
  }
  std::sort(small_rates.begin(), small_rates.end());
  const double small_rate =
      (small_rates[kSmallRuns / 2 - 1] + small_rates[kSmallRuns / 2]) / 2;
  const double large_rate =
      static_cast<double>(large.fabric_events) / large.wall_s;
  state.counters["events_per_wall_s_128"] = small_rate;
  state.counters["events_per_wall_s_128_min"] = small_rates.front();
  state.counters["events_per_wall_s_128_max"] = small_rates.back();
  state.counters["events_per_wall_s_1024"] = large_rate;
  state.counters["rate_ratio"] = large_rate / small_rate;
  state.counters["peak_rss_mib"] = peak_rss_mib();
}
BENCHMARK(BM_RingScale)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);
}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  return weft::bench::run_benchmarks(argc, argv);
}
