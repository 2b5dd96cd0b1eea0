// Lane: the engine's channel to one peer over one cable. It owns the
// endpoint, the receive and send frames carved from the group's slab, and the
// lane's half of the protocol (DESIGN.md, "Sequence checking and
// reliability"):
//
//  - Checks: every completion is checked for status, then header, before a
//    byte is used. With recovery off the immediate's sequence number must be
//    the next one too (a gap or a duplicate is a typed error).
//  - Placement: every data frame carries a data sequence number. Arrivals
//    are held in their receive frames and handed to the running operation in
//    sequence order (the inbox), so reordering inside the window is
//    harmless; a number already held or already passed is a duplicate and is
//    discarded.
//  - Credits: a sender may send data number s only while s < consumed +
//    window, where consumed is the peer's latest report and window = depth -
//    kControlReserve: the peer holds at most `window` data frames, so
//    `kControlReserve` receives stay free for acknowledgements and aborts.
//    No frame is sent into a receive the peer has not posted.
//  - Pacing: a data frame is posted only while less than send_queue_bytes
//    of data is posted and not yet sent (GroupOptions::send_queue_bytes),
//    so an acknowledgement or a resent frame waits behind little of the
//    lane's own data; the rest waits here. After a gap (one on arrival,
//    or one the peer's sack names) the next kLossyFrames data frames go
//    one at a time: acknowledgements and resends then wait behind at most
//    one frame, so the next loss on a lossy cable is repaired sooner. A
//    timeout alone does not count: it cannot tell a loss from a slow
//    answer.
//  - Acknowledgements: every frame carries how many data frames this side
//    received in order and consumed. An acknowledgement frame (kAck) goes
//    out when window / 2 arrivals or consumptions are unreported, when a
//    frame asks for one (kFlagAckNow, kFlagReportNow, kFlagProbe), or when a
//    duplicate shows the peer missed the last one.
//  - Retransmission (recovery on): a data frame stays in its send frame
//    until acknowledged. An acknowledgement names the frames held beyond a
//    gap (sack), and the frames missing before them are resent at once.
//    It also names the last frame heard from this side (any type, by its
//    immediate): a cable delivers in posting order, so a data frame posted
//    before that one and not held was lost, and is resent at once too.
//    That finds a lost last frame (no later data frame shows a gap) as
//    soon as any later frame of this side arrives: an acknowledgement
//    carries the number of the next data frame, and a peer that sees it
//    ahead of what it received answers at once.
//    When the oldest unacknowledged frame waited longer than the
//    retransmission timeout (an estimate of the round trip within
//    [min_rto_ns, max_rto_ns], counted from when the frame left, and at
//    least srtt plus the time the peer's answer may queue behind a burst of
//    the peer's frames), it is sent again and the timeout doubles; after
//    max_retries silent rounds the peer is Unavailable. Arrivals are
//    acknowledged within min_rto_ns / 4.
//  - Liveness: while the running operation waits on this lane and nothing
//    was heard from the peer for the probe interval, a probe (kFlagProbe)
//    asks the peer to answer. Answers carry the rank the peer itself
//    believes silent, so a chain of waiting ranks can name the one that
//    died.
//  - Abort: a best-effort frame telling the peer this group failed, with
//    the cause, the rank where it started, the peer it blamed and the
//    message.
#ifndef WEFT_COLLECTIVES_INTERNAL_LANE_H_
#define WEFT_COLLECTIVES_INTERNAL_LANE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "collectives/group_options.h"
#include "collectives/internal/frame_header.h"
#include "fabric/clock.h"
#include "fabric/endpoint.h"
#include "fabric/errors.h"
#include "fabric/sequence.h"
#include "fabric/slab.h"

namespace weft::internal {

// Receives kept free of data for acknowledgements and aborts.
inline constexpr uint32_t kControlReserve = 2;
// After a gap, this many data frames are sent one at a time (Pacing).
inline constexpr uint32_t kLossyFrames = 128;

struct LaneConfig {
  uint32_t depth = 8;
  uint32_t max_frame_bytes = 512 << 10;
  RecoveryOptions recovery;
  // Data bytes (headers included) kept posted and not yet sent.
  uint64_t send_queue_bytes = uint64_t{1} << 20;

