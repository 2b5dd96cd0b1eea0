#include "collectives/engine/agreement.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/internal/op_kind.h"
#include "fabric/assert.h"
#include "fabric/errors.h"

namespace weft::collectives::internal {
namespace {

uint32_t bitmap_bytes(uint32_t n) { return (n + 7) / 8; }

absl::Status drop(Lane* lane) {
  return OpLane(lane).consume_front(
      [](std::span<const std::byte>) { return absl::OkStatus(); });
}

}  // namespace

void Agreement::Set::merge(const Set& other) {
  flags &= other.flags;
  for (size_t i = 0; i < present.size(); ++i) {
    present[i] = static_cast<uint8_t>(present[i] | other.present[i]);
    failed[i] = static_cast<uint8_t>(failed[i] | other.failed[i]);
  }
}

Agreement::Agreement(OpIdentity identity, uint32_t me, uint32_t flags,
                     std::vector<Lane*> lanes,
                     std::span<const uint32_t> known_failed, StaleFn stale)
    : identity_(identity),
      me_(me),
      lanes_(std::move(lanes)),
      stale_(std::move(stale)),
      suspected_(lanes_.size(), 0),
      heard_(lanes_.size(), 1),  // round 0 heard from everyone
      heard_before_(lanes_.size(), 0),
      queues_(lanes_.size()) {
  WEFT_ASSERT(me_ < size(), "an agreement's own rank lies outside it");
  const uint32_t bytes = bitmap_bytes(size());
  Set own;
  own.flags = flags;
  own.present.assign(bytes, 0);
  own.failed.assign(bytes, 0);
  set(own.present, me_);
  for (uint32_t r : known_failed) {
    if (r >= size() || r == me_) continue;
    set(own.failed, r);
    suspected_[r] = 1;
  }
  for (uint32_t r = 0; r < size(); ++r) {
    WEFT_ASSERT(r == me_ || lanes_[r] != nullptr,
                "an agreement member without a lane");
  }
  collecting_ = own;
  begin_round(1);
}

void Agreement::suspect(uint32_t r) {
  if (r >= size() || r == me_ || suspected_[r] != 0) return;
  suspected_[r] = 1;
}

bool Agreement::done() const {
  if (!decided_) return false;
  for (uint32_t r = 0; r < size(); ++r) {
    if (suspected_[r] == 0 && !queues_[r].empty()) return false;
  }
  return true;
}

void Agreement::begin_round(uint32_t round) {
  round_ = round;
  // The set collected in the last round goes out, and stays as this
  // member's own message to itself; this round adds the sets that arrive.
  heard_before_.swap(heard_);
  std::fill(heard_.begin(), heard_.end(), 0);
  heard_[me_] = 1;
  enqueue(kRound, collecting_);
}

void Agreement::enqueue(uint32_t kind, const Set& value) {
  messages_.push_back(Message{round_, kind, encode(value)});
  const auto index = static_cast<uint32_t>(messages_.size() - 1);
  // Members suspected get it too, while their lanes take it: one reported
  // failed that is alive follows the agreement and learns it was left
  // out. Nothing waits for those sends.
  for (uint32_t r = 0; r < size(); ++r) {
    if (r != me_) queues_[r].push_back(index);
  }
}

void Agreement::decide(const Set& value) {
  conclude(value);
  // Passed on to every member not suspected, so that a decision reaches
  // everyone even if its first taker fails while telling them.
  enqueue(kDecided, value);
}

void Agreement::conclude(const Set& value) {
  decided_ = true;
  outcome_.flags = value.flags;
  outcome_.members.clear();
  outcome_.failed.clear();
  for (uint32_t r = 0; r < size(); ++r) {
    const bool in = test(value.present, r) && !test(value.failed, r);
    (in ? outcome_.members : outcome_.failed).push_back(r);
  }
}

std::vector<std::byte> Agreement::encode(const Set& value) const {
  const uint32_t bytes = bitmap_bytes(size());
  std::vector<std::byte> out(4 + 2 * bytes);
  for (int i = 0; i < 4; ++i) {
    out[i] = static_cast<std::byte>((value.flags >> (8 * i)) & 0xff);
  }
  std::memcpy(out.data() + 4, value.present.data(), bytes);
  std::memcpy(out.data() + 4 + bytes, value.failed.data(), bytes);
  return out;
}

absl::Status Agreement::decode(std::span<const std::byte> payload,
                               uint32_t peer, Set* out) const {
  const uint32_t bytes = bitmap_bytes(size());
  if (payload.size() != 4 + 2 * size_t{bytes}) {
    return make_error(
        absl::StatusCode::kDataLoss, lanes_[peer]->place(ErrorCause::kSequence),
        absl::StrFormat("an agreement message of %u bytes from peer %u; a "
                        "group of %u ranks sends %u",
                        payload.size(), peer, size(), 4 + 2 * bytes));
  }
  out->flags = 0;
  for (int i = 0; i < 4; ++i) {
    out->flags |= static_cast<uint32_t>(payload[i]) << (8 * i);
  }
  out->present.assign(bytes, 0);
  out->failed.assign(bytes, 0);
  std::memcpy(out->present.data(), payload.data() + 4, bytes);
  std::memcpy(out->failed.data(), payload.data() + 4 + bytes, bytes);
  return absl::OkStatus();
}

absl::Status Agreement::read(uint32_t peer, bool* advanced) {
  Lane* lane = lanes_[peer];
  OpLane view(lane);
  for (const FrameHeader* h = view.arrival(0); h != nullptr && !done();
       h = view.arrival(0)) {
    const bool agreement = h->op.kind == kAgreeKind;
    if (!agreement || h->op.group_id != identity_.group_id ||
        h->op.op_seq != identity_.op_seq) {
      // A frame of an earlier agreement of this group, or of an operation
      // that failed: nothing waits for it any more. Anything else (a
      // later agreement, another group's frame) waits for its turn.
      const bool earlier_agreement = agreement &&
                                     h->op.group_id == identity_.group_id &&
                                     seq_after(identity_.op_seq, h->op.op_seq);
      if (!earlier_agreement && !stale_(h->op)) return absl::OkStatus();
      if (absl::Status s = drop(lane); !s.ok()) return s;
      *advanced = true;
      continue;
    }
    const uint32_t kind = h->frame;
    const uint32_t round = h->item;
    if (kind == kRound && !decided_ && round > round_) {
      // A later round's: read in that round. A decision behind it is
      // adopted now (the member that sent both moved on without this
      // one, which may wait on members that will never send).
      return suspected_[peer] == 0 ? adopt_decision_behind(peer)
                                   : absl::OkStatus();
    }
    if (kind != kRound && kind != kDecided) {
      return make_error(
          absl::StatusCode::kDataLoss, lane->place(ErrorCause::kSequence),
          absl::StrFormat("an agreement frame of kind %u from peer %u; kinds "
                          "are %u (round) and %u (decided)",
                          kind, peer, kRound, kDecided));
    }
    Set value;
    absl::Status s = view.consume_front(
        [&](std::span<const std::byte> p) { return decode(p, peer, &value); });
    if (!s.ok()) return s;
    *advanced = true;
    if (decided_) continue;  // the rest of this agreement arrives late
    if (test(value.failed, me_)) {
      // A member reported this one failed when it proposed: whatever is
      // decided leaves this member out (or keeps a member that will
      // never take part again). It stops here, telling no one.
      conclude(value);
      return absl::OkStatus();
    }
    if (kind == kDecided) {
      if (suspected_[peer] == 0) decide(value);
    } else if (round == round_) {
      collecting_.merge(value);
      heard_[peer] = 1;
    }
    // A message of an earlier round (this member moved on once it
    // suspected the sender) changes nothing.
  }
  return absl::OkStatus();
}

absl::Status Agreement::adopt_decision_behind(uint32_t peer) {
  const Lane* lane = lanes_[peer];
  for (size_t i = 1; i < lane->inbox_size(); ++i) {
    const FrameHeader& h = lane->inbox(i).header;
    if (h.op.kind != kAgreeKind || h.op.group_id != identity_.group_id ||
        h.op.op_seq != identity_.op_seq || h.frame != kDecided) {
      continue;
    }
    Set value;
    absl::Status s = decode(lane->payload(lane->inbox(i)), peer, &value);
    if (!s.ok()) return s;
    decide(value);
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

bool Agreement::all_sent() const {
  return std::all_of(queues_.begin(), queues_.end(),
                     [](const std::deque<uint32_t>& q) { return q.empty(); });
}

absl::Status Agreement::send_pending(bool* advanced) {
  for (uint32_t r = 0; r < size(); ++r) {
    while (!queues_[r].empty()) {
      const Message& m = messages_[queues_[r].front()];
      absl::StatusOr<SendOutcome> sent = OpLane(lanes_[r]).try_send([&] {
        DataFrame f;
        f.op = identity_;
        f.item = m.round;
        f.frame = m.kind;
        f.ack_now = true;  // the peer's answer waits on it
        f.payload = m.payload;
        return f;
      });
      if (!sent.ok()) {
        // The lane failed: this member stops sending there and waits for
        // nothing from it.
        suspect(r);
        queues_[r].clear();
        *advanced = true;
        break;
      }
      if (*sent == SendOutcome::kNoRoom) break;
      queues_[r].pop_front();
      *advanced = true;
    }
  }
  return absl::OkStatus();
}

bool Agreement::round_complete() const {
  for (uint32_t r = 0; r < size(); ++r) {
    if (suspected_[r] == 0 && heard_[r] == 0) return false;
  }
  return true;
}

absl::Status Agreement::advance(bool* advanced) {
  for (;;) {
    if (absl::Status s = send_pending(advanced); !s.ok()) return s;
    // Suspected members are read too: a round's message from one counts
    // as from anyone (a decision from one does not).
    for (uint32_t r = 0; r < size(); ++r) {
      if (r == me_) continue;
      if (absl::Status s = read(r, advanced); !s.ok()) return s;
    }
    if (decided_ || !round_complete()) break;
    if (heard_ == heard_before_) {
      decide(collecting_);
    } else {
      begin_round(round_ + 1);
    }
    *advanced = true;
  }
  return send_pending(advanced);
}

void Agreement::mark_waiting(std::span<uint8_t> waiting) const {
  for (uint32_t r = 0; r < size(); ++r) {
    if (r == me_ || suspected_[r] != 0) continue;
    if ((!decided_ && heard_[r] == 0) || !queues_[r].empty()) {
      waiting[lanes_[r]->index()] = 1;
    }
  }
}

uint32_t Agreement::awaited() const {
  for (uint32_t r = 0; r < size(); ++r) {
    if (r == me_ || suspected_[r] != 0) continue;
    if ((!decided_ && heard_[r] == 0) || !queues_[r].empty()) return r;
  }
  return kNoPeer;
}

std::string Agreement::outstanding() const {
  std::vector<uint32_t> silent;
  for (uint32_t r = 0; r < size(); ++r) {
    if (r != me_ && suspected_[r] == 0 && !decided_ && heard_[r] == 0) {
      silent.push_back(r);
    }
  }
  size_t unsent = 0;
  for (uint32_t r = 0; r < size(); ++r) {
    if (suspected_[r] == 0) unsent += queues_[r].size();
  }
  return absl::StrFormat(
      "round %u, %s; %u message(s) not sent yet", round_,
      silent.empty()
          ? std::string("heard from every member not suspected")
          : "waiting on group rank(s) " + absl::StrJoin(silent, ", "),
      unsent);
}

}  // namespace weft::collectives::internal
