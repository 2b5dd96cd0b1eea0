// Lane: the engine's channel to one peer over one cable. It owns the
// endpoint, the receive and send frames carved from the group's slab, and the
// lane's half of the protocol (docs/faults.md, "Recovery";
// docs/architecture.md, "Sequence checking"):
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
//    No data frame is sent into a receive the peer has not posted.
//  - Control credits (recovery off, or a fabric that delivers reliably:
//    Fabric::delivers_reliably()): an acknowledgement that finds no
//    receive is dropped and, with nothing to repair it, leaves a gap. So
//    each acknowledgement counts as taking one of those receives until
//    the peer proves it posted it again (its acknowledgements carry the
//    last frame heard); one this side sends of its own accord (a credit
//    report, a probe) asks for an answer and goes only while no earlier
//    one is unproven, and an answer goes whenever asked. At most
//    kControlReserve are then unproven (control_credit.h), however long
//    the peer stalls. With recovery on, a dropped acknowledgement is a
//    loss like any other, repaired by the next one.
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
//    frame asks for one (kFlagAckNow, kFlagReportNow, kFlagProbe), when a
//    duplicate shows the peer missed the last one, or min_rto_ns / 4 after
//    the oldest unreported arrival. An operation's last frame asks for
//    none: the next frame this side sends carries it, in a loop of
//    operations the next one's first, with no message of its own.
//  - Retransmission (recovery on, over a fabric that may lose frames): a
//    data frame stays in its send frame until acknowledged. An acknowledgement
//    names the frames held beyond a gap (sack), and the frames missing before
//    them are resent at once. It also names the last frame heard from this side
//    (any type, by its immediate): a cable delivers in posting order, so a data
//    frame posted before that one and not held was lost, and is resent at once
//    too. That finds a lost last frame (no later data frame shows a gap) as
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
//  - Moving (recovery on; the Engine decides, engine_moves.cc): when the
//    lane's cable stops answering (kCutRounds retransmission rounds
//    without an answer, or a probe unanswered) while another cable to the same peer answers, the
//    lane keeps its numbering, windows and frames and gets a new endpoint
//    on that other cable's device. The two ends trade their new endpoints'
//    destinations in kMove frames over the other cable's lane; the old
//    endpoint goes into its error state and is closed (nothing more moves
//    through it), the receives are posted on the new one and every
//    frame not yet acknowledged is sent again over it. The end that
//    connects first sends its resends only once it hears from the other
//    over the new endpoint (so they do not reach an endpoint not yet
//    connected); the other sends its own at once, and a probe.
//  - Relaying (recovery on; the Engine decides, engine_relays.cc): when
//    the lane's cable, the only one to its peer, stops answering (cut, as
//    above) while lanes to other ranks answer, the lane keeps its
//    numbering, windows, acknowledgements and retransmission and swaps
//    its endpoint for a RelayEndpoint (relay_endpoint.h): each frame goes
//    to another rank (spread over every rank that answers), which forwards
//    it over its own lane to the peer. On the way the frame is marked
//    (kFlagRelayTo, then kFlagRelayFrom, with the rank it is for, then
//    from) and travels in a relay frame of the carrying lane (forward()),
//    apart from that lane's own numbering and counters; a relay with no
//    relay frame free drops it, so nothing ever waits on a relay's
//    receives or credits, and the relayed lane sends it again. The path
//    keeps no order: a relayed lane reads neither the immediates (heard)
//    nor a frame ahead of a gap as a loss, and resends on its timeouts and
//    on the peer's selective acknowledgement.
//
// The state is split along those lines: a SendWindow (numbering, credits,
// pacing, the data send slots, retransmission timing), a ReceiveWindow
// (placement, the inbox, what is owed to the peer) and Liveness (last
// heard, probes, the peer's abort), each checking its own invariants. The
// Lane keeps the endpoint, the frames and the glue: it checks and decodes
// each completion, tells the pieces what happened, and posts what they
// decide. Its own invariants: the frames match the depth; every frame the
// receive window holds has its checked data header, with that number, in
// its slot's arrival (so the inbox hands out frames in sequence order and
// no receive slot is held twice); the abort frame went out at most
// kAbortCopies times, with at most kMaxAbortText bytes of message.
#ifndef WEFT_COLLECTIVES_ENGINE_LANE_H_
#define WEFT_COLLECTIVES_ENGINE_LANE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/control_credit.h"
#include "collectives/engine/frame_header.h"
#include "collectives/engine/lane_protocol.h"
#include "collectives/engine/liveness.h"
#include "collectives/engine/receive_targets.h"
#include "collectives/engine/receive_window.h"
#include "collectives/engine/send_window.h"
#include "collectives/group_options.h"
#include "collectives/kernels/cache_lines.h"
#include "fabric/assert.h"
#include "fabric/clock.h"
#include "fabric/destination.h"
#include "fabric/endpoint.h"
#include "fabric/errors.h"
#include "fabric/sequence.h"
#include "fabric/slab.h"