  // Data frames the peer may hold at once.
  uint32_t window() const { return depth - kControlReserve; }
  uint32_t report_threshold() const { return window() / 2; }
  // Bytes of slab one lane needs.
  uint64_t region_bytes() const;
};

inline constexpr uint32_t kMaxAbortText = 448;
inline constexpr uint32_t kAbortCopies = 3;

// What a lane did, for tests and benchmarks.
struct LaneStats {
  uint64_t data_sent = 0;       // first transmissions
  uint64_t retransmitted = 0;   // frames sent again
  uint64_t acks_sent = 0;       // kAck frames
  uint64_t probes_sent = 0;     // kAck frames with kFlagProbe
  uint64_t duplicates = 0;      // data frames discarded as duplicates
  uint64_t placed_early = 0;    // data frames held ahead of a gap
  uint64_t stale_counters = 0;  // kAck frames older than what was known
};

class Lane {
 public:
  struct Arrival {
    uint32_t slot = 0;
    FrameHeader header;
  };

  // REQUIRES: [offset, offset + config.region_bytes()) lies in `slab`;
  // `clock` outlives the lane.
  Lane(std::unique_ptr<Endpoint> endpoint, uint32_t peer, uint32_t cable,
       LaneConfig config, const Slab& slab, uint64_t offset,
       const Clock& clock);

  uint32_t peer() const { return peer_; }
  uint32_t cable() const { return cable_; }
  // The lane's position in its engine's list (set by the engine).
  uint32_t index() const { return index_; }
  void set_index(uint32_t index) { index_ = index; }
  const std::string& device() const { return endpoint_->info().device; }
  ErrorPlace place(ErrorCause cause) const;
  const LaneStats& stats() const { return stats_; }
  // Lost frames are sent again (GroupOptions::recovery.enabled).
  bool recovery() const { return config_.recovery.enabled; }

  absl::StatusOr<Destination> destination() const;
  // Connects and posts every receive.
  absl::Status connect(const Destination& peer);

  // Handles up to batch.size() completions of the endpoint (`batch` is
  // scratch space, reused across lanes). *advanced is set when any arrived.
  // Errors: a bad completion, sequence, header or counter, or an abort
  // from the peer (cause as the peer sent it).
  absl::Status poll(std::span<Completion> batch, bool* advanced) {
    absl::StatusOr<size_t> n = endpoint_->poll(batch);
    // Most polls find nothing (inline, for the engine's every step).
    if (n.ok() && *n == 0) return absl::OkStatus();
    return handle_polled(n, batch, advanced);
  }
  // Set once the peer's abort arrived: the rank where that failure began
  // and the peer it blamed (kNoPeer: none).
  std::optional<uint32_t> abort_origin() const { return abort_origin_; }
  uint32_t abort_blamed() const { return abort_blamed_; }

  // Data frames that arrived in order and were not consumed yet, oldest
  // first.
  size_t inbox_size() const { return received_ - consumed_; }
  const Arrival& inbox(size_t i) const;
  std::span<const std::byte> payload(const Arrival& a) const;
  // Consumes the oldest arrival and posts its receive again.
  absl::Status consume_front();

  // A free send frame, a credit and room in the send queue.
  bool can_send_data() const;
  // Sends `header` (type, counters, sequence and payload length filled in
  // here) and `bytes` of payload. REQUIRES: can_send_data().
  absl::Status send_data(FrameHeader header, const std::byte* payload,
                         uint32_t bytes);
  uint32_t data_sends_in_flight() const { return sends_in_flight_; }
  // Every data frame sent was received (recovery) / consumed by the peer.
  bool all_data_received() const { return peer_received_ == next_seq_; }
  bool all_data_consumed() const { return peer_consumed_ == next_seq_; }

