#include "collectives/internal/lane.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>

#include "absl/strings/str_format.h"
#include "fabric/absl_compat.h"
#include "fabric/checked_pair.h"

namespace weft::internal {
namespace {

constexpr uint64_t kRegionAlign = 64;
constexpr uint32_t kAbortFrameBytes = kHeaderBytes + kMaxAbortText;
// Unanswered probes space out up to this factor.
constexpr uint32_t kMaxProbeBackoff = 4;
// Frames past the first missing one that an acknowledgement's sack names.
constexpr uint32_t kSackFrames = 32;

// a is after b, modulo 2^32.
bool after(uint32_t a, uint32_t b) {
  const uint32_t d = a - b;
  return d != 0 && d < 0x80000000u;
}

}  // namespace

uint64_t LaneConfig::region_bytes() const {
  const uint64_t frames = uint64_t{2} * depth * max_frame_bytes;
  const uint64_t extra = kHeaderBytes + kAbortFrameBytes;
  return (frames + extra + kRegionAlign - 1) / kRegionAlign * kRegionAlign;
}

Lane::Lane(std::unique_ptr<Endpoint> endpoint, uint32_t peer, uint32_t cable,
           LaneConfig config, const Slab& slab, uint64_t offset,
           const Clock& clock)
    : endpoint_(std::move(endpoint)),
      peer_(peer),
      cable_(cable),
      config_(config),
      clock_(clock),
      arrivals_(config.depth),
      send_headers_(config.depth),
      slot_posts_(config.depth, 0),
      slot_unacked_(config.depth, false),
      seq_mask_(std::bit_ceil(config.depth) - 1),
      seq_slot_(seq_mask_ + 1, kNoSlot),
      seq_sent_ns_(seq_mask_ + 1, 0),
      seq_resent_(seq_mask_ + 1, false),
      seq_posted_as_(seq_mask_ + 1, 0),
      seq_ack_wait_ns_(seq_mask_ + 1, 0),
      slot_posted_ns_(config.depth, 0),
      slot_queued_(config.depth, 0),
      rto_ns_(config.recovery.initial_rto_ns),
      held_(seq_mask_ + 1, kNoSlot),
      last_heard_ns_(clock.now_ns()) {
  uint64_t at = offset;
  auto carve = [&](uint32_t bytes) {
    absl::StatusOr<Frame> f = slab.frame(at, bytes);
    assert(f.ok());
    at += bytes;
    return *f;
  };
  for (uint32_t i = 0; i < config_.depth; ++i) {
    recv_frames_.push_back(carve(config_.max_frame_bytes));
  }
  for (uint32_t i = 0; i < config_.depth; ++i) {
    send_frames_.push_back(carve(config_.max_frame_bytes));
    free_data_slots_.push_back(config_.depth - 1 - i);  // slot 0 first
  }
  send_frames_.push_back(carve(kHeaderBytes));
  send_frames_.push_back(carve(kAbortFrameBytes));
}

ErrorPlace Lane::place(ErrorCause cause) const {
  const EndpointInfo& info = endpoint_->info();
  return ErrorPlace{info.rank, info.peer, info.device, cause};
}

absl::StatusOr<Destination> Lane::destination() const {
  return endpoint_->destination();
}

absl::Status Lane::connect(const Destination& peer) {
  absl::Status s = endpoint_->connect(peer);
  if (!s.ok()) return s;
  for (uint32_t slot = 0; slot < config_.depth; ++slot) {
    s = endpoint_->post_recv(WorkId{WorkKind::kRecv, peer_, slot},
                             recv_frames_[slot]);
    if (!s.ok()) return s;
  }
  last_heard_ns_ = clock_.now_ns();
  return absl::OkStatus();
}

absl::Status Lane::handle_polled(const absl::StatusOr<size_t>& n,
                                 std::span<const Completion> batch,
                                 bool* advanced) {
  if (!n.ok()) {
    return make_error(n.status().code(), place(ErrorCause::kFabric),
                      absl::StrFormat("polling the endpoint failed: %s",
                                      n.status().message()));
  }
  for (size_t i = 0; i < *n; ++i) {
    *advanced = true;
    absl::Status s = handle(batch[i]);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Lane::handle(const Completion& c) {
  if (!c.ok()) return completion_error(c, place(ErrorCause::kCompletionError));
  if (c.id.kind == WorkKind::kRecv) return handle_recv(c);
  const uint32_t slot = c.id.slot;
  if (slot < config_.depth) {
    --slot_posts_[slot];
    --sends_in_flight_;
    queued_send_bytes_ -= kHeaderBytes + send_headers_[slot].payload_bytes;
    // Round trips and timeouts count from when a frame left, not from
    // when it was queued behind others.
    const TimeNs now_ns = clock_.now_ns();
    const TimeNs wire_ns =
        now_ns - std::max(slot_posted_ns_[slot], last_send_done_ns_);
    last_send_done_ns_ = now_ns;
    if (recovery() && slot_unacked_[slot]) {
      const uint32_t at = seq_index(send_headers_[slot].seq);
      if (seq_slot_[at] == slot) {
        seq_sent_ns_[at] = now_ns;
        // Frames posted behind it count too: the peer sends its burst
        // as this side does.
        seq_ack_wait_ns_[at] =
            std::max(slot_queued_[slot], sends_in_flight_ + 1) * wire_ns;
      }
    }
    if (slot_posts_[slot] == 0 && !slot_unacked_[slot]) {
      free_data_slots_.push_back(slot);
    }
  } else if (slot == config_.depth) {
    ack_busy_ = false;
  } else {
    abort_busy_ = false;
  }
  return absl::OkStatus();
}

absl::Status Lane::handle_recv(const Completion& c) {
  if (!c.has_immediate) {
    return make_error(absl::StatusCode::kDataLoss, place(ErrorCause::kSequence),
                      "a frame arrived without a sequence number (no "
                      "immediate data); the peer is not speaking weft's "
                      "protocol");
  }
  // With recovery the data sequence number in the header places frames;
  // without it, the pair's numbering must have no gap and no duplicate.
  if (!recovery()) {
    const SequenceCheck seq = receive_checker_.check(c.immediate);
    if (!seq.ok()) return sequence_error(seq, place(ErrorCause::kSequence));
  }
  const uint32_t slot = c.id.slot;
  if (slot >= config_.depth || c.byte_len > recv_frames_[slot].bytes()) {
    return protocol_error(absl::StrFormat(
        "a receive completed for slot %u with %u bytes, outside the posted "
        "frames",
        slot, c.byte_len));
  }
  absl::StatusOr<FrameHeader> h =
      FrameHeader::decode(recv_frames_[slot].span().first(c.byte_len));
  if (!h.ok()) {
    return make_error(h.status().code(), place(ErrorCause::kSequence),
                      to_std(h.status().message()));
  }
  last_heard_ns_ = clock_.now_ns();
  probe_backoff_ = 1;
  if (recovery() && (heard_ == 0 || after(c.immediate + 1, heard_))) {
    heard_ = c.immediate + 1;
  }
  if (h->flags & kFlagProbe) ack_now_ = true;
  if (h->type == FrameType::kAbort) {
    return abort_error(
        *h, recv_frames_[slot].span().subspan(kHeaderBytes, h->payload_bytes));
  }
  absl::Status s = absorb_counters(*h);
  if (!s.ok()) return s;
  if (h->type == FrameType::kData) return place_data(slot, *h);
  peer_suspect_ = h->suspect;
  // The peer posted data numbered up to h->seq before this frame, and a
  // cable keeps order: what has not arrived was lost. Say so at once.
  if (recovery() && after(h->seq, received_) &&
      h->seq - received_ <= config_.window()) {
    ack_now_ = true;
  }
  return repost(slot);
}

absl::Status Lane::place_data(uint32_t slot, const FrameHeader& h) {
  if (h.flags & kFlagAckNow) ack_now_ = true;
  const uint32_t window = config_.window();
  const uint32_t offset = h.seq - consumed_;  // from the oldest in the inbox
  const bool in_window = offset < window;
  const bool fresh = in_window && offset >= received_ - consumed_ &&
                     held_[seq_index(h.seq)] == kNoSlot;
  if (!recovery() && h.seq != received_) {
    return protocol_error(absl::StrFormat(
        "data frame number %u arrived where %u was next", h.seq, received_));
  }
  if (!fresh) {
    if (!in_window && after(h.seq, consumed_)) {
      return protocol_error(absl::StrFormat(
          "data frame number %u arrived beyond the window (%u frames from "
          "%u)",
          h.seq, window, consumed_));
    }
    // A copy of a frame already held or passed: the peer resent it, so it
    // missed our acknowledgement.
    ++stats_.duplicates;
    ack_now_ = true;
    return repost(slot);
  }
  if (h.seq != received_) {
    // A gap: tell the sender at once which frames arrived past it.
    ++stats_.placed_early;
    note_gap();
    ack_now_ = true;
  }
  arrivals_[slot] = Arrival{slot, h};
  held_[seq_index(h.seq)] = slot;
  while (received_ - consumed_ < window &&
         held_[seq_index(received_)] != kNoSlot) {
    ++received_;
  }
  if (recovery() && unreported_since_ns_ == kNeverNs) {
    unreported_since_ns_ = clock_.now_ns();
  }
  return absl::OkStatus();
}

absl::Status Lane::absorb_counters(const FrameHeader& h) {
  // Counters never pass what this side sent; an older report (reordered
  // or duplicated) says nothing new.
  const uint32_t unacked = next_seq_ - peer_received_;
  const uint32_t unconsumed = next_seq_ - peer_consumed_;
  const bool new_received = after(h.received, peer_received_);
  const bool new_consumed = after(h.consumed, peer_consumed_);
  if ((new_received && h.received - peer_received_ > unacked) ||
      (new_consumed && h.consumed - peer_consumed_ > unconsumed)) {
    return protocol_error(absl::StrFormat(
        "the peer reports %u frames received and %u consumed, but this side "
        "sent only %u data frames",
        h.received, h.consumed, next_seq_));
  }
  if (!new_received && !new_consumed && h.type == FrameType::kAck &&
      (h.received != peer_received_ || h.consumed != peer_consumed_)) {
    ++stats_.stale_counters;
  }
  if (new_received) note_received(h.received);
  if (new_consumed) peer_consumed_ = h.consumed;
  if (after(peer_consumed_, peer_received_)) note_received(peer_consumed_);
  if (recovery() && h.type == FrameType::kAck &&
      (h.sack != 0 || h.heard != 0) && h.received == peer_received_) {
    return resend_missing(h.sack, h.heard);
  }
  return absl::OkStatus();
}

uint32_t Lane::held_beyond_gap() const {
  uint32_t sack = 0;
  const uint32_t room = config_.window() - (received_ - consumed_);
  for (uint32_t i = 1; i < room && i <= kSackFrames; ++i) {
    if (held_[seq_index(received_ + i)] != kNoSlot) sack |= 1u << (i - 1);
  }
  return sack;
}

absl::Status Lane::resend_missing(uint32_t sack, uint32_t heard) {
  // Missing before a frame the peer holds: lost, or late after a reorder;
  // resent once, and the timeout covers the rest. Posted before a frame the
  // peer heard: lost, as the cable keeps order (each post of it counts).
  const uint32_t holds_to =
      sack == 0 ? peer_received_
                : peer_received_ + kSackFrames - std::countl_zero(sack);
  for (uint32_t s = peer_received_; s != next_seq_; ++s) {
    const uint32_t i = s - peer_received_;
    if (i > kSackFrames) break;  // beyond what the sack can say
    const bool held = i > 0 && ((sack >> (i - 1)) & 1u) != 0;
    if (held) continue;
    const uint32_t at = seq_index(s);
    const bool before_held = after(holds_to, s) && !seq_resent_[at];
    const bool overtaken = heard != 0 && after(heard - 1, seq_posted_as_[at]);
    if (!before_held && !overtaken) continue;
    absl::Status st = resend(s);
    if (!st.ok()) return st;
    note_gap();
  }
  return absl::OkStatus();
}

absl::Status Lane::resend(uint32_t seq) {
  const uint32_t at = seq_index(seq);
  const uint32_t slot = seq_slot_[at];
  seq_sent_ns_[at] = kNeverNs;  // until the copy leaves
  seq_resent_[at] = true;
  if (slot_posts_[slot] > 0) return absl::OkStatus();  // still queued
  const uint32_t posted_as = send_sequence_.peek();
  absl::Status s =
      post(slot, send_headers_[slot], send_headers_[slot].payload_bytes);
  if (!s.ok()) return s;
  seq_posted_as_[at] = posted_as;
  ++slot_posts_[slot];
  ++sends_in_flight_;
  queued_send_bytes_ += kHeaderBytes + send_headers_[slot].payload_bytes;
  ++stats_.retransmitted;
  note_posted(slot);
  return absl::OkStatus();
}

void Lane::note_received(uint32_t new_received) {
  if (recovery()) {
    const uint32_t oldest = seq_index(peer_received_);
    if (!seq_resent_[oldest] && seq_sent_ns_[oldest] != kNeverNs) {
      sample_round_trip(clock_.now_ns() - seq_sent_ns_[oldest]);
    }
    for (uint32_t s = peer_received_; s != new_received; ++s) {
      const uint32_t slot = seq_slot_[seq_index(s)];
      seq_slot_[seq_index(s)] = kNoSlot;
      slot_unacked_[slot] = false;
      if (slot_posts_[slot] == 0) free_data_slots_.push_back(slot);
    }
    retries_ = 0;
  }
  peer_received_ = new_received;
}

void Lane::sample_round_trip(TimeNs sample_ns) {
  // Jacobson/Karels: srtt += (m - srtt) / 8, rttvar += (|m - srtt| -
  // rttvar) / 4, rto = srtt + 4 rttvar, within [min_rto, max_rto].
  if (srtt_ns_ == 0) {
    srtt_ns_ = std::max<TimeNs>(sample_ns, 1);
    rttvar_ns_ = sample_ns / 2;
  } else {
    const TimeNs err = sample_ns - srtt_ns_;
    srtt_ns_ += err / 8;
    rttvar_ns_ += ((err < 0 ? -err : err) - rttvar_ns_) / 4;
  }
  rto_ns_ = std::clamp(srtt_ns_ + 4 * rttvar_ns_, config_.recovery.min_rto_ns,
                       config_.recovery.max_rto_ns);
}

const Lane::Arrival& Lane::inbox(size_t i) const {
  return arrivals_[held_[seq_index((consumed_ + i))]];
}

std::span<const std::byte> Lane::payload(const Arrival& a) const {
  return recv_frames_[a.slot].span().subspan(kHeaderBytes,
                                             a.header.payload_bytes);
}

absl::Status Lane::consume_front() {
  assert(inbox_size() > 0);
  const uint32_t slot = held_[seq_index(consumed_)];
  held_[seq_index(consumed_)] = kNoSlot;
  // The sender waits for this frame to be acknowledged once consumed.
  if (arrivals_[slot].header.flags & kFlagReportNow) report_requested_ = true;
  ++consumed_;
  // A frame held ahead of a gap may now be next in line.
  while (received_ - consumed_ < config_.window() &&
         held_[seq_index(received_)] != kNoSlot) {
    ++received_;
  }
  return repost(slot);
}

absl::Status Lane::repost(uint32_t slot) {
  return endpoint_->post_recv(WorkId{WorkKind::kRecv, peer_, slot},
                              recv_frames_[slot]);
}

bool Lane::can_send_data() const {
  return !free_data_slots_.empty() &&
         next_seq_ - peer_consumed_ < config_.window() &&
         queued_send_bytes_ < send_queue_limit();
}

absl::Status Lane::post(uint32_t slot, FrameHeader header,
                        uint32_t payload_bytes) {
  const Frame& frame = send_frames_[slot];
  header.payload_bytes = payload_bytes;
  header.received = received_;
  header.consumed = consumed_;
  header.encode(frame.span().first<kHeaderBytes>());
  absl::Status s =
      endpoint_->post_send(WorkId{WorkKind::kSend, peer_, slot}, frame,
                           kHeaderBytes + payload_bytes, send_sequence_.peek());
  if (!s.ok()) return s;
  send_sequence_.take();
  // Every frame carries the counters: whatever was owed is reported now.
  received_reported_ = received_;
  consumed_reported_ = consumed_;
  report_requested_ = false;
  ack_now_ = false;
  unreported_since_ns_ = kNeverNs;
  return absl::OkStatus();
}

absl::Status Lane::send_data(FrameHeader header, const std::byte* payload,
                             uint32_t bytes) {
  assert(can_send_data());
  const uint32_t slot = free_data_slots_.back();
  const Frame& frame = send_frames_[slot];
  assert(kHeaderBytes + bytes <= frame.bytes());
  if (bytes > 0) std::memcpy(frame.data() + kHeaderBytes, payload, bytes);
  header.type = FrameType::kData;
  header.seq = next_seq_;
  header.payload_bytes = bytes;
  const uint32_t posted_as = send_sequence_.peek();
  absl::Status s = post(slot, header, bytes);
  if (!s.ok()) return s;
  free_data_slots_.pop_back();
  ++slot_posts_[slot];
  ++sends_in_flight_;
  queued_send_bytes_ += kHeaderBytes + bytes;
  note_posted(slot);
  ++stats_.data_sent;
  if (lossy_frames_left_ > 0) --lossy_frames_left_;
  send_headers_[slot] = header;
  if (recovery()) {
    const uint32_t at = seq_index(next_seq_);
    slot_unacked_[slot] = true;
    seq_slot_[at] = slot;
    seq_sent_ns_[at] = kNeverNs;  // queued: the clock starts when it leaves
    seq_resent_[at] = false;
    seq_posted_as_[at] = posted_as;
  }
  ++next_seq_;
  return absl::OkStatus();
}

absl::Status Lane::send_ack(uint8_t flags, uint32_t suspect) {
  FrameHeader header;
  header.type = FrameType::kAck;
  header.flags = flags;
  header.suspect = suspect;
  header.seq = next_seq_;
  if (recovery()) {
    header.sack = held_beyond_gap();
    header.heard = heard_;
  }
  absl::Status s = post(config_.depth, header, 0);
  if (!s.ok()) return s;
  ack_busy_ = true;
  ++stats_.acks_sent;
  if (flags & kFlagProbe) {
    ++stats_.probes_sent;
    last_probe_ns_ = clock_.now_ns();
    probe_backoff_ = std::min(2 * probe_backoff_, kMaxProbeBackoff);
  }
  return absl::OkStatus();
}

absl::Status Lane::retransmit() {
  if (retries_ == config_.recovery.max_retries) {
    return make_error(
        absl::StatusCode::kUnavailable, place(ErrorCause::kPeerUnavailable),
        absl::StrFormat(
            "peer %u acknowledged nothing after %u retransmissions (last "
            "timeout %d ns): it crashed, the cable is down or it stopped "
            "progressing; %u data frame(s) unacknowledged. Check that rank "
            "and the cable, then rebuild the group",
            peer_, retries_, rto_ns_, next_seq_ - peer_received_));
  }
  // The oldest only: the peer's answer acknowledges whatever else it holds
  // (and names what it misses), and a timeout that fired too early costs
  // one frame, not a window.
  absl::Status st = resend(peer_received_);
  if (!st.ok()) return st;
  ++retries_;
  rto_ns_ = std::min(2 * rto_ns_, config_.recovery.max_rto_ns);
  return absl::OkStatus();
}

TimeNs Lane::next_timer_ns(const Watch& watch) const {
  TimeNs next = retransmit_due_ns();
  if (watch.waiting) next = std::min(next, probe_due_ns(watch.probe_after_ns));
  if (!ack_busy_) next = std::min(next, delayed_ack_due_ns());
  return next;
}

absl::Status Lane::service(const Watch& watch, uint32_t suspect,
                           bool* advanced) {
  TimeNs wake_ns = kNeverNs;
  return service_at(
      clock_.now_ns(), watch, [suspect] { return suspect; }, advanced,
      &wake_ns);
}

void Lane::send_abort(ErrorCause cause, uint32_t origin, uint32_t blamed,
                      std::string_view message) {
  if (abort_busy_) return;
  const uint32_t slot = config_.depth + 1;
  const Frame& frame = send_frames_[slot];
  const auto bytes =
      static_cast<uint32_t>(std::min<size_t>(message.size(), kMaxAbortText));
  if (bytes > 0)
    std::memcpy(frame.data() + kHeaderBytes, message.data(), bytes);
  FrameHeader header;
  header.type = FrameType::kAbort;
  header.cause = static_cast<uint8_t>(cause);
  header.origin = origin;
  header.blamed = blamed;
  if (!post(slot, header, bytes).ok()) return;
  abort_busy_ = true;
  abort_copies_ = 1;
  abort_bytes_ = bytes;
}

void Lane::resend_abort() {
  if (abort_busy_ || abort_copies_ == 0 || abort_copies_ == kAbortCopies) {
    return;
  }
  const Frame& frame = send_frames_[config_.depth + 1];
  if (endpoint_
          ->post_send(WorkId{WorkKind::kSend, peer_, config_.depth + 1}, frame,
                      kHeaderBytes + abort_bytes_, send_sequence_.peek())
          .ok()) {
    send_sequence_.take();
    abort_busy_ = true;
    ++abort_copies_;
  }
}

absl::Status Lane::abort_error(const FrameHeader& h,
                               std::span<const std::byte> text) {
  abort_origin_ = h.origin;
  abort_blamed_ = h.blamed;
  const std::string message(reinterpret_cast<const char*>(text.data()),
                            text.size());
  // A cause this version does not know is reported as unknown.
  const auto cause = h.cause <= static_cast<uint8_t>(ErrorCause::kGroupFailed)
                         ? static_cast<ErrorCause>(h.cause)
                         : ErrorCause::kUnknown;
  ErrorPlace where = place(cause);
  // Blame the peer the failure blamed (a crashed rank, say), not the
  // messenger.
  if (h.blamed != kNoPeer && h.blamed != where.rank) {
    where.peer = h.blamed;
    if (h.blamed != peer_) where.device.clear();
  }
  return make_error(
      absl::StatusCode::kAborted, where,
      absl::StrFormat("peer %u aborted the group after a failure that began "
                      "on rank %u (%s): %s",
                      peer_, h.origin, error_cause_name(cause), message));
}

absl::Status Lane::protocol_error(std::string_view what) const {
  return make_error(absl::StatusCode::kDataLoss, place(ErrorCause::kSequence),
                    absl::StrFormat("protocol violation: %s", what));
}

std::string Lane::describe() const {
  return absl::StrFormat(
      "peer %u cable %u (%s): %u of %u data frame(s) received and %u "
      "consumed by the peer, %u in the inbox, %u send(s) in flight, %u "
      "retransmission round(s) without progress, last heard %d ns ago",
      peer_, cable_, device(), peer_received_, next_seq_, peer_consumed_,
      inbox_size(), sends_in_flight_, retries_,
      clock_.now_ns() - last_heard_ns_);
}

}  // namespace weft::internal
