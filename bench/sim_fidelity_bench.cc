// weft_sim_bench, fidelity (virtual time, deterministic; one iteration
// each): on a pure alpha-beta link (latency a, bandwidth 1/b, no
// per-message overhead) the ratio of simulated time to the
// Thakur-Rabenseifner-Gropp model, as the counter `ratio`:
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
// The speed cases (and main) are in sim_speed_bench.cc.
//
//   weft_sim_bench --benchmark_filter='BM_Fidelity'
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
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
    if (ring == nullptr) return fail_row(state, "world setup failed");
    World& world = ring->world();
    const TimeNs start_ns = world.clock().now_ns();
    if (!ring->rx(1)
             .post_recv(WorkId{WorkKind::kRecv, 0, 0}, ring->frame(1, 0, bytes))
             .ok() ||
        !ring->tx(0)
             .post_send(WorkId{WorkKind::kSend, 1, 0}, ring->frame(0, 0, bytes),
                        static_cast<uint32_t>(bytes), 0)
             .ok()) {
      return fail_row(state, "post failed");
    }
    std::vector<std::unique_ptr<RankProgram>> programs(2);
    programs[1] = std::make_unique<ReceiveTimer>(ring->rx(1), world.clock());
    if (!run_all(state, world, programs)) return;
    const TimeNs at_ns = static_cast<ReceiveTimer&>(*programs[1]).at_ns();
    if (at_ns < 0) return fail_row(state, "the receive failed");
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
    if (ring == nullptr) return fail_row(state, "world setup failed");
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
        return fail_row(state, "wrong result");
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
    std::unique_ptr<SimCluster> cluster =
        make_cluster(*Topology::ring(c.p), alpha_beta_link(), options);
    if (cluster == nullptr) return fail_row(state, "formation failed");
    std::vector<Starter> starts;
    for (uint32_t r = 0; r < c.p; ++r) starts.push_back(c.start(r));
    const uint64_t frames_before = cluster->world().counters().frames_sent;
    const LoopResult run = run_loops(state, *cluster, starts, 1);
    if (!run.ok) return;
    sim_ns = run.virtual_ns;
    frames = cluster->world().counters().frames_sent - frames_before;
    if (!c.correct()) return fail_row(state, "wrong result");
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
// The small size once more with recovery off shows what recovery costs
// (nothing since operations stopped waiting for their last
// acknowledgement).
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
    std::unique_ptr<SimCluster> cluster =
        make_cluster(*Topology::ring(2), alpha_beta_link(), GroupOptions{});
    if (cluster == nullptr) return fail_row(state, "formation failed");
    const std::vector<Starter> starts = {
        [&](Group& g) { return g.send_async(in, DType::kUint8, 1); },
        [&](Group& g) { return g.recv_async(out, DType::kUint8, 0); }};
    const LoopResult run = run_loops(state, *cluster, starts, 1);
    if (!run.ok) return;
    if (in != out) return fail_row(state, "wrong bytes");
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
}  // namespace weft::bench
