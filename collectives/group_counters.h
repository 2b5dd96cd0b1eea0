// GroupCounters: what a group's engine did on each of its cables, for
// debugging a cluster (Group::counters()). Counted in the collectives
// engine, not in a fabric, so the numbers mean the same on the simulator,
// the verbs fabric and every other fabric. Counters only grow, from the
// group's formation on; subtract two snapshots to see what one call did.
//
// A group and the groups split from it share one engine and its cables:
// every one of them reports the same counters, the whole engine's.
#ifndef WEFT_COLLECTIVES_GROUP_COUNTERS_H_
#define WEFT_COLLECTIVES_GROUP_COUNTERS_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace weft {

// One cable's counts (or the sum over cables).
struct LinkCounters {
  // Data frames sent for the first time. Acknowledgements not included.
  uint64_t frames_sent = 0;
  // Data frames sent again (recovery on): after a timeout, or because the
  // peer's acknowledgement showed them missing. Non-zero means frames were
  // lost, or acknowledged too late.
  uint64_t frames_resent = 0;
  // Data frames received (first copies, in order or ahead of a gap).
  uint64_t frames_received = 0;
  // Data frames received again and thrown away: the cable duplicated a
  // frame, or this side's acknowledgement was late and the peer resent.
  uint64_t duplicates_dropped = 0;
  // Data frames that arrived ahead of a gap (an earlier one lost or
  // overtaken) and were held until the gap closed.
  uint64_t frames_held_early = 0;
  // Acknowledgement frames sent, probes included.
  uint64_t acks_sent = 0;
  // Probes sent: acknowledgements asking a silent peer to answer.
  uint64_t probes_sent = 0;
  // Times this side had data for the peer but had to wait because the
  // peer had not yet freed a receive (it holds `window` unconsumed frames):
  // a slow consumer, or lost acknowledgements. Counted once per stall.
  uint64_t credit_stalls = 0;
  // Operations that hit their deadline blaming this peer (the whole group
  // fails with the first; so 0 or 1 while the group lives).
  uint64_t deadlines_hit = 0;
  // Times this cable's lane moved to another cable to the same peer, after
  // this cable stopped answering while the other answered (a pulled cable
  // of a pair with several): its frames go over the other cable from
  // then on (PeerCounters::device names the device they use now).
  uint64_t lanes_moved = 0;
  // A pair's only cable stopped answering, on a mesh: 1 once this
  // cable's lane goes through other ranks (PeerCounters::device then
  // reads "relayed"); its frames sent through them and received through
  // them (docs/fault-tolerance.md, "A dead cable").
  uint64_t lane_relayed = 0;
  uint64_t frames_via_relays = 0;
  uint64_t frames_from_relays = 0;
  // Frames (and their bytes, headers included) this cable carried for a
  // relayed lane: this rank's own on their first hop, or another's
  // forwarded to the rank they are for. And frames of a relayed lane lost
  // on the way here (no relay frame free, no receive posted).
  uint64_t frames_relayed = 0;
  uint64_t relayed_bytes = 0;
  uint64_t relay_drops = 0;

  // Every counter with its name (the key weft-bench's JSON uses), in the
  // order above: for sums, differences and output without listing them
  // again.
  struct Field {
    const char* name;
    uint64_t LinkCounters::*value;
  };
  static const std::array<Field, 16> kFields;

  LinkCounters& operator+=(const LinkCounters& o);
  LinkCounters& operator-=(const LinkCounters& o);
  friend bool operator==(const LinkCounters&, const LinkCounters&) = default;
};

// One cable to one peer.
struct PeerCounters {
  uint32_t peer = 0;   // the peer's fabric (world) rank
  uint32_t cable = 0;  // which cable to that peer (device JSON order)
  // This rank's device the cable's lane uses: the cable's own, or, once
  // the lane moved (lanes_moved), the other cable's it moved to, or
  // "relayed" once it goes through other ranks (lane_relayed).
  std::string device;
  LinkCounters counts;
};

struct GroupCounters {
  // Every cable, by peer then cable.
  std::vector<PeerCounters> peers;
  // The sum over `peers`, plus deadlines that blamed no single peer.
  LinkCounters total;
  // Payload bytes of data frames sent the first time straight from
  // registered user memory (Group::register_memory), and copied into
  // weft's own frames first (every other buffer). Resends not counted.
  uint64_t payload_bytes_zero_copy = 0;
  uint64_t payload_bytes_staged = 0;
  // Payload bytes of data frames received straight into registered output
  // memory (no copy out of weft's frames), and of other frames that took
  // a receive posted there and were moved into weft's own frame
  // (docs/architecture.md, "Registered user memory").
  uint64_t payload_bytes_received_in_place = 0;
  uint64_t payload_bytes_moved_aside = 0;
};

}  // namespace weft

#endif  // WEFT_COLLECTIVES_GROUP_COUNTERS_H_
