#include "collectives/engine/lane.h"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "base/logging.h"
#include "fabric/checked_pair.h"

namespace weft::collectives::internal {
namespace {

constexpr uint64_t kRegionAlign = 64;

}  // namespace

uint32_t LaneConfig::slot_bytes(bool split) const {
  return max_frame_bytes + (split ? 0 : kHeaderBytes);
}

uint64_t LaneConfig::frames_bytes(bool split) const {
  return uint64_t{2} * depth * slot_bytes(split);
}

uint64_t LaneConfig::control_bytes(bool split) const {
  return kHeaderBytes + (split ? uint64_t{2} * depth * kHeaderBytes : 0);
}

uint64_t LaneConfig::region_bytes() const {
  // Split or not, 2 x depth headers and the payloads: in the data frames
  // or among the control frames. (Every part is a multiple of 64 bytes.)
  const uint64_t bytes = frames_bytes(/*split=*/false) +
                         control_bytes(/*split=*/false) + kRareFramesBytes;
  return (bytes + kRegionAlign - 1) / kRegionAlign * kRegionAlign;
}

Lane::Lane(std::unique_ptr<Endpoint> endpoint, uint32_t peer, uint32_t cable,
           LaneConfig config, const Slab& slab, uint64_t frames_offset,
           uint64_t control_offset, uint64_t abort_offset, const Clock& clock)
    : endpoint_(std::move(endpoint)),
      peer_(peer),
      cable_(cable),
      depth_(config.depth),
      recovery_(config.retransmits()),
      split_(endpoint_->max_parts() >= 2),
      clock_(clock),
      arrivals_(config.depth),
      targets_(config.depth),
      send_(config, clock),
      receive_(config, clock),
      liveness_(clock.now_ns()) {
  via_cable_ = cable;
  home_device_ = endpoint_->info().device;
  auto carve = [&](uint64_t at, uint64_t bytes) {
    absl::StatusOr<Frame> f = slab.frame(at, bytes);
    WEFT_ASSERT(f.ok(), "the lane's region does not lie in the slab");
    return *f;
  };
  slot_bytes_ = config.slot_bytes(split_);
  data_ = carve(frames_offset, config.frames_bytes(split_));
  control_ = carve(control_offset, config.control_bytes(split_));
  abort_ = carve(abort_offset, kAbortFrameBytes);
  move_ = carve(abort_offset + kAbortFrameBytes, kMoveFrameBytes);
  WEFT_CHECK_INVARIANTS_OF(*this);
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
  for (uint32_t slot = 0; slot < depth_; ++slot) {
    s = repost(slot);  // counts it in posted_recvs_
    if (!s.ok()) return s;
  }
  liveness_.note_heard(clock_.now_ns());
  WEFT_CHECK_INVARIANTS_OF(*this);
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
  // Every completion is handled, even after one failed: a receive left
  // unhandled would never be posted again, and a send never freed, which
  // an agreement after the failure (engine/agreement.h) still needs.
  absl::Status first;
  for (size_t i = 0; i < *n; ++i) {
    *advanced = true;
    absl::Status s = handle(batch[i]);
    if (first.ok()) first = std::move(s);
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return first;
}

absl::Status Lane::handle(const Completion& c) {
  if (!c.ok()) {
    return completion_error(c, place(ErrorCause::kCompletionError),
                            endpoint_->failure());
  }
  if (c.id.kind == WorkKind::kRecv) return handle_recv(c);
  const uint32_t slot = c.id.slot;
  if (slot < depth_) {
    send_.note_left(slot);
  } else if (slot == depth_) {
    ack_busy_ = false;
  } else if (slot == depth_ + 1) {
    abort_busy_ = false;
  } else if (slot == depth_ + 2) {
    move_busy_ = false;
  } else {
    relay_busy_ &= ~(1u << (slot - depth_ - 3));
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
  if (slot >= depth_ || c.byte_len > kHeaderBytes + payload_room()) {
    return protocol_error(absl::StrFormat(
        "a receive completed for slot %u with %u bytes, outside the posted "
        "frames",
        slot, c.byte_len));
  }
  --posted_recvs_;
  const std::optional<ReceiveTargets::Target> target = targets_.complete(slot);
  absl::StatusOr<FrameHeader> h =
      FrameHeader::decode(recv_head(slot).span().first(
                              std::min<uint32_t>(c.byte_len, kHeaderBytes)),
                          c.byte_len);
  if (!h.ok()) {
    return make_error(h.status().code(), place(ErrorCause::kSequence),
                      base::to_std(h.status().message()));
  }
  if (target.has_value()) land_targeted(slot, *target, *h);
  liveness_.note_heard(clock_.now_ns());
  if (resend_when_heard_) {
    // Moved: the peer's new endpoint is connected, as this frame shows.
    resend_when_heard_ = false;
    if (absl::Status s = resend_unacknowledged(); !s.ok()) return s;
  }
  // A relayed lane's path keeps no order: its immediates say nothing.
  if (!relayed_) receive_.note_heard(c.immediate);
  if (!relayed_ && (h->flags & (kFlagRelayTo | kFlagRelayFrom)) != 0) {
    return keep_relayed(slot, *h);
  }
  if (h->flags & (kFlagProbe | kFlagAnswer)) receive_.request_ack();
  if (h->type == FrameType::kAbort) {
    absl::Status aborted =
        abort_error(*h, recv_body(slot).span().first(h->payload_bytes));
    // Its receive is posted again: the lane outlives the failure when an
    // agreement follows it.
    if (absl::Status s = repost(slot); !s.ok()) return s;
    return aborted;
  }
  absl::Status s = absorb_counters(*h);
  if (!s.ok()) return s;
  if (h->type == FrameType::kData) return place_data(slot, *h);
  if (h->type == FrameType::kMove) return note_move(slot, *h);
  liveness_.note_suspect(h->suspect);
  if (!recovery()) control_credit_.note_heard(h->heard);
  // The peer posted data numbered up to h->seq before this frame, and a
  // cable keeps order: what has not arrived was lost. Say so at once.
  // (Relays keep none.)
  if (!relayed_) receive_.note_peer_next(h->seq);
  return repost(slot);
}

absl::Status Lane::place_data(uint32_t slot, const FrameHeader& h) {
  if (h.flags & kFlagAckNow) receive_.request_ack();
  const ReceiveWindow::Placement placement = receive_.place(h.seq, slot);
  if (placement != ReceiveWindow::Placement::kNext &&
      placement != ReceiveWindow::Placement::kEarly) {
    set_in_place(slot, Frame());  // not held: the payload is no one's
  }
  switch (placement) {
    case ReceiveWindow::Placement::kNotNext:
      return protocol_error(
          absl::StrFormat("data frame number %u arrived where %u was next",
                          h.seq, receive_.received()));
    case ReceiveWindow::Placement::kBeyondWindow:
      return protocol_error(absl::StrFormat(
          "data frame number %u arrived beyond the window (%u frames from "
          "%u)",
          h.seq, receive_.window(), receive_.consumed()));
    case ReceiveWindow::Placement::kDuplicate:
      ++stats_.duplicates;
      return repost(slot);
    case ReceiveWindow::Placement::kEarly:
      ++stats_.placed_early;
      if (!relayed_) send_.note_gap();  // relays reorder
      break;
    case ReceiveWindow::Placement::kNext:
      break;
  }
  ++stats_.data_received;
  if (in_place(slot).slab() != nullptr) {
    stats_.bytes_received_in_place += h.payload_bytes;
  }
  arrivals_[slot] = Arrival{slot, h};
  return absl::OkStatus();
}

absl::Status Lane::absorb_counters(const FrameHeader& h) {
  const SendWindow::Report report = send_.absorb(h.received, h.consumed);
  if (report == SendWindow::Report::kOverclaimed) {
    return protocol_error(absl::StrFormat(
        "the peer reports %u frames received and %u consumed, but this side "
        "sent only %u data frames",
        h.received, h.consumed, send_.next_seq()));
  }
  if (report == SendWindow::Report::kStale && h.type == FrameType::kAck) {
    ++stats_.stale_counters;
  }
  if (recovery() && h.type == FrameType::kAck &&
      (h.sack != 0 || h.heard != 0) && h.received == send_.peer_received()) {
    return resend_missing(h.sack, h.heard);
  }
  return absl::OkStatus();
}

absl::Status Lane::resend_missing(uint32_t sack, uint32_t heard) {
  const uint32_t first = send_.peer_received();
  for (uint64_t missing = send_.missing(sack, heard); missing != 0;
       missing &= missing - 1) {
    absl::Status s =
        resend(first + std::countr_zero(missing), /*on_timeout=*/false);
    if (!s.ok()) return s;
    if (!relayed_) send_.note_gap();
  }
  return absl::OkStatus();
}

absl::Status Lane::resend(uint32_t seq, bool on_timeout) {
  const uint32_t slot = send_.begin_resend(seq);
  if (slot == kNoSlot) return absl::OkStatus();  // still queued
  const uint32_t posted_as = send_sequence_.peek();
  // The header as first posted, still in the slot's header frame (the
  // slot is not reused before the frame is acknowledged); post() renews
  // its counters.
  const uint32_t payload_bytes = send_.slot_payload_bytes(slot);
  absl::StatusOr<FrameHeader> header =
      FrameHeader::decode(send_head(slot).span(), kHeaderBytes + payload_bytes);
  WEFT_ASSERT(header.ok() && header->seq == seq &&
                  header->payload_bytes == payload_bytes,
              "a data slot awaiting its acknowledgement lost its header");
  absl::Status s =
      post(slot, *header, payload_part(slot, user_payload(slot), payload_bytes),
           payload_bytes);
  if (!s.ok()) return s;
  send_.note_reposted(seq, posted_as);
  ++stats_.retransmitted;
  // Debug only: on a lossy cable this is once per lost frame.
  if (base::log_enabled(base::LogLevel::kDebug)) {
    base::log(base::LogLevel::kDebug,
              "rank %u: resending data frame %u to peer %u cable %u (%s), "
              "resend %u of this lane",
              endpoint_->info().rank, seq, peer_, cable_,
              on_timeout ? absl::StrFormat("timeout of %d ns, retry %u",
                                           send_.rto_ns(), send_.retries() + 1)
                         : std::string("the peer reported it missing"),
              stats_.retransmitted);
  }
  return absl::OkStatus();
}

absl::Status Lane::consume_front() {
  WEFT_ASSERT(inbox_size() > 0, "consume_front() with an empty inbox");
  // The sender waits for a kFlagReportNow frame to be acknowledged once
  // consumed.
  const bool report_now =
      (arrivals_[receive_.inbox_slot(0)].header.flags & kFlagReportNow) != 0;
  const uint32_t slot = receive_.consume_front(report_now);
  absl::Status s = repost(slot);
  WEFT_CHECK_INVARIANTS_OF(*this);
  return s;
}

absl::Status Lane::repost(uint32_t slot) {
  set_in_place(slot, Frame());
  const WorkId id{WorkKind::kRecv, peer_, slot};
  const Frame* user =
      targets_.choose(slot, posted_recvs_, receive_, payload_room());
  if (user != nullptr) {
    // The header into the lane's own, the payload into user memory.
    const Frame parts[] = {recv_head(slot), *user};
    if (endpoint_->post_recv_parts(id, parts).ok()) {
      ++posted_recvs_;
      return absl::OkStatus();
    }
    // A fabric (or device) that scatters no receive: the lane's own
    // frames from here on.
    targets_.cancel(slot);
    targets_.clear();
    parts_refused_ = true;
  }
  absl::Status s;
  if (split_) {
    const Frame parts[] = {recv_head(slot), recv_body(slot)};
    s = endpoint_->post_recv_parts(id, parts);
  } else {
    s = endpoint_->post_recv(id, recv_frame(slot));
  }
  if (s.ok()) ++posted_recvs_;
  return s;
}

absl::Status Lane::post(uint32_t slot, FrameHeader header, const Frame& apart,
                        uint32_t payload_bytes) {
  const Frame head = send_head(slot);
  header.payload_bytes = payload_bytes;
  header.received = receive_.received();
  header.consumed = receive_.consumed();
  header.encode(head.span().first<kHeaderBytes>());
  const WorkId id{WorkKind::kSend, peer_, slot};
  absl::Status s;
  if (apart.slab() != nullptr) {
    const Frame parts[] = {head.sub(0, kHeaderBytes), apart};
    const uint32_t lengths[] = {kHeaderBytes, payload_bytes};
    s = endpoint_->post_send_parts(id, parts, lengths, send_sequence_.peek());
  } else {
    s = endpoint_->post_send(id, split_ ? head : send_frame(slot),
                             kHeaderBytes + payload_bytes,
                             send_sequence_.peek());
  }
  if (!s.ok()) return s;
  send_sequence_.take();
  // Every frame carries the counters: whatever was owed is reported now.
  receive_.note_reported(header.type == FrameType::kAck);
  return absl::OkStatus();
}

absl::Status Lane::post_data(uint32_t slot, FrameHeader header,
                             const Frame& user, uint32_t bytes) {
  header.type = FrameType::kData;
  header.seq = send_.next_seq();
  header.payload_bytes = bytes;
  const uint32_t posted_as = send_sequence_.peek();
  absl::Status s = post(slot, header, payload_part(slot, user, bytes), bytes);
  if (s.ok()) {
    send_.note_posted(header, posted_as);
    note_user_payload(slot, user);
    ++stats_.data_sent;
    credit_stalled_ = false;
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return s;
}

std::optional<uint8_t> Lane::ack_to_send(bool probe, TimeNs now_ns) {
  if (recovery()) {
    if (probe || receive_.ack_due() ||
        now_ns >= receive_.delayed_ack_due_ns()) {
      return probe ? kFlagProbe : 0;
    }
    return std::nullopt;
  }
  // Of its own accord only while the last such frame is answered; an
  // answer whenever asked. A probe that waits adds nothing: the answer
  // awaited shows the peer alive as well.
  if ((probe || receive_.credit_report_due()) && control_credit_.can_ask()) {
    return probe ? kFlagProbe : kFlagAnswer;
  }
  if (receive_.answer_owed() && control_credit_.can_answer()) return 0;
  return std::nullopt;
}

absl::Status Lane::send_ack(uint8_t flags, uint32_t suspect) {
  FrameHeader header;
  header.type = FrameType::kAck;
  header.flags = flags;
  header.suspect = suspect;
  header.seq = send_.next_seq();
  header.heard = receive_.heard();
  if (recovery()) header.sack = receive_.sack();
  const uint32_t posted_as = send_sequence_.peek();
  absl::Status s = post(depth_, header, Frame(), 0);
  if (!s.ok()) return s;
  if (!recovery()) {
    control_credit_.note_sent(posted_as,
                              (flags & (kFlagProbe | kFlagAnswer)) != 0);
  }
  ack_busy_ = true;
  ++stats_.acks_sent;
  if (flags & kFlagProbe) {
    ++stats_.probes_sent;
    liveness_.note_probe(clock_.now_ns());
  }
  return absl::OkStatus();
}

absl::Status Lane::retransmit() {
  if (send_.retries_exhausted()) {
    return make_error(
        absl::StatusCode::kUnavailable, place(ErrorCause::kPeerUnavailable),
        absl::StrFormat(
            "peer %u acknowledged nothing after %u retransmissions (last "
            "timeout %d ns): it crashed, the cable is down or it stopped "
            "progressing; %u data frame(s) unacknowledged. Check that rank "
            "and the cable, then rebuild the group",
            peer_, send_.retries(), send_.rto_ns(), send_.unacknowledged()));
  }
  // The oldest only: the peer's answer acknowledges whatever else it holds
  // (and names what it misses), and a timeout that fired too early costs
  // one frame, not a window.
  absl::Status st = resend(send_.peer_received(), /*on_timeout=*/true);
  if (!st.ok()) return st;
  send_.note_timeout();
  return absl::OkStatus();
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
  const uint32_t slot = depth_ + 1;
  const Frame frame = send_frame(slot);
  const auto bytes =
      static_cast<uint32_t>(std::min<size_t>(message.size(), kMaxAbortText));
  if (bytes > 0)
    std::memcpy(frame.data() + kHeaderBytes, message.data(), bytes);
  FrameHeader header;
  header.type = FrameType::kAbort;
  header.cause = static_cast<uint8_t>(cause);
  header.origin = origin;
  header.blamed = blamed;
  if (post(slot, header, Frame(), bytes).ok()) {
    abort_busy_ = true;
    abort_copies_ = 1;
    abort_bytes_ = bytes;
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void Lane::resend_abort() {
  if (abort_busy_ || abort_copies_ == 0 || abort_copies_ == kAbortCopies) {
    return;
  }
  const Frame frame = send_frame(depth_ + 1);
  if (endpoint_
          ->post_send(WorkId{WorkKind::kSend, peer_, depth_ + 1}, frame,
                      kHeaderBytes + abort_bytes_, send_sequence_.peek())
          .ok()) {
    send_sequence_.take();
    abort_busy_ = true;
    ++abort_copies_;
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
}

absl::Status Lane::abort_error(const FrameHeader& h,
                               std::span<const std::byte> text) {
  liveness_.note_abort(h.origin, h.blamed);
  abort_text_.assign(reinterpret_cast<const char*>(text.data()),
                     std::min<size_t>(text.size(), kMaxAbortText));
  const std::string& message = abort_text_;
  // A cause this version does not know is reported as unknown.
  const auto cause = h.cause <= static_cast<uint8_t>(kLastErrorCause)
                         ? static_cast<ErrorCause>(h.cause)
                         : ErrorCause::kUnknown;
  ErrorPlace where = place(cause);
  if (cause == ErrorCause::kRevoked) {
    // Not a failure but a decision: name the rank that made it and its
    // reason, whoever relayed it.
    where.peer = h.origin;
    if (h.origin != peer_) where.device.clear();
    return make_error(
        absl::StatusCode::kAborted, where,
        absl::StrFormat("rank %u revoked the group: %s (heard from peer %u)",
                        h.origin, message, peer_));
  }
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
      peer_, cable_, device(), send_.peer_received(), send_.next_seq(),
      send_.peer_consumed(), inbox_size(), send_.sends_in_flight(),
      send_.retries(), clock_.now_ns() - liveness_.last_heard_ns());
}

void Lane::check_invariants() const {
  send_.check_invariants();
  receive_.check_invariants();
  liveness_.check_invariants();
  control_credit_.check_invariants();
  WEFT_ASSERT(!recovery() || control_credit_.unproven() == 0,
              "control frames counted with recovery on");
  WEFT_ASSERT(data_.bytes() == uint64_t{2} * depth_ * slot_bytes_ &&
                  arrivals_.size() == depth_ &&
                  (user_payloads_.empty() || user_payloads_.size() == depth_) &&
                  (in_place_.empty() || in_place_.size() == depth_) &&
                  control_.bytes() ==
                      kHeaderBytes + (split_ ? 2 * depth_ * kHeaderBytes : 0) &&
                  abort_.bytes() == kAbortFrameBytes &&
                  move_.bytes() == kMoveFrameBytes,
              "the lane's frames do not match its depth");
  WEFT_ASSERT(
      static_cast<uint32_t>(std::count_if(
          user_payloads_.begin(), user_payloads_.end(),
          [](const Frame& f) { return f.slab() != nullptr; })) == user_frames_,
      "the lane miscounts its frames of user memory");
  // Every held frame's arrival is its checked data header, under its own
  // number: a receive slot held twice would carry only one of them.
  const uint32_t consumed = receive_.consumed();
  for (uint32_t i = 0; i < receive_.window(); ++i) {
    const uint32_t slot = receive_.slot_holding(consumed + i);
    if (slot == kNoSlot) continue;
    const Arrival& a = arrivals_[slot];
    WEFT_ASSERT(a.slot == slot && a.header.type == FrameType::kData &&
                    a.header.seq == consumed + i,
                "a held receive slot's arrival is not the frame it holds");
  }
  targets_.check_invariants();
  // A slot holding an arrival is not posted: no target; a payload in
  // place belongs to a held arrival.
  uint32_t held = 0;
  for (uint32_t slot = 0; slot < depth_; ++slot) {
    bool holds = false;
    for (uint32_t i = 0; i < receive_.window(); ++i) {
      holds |= receive_.slot_holding(consumed + i) == slot;
    }
    held += holds ? 1 : 0;
    WEFT_ASSERT(!holds || !targets_.targeted(slot),
                "a receive slot holding an arrival is also posted");
    WEFT_ASSERT(holds || in_place(slot).slab() == nullptr,
                "a payload in user memory belongs to no held arrival");
  }
  WEFT_ASSERT(posted_recvs_ + held <= depth_,
              "more receives posted than free slots");
  WEFT_ASSERT(abort_copies_ <= kAbortCopies, "more abort copies than allowed");
  WEFT_ASSERT(abort_bytes_ <= kMaxAbortText, "an abort message too long");
  WEFT_ASSERT(abort_text_.size() <= kMaxAbortText,
              "a received abort message too long");
  WEFT_ASSERT(!abort_busy_ || abort_copies_ > 0,
              "an abort send in flight, but none was sent");
  WEFT_ASSERT(relay_slots_ <= kRelaySlots &&
                  depth_ + 3 + relay_slots_ <= Endpoint::kMaxSends &&
                  relay_busy_ < (1u << relay_slots_) &&
                  relay_frames_.bytes() ==
                      uint64_t{relay_slots_} * frame_bytes() &&
                  (!relayed_ || pending_ == nullptr),
              "the lane's relay frames do not add up");
  WEFT_ASSERT(generation() <= kMaxMoves &&
                  (pending_ == nullptr || pending_generation_ > generation()),
              "the lane's moves do not add up");
}

}  // namespace weft::collectives::internal