namespace weft::collectives::internal {

inline constexpr uint32_t kMaxAbortText = 448;
inline constexpr uint32_t kAbortFrameBytes = kHeaderBytes + kMaxAbortText;
inline constexpr uint32_t kAbortCopies = 3;
// The kMove frame: a header, then the sender's new endpoint's Destination
// and the physical cable it is on (u32, little-endian).
inline constexpr uint32_t kMovePayloadBytes = Destination::kWireBytes + 4;
inline constexpr uint32_t kMoveFrameBytes = kHeaderBytes + 64;
static_assert(kMovePayloadBytes <= kMoveFrameBytes - kHeaderBytes,
              "a Destination does not fit the move frame");
// A lane's rarely written frames, apart from the rest: the abort frame
// and the move frame.
inline constexpr uint32_t kRareFramesBytes = kAbortFrameBytes + kMoveFrameBytes;
// Retransmission rounds without an answer after which a lane's cable is
// taken for cut (Moving), when another cable to the peer answers.
inline constexpr uint32_t kCutRounds = 3;
// Most moves of one lane (a cable that comes and goes would otherwise
// move it forever); a lane cut again after that stays where it is (its
// operations end at their deadline).
inline constexpr uint32_t kMaxMoves = 16;
// Most frames a lane carries for relayed lanes at once (Relaying), within
// the endpoint's sends left beside the lane's own (depth + 3).
inline constexpr uint32_t kRelaySlots = 4;

// What a lane did, for tests and benchmarks.
struct LaneStats {
  uint64_t data_sent = 0;       // first transmissions
  uint64_t retransmitted = 0;   // frames sent again
  uint64_t acks_sent = 0;       // kAck frames
  uint64_t probes_sent = 0;     // kAck frames with kFlagProbe
  uint64_t duplicates = 0;      // data frames discarded as duplicates
  uint64_t placed_early = 0;    // data frames held ahead of a gap
  uint64_t stale_counters = 0;  // kAck frames older than what was known
  uint64_t data_received = 0;   // first copies of data frames
  uint64_t credit_stalls = 0;   // data waited for the peer's credit
  uint64_t deadlines = 0;       // operation deadlines that blamed the peer
  // Payload bytes of first transmissions sent straight from registered
  // user memory, and copied into the lane's send frames first.
  uint64_t bytes_zero_copy = 0;
  uint64_t bytes_staged = 0;
  // Payload bytes of data frames received straight into registered user
  // memory (receive_into), and of other messages that landed in a receive
  // posted there and were moved into the lane's own frame.
  uint64_t bytes_received_in_place = 0;
  uint64_t bytes_moved_aside = 0;
  // Moves made to another cable (Moving): also the number of the last.
  uint64_t moves = 0;
  // Relaying: 1 once this lane's frames go through other ranks; frames
  // (and their bytes) this lane carried for relayed lanes, and those it
  // dropped with no relay frame free.
  uint64_t relayed = 0;
  uint64_t frames_forwarded = 0;
  uint64_t bytes_forwarded = 0;
  uint64_t forwards_dropped = 0;
};

// A frame of a relayed lane that arrived over this lane (Relaying): on its
// way to rank `rank` (kFlagRelayTo) or from it (kFlagRelayFrom), whole,
// header first.
struct RelayedFrame {
  uint8_t flag = 0;
  uint32_t rank = 0;
  std::vector<std::byte> bytes;
};

// A kMove frame the peer sent (Moving): the lane to it of `cable` moves,
// for the `generation`th time, to physical cable `via_cable`, where the
// peer's new endpoint is `destination`; `reply`: the peer connected already.
struct MoveNotice {
  uint32_t cable = 0;
  uint32_t generation = 0;
  uint32_t via_cable = 0;
  Destination destination;
  bool reply = false;
};

// One data frame of an operation, as its runner describes it to a lane
// (OpLane::try_send): everything the frame needs, passed in. The lane adds
// the rest of the header (type, number, counters, kFlagAckNow when asked
// and recovery is on).
struct DataFrame {
  OpIdentity op;
  uint32_t item = 0;   // the item's ordinal among the operation's on the lane
  uint32_t frame = 0;  // the frame's index within the item
  // With recovery, ask for an acknowledgement at once (kFlagAckNow): a
  // message whose answer waits on it (an agreement's). An operation's last
  // frame does not (frame_header.h).
  bool ack_now = false;
  // The peer reports this frame's consumption at once (kFlagReportNow): an
  // operation that only sends ends when its last frame was consumed.
  bool report_now = false;
  // The payload, and the registration of user memory it lies in (nullptr:
  // none). A registered payload is sent straight from there where the
  // endpoint can (two parts); any other is copied into the lane's send
  // frame.
  std::span<const std::byte> payload;
  const Slab* registered = nullptr;
};

// What a lane did with a DataFrame.
enum class SendOutcome : uint8_t {
  kSent,
  // No free send frame, credit or room in the send queue: nothing was
  // sent; try again once something completes or arrives.
  kNoRoom,
};

class OpLane;

// The public methods come in three groups, by caller: setting the lane up
// (GroupBuilder, the Engine), the engine's step (completions, timers,
// liveness, failure), and state read for reports and tests. The running
// operation's side (sending its frames, consuming its arrivals, user
// memory) is private, reached only through OpLane (op_lane.h), the narrow
// view an OpRunner holds.
class Lane {
 public:
  struct Arrival {
    uint32_t slot = 0;
    FrameHeader header;
  };

