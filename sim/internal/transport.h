// Transport: the frame path of a simulated world. It owns the link
// directions (each reserved for serialisation, with its departures and its
// undelayed arrivals queued in order, link_down), the pairs of ranks
// (frames counted, the pair's fault script), the frames in flight with the
// payload buffers of those whose sender's loan ended first, and the fault
// fate of each departing frame. WorldCore owns the clock, the event queue,
// the queue pair registry, trace and counters: it composes a Transport,
// hands it the frame events it dispatches, and Transport schedules, looks
// endpoints up and records through it (all inline, no virtual call). One
// thread only.
#ifndef WEFT_SIM_INTERNAL_TRANSPORT_H_
#define WEFT_SIM_INTERNAL_TRANSPORT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "fabric/assert.h"
#include "fabric/clock.h"
#include "fabric/slab.h"
#include "fabric/wc_status.h"
#include "sim/faults.h"
#include "sim/internal/check_cadence.h"
#include "sim/internal/payload_pool.h"
#include "sim/internal/ring_queue.h"
#include "sim/internal/sim_endpoint.h"
#include "sim/prng.h"
#include "sim/trace.h"
#include "sim/world.h"

namespace weft::sim {

class WorldCore;

class Transport {
 public:
  // InFlight::payload when the bytes are still on loan.
  static constexpr uint32_t kNoPayload = ~uint32_t{0};
  // Longest a rate-injected reorder holds a frame back.
  static constexpr TimeNs kMaxReorderDelayNs = 20 * kNsPerUs;

  // `core` and `options` (core's) outlive the transport: core owns it.
  Transport(WorldCore& core, const WorldOptions& options);
  Transport(const Transport&) = delete;
  Transport& operator=(const Transport&) = delete;

  // The link rank->peer over cable `cable`, and the pair rank->peer,
  // created on first use.
  uint32_t link_index(uint32_t rank, uint32_t peer, uint32_t cable);
  uint32_t pair_index(uint32_t rank, uint32_t peer);

  // A send was posted on a ready queue pair: reserve its link and schedule
  // its departure.
  void schedule_departure(const internal::SimEndpoint& ep, uint64_t ticket,
                          uint32_t length);
  // The sender may reuse the frame on `loan` from now on: if its message
  // is still in flight, its bytes are copied out of the frame first.
  void end_loan(const internal::FrameLoan& loan);
  // Whether the frame on `loan` still has bytes read from `slab` (its loan
  // has not ended and it is neither delivered nor placed).
  bool loan_reads(const internal::FrameLoan& loan, const Slab& slab) const;

  // The frame events, which WorldCore dispatches here.
  // kDepart: the first queued send on `link` leaves.
  void on_depart(uint32_t link);
  // kArriveLink: the first queued frame on `link` arrives.
  void on_arrive_link(uint32_t link);
  // kArrive: the delayed frame `message` arrives.
  void on_arrive(uint32_t message);

  // Until when `link` is reserved by the sends queued on it (or was, by
  // the last one to leave).
  TimeNs link_busy_until_ns(uint32_t link) const {
    return links_[link].busy_until_ns;
  }
  // Frames on the wire (a duplicated frame counts once).
  size_t frames_in_flight() const {
    return in_flight_.size() - free_in_flight_.size();
  }
  // Payload buffers holding the bytes of frames whose loan ended in flight.
  size_t payloads_in_use() const { return payloads_.in_use(); }

  // WEFT_ASSERTs every invariant stated on the structures below. O(links +
  // pairs + frames in flight).
  void check_invariants() const;

 private:
  // A send waiting for its turn on a link.
  struct Departure {
    TimeNs leave_ns = 0;
    uint32_t qp_num = 0;
    uint64_t ticket = 0;
  };
  // A frame due to arrive over a link.
  struct Arrival {
    TimeNs arrive_ns = 0;
    uint32_t message = 0;
  };
  // One direction of one cable. Its departures leave in order, so only the
  // first is in the event queue at any time (a small heap is a fast heap);
  // the last leaves at busy_until_ns, and none before now.
  struct Link {
    TimeNs busy_until_ns = 0;
    uint32_t cable = 0;  // index into topology.devices(rank, peer)
    TimeNs down_at_ns = kNeverNs;  // the first link_down that takes it
    Prng prng;
    internal::RingQueue<Departure> departures;
    // Undelayed frames arrive in the order they left, so their arrival
    // times never decrease; delayed ones go to the event queue on their
    // own.
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
    std::vector<uint32_t> script;  // frame faults for this pair, by frame
    size_t script_cursor = 0;
  };
  // The first cache line holds what every departure, poll of its send and
  // arrival reads; the second what only some arrivals read (an injected
  // receive error, an RDMA WRITE's target).
  struct alignas(internal::kCacheLineBytes) InFlight {
    uint32_t dst_qp = 0;
    uint32_t pair = 0;
    uint32_t link = 0;
    uint32_t length = 0;
    uint32_t immediate = 0;
    uint32_t payload = kNoPayload;
    uint8_t refs = 0;  // arrivals still to come (2 when duplicated)
    MessageOp op = MessageOp::kSend;
    bool has_immediate = true;  // false: a SEND or write without one
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
    // RDMA WRITEs: the region's key and the first byte written, as the
    // writer names it.
    uint32_t rkey = 0;
    uint64_t remote_address = 0;
    // A message of two parts (post_send_parts) while on loan: its first
    // head_length bytes at `source`, the rest at `tail` (nullptr: one).
    const std::byte* tail = nullptr;
    uint32_t head_length = 0;
  };
  static_assert(offsetof(InFlight, depart_ns) + sizeof(TimeNs) <=
                    internal::kCacheLineBytes,
                "what every frame event reads of a frame in flight spills "
                "out of its first cache line");
  // What happens to one departing frame.
  struct Fate {
    DropReason drop_reason = DropReason::kNone;
    bool duplicate = false;
    TimeNs delay_ns = 0;
    WcStatus send_error = WcStatus::kSuccess;
    WcStatus recv_error = WcStatus::kSuccess;
  };

