#include "bench/sim_bench_support.h"

#include "absl/strings/str_format.h"
#include "bench/bench_support.h"
#include "collectives/inprocess_bootstrap.h"

namespace weft::bench {

using sim::RankProgram;
using sim::World;

uint64_t fabric_events(const sim::Counters& c) {
  return c.posted_sends + c.posted_recvs + c.completions_ok +
         c.completions_error + c.completions_flushed;
}

std::unique_ptr<World> make_world(Topology topology, sim::LinkModel link) {
  sim::WorldOptions options;
  options.topology = std::move(topology);
  options.link = link;
  options.keep_trace_events = false;
  absl::StatusOr<std::unique_ptr<World>> world = World::create(options);
  return world.ok() ? *std::move(world) : nullptr;
}

bool run_all(benchmark::State& state, World& world,
             std::vector<std::unique_ptr<RankProgram>>& programs) {
  std::vector<RankProgram*> raw;
  for (const auto& p : programs) raw.push_back(p.get());
  const sim::RunResult result = world.run(raw);
  if (!result.completed()) {
    fail_row(state, "run did not complete: " + result.report);
    return false;
  }
  return true;
}

std::unique_ptr<RawRing> RawRing::create(uint32_t ranks, sim::LinkModel link,
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

bool RawRing::open(uint32_t r, uint32_t peer) {
  if (endpoints_.contains({r, peer})) return true;
  const Topology& topo = world_->options().topology;
  absl::StatusOr<std::unique_ptr<Endpoint>> ep =
      world_->fabric(r).open(topo.devices(r, peer)[0], peer);
  if (!ep.ok()) return false;
  endpoints_[{r, peer}] = *std::move(ep);
  return true;
}

std::unique_ptr<SimCluster> make_cluster(Topology topology, sim::LinkModel link,
                                         const GroupOptions& options) {
  sim::WorldOptions world;
  world.topology = std::move(topology);
  world.link = link;
  world.keep_trace_events = false;
  absl::StatusOr<SimCluster> c = SimCluster::create(std::move(world), options);
  return c.ok() ? std::make_unique<SimCluster>(*std::move(c)) : nullptr;
}

Progress OpLoop::step() {
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

std::string OpLoop::outstanding() const {
  return absl::StrFormat("rank %u: operation %u of %u", group_.rank(), started_,
                         count_);
}

LoopResult run_loops(benchmark::State& state, SimCluster& c,
                     const std::vector<Starter>& starts, uint32_t count) {
  std::vector<std::unique_ptr<RankProgram>> programs;
  for (uint32_t r = 0; r < c.size(); ++r) {
    programs.push_back(std::make_unique<OpLoop>(c.group(r), c.world().clock(),
                                                starts[r], count));
  }
  LoopResult out;
  const TimeNs start_ns = c.world().clock().now_ns();
  if (!run_all(state, c.world(), programs)) return out;
  for (const auto& p : programs) {
    const auto& loop = static_cast<const OpLoop&>(*p);
    if (!loop.failure().ok()) {
      fail_row(state, loop.failure());
      return out;
    }
    out.steps += loop.steps();
    out.done_ns.push_back(loop.done_ns() - start_ns);
  }
  out.ok = true;
  out.virtual_ns = c.world().clock().now_ns() - start_ns;
  return out;
}

}  // namespace weft::bench