  // ---- Set-up: GroupBuilder makes the lane; the Engine connects and
  // numbers it.

  // The data frames lie at [frames_offset, + config.frames_bytes(split))
  // of `slab`, the control frames at [control_offset, +
  // config.control_bytes(split)) and the abort and move frames at
  // [abort_offset, + kRareFramesBytes), split = Endpoint::max_parts() >= 2: apart, so a
  // group can keep its lanes' small control frames together
  // (GroupBuilder: an acknowledgement writes a page shared with other
  // lanes' instead of one of its own) and their abort frames, written
  // only when the group fails, on pages of their own. When the
  // endpoint takes two-part messages (Endpoint::max_parts()), each data
  // frame's 64-byte header lies in the control frames too, apart from its
  // payload: an acknowledgement that lands in a receive slot writes 64
  // bytes beside the lane's other headers, not the first page of a data
  // frame, and a payload of whole pages writes only those pages.
  // REQUIRES: the ranges lie in `slab`; `clock` outlives the lane.
  Lane(std::unique_ptr<Endpoint> endpoint, uint32_t peer, uint32_t cable,
       LaneConfig config, const Slab& slab, uint64_t frames_offset,
       uint64_t control_offset, uint64_t abort_offset, const Clock& clock);

  absl::StatusOr<Destination> destination() const;
  // Connects and posts every receive.
  absl::Status connect(const Destination& peer);
  uint32_t peer() const { return peer_; }
  uint32_t cable() const { return cable_; }
  // The lane's position in its engine's list (set by the engine).
  uint32_t index() const { return index_; }
  void set_index(uint32_t index) { index_ = index; }
  const std::string& device() const { return endpoint_->info().device; }
  // The device of the lane's own cable (device() differs once it moved).
  const std::string& home_device() const { return home_device_; }
  ErrorPlace place(ErrorCause cause) const;