  // Nothing in flight and nothing owed: every send completed, every data
  // frame acknowledged (recovery), no acknowledgement due.
  bool settled() const {
    return sends_in_flight_ == 0 && !ack_busy_ &&
           (!recovery() || peer_received_ == next_seq_) && !ack_due() &&
           unreported_since_ns_ == kNeverNs;
  }
  // True while an acknowledgement this side owes the peer is not sent.
  bool report_owed() const {
    return ack_now_ || (report_requested_ && consumed_ != consumed_reported_);
  }
  // What the running operation needs of this lane's liveness: whether it
  // waits on the peer, and how long a silence is worth a probe (0: never).
  struct Watch {
    bool waiting = false;
    TimeNs probe_after_ns = 0;
  };
  // Timers and owed frames: sends a due acknowledgement, retransmits on
  // timeout, probes a silent peer the operation waits on (at most every
  // 4 x probe_after_ns). `suspect` goes into acknowledgements. Unavailable
  // when the retries are exhausted.
  absl::Status service(const Watch& watch, uint32_t suspect, bool* advanced);
  // The engine's form: service() at `now_ns` (the fabric clock, read once
  // per step), and *wake_ns lowered to the next instant service() has
  // something to do. `suspect` is asked for only when an acknowledgement
  // goes out.
  template <typename SuspectFn>
  absl::Status service_at(TimeNs now_ns, const Watch& watch,
                          SuspectFn&& suspect, bool* advanced, TimeNs* wake_ns);
  // The next instant service() has something to do (kNeverNs: none).
  TimeNs next_timer_ns(const Watch& watch) const;
  // When the peer was last heard from; silent: nothing for two probe
  // intervals (a probe went unanswered); whom the peer believes silent.
  TimeNs last_heard_ns() const { return last_heard_ns_; }
  bool silent(TimeNs probe_after_ns) const {
    return silent_at(clock_.now_ns(), probe_after_ns);
  }
  bool silent_at(TimeNs now_ns, TimeNs probe_after_ns) const {
    return probe_after_ns > 0 && now_ns - last_heard_ns_ >= 2 * probe_after_ns;
  }
  uint32_t peer_suspect() const { return peer_suspect_; }
  // Best effort; errors are ignored (the group has failed already).
  void send_abort(ErrorCause cause, uint32_t origin, uint32_t blamed,
                  std::string_view message);
  // Sends the abort again (a lost abort leaves the peer unaware), up to
  // kAbortCopies in all, once the previous copy left.
  void resend_abort();

  // "peer 3 cable 0 (dev): 5 data frame(s) in flight, ..." for reports.
  std::string describe() const;

 private:
  static constexpr uint32_t kNoSlot = 0xffffffff;

