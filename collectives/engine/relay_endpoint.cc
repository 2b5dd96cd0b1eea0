#include "collectives/engine/relay_endpoint.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "fabric/assert.h"
#include "fabric/wc_status.h"

namespace weft::collectives::internal {

RelayEndpoint::RelayEndpoint(EndpointInfo info, size_t max_parts,
                             RelayPath& path)
    : info_(std::move(info)), max_parts_(max_parts), path_(path) {
  WEFT_ASSERT(max_parts >= 1 && max_parts <= kMaxParts,
              "a relay endpoint of no parts, or too many");
}

absl::StatusOr<Destination> RelayEndpoint::destination() const {
  return absl::FailedPreconditionError(
      "a relayed lane has no queue pair of its own to connect to");
}

absl::Status RelayEndpoint::connect(const Destination& peer) {
  (void)peer;
  return absl::OkStatus();
}

absl::Status RelayEndpoint::refuse_if_failed() const {
  if (!failed_) return absl::OkStatus();
  return absl::FailedPreconditionError(
      "the relayed lane's endpoint is in its error state");
}

absl::Status RelayEndpoint::post_recv(WorkId id, const Frame& frame) {
  return post_recv_parts(id, std::span<const Frame>(&frame, 1));
}

absl::Status RelayEndpoint::post_recv_parts(WorkId id,
                                            std::span<const Frame> parts) {
  if (absl::Status s = refuse_if_failed(); !s.ok()) return s;
  if (parts.empty() || parts.size() > max_parts_ ||
      receives_.size() >= kMaxRecvs) {
    return absl::ResourceExhaustedError(
        "a relayed lane's receive of no parts, too many parts, or past "
        "kMaxRecvs");
  }
  Receive r;
  r.id = id;
  r.count = parts.size();
  std::copy(parts.begin(), parts.end(), r.parts.begin());
  receives_.push_back(r);
  return absl::OkStatus();
}

absl::Status RelayEndpoint::post_send(WorkId id, const Frame& frame,
                                      uint32_t length, uint32_t immediate) {
  return post_send_parts(id, std::span<const Frame>(&frame, 1),
                         std::span<const uint32_t>(&length, 1), immediate);
}

absl::Status RelayEndpoint::post_send_parts(WorkId id,
                                            std::span<const Frame> parts,
                                            std::span<const uint32_t> lengths,
                                            uint32_t immediate) {
  (void)immediate;  // the path keeps no order: the lane reads none
  if (absl::Status s = refuse_if_failed(); !s.ok()) return s;
  WEFT_ASSERT(!parts.empty() && parts.size() == lengths.size() &&
                  parts.size() <= max_parts_,
              "a relayed send of mismatched parts");
  if (sends_.size() >= kMaxSends) {
    return absl::ResourceExhaustedError(
        "a relayed lane's send past kMaxSends outstanding");
  }
  Send send;
  send.id = id;
  send.count = parts.size();
  for (size_t i = 0; i < parts.size(); ++i) {
    WEFT_ASSERT(lengths[i] <= parts[i].bytes(), "a relayed send past its part");
    send.parts[i] = parts[i];
    send.lengths[i] = lengths[i];
  }
  sends_.push_back(send);
  flush();
  return absl::OkStatus();
}

bool RelayEndpoint::flush() {
  bool moved = false;
  while (!sends_.empty() && !failed_) {
    const Send& send = sends_.front();
    scratch_.clear();
    for (size_t i = 0; i < send.count; ++i) {
      scratch_.insert(scratch_.end(), send.parts[i].data(),
                      send.parts[i].data() + send.lengths[i]);
    }
    if (!path_.relay(info_.peer, scratch_)) break;
    ++frames_sent_;
    Completion c;
    c.id = send.id;
    c.byte_len = static_cast<uint32_t>(scratch_.size());
    done_.push_back(c);
    sends_.pop_front();
    moved = true;
  }
  return moved;
}

absl::Status RelayEndpoint::move_to_error() {
  failed_ = true;
  receives_.clear();
  sends_.clear();
  done_.clear();
  return absl::OkStatus();
}

absl::StatusOr<size_t> RelayEndpoint::poll(std::span<Completion> out) {
  size_t n = 0;
  while (n < out.size() && !done_.empty()) {
    out[n++] = done_.front();
    done_.pop_front();
  }
  return n;
}

bool RelayEndpoint::deliver(std::span<const std::byte> frame) {
  if (failed_ || receives_.empty()) {
    ++frames_lost_;
    return false;
  }
  const Receive r = receives_.front();
  receives_.pop_front();
  Completion c;
  c.id = r.id;
  c.byte_len = static_cast<uint32_t>(frame.size());
  c.has_immediate = true;
  uint64_t room = 0;
  for (size_t i = 0; i < r.count; ++i) room += r.parts[i].bytes();
  if (frame.size() > room) {
    c.status = WcStatus::kLocLenErr;
    c.status_name = wc_status_name(c.status);
    done_.push_back(c);
    ++frames_lost_;
    return false;
  }
  size_t at = 0;
  for (size_t i = 0; i < r.count && at < frame.size(); ++i) {
    const size_t n = std::min<size_t>(r.parts[i].bytes(), frame.size() - at);
    std::memcpy(r.parts[i].data(), frame.data() + at, n);
    at += n;
  }
  done_.push_back(c);
  ++frames_delivered_;
  return true;
}

}  // namespace weft::collectives::internal
