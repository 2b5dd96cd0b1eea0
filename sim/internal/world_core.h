// WorldCore: the state of a simulated world behind World's small public
// face: virtual clock, event queue, queue pair registry, timed faults (crash,
// stall, qp_error), trace and counters, and the Transport that moves frames
// over the links (link and pair state, frames in flight, each frame's fault
// fate). Registry slot i holds nullptr or the endpoint whose queue pair
// number is kFirstQpNum + i. One thread only.
#ifndef WEFT_SIM_INTERNAL_WORLD_CORE_H_
#define WEFT_SIM_INTERNAL_WORLD_CORE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/assert.h"
#include "fabric/clock.h"
#include "fabric/slab.h"
#include "sim/counters.h"
#include "sim/internal/check_cadence.h"
#include "sim/internal/event_queue.h"
#include "sim/internal/ready_set.h"
#include "sim/internal/sim_endpoint.h"
#include "sim/internal/sim_fabric.h"
#include "sim/internal/transport.h"
#include "sim/trace.h"
#include "sim/world.h"

namespace weft::sim {

class WorldCore {
 public:
  // Queue pair numbers start here, as on real hardware (small ones are
  // reserved).
  static constexpr uint32_t kFirstQpNum = 0x100;

  static absl::StatusOr<std::unique_ptr<WorldCore>> create(
      WorldOptions options);

  const WorldOptions& options() const { return options_; }
  uint32_t ranks() const { return options_.topology.ranks(); }
  const ManualClock& clock() const { return clock_; }
  TimeNs now() const { return clock_.now_ns(); }
  SimFabric& fabric(uint32_t rank) { return *fabrics_[rank]; }
  Trace& trace() { return trace_; }
  Counters& counters() { return counters_; }
  const std::vector<ScriptedFault>& injected() const { return injected_; }
  bool crashed(uint32_t rank) const { return crashed_[rank]; }
  // The ranks crashed so far, first to crash first, with their times.
  struct Departure {
    uint32_t rank = 0;
    TimeNs at_ns = 0;
  };
  const std::vector<Departure>& departures() const { return departures_; }
  // World::delivers. O(endpoints).
  bool delivers(uint32_t rank, uint32_t peer) const;
  // World::cable_up. O(fault script).
  bool cable_up(uint32_t rank, uint32_t peer, uint32_t cable) const;
  // True when `rank` is inside a stall window at `now()`.
  bool stalled(uint32_t rank) const;

  // Queue pair registry.
  uint32_t register_endpoint(internal::SimEndpoint* endpoint);
  void unregister_endpoint(uint32_t qp_num);
  // nullptr for a closed or unknown queue pair. Inline: every departure and
  // arrival looks its endpoint up.
  internal::SimEndpoint* endpoint(uint32_t qp_num) const {
    const uint32_t i = qp_num - kFirstQpNum;  // wraps for qp_num < kFirstQpNum
    return i < endpoints_.size() ? endpoints_[i] : nullptr;
  }
  uint32_t next_qp_num() const;

  // Memory regions RDMA WRITEs target, and the writes that landed (see
  // World::register_region and take_writes).
  absl::Status register_region(uint32_t rank, uint32_t rkey,
                               const MemoryRegion& region);
  absl::Status unregister_region(uint32_t rank, uint32_t rkey);
  // The region `rank` registered under `rkey`, or nullptr.
  const MemoryRegion* region(uint32_t rank, uint32_t rkey) const {
    const auto& regions = regions_[rank];
    auto it = regions.find(rkey);
    return it == regions.end() ? nullptr : &it->second;
  }
  // Adds a write that landed in `rank`'s region `rkey` to the rank's log.
  void note_write(uint32_t rank, uint32_t rkey, uint64_t address,
                  const Frame& bytes);
  std::vector<WrittenRange> take_writes(uint32_t rank);

  // The frame path: links, pairs, frames in flight.
  Transport& transport() { return transport_; }
  const Transport& transport() const { return transport_; }
  // Schedules an event (Transport's frames move by them).
  // REQUIRES: at_ns >= now().
  void schedule(TimeNs at_ns, internal::EventKind kind, uint32_t index) {
    events_.push(at_ns, kind, index);
  }

