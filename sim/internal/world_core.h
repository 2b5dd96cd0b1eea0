// WorldCore: the state of a simulated world behind World's small public
// face: virtual clock, event queue, queue pair registry, link and pair state,
// frames in flight, fault injection, trace and counters. One thread only.
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
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/slab.h"
#include "sim/counters.h"
#include "sim/internal/event_queue.h"
#include "sim/internal/payload_pool.h"
#include "sim/internal/ready_set.h"
#include "sim/internal/ring_queue.h"
#include "sim/internal/sim_endpoint.h"
#include "sim/internal/sim_fabric.h"
#include "sim/prng.h"
#include "sim/trace.h"
#include "sim/world.h"

namespace weft::sim {

class WorldCore {
 public:
  // Queue pair numbers start here, as on real hardware (small ones are
  // reserved).
  static constexpr uint32_t kFirstQpNum = 0x100;
  // InFlight::payload when the bytes are still on loan.
  static constexpr uint32_t kNoPayload = ~uint32_t{0};
  static constexpr size_t kCacheLineBytes = 64;
  // Longest a rate-injected reorder holds a frame back.
  static constexpr TimeNs kMaxReorderDelayNs = 20 * kNsPerUs;

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
  // The link rank->peer over cable `cable`, and the pair rank->peer,
  // created on first use.
  uint32_t link_index(uint32_t rank, uint32_t peer, uint32_t cable);
  uint32_t pair_index(uint32_t rank, uint32_t peer);

  // A send was posted on a ready queue pair: reserve its link and schedule
  // its departure.
  void schedule_departure(const internal::SimEndpoint& ep, uint64_t ticket,
                          uint32_t length);
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
  // The sender may reuse the frame on `loan` from now on: if its message
  // is still in flight, its bytes are copied out of the frame first.
  void end_loan(const internal::FrameLoan& loan);
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

 private:
  // A send waiting for its turn on a link.
  struct Departure {
    TimeNs leave_ns = 0;
    uint32_t qp_num = 0;
    uint64_t ticket = 0;
  };
  // One direction of one cable. Its departures leave in order, so only the
  // first is in the event queue at any time (a small heap is a fast heap).
  // A frame due to arrive over a link.
  struct Arrival {
    TimeNs arrive_ns = 0;
    uint32_t message = 0;
  };
  struct Link {
    TimeNs busy_until_ns = 0;
    uint32_t cable = 0;  // index into topology.devices(rank, peer)
    Prng prng;
    internal::RingQueue<Departure> departures;
    // Undelayed frames arrive in the order they left; delayed ones go to the
    // event queue on their own.
    internal::RingQueue<Arrival> arrivals;
    // The first `placed` arrivals have their bytes in their receives
    // already, all at queue pair placed_dst_qp (see place_early).
    uint32_t placed = 0;
    uint32_t placed_dst_qp = 0;
  };
  struct Pair {
    uint32_t rank = 0;
    uint32_t peer = 0;
    uint64_t frames = 0;           // frames that tried to leave so far
    TimeNs down_at_ns = kNeverNs;  // link_down
    std::vector<uint32_t> script;  // frame faults for this pair, by frame
    size_t script_cursor = 0;
  };
  // One cache line: every departure, poll of its send and arrival reads
  // it.
  struct alignas(kCacheLineBytes) InFlight {
    uint32_t dst_qp = 0;
    uint32_t pair = 0;
    uint32_t link = 0;
    uint32_t length = 0;
    uint32_t immediate = 0;
    uint32_t payload = kNoPayload;
    uint32_t refs = 0;  // arrivals still to come (2 when duplicated)
    // The low bits of a world-unique number, so a stale loan is recognised
    // (were one to match, it would only copy a frame still on loan early).
    uint32_t id = 0;
    // Where the bytes are: the sender's frame while on loan, then (if the
    // loan ends first) a payload pool buffer.
    const std::byte* source = nullptr;
    // When not null: the bytes are already in the receive frame that
    // starts here, the one the frame will land in (see place_early).
    const std::byte* placed_in = nullptr;
    uint64_t frame = 0;
    TimeNs depart_ns = 0;
    WcStatus recv_error = WcStatus::kSuccess;
  };
  // What happens to one departing frame.
  struct Fate {
    DropReason drop_reason = DropReason::kNone;
    bool duplicate = false;
    TimeNs delay_ns = 0;
    WcStatus send_error = WcStatus::kSuccess;
    WcStatus recv_error = WcStatus::kSuccess;
  };

