// TcpEndpoint's scatter and gather (post_send_parts, post_recv_parts): a
// message's payload as up to two runs of bytes, written with its header in
// one writev and read across the parts of its receive.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "tcp/internal/tcp_endpoint.h"
#include "tcp/tcp_fabric.h"

namespace weft::tcp::internal {

absl::Status TcpEndpoint::post_send_parts(WorkId id,
                                          std::span<const Frame> parts,
                                          std::span<const uint32_t> lengths,
                                          uint32_t immediate) {
  if (parts.empty() || parts.size() > kMaxParts ||
      lengths.size() != parts.size()) {
    return refuse(absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput,
                  absl::StrFormat("a send of %u parts and %u lengths; give 1 "
                                  "to %u parts and a length for each",
                                  parts.size(), lengths.size(), kMaxParts));
  }
  if (parts.size() == 1) return post_send(id, parts[0], lengths[0], immediate);
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!setup_.fabric->owns(parts[i]) || lengths[i] > parts[i].bytes()) {
      return refuse(absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput,
                    absl::StrFormat("send part %u: %u bytes from a %u-byte "
                                    "frame, which must lie in a slab of this "
                                    "fabric (create_slab or register_memory)",
                                    i, lengths[i], parts[i].bytes()));
    }
  }
  if (uint64_t{lengths[0]} + lengths[1] > ~uint32_t{0}) {
    return refuse(absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput,
                  absl::StrFormat("a message of %u + %u bytes is over the "
                                  "%u a message may carry; send less",
                                  lengths[0], lengths[1], ~uint32_t{0}));
  }
  const uint32_t length = lengths[0] + lengths[1];
  MessageHeader h{.length = length, .immediate = immediate};
  PostedSend send{id, parts[0].data(), length, h.encode()};
  send.tail = parts[1].data();
  send.head_length = lengths[0];
  send.slabs = {parts[0].slab(), parts[1].slab()};
  return post(send, parts[0]);
}

absl::Status TcpEndpoint::post_recv_parts(WorkId id,
                                          std::span<const Frame> parts) {
  if (parts.empty() || parts.size() > kMaxParts) {
    return refuse(absl::StatusCode::kInvalidArgument, ErrorCause::kBadInput,
                  absl::StrFormat("a receive of %u parts; a message has 1 to "
                                  "%u parts",
                                  parts.size(), kMaxParts));
  }
  for (const Frame& part : parts) {
    if (absl::Status s = check_post(id, WorkKind::kRecv, outstanding_recvs_,
                                    kMaxRecvs, part);
        !s.ok()) {
      return s;
    }
  }
  return post_checked_recv(
      {id, parts[0], parts.size() > 1 ? parts[1] : Frame()});
}

std::array<std::span<const std::byte>, Endpoint::kMaxParts>
TcpEndpoint::PostedSend::pieces() const {
  if (tail == nullptr) return {std::span(data, length), {}};
  return {std::span(data, head_length), std::span(tail, length - head_length)};
}

std::span<std::byte> TcpEndpoint::Incoming::next(uint32_t left) const {
  if (read < head_room) {
    return {into + read, std::min(left, head_room - read)};
  }
  return {tail + (read - head_room), left};
}

bool TcpEndpoint::uses_slab(const Slab* slab) const {
  for (const PostedSend& s : sends_) {
    if (s.slabs[0] == slab || s.slabs[1] == slab) return true;
  }
  for (const PostedRecv& r : recvs_) {
    if (r.frame.slab() == slab || r.tail.slab() == slab) return true;
  }
  return false;
}

}  // namespace weft::tcp::internal