  void depart(uint32_t qp_num, uint64_t ticket);
  void arrive(uint32_t message);
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
  // Copies the bytes of `m` (from its loaned parts or its payload buffer)
  // into the frames of `recv`, in order. REQUIRES: they fit.
  void copy_into(const InFlight& m,
                 const internal::SimEndpoint::PostedRecv& recv) const;
  bool place_early(uint32_t message);
  void schedule_arrival(uint32_t link, TimeNs at_ns, uint32_t message);
  void deliver(internal::SimEndpoint& dst, const InFlight& m);
  // The trace event of `m` delivered at `dst` into the receive `work`.
  TraceEvent delivery_event(const internal::SimEndpoint& dst, const InFlight& m,
                            WorkId work) const;
  // An RDMA WRITE that reached a ready queue pair (with a receive posted,
  // when it carries an immediate): placed in its region, or dropped when
  // the receiving rank refuses it.
  void deliver_write(internal::SimEndpoint& dst, const InFlight& m);
  // The receiving rank's region that takes all of write `m`, or nullptr.
  const MemoryRegion* write_target(uint32_t rank, const InFlight& m) const;
  void release(uint32_t message);
  void drop(const InFlight& m, uint32_t sender, uint32_t receiver,
            uint32_t cable, DropReason reason);

  Fate fate_of(const internal::SimEndpoint& ep, Pair& pair);
  static void apply_script(const ScriptedFault& f, Fate* fate);
  void draw_rates(const internal::SimEndpoint& ep, const Pair& pair,
                  Fate* fate);
  void inject(const ScriptedFault& f, uint32_t cable);

  // After every mutating call: the O(1) checks of `link`, and every
  // kFullCheckEvery calls check_invariants() (a walk over every link and
  // frame in flight, too dear for each of the millions of frame events of
  // a large collective). Inline, so nothing is left of them where checks
  // are off.
  void check_after(uint32_t link) {
    if constexpr (weft::kChecksInvariants) {
      check_link_ends(links_[link]);
      check_sometimes();
    }
  }
  // check_invariants() every kFullCheckEvery calls.
  void check_sometimes() {
    if (full_checks_.due()) WEFT_CHECK_INVARIANTS_OF(*this);
  }
  void check_link_ends(const Link& link) const;
  void check_link(uint32_t link) const;
  void check_frames() const;
  static constexpr uint32_t kFullCheckEvery = 256;

  WorldCore& core_;
  const WorldOptions& options_;
  // Seeds each link's generator (fork only: it never draws itself).
  const Prng prng_;
  std::vector<Link> links_;
  absl::flat_hash_map<uint64_t, uint32_t> link_by_key_;  // lookups only
  std::vector<Pair> pairs_;
  absl::flat_hash_map<uint64_t, uint32_t> pair_by_key_;  // lookups only
  // Frames in flight, by message index; free ones (refs == 0) are reused.
  std::vector<InFlight> in_flight_;
  std::vector<uint32_t> free_in_flight_;
  uint64_t next_message_id_ = 1;
  // Whether any fault rate is set (fixed at creation): without one and
  // without a script for the pair, a departing frame's fate is plain.
  const bool rates_any_;
  // No fault rate and no fault script (fixed at creation): every frame
  // arrives, in the order it left, and the receive it lands in can be known
  // before it arrives.
  const bool faultless_;
  uint32_t serialised_bytes_ = 0;
  TimeNs serialisation_ns_;  // options_.link.serialisation_ns(0)
  // One buffer in use per frame in flight whose loan ended before it was
  // placed or delivered.
  internal::PayloadPool payloads_;
  internal::CheckCadence<kFullCheckEvery> full_checks_;
};

}  // namespace weft::sim

#endif  // WEFT_SIM_INTERNAL_TRANSPORT_H_