  // ---- The Engine's step: completions, timers, liveness, failure.

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
  // While the acknowledgement frame is in flight, neither an owed
  // acknowledgement nor a probe (an acknowledgement with kFlagProbe) can
  // go: their times do not count, since that send's completion wakes the
  // caller anyway. Counting a probe due in the past there would have the
  // caller step again at once, forever, without the clock moving.
  TimeNs next_timer_ns(const Watch& watch) const {
    TimeNs next = send_.retransmit_due_ns();
    if (ack_busy_) return next;
    // A probe that must wait for the peer's answer (recovery off) is not
    // due either: that answer's arrival wakes the caller.
    if (watch.waiting && (recovery() || control_credit_.can_ask())) {
      next = std::min(next, liveness_.probe_due_ns(watch.probe_after_ns));
    }
    return std::min(next, receive_.delayed_ack_due_ns());
  }
  // Asks the cache for the lane and its send window's records without
  // waiting (Engine::prefetch_state: an engine stepped long after its last
  // step finds them cold).
  void prefetch() const {
    prefetch_bytes(this, sizeof(Lane));
    send_.prefetch();
  }
  // When the peer was last heard from; silent: nothing for two probe
  // intervals (a probe went unanswered); whom the peer believes silent.
  TimeNs last_heard_ns() const { return liveness_.last_heard_ns(); }
  bool silent(TimeNs probe_after_ns) const {
    return silent_at(clock_.now_ns(), probe_after_ns);
  }
  bool silent_at(TimeNs now_ns, TimeNs probe_after_ns) const {
    return liveness_.silent_at(now_ns, probe_after_ns);
  }
  uint32_t peer_suspect() const { return liveness_.peer_suspect(); }
  // The peer closed its end on purpose (Endpoint::peer_departed()):
  // nothing more will arrive, and what is sent is dropped.
  bool peer_departed() const { return endpoint_->peer_departed(); }
  // Set once the peer's abort arrived: the rank where that failure began
  // and the peer it blamed (kNoPeer: none).
  std::optional<uint32_t> abort_origin() const {
    return liveness_.abort_origin();
  }
  uint32_t abort_blamed() const { return liveness_.abort_blamed(); }
  // The text the peer's abort carried: the failure's own words as the
  // rank where it began wrote them (empty until an abort arrived). A rank
  // forwards this, never its own wrapping of it, so the text does not
  // nest once per hop around a ring.
  std::string_view abort_text() const { return abort_text_; }
  // Best effort; errors are ignored (the group has failed already).
  void send_abort(ErrorCause cause, uint32_t origin, uint32_t blamed,
                  std::string_view message);
  // Sends the abort again (a lost abort leaves the peer unaware), up to
  // kAbortCopies in all, once the previous copy left.
  void resend_abort();
  // Nothing in flight and nothing owed: every send completed, every data
  // frame acknowledged (recovery), no acknowledgement due.
  bool settled() const {
    return send_.sends_in_flight() == 0 && !ack_busy_ &&
           (!recovery() || send_.all_received()) && !receive_.ack_due() &&
           receive_.unreported_since_ns() == kNeverNs;
  }
  // A send of this lane (data, acknowledgement or abort) has not
  // completed yet.
  bool sends_pending() const {
    return send_.sends_in_flight() > 0 || ack_busy_ || abort_busy_;
  }
  // An operation's deadline passed, blaming this lane's peer.
  void note_deadline() { ++stats_.deadlines; }

  // ---- Moving to another cable (see the top of this file; the Engine
  // drives it, engine_moves.cc).

  // The cable stopped answering: kCutRounds retransmission rounds went
  // unanswered (recovery on).
  bool cut() const { return send_.retries() >= kCutRounds; }
  // Retransmission rounds without an answer so far.
  uint32_t silent_rounds() const { return send_.retries(); }
  // Moves begun so far (0: the lane is on its own cable).
  uint32_t generation() const { return static_cast<uint32_t>(stats_.moves); }
  // The cable whose device the lane's endpoint is on now.
  uint32_t via_cable() const { return via_cable_; }
  // A move is under way: a new endpoint is open, not yet connected.
  bool moving() const { return pending_ != nullptr; }
  // While moving, when the move's kMove frame is due again; otherwise,
  // before when no move may begin (one could not: a timeout's wait).
  TimeNs move_due_ns() const { return move_due_ns_; }
  void set_move_due_ns(TimeNs at_ns) { move_due_ns_ = at_ns; }
  // Move number `generation` begins: `endpoint`, opened on the device the
  // lane of cable `carrier` to the same peer uses now (that of physical
  // cable `via_cable`), waits for the peer's destination; the kMove frames
  // go over the carrier. REQUIRES: !moving(), generation > generation().
  void begin_move(std::unique_ptr<Endpoint> endpoint, uint32_t carrier,
                  uint32_t via_cable, uint32_t generation);
  // The carrier of the move under way, and the physical cable it moves to.
  uint32_t carrier() const { return carrier_; }
  uint32_t pending_via() const { return pending_via_; }
  uint32_t pending_generation() const { return pending_generation_; }
  // The retransmission timeout now (an estimate of the round trip).
  TimeNs rto_ns() const { return send_.rto_ns(); }
  // The move under way is given up (its endpoint closed): the peer moves
  // the lane over another cable, whose move this side takes instead.
  void abandon_move() {
    pending_.reset();
    move_due_ns_ = 0;
  }
  // The new endpoint's destination, for the kMove frame.
  absl::StatusOr<Destination> move_destination() const;
  // The move completes: the new endpoint is connected to `peer` (when the
  // fabric refuses, the move is given up, *refused set, and nothing else
  // changes), the old
  // one put in its error state and closed (nothing more is read from or
  // written to the lane's frames through it), the receives posted again
  // on the new one,
  // and what was not acknowledged sent again, now (`resend_now`, with a
  // probe) or once the peer is first heard over the new endpoint.
  // REQUIRES: moving().
  absl::Status finish_move(const Destination& peer, bool resend_now,
                           bool* refused);
  // Sends a kMove frame over this lane about the lane of `cable` (its
  // `generation`th move, to physical cable `via_cable`, this side's new
  // endpoint at `own`). False when the move frame is still in flight or
  // could not be posted: try again.
  bool send_move(uint32_t cable, uint32_t generation, uint32_t via_cable,
                 const Destination& own, bool reply);
  // Asks the peer to answer (a probe), unless the acknowledgement frame is
  // in flight: whether this cable still works, before a lane moves to it.
  absl::Status probe_cable();
  // The kMove frames received over this lane since the last take.
  bool has_moves() const { return !moves_in_.empty(); }
  std::vector<MoveNotice> take_moves() { return std::move(moves_in_); }

