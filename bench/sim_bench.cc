// Benchmarks of the simulator: how fast it runs and how faithful it is.
//
// Speed (wall clock, one core):
//  - BM_SimStream: the simulator alone. 8 ranks in a ring each stream small
//    frames to their right neighbour through raw endpoints; items/s is
//    fabric events (posts plus completions) per wall-clock second.
//  - BM_AllReduceLoop: 8 ranks (mesh) running all_sum after all_sum
//    through weft::Group, on the ideal and tb5 links; fabric_events is the
//    same rate, with the collectives engine's own cost included.
//  - BM_RingAllSum/ranks:1024: one all_sum of 1 MiB float32 over a
//    1024-rank ring (tb5 link): the wall time of the run (group formation
//    excluded, and reported as setup_s).
//
// Fidelity (virtual time, deterministic; one iteration each): on a pure
// alpha-beta link (latency a, bandwidth 1/b, no per-message overhead) the
// ratio of simulated time to the Thakur-Rabenseifner-Gropp model, as the
// counter `ratio`:
//  - BM_FidelityP2p: one send of n bytes, model a + n b.
//  - BM_FidelityStepRing: a step-by-step ring written on raw endpoints
//    (each step one message of n/p bytes, sent once the previous step's
//    message arrived): all-gather and reduce-scatter (p-1)a + n(p-1)/p b,
//    all-reduce twice that. It checks its result, so it is a real ring.
//  - BM_FidelityGroupRing: weft::Group's ring (forced, one direction), which
//    pipelines frames across steps: it must be no slower than its model
//    (ratio <= 1.02), and may be faster.
//  - BM_FidelityGroupP2p: Group::send/recv (frames of at most 512 KiB,
//    each with a 64-byte header).
//
//   weft_sim_bench --benchmark_repetitions=3
//                  --benchmark_report_aggregates_only=true
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "collectives/group.h"
#include "collectives/inprocess_bootstrap.h"
#include "sim/world.h"