  absl::Status handle_polled(const absl::StatusOr<size_t>& n,
                             std::span<const Completion> batch, bool* advanced);
  absl::Status handle(const Completion& c);
  absl::Status handle_recv(const Completion& c);
  absl::Status place_data(uint32_t slot, const FrameHeader& h);
  absl::Status absorb_counters(const FrameHeader& h);
  absl::Status repost(uint32_t slot);
  absl::Status post(uint32_t slot, FrameHeader header, uint32_t payload_bytes);
  absl::Status send_ack(uint8_t flags, uint32_t suspect);
  absl::Status retransmit();
  absl::Status resend(uint32_t seq);
  // Bit i: data frame received_ + 1 + i is held (kAck's sack).
  uint32_t held_beyond_gap() const;
  // Resends, at once, each unacknowledged frame the peer does not hold
  // (its acknowledgement's sack) that precedes one it holds, or that was
  // posted before `heard` - 1, the last frame the peer heard from here.
  absl::Status resend_missing(uint32_t sack, uint32_t heard);
  // What service() owes now, timers aside: an acknowledgement.
  bool ack_due() const {
    const uint32_t threshold = config_.report_threshold();
    const bool receipts_due =
        recovery() && received_ - received_reported_ >= threshold;
    return report_owed() || receipts_due ||
           consumed_ - consumed_reported_ >= threshold;
  }
  // Arrivals are acknowledged within min_rto_ns / 4 even when fewer than
  // the threshold came (the sender may be waiting for credits or data):
  // round trips then stay close to the wire's, and so the timeout.
  TimeNs delayed_ack_due_ns() const {
    return unreported_since_ns_ == kNeverNs
               ? kNeverNs
               : unreported_since_ns_ + config_.recovery.min_rto_ns / 4;
  }
  void note_received(uint32_t new_received);
  void sample_round_trip(TimeNs sample_ns);
  // The oldest unacknowledged frame's departure plus the timeout; never
  // while it still waits in the local send queue.
  TimeNs retransmit_due_ns() const {
    if (!recovery() || peer_received_ == next_seq_) return kNeverNs;
    const uint32_t at = seq_index(peer_received_);
    const TimeNs left = seq_sent_ns_[at];
    if (left == kNeverNs) return kNeverNs;
    return left + std::max(rto_ns_, srtt_ns_ + seq_ack_wait_ns_[at]);
  }
  // A data send from `slot` was posted now, behind the others in flight.
  void note_posted(uint32_t slot) {
    slot_posted_ns_[slot] = clock_.now_ns();
    slot_queued_[slot] = sends_in_flight_;
  }
  TimeNs probe_due_ns(TimeNs probe_after_ns) const {
    if (probe_after_ns <= 0) return kNeverNs;
    const TimeNs heard = last_heard_ns_ + probe_after_ns;
    const TimeNs spaced = last_probe_ns_ + probe_backoff_ * probe_after_ns;
    return heard > spaced ? heard : spaced;
  }
  absl::Status abort_error(const FrameHeader& h,
                           std::span<const std::byte> text);
  absl::Status protocol_error(std::string_view what) const;

  std::unique_ptr<Endpoint> endpoint_;
  uint32_t index_ = 0;
  uint32_t peer_;
  uint32_t cable_;
  LaneConfig config_;
  const Clock& clock_;
  std::vector<Frame> recv_frames_;
  std::vector<Arrival> arrivals_;   // per receive slot: the checked header
  std::vector<Frame> send_frames_;  // data slots, then ack, then abort
  // Per data slot: the header last sent from it (for resending and for
  // the bytes its completion frees).
  std::vector<FrameHeader> send_headers_;
  // Per data send slot: sends posted and not completed, and whether it
  // holds a frame not yet acknowledged (recovery).
  std::vector<uint32_t> slot_posts_;
  std::vector<bool> slot_unacked_;
  std::vector<uint32_t> free_data_slots_;
  bool ack_busy_ = false;
  bool abort_busy_ = false;
  uint32_t abort_copies_ = 0;  // abort frames sent
  uint32_t abort_bytes_ = 0;
  SendSequence send_sequence_;
  ReceiveChecker receive_checker_;
  LaneStats stats_;