  // ---- Relaying (see the top of this file; the Engine drives it,
  // engine_relays.cc).

  bool relayed() const { return relayed_; }
  // The lane's only cable stopped answering: from now on its frames go
  // over `endpoint` (a RelayEndpoint), the old endpoint put in its error
  // state and closed, the receives posted again on the new one and what
  // was not acknowledged sent again. REQUIRES: !relayed(), !moving().
  absl::Status relay(std::unique_ptr<Endpoint> endpoint);
  // The whole frame a relayed frame may be (header and payload).
  uint32_t frame_bytes() const { return kHeaderBytes + payload_room(); }
  // The relay frames this lane may carry at once (at most kRelaySlots,
  // within the endpoint's sends), each frame_bytes() long.
  uint32_t relay_slots() const;
  // Where they lie: `frames`, relay_slots() x frame_bytes() bytes.
  void set_relay_frames(const Frame& frames);
  bool relay_frames_set() const { return relay_slots_ > 0; }
  // A relay frame is set and free.
  bool can_forward() const {
    return relay_slots_ > 0 && relay_busy_ != (1u << relay_slots_) - 1;
  }
  // Sends `frame` (a relayed lane's, header first) over this lane, in a
  // relay frame, its header marked `flag` (kFlagRelayTo or
  // kFlagRelayFrom) with `rank`; its counters stay the relayed lane's.
  // False when no relay frame is free or the post failed (the frame is
  // lost: its lane sends it again).
  bool forward(std::span<const std::byte> frame, uint8_t flag, uint32_t rank);
  // The relayed frames that arrived over this lane since the last take.
  bool has_relayed_frames() const { return !relayed_in_.empty(); }
  std::vector<RelayedFrame> take_relayed_frames() {
    return std::move(relayed_in_);
  }
  void note_forward_dropped() { ++stats_.forwards_dropped; }
  // An acknowledgement asking the peer to answer (a probe), as a whole
  // frame to hand to a relay: whether the peer hears this side through
  // one, before the lane is relayed. note_relay_probe() counts one that
  // went as a probe sent.
  std::vector<std::byte> relay_probe();
  void note_relay_probe() { ++stats_.probes_sent; }
  // The endpoint's parts (Endpoint::max_parts()).
  size_t max_parts() const { return endpoint_->max_parts(); }

  // ---- State, read for reports and tests.

  const LaneStats& stats() const { return stats_; }
  // "peer 3 cable 0 (dev): 5 data frame(s) in flight, ..." for reports.
  std::string describe() const;
  // Lost frames are sent again: GroupOptions::recovery.enabled, over a
  // fabric that may lose them (LaneConfig::retransmits()). Otherwise
  // control frames are counted (control_credit.h).
  bool recovery() const { return recovery_; }
  // Data frames that arrived in order and were not consumed yet, oldest
  // first.
  size_t inbox_size() const { return receive_.inbox_size(); }
  const Arrival& inbox(size_t i) const {
    return arrivals_[receive_.inbox_slot(i)];
  }
  std::span<const std::byte> payload(const Arrival& a) const;
  // Data frames consumed so far (the next one consumed is this number).
  uint32_t data_consumed() const { return receive_.consumed(); }
  // The payload bytes a receive holds (LaneConfig::max_frame_bytes).
  uint32_t payload_room() const {
    return slot_bytes_ - (split_ ? 0 : kHeaderBytes);
  }
  // A free send frame, a credit and room in the send queue.
  bool can_send_data() const { return send_.can_send(); }
  uint32_t data_sends_in_flight() const { return send_.sends_in_flight(); }
  // Every data frame sent was received (recovery) / consumed by the peer.
  bool all_data_received() const { return send_.all_received(); }
  bool all_data_consumed() const { return send_.all_consumed(); }
  // True while an acknowledgement this side owes the peer is not sent.
  bool report_owed() const { return receive_.report_owed(); }

