// Agreement: the fault-tolerant agreement behind Group::agree() and
// Group::shrink() (ULFM's MPIX_Comm_agree, the first half of
// MPIX_Comm_shrink). Every member proposes a set of flags and the members
// it already knows failed; every member that returns decides the same
// value, even when members fail while it runs.
//
// The protocol is flooding consensus with a perfect failure detector
// (Guerraoui and Rodrigues, "Introduction to Reliable Distributed
// Programming", algorithm 5.1), over the group's lanes, which deliver each
// message once and in order (recovery):
//
//  - Round r: each member sends every member it does not suspect the set
//    of proposals it collected in round r - 1 (round 1: its own), and
//    collects the sets that arrive in round r messages.
//  - A round ends once every member not suspected has sent its round r
//    message. When the members heard from in round r are those heard from
//    in round r - 1 (no one failed in between; round 0 heard from
//    everyone), the member decides: the value is a function of the
//    collected set alone. It tells every member not suspected (DECIDED).
//    Otherwise round r + 1 begins.
//  - A DECIDED message from a member not suspected is adopted at once and
//    passed on to every member not suspected, so a decision a member took
//    before it failed reaches everyone through whoever heard it.
//  - A member that finds itself among the failed of a set it received
//    (another member suspected it when it proposed) stops: any decision
//    leaves it out. Its outcome says so; it tells no one.
//
// The detector is the engine's: a member is suspected when the group's
// watch names it (the side channel closed, or the simulator's record of a
// departure), when its lane fails (an error completion, a protocol error,
// exhausted retransmissions) or when it closed its end. The protocol needs
// the detector to suspect only members that failed; a member suspected
// while alive is left out of the decision and learns it from the decision
// (it is not among the members), and the others go on without it.
//
// A set of proposals is kept as three fields that union maps onto: which
// members proposed (present), the AND of their flags, and the OR of the
// members they reported failed. The decision: flags = that AND; members =
// the members present and not reported failed by any proposal.
//
// A message is one data frame of the operation identity the group gives
// (kind kAgree, the group's id, the agreement's number): item = round,
// frame = 1 (round) or 2 (decided); payload: flags (u32), then the present
// and failed bitmaps (one bit per member, ceil(n / 8) bytes each).
// Frames of other operations found ahead of them on a lane (an
// operation that failed left them there) are dropped; frames of an
// earlier agreement too.
#ifndef WEFT_COLLECTIVES_ENGINE_AGREEMENT_H_
#define WEFT_COLLECTIVES_ENGINE_AGREEMENT_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "collectives/engine/frame_header.h"
#include "collectives/engine/lane.h"
#include "collectives/engine/op_lane.h"

namespace weft::collectives::internal {

// What every member that returns from one agreement decides.
struct AgreementOutcome {
  uint32_t flags = 0;             // the AND over the decided proposals
  std::vector<uint32_t> members;  // group ranks, ascending
  std::vector<uint32_t> failed;   // the other group ranks, ascending
};

class Agreement {
 public:
  // Frame kinds (FrameHeader::frame) of its messages.
  static constexpr uint32_t kRound = 1;
  static constexpr uint32_t kDecided = 2;

  // Whether a frame ahead of the agreement's on a lane belongs to an
  // operation that ended without it (one that failed): it is dropped.
  using StaleFn = std::function<bool(const OpIdentity&)>;

  // `lanes[r]`: the lane to group rank r (nullptr for `me`). `known_failed`:
  // group ranks this member knows failed already (its proposal reports
  // them, and it waits on none of them). REQUIRES: lanes.size() is the
  // group's size, every lane but me's is set and outlives the agreement.
  Agreement(OpIdentity identity, uint32_t me, uint32_t flags,
            std::vector<Lane*> lanes, std::span<const uint32_t> known_failed,
            StaleFn stale);

  // The detector says group rank `r` failed: not waited on from now on,
  // and a DECIDED from it is no longer adopted.
  void suspect(uint32_t r);
  bool suspected(uint32_t r) const { return suspected_[r] != 0; }
  // Sends what is owed and reads what arrived; *advanced when anything
  // moved. Errors: a payload that is not a well-formed message.
  absl::Status advance(bool* advanced);
  // Decided, and every message to a member not suspected sent.
  bool done() const;
  // Every message sent, to suspected members too (they may be alive and
  // waiting for the decision: Engine keeps sending after done()).
  bool all_sent() const;
  absl::Status send_pending(bool* advanced);
  // REQUIRES: done().
  const AgreementOutcome& outcome() const { return outcome_; }
  const OpIdentity& identity() const { return identity_; }
  // The lane index (Lane::index()) of each member it waits on, set in
  // `waiting` (probes go to a silent one).
  void mark_waiting(std::span<uint8_t> waiting) const;
  // A member it waits on (the lowest group rank), kNoPeer when none.
  uint32_t awaited() const;
  // "round 2, waiting on ranks 1, 3" for a deadline's message.
  std::string outstanding() const;

 private:
  struct Set {
    uint32_t flags = ~0u;
    std::vector<uint8_t> present;  // bitmap over group ranks
    std::vector<uint8_t> failed;
    void merge(const Set& other);
  };
  static bool test(const std::vector<uint8_t>& bits, uint32_t r) {
    return (bits[r / 8] >> (r % 8)) & 1;
  }
  static void set(std::vector<uint8_t>& bits, uint32_t r) {
    bits[r / 8] = static_cast<uint8_t>(bits[r / 8] | (1u << (r % 8)));
  }
  struct Message {
    uint32_t round = 0;
    uint32_t kind = kRound;
    std::vector<std::byte> payload;
  };
  uint32_t size() const { return static_cast<uint32_t>(lanes_.size()); }
  // Starts round `round`: the message to every member not suspected.
  void begin_round(uint32_t round);
  // Queues a message of `kind` carrying `value` to every member not
  // suspected, behind what is queued for it already.
  void enqueue(uint32_t kind, const Set& value);
  // Decides `value` and tells every member.
  void decide(const Set& value);
  // Takes `value` as this member's outcome, telling no one.
  void conclude(const Set& value);
  absl::Status read(uint32_t peer, bool* advanced);
  // Adopts a DECIDED message waiting in `peer`'s inbox behind others.
  absl::Status adopt_decision_behind(uint32_t peer);
  // Every member not suspected was heard from this round.
  bool round_complete() const;
  std::vector<std::byte> encode(const Set& value) const;
  absl::Status decode(std::span<const std::byte> payload, uint32_t peer,
                      Set* out) const;

  OpIdentity identity_;
  uint32_t me_;
  std::vector<Lane*> lanes_;
  StaleFn stale_;
  std::vector<uint8_t> suspected_;
  uint32_t round_ = 0;
  // This round's collected set: what round - 1 collected (this member's
  // message to itself) and the sets arrived in this round's messages.
  Set collecting_;
  // Who this round's and the last round's messages came from (me always).
  std::vector<uint8_t> heard_;
  std::vector<uint8_t> heard_before_;
  // Every message made, and per member those not yet sent to it (indices
  // into messages_, oldest first: a member gets them in order).
  std::vector<Message> messages_;
  std::vector<std::deque<uint32_t>> queues_;
  bool decided_ = false;
  AgreementOutcome outcome_;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_AGREEMENT_H_