  // What prefetch_rank() loads for one rank: as many lines as one cache
  // line of addresses holds.
  struct alignas(kCacheLineBytes) PrefetchLines {
    std::array<const void*, kCacheLineBytes / sizeof(void*)> lines{};
  };

  explicit WorldCore(WorldOptions options);
  void schedule_script();

  void handle(const internal::Event& e);
  void depart_next(uint32_t link);
  void depart(uint32_t qp_num, uint64_t ticket);
  // options_.link.serialisation_ns(bytes), remembered for the last length
  // asked (a collective sends frames of one size over and over, and the
  // exact division is dear).
  TimeNs serialisation_ns(uint32_t bytes) {
    if (bytes != serialised_bytes_) {
      serialised_bytes_ = bytes;
      serialisation_ns_ = options_.link.serialisation_ns(bytes);
    }
    return serialisation_ns_;
  }
  internal::FrameLoan launch(const internal::SimEndpoint& ep, const Fate& fate,
                             InFlight m);
  std::span<const std::byte> bytes_of(const InFlight& m) const;
  bool place_early(uint32_t message);
  void arrive_next(uint32_t link);
  void arrive(uint32_t message);
  void schedule_arrival(uint32_t link, TimeNs at_ns, uint32_t message);
  void deliver(internal::SimEndpoint& dst, const InFlight& m);
  void release(uint32_t message);
  void drop(const InFlight& m, uint32_t sender, uint32_t receiver,
            uint32_t cable, DropReason reason);
  void scripted(uint32_t index, bool end);

  Fate fate_of(const internal::SimEndpoint& ep, Pair& pair);
  void apply_script(const ScriptedFault& f, Fate* fate);
  void draw_rates(const internal::SimEndpoint& ep, const Pair& pair,
                  Fate* fate);
  void inject(const ScriptedFault& f, uint32_t cable);

  WorldOptions options_;
  ManualClock clock_;
  Prng prng_;
  Trace trace_;
  Counters counters_;
  std::vector<std::unique_ptr<SimFabric>> fabrics_;
  std::vector<PrefetchLines> prefetch_lines_;  // by rank
  std::vector<bool> crashed_;
  std::vector<std::vector<std::pair<TimeNs, TimeNs>>> stalls_;  // per rank
  internal::EventQueue events_;
  internal::ReadySet ready_;
  std::vector<internal::SimEndpoint*> endpoints_;  // by qp_num - kFirstQpNum
  std::vector<Link> links_;
  absl::flat_hash_map<uint64_t, uint32_t> link_by_key_;  // lookups only
  std::vector<Pair> pairs_;
  absl::flat_hash_map<uint64_t, uint32_t> pair_by_key_;  // lookups only
  std::vector<InFlight> in_flight_;
  std::vector<uint32_t> free_in_flight_;
  uint64_t next_message_id_ = 1;
  // Whether any fault rate is set (fixed at creation): without one and
  // without a script for the pair, a departing frame's fate is plain.
  bool rates_any_ = false;
  // No fault rate and no fault script (fixed at creation): every frame
  // arrives, in the order it left, and the receive it lands in can be known
  // before it arrives.
  bool faultless_ = false;
  uint32_t serialised_bytes_ = 0;
  TimeNs serialisation_ns_ = 0;  // options_.link.serialisation_ns(0)
  internal::PayloadPool payloads_;
  std::vector<ScriptedFault> injected_;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_INTERNAL_WORLD_CORE_H_