  // WEFT_ASSERTs the Lane's invariants (see the top of this file) and its
  // pieces'. O(depth).
  void check_invariants() const;

 private:
  // ---- The running operation's side, through OpLane (op_lane.h).
  friend class OpLane;

  // Sends the DataFrame `describe()` returns when a send frame, a credit
  // and room in the send queue are free; else sends nothing, does not
  // call describe() (a runner asks again and again while its peer is
  // slow), and counts a credit stall when the credit is what is missing
  // (once until the next data frame goes out).
  template <typename Describe>
  absl::StatusOr<SendOutcome> try_send(Describe&& describe) {
    if (!send_.can_send()) {
      if (!credit_stalled_ && !send_.has_credit()) {
        credit_stalled_ = true;
        ++stats_.credit_stalls;
      }
      return SendOutcome::kNoRoom;
    }
    absl::Status s = send(describe());
    if (!s.ok()) return s;
    return SendOutcome::kSent;
  }
  // Hands the oldest arrival's payload to `use` (absl::Status(span of
  // const bytes)), then, when that succeeded, consumes the arrival and
  // posts its receive again. REQUIRES: inbox_size() > 0.
  template <typename Use>
  absl::Status consume_front(Use&& use) {
    WEFT_ASSERT(inbox_size() > 0, "consume_front() with an empty inbox");
    absl::Status s = use(payload(inbox(0)));
    if (!s.ok()) return s;
    return consume_front();
  }
  // Receives straight into registered user memory (receive_targets.h):
  // from now on a receive posted again may take its payload part from
  // frames[i], meant for data frame first_seq + i. Only frames of
  // payload_room() bytes are used.
  void receive_into(uint32_t first_seq, std::vector<Frame> frames) {
    if (!parts_refused_) targets_.set(first_seq, std::move(frames));
  }
  // More of them, once they may be: frames[i] for data frame
  // first_seq + i (empty frames are not used).
  void receive_also_into(uint32_t first_seq, std::span<const Frame> frames) {
    targets_.add(first_seq, frames);
  }
  // Stops choosing targets; returns how many receives posted into user
  // memory have not completed yet (0 once the operation consumed all its
  // frames).
  uint32_t stop_receiving_into() {
    targets_.clear();
    return targets_.posted();
  }
  // Makes the lane stop reading user memory in [begin, end): each
  // unacknowledged frame sent from there gets its payload copied into its
  // own send frame (a resend goes from there). False while a send from
  // there has not completed yet (the fabric may still read it): call
  // again later. {nullptr, nullptr}: every frame of user memory.
  bool detach(const std::byte* begin, const std::byte* end);

