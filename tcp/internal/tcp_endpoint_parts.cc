// TcpEndpoint's scatter and gather (post_send_parts, post_recv_parts): a
// message's payload as up to two runs of bytes, written with its header in
// one writev and read across the parts of its receive.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "tcp/internal/tcp_endpoint.h"

namespace weft::tcp::internal {

absl::Status TcpEndpoint::post_send_parts(WorkId id,
                                          std::span<const Frame> parts,
                                          std::span<const uint32_t> lengths,
                                          uint32_t immediate) {
  if (absl::Status s = contract_.check_send_parts(
          *setup_.host, setup_.info, kMaxParts, id, parts, lengths);
      !s.ok()) {
    return s;
  }
  const uint32_t length =
      parts.size() == 1 ? lengths[0] : lengths[0] + lengths[1];
  MessageHeader h{.length = length, .immediate = immediate};
  PostedSend send{id, parts[0].data(), length, h.encode()};
  send.slabs[0] = parts[0].slab();
  if (parts.size() > 1) {
    send.tail = parts[1].data();
    send.head_length = lengths[0];
    send.slabs[1] = parts[1].slab();
  }
  return post_checked_send(send);
}

absl::Status TcpEndpoint::post_recv_parts(WorkId id,
                                          std::span<const Frame> parts) {
  if (absl::Status s = contract_.check_recv_parts(*setup_.host, setup_.info,
                                                  kMaxParts, id, parts);
      !s.ok()) {
    return s;
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