  // An event at now() with its place filled in.
  TraceEvent trace_event(TraceKind kind, uint32_t rank, uint32_t peer,
                         uint32_t cable) const {
    TraceEvent e;
    e.time_ns = now();
    e.kind = kind;
    e.rank = rank;
    e.peer = peer;
    e.cable = cable;
    return e;
  }
  void record(const TraceEvent& event) { trace_.add(event); }
  // Counts, keeps and traces a frame fault `f` decided for a frame leaving
  // over cable `cable`.
  void note_fault(const ScriptedFault& f, uint32_t cable);
  // Traces and counts a completion queued on `ep`.
  void note_completion(const internal::SimEndpoint& ep, const Completion& c);

  // Scheduler interface.
  // Ranks to step: marked when a completion is queued for them, when they
  // crash, and when their stall ends (the scheduler marks the rest).
  internal::ReadySet& ready() { return ready_; }
  bool has_events() const { return !events_.empty(); }
  TimeNs next_event_ns() const { return events_.next_time_ns(); }
  // Handles every event due at or before now(); returns how many.
  uint64_t process_due();
  void advance_to(TimeNs t_ns) { clock_.advance_to(t_ns); }
  // Each live endpoint of `rank`, described, one per line.
  std::string describe_endpoints(uint32_t rank) const;
  // Starts loading the cache lines `rank`'s program reads first when
  // stepped: each endpoint's first line (what a poll reads) and then its
  // completion queue's first slots. The scheduler calls it a step ahead in
  // a large round: in a world of many ranks a rank's state is cold by the
  // time its turn comes, and the loads then overlap the previous rank's
  // step instead of stalling its own. The addresses sit in one cache line
  // per rank, so issuing them chases no pointer.
  void prefetch_rank(uint32_t rank) const {
    for (const void* line : prefetch_lines_[rank].lines) {
      if (line != nullptr) __builtin_prefetch(line);
    }
  }
  // Refills `rank`'s prefetch lines from its open endpoints.
  void set_prefetch_lines(uint32_t rank,
                          std::span<internal::SimEndpoint* const> endpoints);

  // WEFT_ASSERTs the registry and per-rank state, and the invariants of the
  // event queue, ready set and transport. O(queue pairs ever opened +
  // events + the transport's links and frames in flight).
  void check_invariants() const;

 private:
  // What prefetch_rank() loads for one rank: as many lines as one cache
  // line of addresses holds.
  struct alignas(internal::kCacheLineBytes) PrefetchLines {
    std::array<const void*, internal::kCacheLineBytes / sizeof(void*)> lines{};
  };
  // register_endpoint() and unregister_endpoint() check the slot they
  // touch at each call, and they and process_due() check everything every
  // kFullCheckEvery calls (see CheckCadence): the registry only grows, and
  // process_due() runs at every round of every instant.
  static constexpr uint32_t kFullCheckEvery = 64;

  explicit WorldCore(WorldOptions options);
  void schedule_script();

  void handle(const internal::Event& e);
  void scripted(uint32_t index, bool end);
  // check_invariants() every kFullCheckEvery calls. Inline, so nothing is
  // left of it where checks are off.
  void check_sometimes() {
    if (full_checks_.due()) WEFT_CHECK_INVARIANTS_OF(*this);
  }

  WorldOptions options_;
  ManualClock clock_;
  Trace trace_;
  Counters counters_;
  std::vector<std::unique_ptr<SimFabric>> fabrics_;
  std::vector<PrefetchLines> prefetch_lines_;  // by rank
  std::vector<bool> crashed_;
  std::vector<Departure> departures_;
  std::vector<std::vector<std::pair<TimeNs, TimeNs>>> stalls_;  // per rank
  internal::EventQueue events_;
  internal::ReadySet ready_;
  std::vector<internal::SimEndpoint*> endpoints_;  // by qp_num - kFirstQpNum
  // Per rank: memory regions by key (lookups only, never iterated), and
  // the writes that landed in them, not yet taken.
  std::vector<absl::flat_hash_map<uint32_t, MemoryRegion>> regions_;
  std::vector<std::vector<WrittenRange>> writes_;
  std::vector<ScriptedFault> injected_;
  Transport transport_;
  internal::CheckCadence<kFullCheckEvery> full_checks_;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_INTERNAL_WORLD_CORE_H_
