// Transport's byte moves: where a frame's bytes are read from while in
// flight (the sender's parts on loan, or a payload buffer) and the copy of
// a message into the parts of its receive.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "sim/internal/transport.h"
#include "sim/internal/world_core.h"

namespace weft::sim {

using internal::SimEndpoint;

bool Transport::loan_reads(const internal::FrameLoan& loan,
                           const Slab& slab) const {
  const InFlight& m = in_flight_[loan.message];
  if (m.id != loan.id || m.refs == 0 || m.payload != kNoPayload ||
      m.placed_in != nullptr)
    return false;
  const std::byte* begin = slab.data();
  const std::byte* end = begin + slab.bytes();
  auto inside = [&](const std::byte* p) {
    return p != nullptr && p >= begin && p < end;
  };
  return inside(m.source) || inside(m.tail);
}

void Transport::copy_into(const InFlight& m,
                          const SimEndpoint::PostedRecv& recv) const {
  core_.counters().payload_bytes_copied += m.length;
  // A one-part message into a one-part receive is one memcpy, without
  // walking the parts.
  const bool one_part_from = m.payload != kNoPayload || m.tail == nullptr;
  if (one_part_from && recv.tail.bytes() == 0) {
    if (m.length > 0)
      std::memcpy(recv.frame.data(), bytes_of(m).data(), m.length);
    return;
  }
  // Up to two pieces on each side (a gather and a scatter of verbs'
  // sg_list).
  std::span<const std::byte> from[2];
  if (!one_part_from) {
    from[0] = {m.source, m.head_length};
    from[1] = {m.tail, m.length - m.head_length};
  } else {
    from[0] = bytes_of(m);
  }
  std::byte* to[2] = {recv.frame.data(), recv.tail.data()};
  const uint32_t room[2] = {recv.frame.bytes(), recv.tail.bytes()};
  size_t src = 0, src_at = 0, dst = 0, dst_at = 0;
  for (uint32_t left = m.length; left > 0;) {
    while (src_at == from[src].size()) src_at = 0, ++src;
    while (dst_at == room[dst]) dst_at = 0, ++dst;
    const size_t n =
        std::min<size_t>({left, from[src].size() - src_at, room[dst] - dst_at});
    std::memcpy(to[dst] + dst_at, from[src].data() + src_at, n);
    src_at += n;
    dst_at += n;
    left -= static_cast<uint32_t>(n);
  }
}

std::span<const std::byte> Transport::bytes_of(const InFlight& m) const {
  return m.payload != kNoPayload
             ? payloads_.bytes(m.payload)
             : std::span<const std::byte>(m.source, m.length);
}

}  // namespace weft::sim