namespace weft {
namespace {

using sim::RankProgram;
using sim::World;
using sim::WorldOptions;

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;

// The fidelity link: Thunderbolt 5's latency and wire rate (sim/link_model.h)
// without the per-message overhead, so the alpha-beta model is exact.
constexpr TimeNs kAlphaNs = 3793;
constexpr double kBandwidthBytesPerS = 1e10;  // b = 0.1 ns per byte
// Most the model may undercut a pipelined algorithm's time, as a ratio.
constexpr double kPipelinedLimit = 1.02;

sim::LinkModel alpha_beta_link() {
  return sim::LinkModel{.latency_ns = kAlphaNs,
                        .bandwidth_bytes_per_s = kBandwidthBytesPerS,
                        .per_message_ns = 0};
}
double beta_ns_per_byte() { return 1e9 / kBandwidthBytesPerS; }

uint64_t fabric_events(const sim::Counters& c) {
  return c.posted_sends + c.posted_recvs + c.completions_ok +
         c.completions_error + c.completions_flushed;
}

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

std::unique_ptr<World> make_world(Topology topology, sim::LinkModel link) {
  WorldOptions options;
  options.topology = std::move(topology);
  options.link = link;
  options.keep_trace_events = false;
  absl::StatusOr<std::unique_ptr<World>> world = World::create(options);
  return world.ok() ? *std::move(world) : nullptr;
}

// Runs `programs` once; false (and the benchmark skipped) unless every
// program finished.
bool run_all(benchmark::State& state, World& world,
             std::vector<std::unique_ptr<RankProgram>>& programs) {
  std::vector<RankProgram*> raw;
  for (const auto& p : programs) raw.push_back(p.get());
  const sim::RunResult result = world.run(raw);
  if (!result.completed()) {
    state.SkipWithError(("run did not complete: " + result.report).c_str());
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Raw endpoints: one queue pair from each rank to each ring neighbour, and a
// slab per rank.

class RawRing {
 public:
  static std::unique_ptr<RawRing> create(uint32_t ranks, sim::LinkModel link,
                                         uint64_t slab_bytes) {
    auto ring = std::unique_ptr<RawRing>(new RawRing);
    ring->world_ = make_world(*Topology::ring(ranks), link);
    if (ring->world_ == nullptr) return nullptr;
    for (uint32_t r = 0; r < ranks; ++r) {
      for (uint32_t peer : {ring->right(r), ring->left(r)}) {
        if (!ring->open(r, peer)) return nullptr;
      }
      absl::StatusOr<Slab*> slab =
          ring->world_->fabric(r).create_slab(slab_bytes);
      if (!slab.ok()) return nullptr;
      ring->slabs_.push_back(*slab);
    }
    for (auto& [key, ep] : ring->endpoints_) {
      const Endpoint& remote = *ring->endpoints_.at({key.second, key.first});
      if (!ep->connect(*remote.destination()).ok()) return nullptr;
    }
    return ring;
  }

  World& world() { return *world_; }
  uint32_t ranks() const { return world_->ranks(); }
  uint32_t right(uint32_t r) const { return (r + 1) % ranks(); }
  uint32_t left(uint32_t r) const { return (r + ranks() - 1) % ranks(); }
  // With two ranks both are the same queue pair.
  Endpoint& tx(uint32_t r) { return *endpoints_.at({r, right(r)}); }
  Endpoint& rx(uint32_t r) { return *endpoints_.at({r, left(r)}); }
  Frame frame(uint32_t r, uint64_t offset, uint64_t bytes) const {
    return *slabs_[r]->frame(offset, static_cast<uint32_t>(bytes));
  }

 private:
  RawRing() = default;
  bool open(uint32_t r, uint32_t peer) {
    if (endpoints_.contains({r, peer})) return true;
    const Topology& topo = world_->options().topology;
    absl::StatusOr<std::unique_ptr<Endpoint>> ep =
        world_->fabric(r).open(topo.devices(r, peer)[0], peer);
    if (!ep.ok()) return false;
    endpoints_[{r, peer}] = *std::move(ep);
    return true;
  }

  std::unique_ptr<World> world_;
  std::map<std::pair<uint32_t, uint32_t>, std::unique_ptr<Endpoint>>
      endpoints_;  // declared after world_: closed first
  std::vector<Slab*> slabs_;
};

// Completions polled by a rank program: kept across steps, so a poll does
// not construct a batch of Completions every time.
using CompletionBatch = std::array<Completion, Endpoint::kMaxPollBatch>;

// Polls `tx` and `rx` (once when they are the same queue pair) into
// `batch` and hands every completion to `on`. False on a poll error.
template <typename Fn>
bool poll_both(Endpoint& tx, Endpoint& rx, CompletionBatch& batch, Fn on) {
  Endpoint* const endpoints[] = {&tx, &rx};
  const size_t distinct = &tx == &rx ? 1 : 2;
  for (size_t e = 0; e < distinct; ++e) {
    absl::StatusOr<size_t> n = endpoints[e]->poll(batch);
    if (!n.ok()) return false;
    for (size_t i = 0; i < *n; ++i) on(batch[i]);
  }
  return true;
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
  if (ring == nullptr) return state.SkipWithError("world setup failed");
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
  if (ring == nullptr) return state.SkipWithError("world setup failed");
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

// ---------------------------------------------------------------------------
// Groups over a simulated world.

struct Cluster {
  std::unique_ptr<World> world;
  std::vector<std::unique_ptr<Group>> groups;  // destroyed before the world
};

std::unique_ptr<Cluster> make_cluster(Topology topology, sim::LinkModel link,
                                      const GroupOptions& options) {
  auto c = std::make_unique<Cluster>();
  c->world = make_world(topology, link);
  if (c->world == nullptr) return nullptr;
  std::vector<Fabric*> fabrics;
  for (uint32_t r = 0; r < c->world->ranks(); ++r)
    fabrics.push_back(&c->world->fabric(r));
  absl::StatusOr<std::vector<std::unique_ptr<Group>>> groups =
      form_groups_in_process(fabrics, topology, options);
  if (!groups.ok()) return nullptr;
  c->groups = *std::move(groups);
  return c;
}

using Starter = std::function<Operation(Group&)>;

// Runs `count` operations, one after another, noting when the last ended.
class OpLoop final : public RankProgram {
 public:
  OpLoop(Group& group, const Clock& clock, Starter start, uint32_t count)
      : group_(group), clock_(clock), start_(std::move(start)), count_(count) {}

  Progress step() override {
    ++steps_;
    for (;;) {
      if (!running_) {
        if (started_ == count_) return Progress::done();
        op_ = start_(group_);
        running_ = true;
        ++started_;
      }
      const Progress p = op_.progress();
      if (!op_.done()) return p;
      running_ = false;
      done_ns_ = clock_.now_ns();
      if (!op_.status().ok()) {
        failure_ = op_.status();
        started_ = count_;
      }
    }
  }
  std::string outstanding() const override {
    return absl::StrFormat("rank %u: operation %u of %u", group_.rank(),
                           started_, count_);
  }
  const absl::Status& failure() const { return failure_; }
  uint64_t steps() const { return steps_; }
  TimeNs done_ns() const { return done_ns_; }

 private:
  Group& group_;
  const Clock& clock_;
  Starter start_;
  uint32_t count_;
  uint32_t started_ = 0;
  bool running_ = false;
  Operation op_;
  absl::Status failure_;
  uint64_t steps_ = 0;
  TimeNs done_ns_ = 0;
};

struct LoopResult {
  bool ok = false;
  TimeNs virtual_ns = 0;        // the run, start to end
  uint64_t steps = 0;           // rank program steps, every rank
  std::vector<TimeNs> done_ns;  // per rank: its last operation's end
};

// Runs starts[r] `count` times on each rank r. Not ok (and the benchmark
// skipped) on any failure.
LoopResult run_loops(benchmark::State& state, Cluster& c,
                     const std::vector<Starter>& starts, uint32_t count) {
  std::vector<std::unique_ptr<RankProgram>> programs;
  for (uint32_t r = 0; r < c.groups.size(); ++r) {
    programs.push_back(std::make_unique<OpLoop>(*c.groups[r], c.world->clock(),
                                                starts[r], count));
  }
  LoopResult out;
  const TimeNs start_ns = c.world->clock().now_ns();
  if (!run_all(state, *c.world, programs)) return out;
  for (const auto& p : programs) {
    const auto& loop = static_cast<const OpLoop&>(*p);
    if (!loop.failure().ok()) {
      state.SkipWithError(std::string(loop.failure().message()).c_str());
      return out;
    }
    out.steps += loop.steps();
    out.done_ns.push_back(loop.done_ns() - start_ns);
  }
  out.ok = true;
  out.virtual_ns = c.world->clock().now_ns() - start_ns;
  return out;
}

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
  std::unique_ptr<Cluster> c =
      make_cluster(*Topology::mesh(kRanks), link, options);
  if (c == nullptr) return state.SkipWithError("group formation failed");
  SumBuffers buffers(kRanks, bytes);
  std::vector<Starter> starts;
  for (uint32_t r = 0; r < kRanks; ++r) starts.push_back(buffers.all_sum(r));
  const sim::Counters before = c->world->counters();
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
      fabric_events(c->world->counters()) - fabric_events(before);
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
// to see how the cost grows).

void BM_RingAllSum(benchmark::State& state) {
  const auto ranks = static_cast<uint32_t>(state.range(0));
  const uint64_t bytes = 1 * kMiB;
  const auto setup_start = std::chrono::steady_clock::now();
  std::unique_ptr<Cluster> c = make_cluster(
      *Topology::ring(ranks), sim::LinkModel::tb5(), GroupOptions{});
  if (c == nullptr) return state.SkipWithError("group formation failed");
  const std::chrono::duration<double> setup_s =
      std::chrono::steady_clock::now() - setup_start;
  // Ranks share one input (it is only read); each has its own output.
  std::vector<float> in(bytes / sizeof(float), 1.0f);
  std::vector<std::vector<float>> out(ranks, std::vector<float>(in.size()));
  std::vector<Starter> starts;
  for (uint32_t r = 0; r < ranks; ++r) {
    starts.push_back([&in, &out, r](Group& g) {
      return g.all_reduce_async(std::as_bytes(std::span(in)),
                                std::as_writable_bytes(std::span(out[r])),
                                DType::kFloat32, ReduceOp::kSum);
    });
  }
  const sim::Counters before = c->world->counters();
  TimeNs virtual_ns = 0;
  uint64_t steps = 0;
  for (auto _ : state) {
    const LoopResult run = run_loops(state, *c, starts, 1);
    if (!run.ok) return;
    virtual_ns = run.virtual_ns;
    steps = run.steps;
  }
  for (uint32_t r = 0; r < ranks; ++r) {
    if (out[r].front() != ranks || out[r].back() != ranks)
      return state.SkipWithError("wrong sum");
  }
  const sim::Counters& after = c->world->counters();
  state.counters["setup_s"] = setup_s.count();
  state.counters["virtual_ms"] = static_cast<double>(virtual_ns) / kNsPerMs;
  state.counters["fabric_events"] =
      static_cast<double>(fabric_events(after) - fabric_events(before));
  state.counters["sim_events"] =
      static_cast<double>(after.events - before.events);
  state.counters["steps"] = static_cast<double>(steps);
}
BENCHMARK(BM_RingAllSum)
    ->ArgName("ranks")
    ->Arg(128)
    ->Arg(1024)
    ->Iterations(1)
    ->UseRealTime()
    ->Unit(benchmark::kSecond);

// ---------------------------------------------------------------------------
// Fidelity.

void report_ratio(benchmark::State& state, TimeNs sim_ns, double model_ns) {
  state.counters["sim_ns"] = static_cast<double>(sim_ns);
  state.counters["model_ns"] = model_ns;
  state.counters["ratio"] = static_cast<double>(sim_ns) / model_ns;
}

// Waits for one receive completion on `rx` and notes when it came: the
// scheduler steps a rank at the instant a completion is queued for it.
class ReceiveTimer final : public RankProgram {
 public:
  ReceiveTimer(Endpoint& rx, const Clock& clock) : rx_(rx), clock_(clock) {}
  Progress step() override {
    std::array<Completion, 1> c;
    absl::StatusOr<size_t> n = rx_.poll(c);
    if (!n.ok() || *n == 0) return Progress::waiting();
    if (c[0].ok()) at_ns_ = clock_.now_ns();
    return Progress::done();
  }
  std::string outstanding() const override { return "waiting for the frame"; }
  // When the receive completed successfully; -1 if it did not.
  TimeNs at_ns() const { return at_ns_; }

 private:
  Endpoint& rx_;
  const Clock& clock_;
  TimeNs at_ns_ = -1;
};

// BM_FidelityP2p: rank 0 posts one send of n bytes on idle links; rank 1
// notes when its receive completes.
void BM_FidelityP2p(benchmark::State& state) {
  const auto bytes = static_cast<uint64_t>(state.range(0));
  TimeNs sim_ns = 0;
  for (auto _ : state) {
    std::unique_ptr<RawRing> ring =
        RawRing::create(2, alpha_beta_link(), 2 * bytes + kKiB);
    if (ring == nullptr) return state.SkipWithError("world setup failed");
    World& world = ring->world();
    const TimeNs start_ns = world.clock().now_ns();
    if (!ring->rx(1)
             .post_recv(WorkId{WorkKind::kRecv, 0, 0}, ring->frame(1, 0, bytes))
             .ok() ||
        !ring->tx(0)
             .post_send(WorkId{WorkKind::kSend, 1, 0}, ring->frame(0, 0, bytes),
                        static_cast<uint32_t>(bytes), 0)
             .ok()) {
      return state.SkipWithError("post failed");
    }
    std::vector<std::unique_ptr<RankProgram>> programs(2);
    programs[1] = std::make_unique<ReceiveTimer>(ring->rx(1), world.clock());
    if (!run_all(state, world, programs)) return;
    const TimeNs at_ns = static_cast<ReceiveTimer&>(*programs[1]).at_ns();
    if (at_ns < 0) return state.SkipWithError("the receive failed");
    sim_ns = at_ns - start_ns;
  }
  report_ratio(state, sim_ns,
               kAlphaNs + static_cast<double>(bytes) * beta_ns_per_byte());
}
BENCHMARK(BM_FidelityP2p)
    ->ArgName("bytes")
    ->Arg(0)
    ->Arg(4 * kKiB)
    ->Arg(1 * kMiB)
    ->Arg(64 * kMiB)
    ->Iterations(1);

enum class RingOp { kAllGather = 0, kReduceScatter = 1, kAllReduce = 2 };

const char* ring_op_name(RingOp op) {
  switch (op) {
    case RingOp::kAllGather:
      return "all_gather";
    case RingOp::kReduceScatter:
      return "reduce_scatter";
    case RingOp::kAllReduce:
      return "all_reduce";
  }
  return "?";
}

// Thakur-Rabenseifner-Gropp: n bytes in all (the gathered output, the
// scattered input, the reduced vector) over p ranks.
double ring_model_ns(RingOp op, uint32_t p, uint64_t n) {
  const double one_pass =
      (p - 1) * static_cast<double>(kAlphaNs) +
      static_cast<double>(n) * (p - 1) / p * beta_ns_per_byte();
  return op == RingOp::kAllReduce ? 2 * one_pass : one_pass;
}

// A textbook step-by-step ring over raw endpoints. Rank r's data is p
// float32 blocks of m bytes at the start of its slab, then kWindow receive
// areas. Reduce-scatter step s sends block r-s and reduces the arriving
// block r-s-1 (rank r ends owning block r+1); all-gather step t, from the
// owned block o, sends block o-t and copies in block o-t-1. A step's send is
// posted once the previous step's block arrived, so each step costs a + m b.
class StepRingProgram final : public RankProgram {
 public:
  static constexpr uint32_t kWindow = 4;  // receives posted ahead

  StepRingProgram(RawRing& ring, uint32_t rank, RingOp op, uint64_t block)
      : ring_(ring), rank_(rank), block_(block), p_(ring.ranks()) {
    const uint32_t pass = p_ - 1;
    steps_ = op == RingOp::kAllReduce ? 2 * pass : pass;
    reduce_steps_ = op == RingOp::kAllGather ? 0 : pass;
    owned_ = op == RingOp::kAllGather ? rank : (rank + 1) % p_;
  }

  Progress step() override {
    bool advanced = false;
    if (!poll(&advanced)) return Progress::done();
    while (step_ < steps_) {
      if (!sent_) {
        if (!post_send()) return Progress::done();
        sent_ = advanced = true;
      }
      if (arrived_ == step_) break;
      land();
      ++step_;
      sent_ = false;
      advanced = true;
    }
    if (step_ == steps_ && sends_done_ == steps_) return Progress::done();
    return advanced ? Progress::advanced() : Progress::waiting();
  }
  std::string outstanding() const override {
    return absl::StrFormat("rank %u: step %u of %u", rank_, step_, steps_);
  }
  bool failed() const { return failed_; }
  float value(uint32_t block) const { return floats(block)[0]; }
  // True when every float of `block` equals the first.
  bool uniform(uint32_t block) const {
    const float* f = floats(block);
    return std::all_of(f, f + block_ / sizeof(float),
                       [&](float x) { return x == f[0]; });
  }

 private:
  // Block sent at step s (its index mod p), and block received.
  uint32_t block_sent(uint32_t s) const {
    return s < reduce_steps_ ? wrap(rank_ - s)
                             : wrap(owned_ - (s - reduce_steps_));
  }
  uint32_t wrap(int64_t i) const {
    return static_cast<uint32_t>(((i % p_) + p_) % p_);
  }
  float* floats(uint32_t block) const {
    return reinterpret_cast<float*>(
        ring_.frame(rank_, block * block_, block_).data());
  }
  Frame area(uint32_t s) const {
    return ring_.frame(rank_, (p_ + s % kWindow) * block_, block_);
  }
  bool post_recv(uint32_t s) {
    return ring_.rx(rank_)
        .post_recv(WorkId{WorkKind::kRecv, ring_.left(rank_), s % kWindow},
                   area(s))
        .ok();
  }
  bool post_send() {
    if (step_ == 0) {
      for (uint32_t s = 0; s < std::min(steps_, kWindow); ++s)
        if (!post_recv(s)) return false;
    }
    const Frame f = ring_.frame(rank_, block_sent(step_) * block_, block_);
    return ring_.tx(rank_)
        .post_send(WorkId{WorkKind::kSend, ring_.right(rank_), 0}, f,
                   static_cast<uint32_t>(block_), step_)
        .ok();
  }
  bool poll(bool* advanced) {
    bool ok = poll_both(
        ring_.tx(rank_), ring_.rx(rank_), batch_, [&](const Completion& c) {
          *advanced = true;
          failed_ |= !c.ok() ||
                     (c.id.kind == WorkKind::kRecv && c.immediate != arrived_);
          ++(c.id.kind == WorkKind::kSend ? sends_done_ : arrived_);
        });
    return ok && !failed_;
  }
  // Copies or reduces step_'s arrival into its block; re-posts its area.
  void land() {
    const uint32_t into = wrap(block_sent(step_) - 1);
    const float* src = reinterpret_cast<const float*>(area(step_).data());
    float* dst = floats(into);
    for (uint64_t i = 0; i < block_ / sizeof(float); ++i)
      dst[i] = step_ < reduce_steps_ ? dst[i] + src[i] : src[i];
    if (step_ + kWindow < steps_) failed_ |= !post_recv(step_ + kWindow);
  }

  RawRing& ring_;
  uint32_t rank_;
  uint64_t block_;
  uint32_t p_;
  uint32_t steps_ = 0;
  uint32_t reduce_steps_ = 0;
  uint32_t owned_ = 0;
  uint32_t step_ = 0;
  bool sent_ = false;
  uint32_t arrived_ = 0;
  uint32_t sends_done_ = 0;
  bool failed_ = false;
  CompletionBatch batch_;
};

// What every block should hold after the ring, from rank r's point of
// view: all-gather block j = j + 1, else the sum of (rank + 1) over ranks.
bool step_ring_correct(const StepRingProgram& prog, RingOp op, uint32_t rank,
                       uint32_t p) {
  const float sum = static_cast<float>(p) * (p + 1) / 2;
  for (uint32_t j = 0; j < p; ++j) {
    if (op == RingOp::kReduceScatter && j != (rank + 1) % p) continue;
    const float want =
        op == RingOp::kAllGather ? static_cast<float>(j + 1) : sum;
    if (prog.value(j) != want || !prog.uniform(j)) return false;
  }
  return true;
}

void BM_FidelityStepRing(benchmark::State& state) {
  const auto op = static_cast<RingOp>(state.range(0));
  const auto p = static_cast<uint32_t>(state.range(1));
  const auto n = static_cast<uint64_t>(state.range(2));
  const uint64_t block = n / p;
  TimeNs sim_ns = 0;
  for (auto _ : state) {
    std::unique_ptr<RawRing> ring = RawRing::create(
        p, alpha_beta_link(), (p + StepRingProgram::kWindow) * block);
    if (ring == nullptr) return state.SkipWithError("world setup failed");
    std::vector<std::unique_ptr<RankProgram>> programs;
    for (uint32_t r = 0; r < p; ++r) {
      auto prog = std::make_unique<StepRingProgram>(*ring, r, op, block);
      for (uint32_t j = 0; j < p; ++j) {
        const bool mine = op != RingOp::kAllGather || j == r;
        std::fill_n(
            reinterpret_cast<float*>(ring->frame(r, j * block, block).data()),
            block / sizeof(float), mine ? r + 1.0f : 0.0f);
      }
      programs.push_back(std::move(prog));
    }
    const TimeNs start_ns = ring->world().clock().now_ns();
    if (!run_all(state, ring->world(), programs)) return;
    sim_ns = ring->world().clock().now_ns() - start_ns;
    for (uint32_t r = 0; r < p; ++r) {
      const auto& prog = static_cast<const StepRingProgram&>(*programs[r]);
      if (prog.failed() || !step_ring_correct(prog, op, r, p))
        return state.SkipWithError("wrong result");
    }
  }
  report_ratio(state, sim_ns, ring_model_ns(op, p, n));
  state.SetLabel(ring_op_name(op));
}
BENCHMARK(BM_FidelityStepRing)
    ->ArgNames({"op", "ranks", "bytes"})
    ->ArgsProduct({{0, 1, 2}, {2, 4, 8, 16}, {64 * kKiB, 1 * kMiB, 16 * kMiB}})
    ->Iterations(1);

// The same collectives through weft::Group, ring forced, one direction.
struct GroupRingCase {
  RingOp op;
  uint32_t p;
  uint64_t n;
  std::vector<std::vector<float>> in, out;

  GroupRingCase(RingOp op_in, uint32_t ranks, uint64_t bytes)
      : op(op_in), p(ranks), n(bytes), in(ranks), out(ranks) {
    const uint64_t floats = n / sizeof(float);
    for (uint32_t r = 0; r < p; ++r) {
      in[r].assign(op == RingOp::kAllGather ? floats / p : floats, r + 1.0f);
      out[r].assign(op == RingOp::kReduceScatter ? floats / p : floats, 0.0f);
    }
  }
  Starter start(uint32_t r) {
    return [this, r](Group& g) {
      const ConstBytes i = std::as_bytes(std::span(in[r]));
      const Bytes o = std::as_writable_bytes(std::span(out[r]));
      const CallOptions ring{.algorithm = Algorithm::kRing};
      switch (op) {
        case RingOp::kAllGather:
          return g.all_gather_async(i, o, DType::kFloat32, ring);
        case RingOp::kReduceScatter:
          return g.reduce_scatter_async(i, o, DType::kFloat32, ReduceOp::kSum,
                                        ring);
        case RingOp::kAllReduce:
          break;
      }
      return g.all_reduce_async(i, o, DType::kFloat32, ReduceOp::kSum, ring);
    };
  }
  bool correct() const {
    const float sum = static_cast<float>(p) * (p + 1) / 2;
    for (uint32_t r = 0; r < p; ++r) {
      for (size_t i = 0; i < out[r].size(); ++i) {
        const float want = op == RingOp::kAllGather
                               ? static_cast<float>(i / in[r].size() + 1)
                               : sum;
        if (out[r][i] != want) return false;
      }
    }
    return true;
  }
};

void BM_FidelityGroupRing(benchmark::State& state) {
  GroupRingCase c(static_cast<RingOp>(state.range(0)),
                  static_cast<uint32_t>(state.range(1)),
                  static_cast<uint64_t>(state.range(2)));
  GroupOptions options;
  options.ring_directions = 1;
  options.depth = static_cast<uint32_t>(state.range(3));
  options.recovery.enabled = state.range(4) != 0;
  TimeNs sim_ns = 0;
  uint64_t frames = 0;
  for (auto _ : state) {
    std::unique_ptr<Cluster> cluster =
        make_cluster(*Topology::ring(c.p), alpha_beta_link(), options);
    if (cluster == nullptr) return state.SkipWithError("formation failed");
    std::vector<Starter> starts;
    for (uint32_t r = 0; r < c.p; ++r) starts.push_back(c.start(r));
    const uint64_t frames_before = cluster->world->counters().frames_sent;
    const LoopResult run = run_loops(state, *cluster, starts, 1);
    if (!run.ok) return;
    sim_ns = run.virtual_ns;
    frames = cluster->world->counters().frames_sent - frames_before;
    if (!c.correct()) return state.SkipWithError("wrong result");
  }
  // Every frame that left, acknowledgements and resent frames included.
  state.counters["frames"] = static_cast<double>(frames);
  const double model_ns = ring_model_ns(c.op, c.p, c.n);
  report_ratio(state, sim_ns, model_ns);
  state.counters["no_slower"] = sim_ns <= kPipelinedLimit * model_ns;
  state.SetLabel(ring_op_name(c.op));
}
// Every op, rank count and size with the default depth (receives posted
// and frames in flight per cable); and the small size again at other
// depths up to the deepest pipeline, which shows whether credits or the
// simulator set the pace when the ring is slower than its model, and which
// depth the small items need.
// With recovery on (the default) an operation ends only once its frames
// are acknowledged, one latency after the last one arrived; the small size
// once more with recovery off shows what that costs.
void group_ring_args(benchmark::internal::Benchmark* b) {
  const GroupOptions defaults;
  const int64_t on = defaults.recovery.enabled ? 1 : 0;
  for (int64_t op : {0, 1, 2}) {
    for (int64_t p : {2, 4, 8, 16}) {
      for (int64_t n : {64 * kKiB, 1 * kMiB, 16 * kMiB})
        b->Args({op, p, n, defaults.depth, on});
      for (int64_t depth : {8, 12, 16, 20, 28}) {
        if (depth != defaults.depth) b->Args({op, p, 64 * kKiB, depth, on});
      }
      b->Args({op, p, 64 * kKiB, defaults.depth, 1 - on});
    }
  }
}
BENCHMARK(BM_FidelityGroupRing)
    ->ArgNames({"op", "ranks", "bytes", "depth", "recovery"})
    ->Apply(group_ring_args)
    ->Iterations(1);

// BM_FidelityGroupP2p: rank 0 sends n bytes to rank 1 with Group::send;
// the time is when rank 1's recv ends (the sender also waits for the
// acknowledgement, a latency later).
void BM_FidelityGroupP2p(benchmark::State& state) {
  const auto bytes = static_cast<uint64_t>(state.range(0));
  std::vector<std::byte> in(bytes, std::byte{7}), out(bytes);
  TimeNs sim_ns = 0;
  for (auto _ : state) {
    std::unique_ptr<Cluster> cluster =
        make_cluster(*Topology::ring(2), alpha_beta_link(), GroupOptions{});
    if (cluster == nullptr) return state.SkipWithError("formation failed");
    const std::vector<Starter> starts = {
        [&](Group& g) { return g.send_async(in, DType::kUint8, 1); },
        [&](Group& g) { return g.recv_async(out, DType::kUint8, 0); }};
    const LoopResult run = run_loops(state, *cluster, starts, 1);
    if (!run.ok) return;
    if (in != out) return state.SkipWithError("wrong bytes");
    sim_ns = run.done_ns[1];
  }
  report_ratio(state, sim_ns,
               kAlphaNs + static_cast<double>(bytes) * beta_ns_per_byte());
}
BENCHMARK(BM_FidelityGroupP2p)
    ->ArgName("bytes")
    ->Arg(4 * kKiB)
    ->Arg(1 * kMiB)
    ->Arg(64 * kMiB)
    ->Iterations(1);

}  // namespace
}  // namespace weft

BENCHMARK_MAIN();
