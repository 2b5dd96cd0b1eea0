// What weft_sim_bench's speed and fidelity suites share: a simulated world
// with raw endpoints around a ring (RawRing), the harness's SimCluster
// (one weft::Group per rank), and rank programs that run an operation over and
// over (OpLoop, run_loops). A row whose run does not complete is failed with
// bench::fail_row, so a smoke run notices.
#ifndef WEFT_BENCH_SIM_BENCH_SUPPORT_H_
#define WEFT_BENCH_SIM_BENCH_SUPPORT_H_

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "collectives/group.h"
#include "fabric/clock.h"
#include "fabric/endpoint.h"
#include "fabric/topology.h"
#include "harness/sim_cluster.h"
#include "sim/world.h"

namespace weft::bench {

// Posts plus completions: the unit of the simulator's speed targets.
uint64_t fabric_events(const sim::Counters& c);

// A world over `topology` and `link` that keeps no trace events (the hash
// is still computed); nullptr if the options are refused.
std::unique_ptr<sim::World> make_world(Topology topology, sim::LinkModel link);

// Runs `programs` once; false (and the row failed) unless every program
// finished.
bool run_all(benchmark::State& state, sim::World& world,
             std::vector<std::unique_ptr<sim::RankProgram>>& programs);

// ---------------------------------------------------------------------------
// Raw endpoints: one queue pair from each rank to each ring neighbour, and a
// slab per rank.

class RawRing {
 public:
  static std::unique_ptr<RawRing> create(uint32_t ranks, sim::LinkModel link,
                                         uint64_t slab_bytes);

  sim::World& world() { return *world_; }
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
  bool open(uint32_t r, uint32_t peer);

  std::unique_ptr<sim::World> world_;
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
// Groups over a simulated world.

using harness::SimCluster;

// The harness's SimCluster over `topology` and `link`, keeping no trace
// events (the hash is still computed); nullptr if the world or the groups
// could not be formed.
std::unique_ptr<SimCluster> make_cluster(Topology topology, sim::LinkModel link,
                                         const GroupOptions& options);

using Starter = std::function<Operation(Group&)>;

// Runs `count` operations, one after another, noting when the last ended.
class OpLoop final : public sim::RankProgram {
 public:
  OpLoop(Group& group, const Clock& clock, Starter start, uint32_t count)
      : group_(group), clock_(clock), start_(std::move(start)), count_(count) {}

  Progress step() override;
  std::string outstanding() const override;
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

// Runs starts[r] `count` times on each rank r. Not ok (and the row failed)
// on any failure.
LoopResult run_loops(benchmark::State& state, SimCluster& c,
                     const std::vector<Starter>& starts, uint32_t count);

}  // namespace weft::bench

#endif  // WEFT_BENCH_SIM_BENCH_SUPPORT_H_
