#include "collectives/internal/lane.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>

#include "absl/strings/str_format.h"
#include "fabric/absl_compat.h"
#include "fabric/checked_pair.h"

namespace weft::internal {
namespace {

constexpr uint32_t kDataCredits = 2;  // one for the frame, one kept back
constexpr uint64_t kRegionAlign = 64;
constexpr uint32_t kAbortFrameBytes = kHeaderBytes + kMaxAbortText;

}  // namespace

uint64_t LaneConfig::region_bytes() const {
  const uint64_t frames = uint64_t{2} * depth * max_frame_bytes;
  const uint64_t extra = kHeaderBytes + kAbortFrameBytes;
  return (frames + extra + kRegionAlign - 1) / kRegionAlign * kRegionAlign;
}

Lane::Lane(std::unique_ptr<Endpoint> endpoint, uint32_t peer, uint32_t cable,
           LaneConfig config, const Slab& slab, uint64_t offset)
    : endpoint_(std::move(endpoint)),
      peer_(peer),
      cable_(cable),
      config_(config) {
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
  return absl::OkStatus();
}

absl::Status Lane::poll(std::span<Completion> batch, bool* advanced) {
  absl::StatusOr<size_t> n = endpoint_->poll(batch);
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
  if (c.id.slot < config_.depth) {
    free_data_slots_.push_back(c.id.slot);
    --data_in_flight_;
  } else if (c.id.slot == config_.depth) {
    credit_busy_ = false;
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
  const SequenceCheck seq = receive_checker_.check(c.immediate);
  if (!seq.ok()) return sequence_error(seq, place(ErrorCause::kSequence));
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
  absl::Status s = absorb_counters(*h);
  if (!s.ok()) return s;
  switch (h->type) {
    case FrameType::kData:
      inbox_.push_back({slot, *h});
      return absl::OkStatus();
    case FrameType::kCredit:
      return repost(slot);
    case FrameType::kAbort:
      return abort_error(*h, recv_frames_[slot].span().subspan(
                                 kHeaderBytes, h->payload_bytes));
  }
  return absl::OkStatus();
}

absl::Status Lane::absorb_counters(const FrameHeader& h) {
  // Reports only grow, and never past what this side has sent.
  const uint32_t new_reposts = h.reposts - peer_reposts_;
  const uint32_t new_consumed = h.data_consumed - peer_consumed_;
  if (new_reposts > sent_total_ - peer_reposts_ ||
      new_consumed > data_sent_ - peer_consumed_) {
    return protocol_error(absl::StrFormat(
        "the peer reports %u re-posted receives and %u consumed frames, but "
        "this side sent only %u frames (%u data)",
        h.reposts, h.data_consumed, sent_total_, data_sent_));
  }
  peer_reposts_ = h.reposts;
  peer_consumed_ = h.data_consumed;
  return absl::OkStatus();
}

std::span<const std::byte> Lane::payload(const Arrival& a) const {
  return recv_frames_[a.slot].span().subspan(kHeaderBytes,
                                             a.header.payload_bytes);
}

absl::Status Lane::consume_front() {
  assert(!inbox_.empty());
  const uint32_t slot = inbox_.front().slot;
  // The sender waits for this frame to be acknowledged once consumed.
  if (inbox_.front().header.flags & kFlagReportNow) report_requested_ = true;
  inbox_.pop_front();
  ++consumed_;
  return repost(slot);
}

absl::Status Lane::repost(uint32_t slot) {
  absl::Status s = endpoint_->post_recv(WorkId{WorkKind::kRecv, peer_, slot},
                                        recv_frames_[slot]);
  if (s.ok()) ++reposts_;
  return s;
}

bool Lane::can_send_data() const {
  return !free_data_slots_.empty() && credits() >= kDataCredits;
}

absl::Status Lane::post(uint32_t slot, const Frame& frame, FrameHeader header,
                        uint32_t payload_bytes) {
  header.payload_bytes = payload_bytes;
  header.reposts = reposts_;
  header.data_consumed = consumed_;
  header.encode(frame.span().first<kHeaderBytes>());
  absl::Status s =
      endpoint_->post_send(WorkId{WorkKind::kSend, peer_, slot}, frame,
                           kHeaderBytes + payload_bytes, send_sequence_.peek());
  if (!s.ok()) return s;
  send_sequence_.take();
  ++sent_total_;
  reported_ = reposts_;
  report_requested_ = false;
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
  absl::Status s = post(slot, frame, header, bytes);
  if (!s.ok()) return s;
  free_data_slots_.pop_back();
  ++data_in_flight_;
  ++data_sent_;
  return absl::OkStatus();
}

absl::Status Lane::maybe_report(bool waiting, bool* advanced) {
  const uint32_t unreported = reposts_ - reported_;
  if (unreported == 0 || credit_busy_ || credits() == 0)
    return absl::OkStatus();
  if (unreported < config_.report_threshold() && !report_requested_ &&
      !waiting) {
    return absl::OkStatus();
  }
  FrameHeader header;
  header.type = FrameType::kCredit;
  absl::Status s = post(config_.depth, send_frames_[config_.depth], header, 0);
  if (!s.ok()) return s;
  credit_busy_ = true;
  *advanced = true;
  return absl::OkStatus();
}

void Lane::send_abort(ErrorCause cause, uint32_t origin,
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
  if (post(slot, frame, header, bytes).ok()) abort_busy_ = true;
}

absl::Status Lane::abort_error(const FrameHeader& h,
                               std::span<const std::byte> text) {
  abort_origin_ = h.origin;
  const std::string message(reinterpret_cast<const char*>(text.data()),
                            text.size());
  // A cause this version does not know is reported as unknown.
  const auto cause = h.cause <= static_cast<uint8_t>(ErrorCause::kGroupFailed)
                         ? static_cast<ErrorCause>(h.cause)
                         : ErrorCause::kUnknown;
  return make_error(
      absl::StatusCode::kAborted, place(cause),
      absl::StrFormat("peer %u aborted the group after a failure that began "
                      "on rank %u (%s): %s",
                      peer_, h.origin, error_cause_name(cause), message));
}

absl::Status Lane::protocol_error(std::string_view what) const {
  return make_error(absl::StatusCode::kDataLoss, place(ErrorCause::kSequence),
                    absl::StrFormat("flow-control violation: %s", what));
}

std::string Lane::describe() const {
  return absl::StrFormat(
      "peer %u cable %u (%s): %u/%u credits, %u frame(s) in the inbox, %u "
      "data send(s) in flight, %u of %u data frames acknowledged",
      peer_, cable_, device(), credits(), config_.depth, inbox_.size(),
      data_in_flight_, peer_consumed_, data_sent_);
}

}  // namespace weft::internal