  // ---- The lane's own machinery.
  absl::Status handle_polled(const absl::StatusOr<size_t>& n,
                             std::span<const Completion> batch, bool* advanced);
  absl::Status handle(const Completion& c);
  absl::Status handle_recv(const Completion& c);
  // A receive posted into user memory completed with `h`: its payload is
  // in place when it is the frame targeted, else it is moved into the
  // lane's own frame.
  void land_targeted(uint32_t slot, const ReceiveTargets::Target& target,
                     const FrameHeader& h);
  absl::Status place_data(uint32_t slot, const FrameHeader& h);
  absl::Status absorb_counters(const FrameHeader& h);
  absl::Status repost(uint32_t slot);
  // Where a slot's header and payload lie: apart when split_ (the header
  // among the control frames, the payload at the data frame's start),
  // else back to back in the data frame. send_head() of the acknowledgement
  // and abort slots is their whole frame.
  Frame recv_frame(uint32_t slot) const;  // its whole data frame
  Frame send_frame(uint32_t slot) const;  // data slots, then ack, abort
  Frame head(uint32_t index) const;       // split_: header `index`
  Frame body(const Frame& frame) const;   // a data frame's payload part
  Frame recv_head(uint32_t slot) const;
  Frame recv_body(uint32_t slot) const;
  Frame send_head(uint32_t slot) const;
  Frame send_body(uint32_t slot) const;
  // try_send() once there is room: the payload straight from registered
  // user memory where the endpoint takes it (two parts), else copied into
  // the slot's own send frame.
  absl::Status send(const DataFrame& f);
  // Consumes the oldest arrival and posts its receive again.
  absl::Status consume_front();
  // Where data slot `slot`'s payload goes from when apart from its
  // header: `user` (registered user memory), else the slot's own payload
  // part over a two-part endpoint; empty: right behind the header, in one
  // frame.
  Frame payload_part(uint32_t slot, const Frame& user, uint32_t bytes) const {
    if (user.slab() != nullptr) return user;
    return split_ && bytes > 0 ? send_body(slot) : Frame();
  }
  // Posts slot `slot` with `header` (payload length and counters filled
  // in here) and `payload_bytes` of payload, sent from `apart` as the
  // message's second part or, when empty, from behind the header.
  absl::Status post(uint32_t slot, FrameHeader header, const Frame& apart,
                    uint32_t payload_bytes);
  // Numbers and posts data slot `slot`, its payload sent from `user`
  // (registered user memory) or, when empty, from the slot's own frame;
  // once posted, the slot remembers which (for resends and detach()).
  absl::Status post_data(uint32_t slot, FrameHeader header, const Frame& user,
                         uint32_t bytes);
  void note_user_payload(uint32_t slot, const Frame& user);
  // REQUIRES: slot < depth_ (a data slot).
  Frame user_payload(uint32_t slot) const {
    WEFT_ASSERT(slot < depth_, "a user payload asked of a control slot");
    return user_payloads_.empty() ? Frame() : user_payloads_[slot];
  }
  // in_place_ and user_payloads_ are sized only once user memory is
  // used (most lanes never do).
  void set_in_place(uint32_t slot, const Frame& user);
  Frame in_place(uint32_t slot) const {
    WEFT_ASSERT(slot < depth_, "a receive slot past the depth");
    return in_place_.empty() ? Frame() : in_place_[slot];
  }
  // The flags of the acknowledgement to send now (a probe is due when
  // `probe`), or nullopt for none: recovery on, when one is owed or a
  // timer asks; off, as its control credits allow (control_credit.h).
  std::optional<uint8_t> ack_to_send(bool probe, TimeNs now_ns);
  absl::Status send_ack(uint8_t flags, uint32_t suspect);
  absl::Status retransmit();
  // Sends data frame `seq` again: after a timeout, or because the peer
  // reported it missing.
  absl::Status resend(uint32_t seq, bool on_timeout);
  // Resends, at once, what the send window finds missing from the peer's
  // acknowledgement (its sack and the last frame it heard).
  absl::Status resend_missing(uint32_t sack, uint32_t heard);
  absl::Status abort_error(const FrameHeader& h,
                           std::span<const std::byte> text);
  // A kMove frame arrived in `slot`: noted for the Engine.
  absl::Status note_move(uint32_t slot, const FrameHeader& h);
  // Every frame not acknowledged, sent again (after a move).
  absl::Status resend_unacknowledged();
  // A move's or a relay's end: `endpoint` replaces the lane's (Moving).
  absl::Status switch_endpoint(std::unique_ptr<Endpoint> endpoint,
                               bool resend_now);
  // A relayed frame arrived in `slot` (carried for another lane): kept
  // for the Engine, the receive posted again.
  absl::Status keep_relayed(uint32_t slot, const FrameHeader& h);
  absl::Status protocol_error(std::string_view what) const;