  // Sending side. Data numbers [peer_received_, next_seq_) are unacknowledged;
  // seq_slot_[seq_index(s)] is the send slot holding number s.
  uint32_t next_seq_ = 0;
  uint32_t sends_in_flight_ = 0;
  uint64_t queued_send_bytes_ = 0;  // of the sends in flight
  // Data frames still to send one at a time after a gap (see Pacing).
  uint32_t lossy_frames_left_ = 0;
  void note_gap() { lossy_frames_left_ = kLossyFrames; }
  uint64_t send_queue_limit() const {
    return lossy_frames_left_ > 0 ? 1 : config_.send_queue_bytes;
  }
  uint32_t peer_received_ = 0;
  uint32_t peer_consumed_ = 0;
  uint32_t peer_suspect_ = kNoPeer;
  // Tables indexed by data sequence number have a power-of-two size (at
  // least depth) so the index is a mask, exact across the wrap at 2^32.
  uint32_t seq_mask_;
  uint32_t seq_index(uint32_t seq) const { return seq & seq_mask_; }
  std::vector<uint32_t> seq_slot_;
  // When number s last left (its send completed); kNeverNs while queued.
  std::vector<TimeNs> seq_sent_ns_;
  std::vector<bool> seq_resent_;  // Karn: no round trip from a resent one
  // The frame number (immediate) of number s's last post.
  std::vector<uint32_t> seq_posted_as_;
  // How long the peer's acknowledgement of number s may queue behind the
  // peer's own frames: as many as this side had in flight when s was
  // posted or when it left, each as long as s took to leave (collectives
  // send alike both ways). The timeout is at least srtt plus that, so round
  // trips measured on small frames do not fire early on bigger ones.
  std::vector<TimeNs> seq_ack_wait_ns_;
  // Per data send slot: when its last post was made, and the data sends
  // in flight then (itself included); when the last data send completed.
  std::vector<TimeNs> slot_posted_ns_;
  std::vector<uint32_t> slot_queued_;
  TimeNs last_send_done_ns_ = 0;
  TimeNs rto_ns_ = 0;
  TimeNs srtt_ns_ = 0;  // smoothed round trip (0: no sample yet)
  TimeNs rttvar_ns_ = 0;
  uint32_t retries_ = 0;

  // Receiving side. Numbers [consumed_, received_) are the inbox; a number
  // in [received_, consumed_ + window) may be held early.
  // held_[seq_index(s)] is the receive slot holding number s, or kNoSlot.
  uint32_t received_ = 0;
  uint32_t consumed_ = 0;
  std::vector<uint32_t> held_;
  // One past the highest frame number heard from the peer (recovery; 0:
  // none yet): acknowledgements carry it (FrameHeader::heard).
  uint32_t heard_ = 0;
  uint32_t received_reported_ = 0;
  uint32_t consumed_reported_ = 0;
  bool ack_now_ = false;
  // When the oldest unreported arrival came (recovery; kNeverNs: none).
  TimeNs unreported_since_ns_ =
      kNeverNs;                    // a flag or a duplicate asked for an ack
  bool report_requested_ = false;  // consumed a kFlagReportNow frame

  // Liveness.
  TimeNs last_heard_ns_ = 0;
  TimeNs last_probe_ns_ = 0;
  uint32_t probe_backoff_ = 1;  // 1, 2, 4: unanswered probes space out
  std::optional<uint32_t> abort_origin_;
  uint32_t abort_blamed_ = kNoPeer;
};

template <typename SuspectFn>
absl::Status Lane::service_at(TimeNs now_ns, const Watch& watch,
                              SuspectFn&& suspect, bool* advanced,
                              TimeNs* wake_ns) {
  // Most lanes at most steps: nothing unacknowledged, nothing owed, no
  // probe to send; no timer either.
  const bool unacked = peer_received_ != next_seq_;
  if (!unacked && !watch.waiting &&
      (ack_busy_ || (!ack_due() && unreported_since_ns_ == kNeverNs))) {
    return absl::OkStatus();
  }
  if (now_ns >= retransmit_due_ns()) {
    absl::Status s = retransmit();
    if (!s.ok()) return s;
    *advanced = true;
  }
  if (!ack_busy_) {
    const bool probe =
        watch.waiting && now_ns >= probe_due_ns(watch.probe_after_ns);
    if (probe || ack_due() || now_ns >= delayed_ack_due_ns()) {
      absl::Status s = send_ack(probe ? kFlagProbe : 0, suspect());
      if (!s.ok()) return s;
      *advanced = true;
    }
  }
  TimeNs next = retransmit_due_ns();
  if (watch.waiting) {
    const TimeNs probe = probe_due_ns(watch.probe_after_ns);
    if (probe < next) next = probe;
  }
  if (!ack_busy_ && delayed_ack_due_ns() < next) next = delayed_ack_due_ns();
  if (next < *wake_ns) *wake_ns = next;
  return absl::OkStatus();
}

}  // namespace weft::internal

#endif  // WEFT_COLLECTIVES_INTERNAL_LANE_H_