  std::unique_ptr<Endpoint> endpoint_;
  uint32_t index_ = 0;
  uint32_t peer_;
  uint32_t cable_;
  uint32_t depth_;  // LaneConfig::depth
  bool recovery_;   // LaneConfig::retransmits()
  bool split_;      // headers apart from payloads (Endpoint::max_parts() >= 2)
  bool ack_busy_ = false;        // the acknowledgement frame is in flight
  bool abort_busy_ = false;      // the abort frame is in flight
  bool move_busy_ = false;       // the move frame is in flight
  bool relayed_ = false;         // Relaying: the endpoint is a relay's
  uint32_t relay_slots_ = 0;     // relay frames set (0: none yet)
  uint32_t relay_busy_ = 0;      // bit i: relay frame i is in flight
  // Moved: the resends wait until the peer is heard over the new endpoint.
  bool resend_when_heard_ = false;
  bool credit_stalled_ = false;  // see try_send()
  const Clock& clock_;
  // The depth's receive frames then its send frames (slot_bytes_ each),
  // the control frames: the acknowledgement frame, then (split_) the
  // receive slots' headers and the data send slots'; the abort frame.
  Frame data_;
  Frame control_;
  Frame abort_;
  Frame move_;
  uint32_t slot_bytes_ = 0;        // LaneConfig::slot_bytes(split_)
  std::vector<Arrival> arrivals_;  // per receive slot: the checked header
  // Per receive slot: the frame of user memory holding its arrival's
  // payload (it landed in place); empty when it is in the lane's frame.
  std::vector<Frame> in_place_;
  ReceiveTargets targets_;
  uint32_t posted_recvs_ = 0;   // receives posted and not completed
  bool parts_refused_ = false;  // the endpoint refused a two-part receive
  // The endpoint refused a two-part send from user memory as unsupported.
  bool parts_sends_refused_ = false;
  // Per data slot: the frame of user memory its payload was sent from
  // (a DataFrame's registered payload), read by resends and detach();
  // empty when the payload is in the lane's frame.
  std::vector<Frame> user_payloads_;
  uint32_t user_frames_ = 0;   // slots with a user payload
  uint32_t abort_copies_ = 0;  // abort frames sent
  uint32_t abort_bytes_ = 0;
  std::string abort_text_;  // abort_text(), at most kMaxAbortText bytes
  SendSequence send_sequence_;
  ReceiveChecker receive_checker_;
  // Moving (the moves made are stats_.moves): the new endpoint while a
  // move is under way, the device of the lane's own cable, the move's
  // number, the cable the endpoint is on and the one it moves to, the
  // carrier, when the kMove frame is due again, and the kMove frames
  // received.
  std::unique_ptr<Endpoint> pending_;
  std::string home_device_;
  uint32_t pending_generation_ = 0;
  uint32_t via_cable_ = 0;
  uint32_t pending_via_ = 0;
  uint32_t carrier_ = 0;
  TimeNs move_due_ns_ = 0;
  std::vector<MoveNotice> moves_in_;
  Frame relay_frames_;  // Relaying: relay_slots_ frames of frame_bytes()
  std::vector<RelayedFrame> relayed_in_;
  LaneStats stats_;
  SendWindow send_;
  ReceiveWindow receive_;
  Liveness liveness_;
  ControlCredit control_credit_;  // recovery off only
};

// Where a frame's parts lie: inline, as every frame sent or received asks
// them two or three times.
inline Frame Lane::recv_frame(uint32_t slot) const {
  return data_.sub(slot * slot_bytes_, slot_bytes_);
}

inline Frame Lane::send_frame(uint32_t slot) const {
  if (slot == depth_) return control_.sub(0, kHeaderBytes);  // ack
  if (slot == depth_ + 1) return abort_;
  if (slot == depth_ + 2) return move_;
  return data_.sub((depth_ + slot) * slot_bytes_, slot_bytes_);
}

inline Frame Lane::head(uint32_t index) const {
  return control_.sub(kHeaderBytes + index * kHeaderBytes, kHeaderBytes);
}

inline Frame Lane::recv_head(uint32_t slot) const {
  return split_ ? head(slot) : recv_frame(slot).sub(0, kHeaderBytes);
}

inline Frame Lane::body(const Frame& frame) const {
  return split_ ? frame : frame.sub(kHeaderBytes, slot_bytes_ - kHeaderBytes);
}

inline Frame Lane::recv_body(uint32_t slot) const {
  return body(recv_frame(slot));
}

inline Frame Lane::send_head(uint32_t slot) const {
  if (slot >= depth_) return send_frame(slot);  // ack, abort, move: whole
  return split_ ? head(depth_ + slot) : send_frame(slot).sub(0, kHeaderBytes);
}

inline Frame Lane::send_body(uint32_t slot) const {
  return body(send_frame(slot));
}

template <typename SuspectFn>
absl::Status Lane::service_at(TimeNs now_ns, const Watch& watch,
                              SuspectFn&& suspect, bool* advanced,
                              TimeNs* wake_ns) {
  // Most lanes at most steps: nothing unacknowledged, nothing owed, no
  // probe to send; no timer either.
  if (send_.all_received() && !watch.waiting &&
      (ack_busy_ ||
       (!receive_.ack_due() && receive_.unreported_since_ns() == kNeverNs))) {
    return absl::OkStatus();
  }
  if (now_ns >= send_.retransmit_due_ns()) {
    absl::Status s = retransmit();
    if (!s.ok()) return s;
    *advanced = true;
  }
  if (!ack_busy_) {
    const bool probe =
        watch.waiting && now_ns >= liveness_.probe_due_ns(watch.probe_after_ns);
    if (const std::optional<uint8_t> flags = ack_to_send(probe, now_ns)) {
      absl::Status s = send_ack(*flags, suspect());
      if (!s.ok()) return s;
      *advanced = true;
    }
  }
  const TimeNs next = next_timer_ns(watch);
  if (next < *wake_ns) *wake_ns = next;
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_LANE_H_
