// Engine: routing around a pair's only dead cable (lane.h, "Relaying").
// The side that finds the lane cut asks the peer through other ranks (a
// relayed probe, again each timeout while the lane stays cut); a rank
// that is handed a relayed frame of one of its lanes relays that lane
// from then on and answers through relays, and so does the asking side
// once it hears that answer. Frames then go round the lanes to the other
// ranks in turn, so the detour's load is spread over every rank that
// answers; each forwards what it is handed for another over its own lane
// to that rank, or drops it when that lane has no relay frame free or
// stopped answering (never waiting: the relayed lane's retransmission
// repairs the loss), and never relays a frame twice.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/logging.h"
#include "collectives/engine/engine.h"

namespace weft::collectives::internal {
namespace {

// Whether `hop` may carry a relayed frame towards `to` (first hop: the
// rank it goes to is not `to`) or to `to` (second hop).
bool can_carry(const Lane& hop) {
  return !hop.relayed() && !hop.moving() && hop.silent_rounds() == 0 &&
         hop.can_forward();
}

}  // namespace

bool Engine::relayable(const Lane& lane) const {
  return relays_allowed_ && lane.recovery() && idle_fabric_ != nullptr &&
         idle_fabric_->lanes_may_move() && !lane.relayed() && !lane.moving() &&
         movable_[lane.index()] == 0 && lane_state_[lane.index()] == kLaneLive;
}

bool Engine::relay_frames_for(Lane& lane) {
  if (lane.can_forward() || lane.relay_frames_set()) return true;
  if (idle_fabric_ == nullptr) return false;
  const uint64_t bytes = uint64_t{lane.relay_slots()} * lane.frame_bytes();
  absl::StatusOr<Slab*> slab = idle_fabric_->create_slab(bytes);
  if (!slab.ok()) {
    base::log(base::LogLevel::kWarning,
              "rank %u: no memory for the relay frames of the lane to peer "
              "%u (%u bytes): %s; it carries no relayed frame",
              rank_, lane.peer(), bytes, slab.status().message());
    return false;
  }
  absl::StatusOr<Frame> frames = (*slab)->frame(0, bytes);
  WEFT_ASSERT(frames.ok(), "relay frames outside their slab");
  lane.set_relay_frames(*frames);
  return true;
}

void Engine::consider_relay(Lane& lane, TimeNs now_ns, TimeNs* wake_ns) {
  if (!relayable(lane) || now_ns < lane.move_due_ns()) return;
  // A peer whose process is gone is named by the watch, not asked. (The
  // relays are lanes that answer: relay() takes no lane that has frames
  // unanswered, so a rank cut off from every other asks no one.)
  if (departure_known(now_ns)) return;
  // Nothing changes, not even when the engine wakes, until a probe goes;
  // then it is asked again a timeout later, not at every step.
  if (relay(lane.peer(), lane.relay_probe())) {
    lane.note_relay_probe();
    lane.set_move_due_ns(now_ns + lane.rto_ns());
    *wake_ns = std::min(*wake_ns, lane.move_due_ns());
    base::log(base::LogLevel::kInfo,
              "rank %u: the only cable to peer %u (%s) stopped answering "
              "(%u retransmissions unanswered, last heard %d ns ago); asking "
              "it through other ranks",
              rank_, lane.peer(), lane.device(), lane.silent_rounds(),
              now_ns - lane.last_heard_ns());
  }
}

absl::Status Engine::next_departure() {
  if (!peeked_.ok()) return std::exchange(peeked_, absl::OkStatus());
  return watch_();
}

bool Engine::departure_known(TimeNs now_ns) {
  if (!watch_) return false;
  if (!peeked_.ok()) return true;
  if (now_ns < next_watch_ns_) return false;
  peeked_ = watch_();
  if (!peeked_.ok()) return true;  // consult_watch(), due, reports it
  next_watch_ns_ = deadline_after(now_ns, watch_interval_ns_);
  return false;
}

void Engine::start_relay(Lane& lane) {
  const std::string cable = lane.device();
  auto end = std::make_unique<RelayEndpoint>(
      EndpointInfo{rank_, lane.peer(), "relayed"}, lane.max_parts(), *this);
  RelayEndpoint* raw = end.get();
  if (absl::Status s = lane.relay(std::move(end)); !s.ok()) {
    base::log(base::LogLevel::kWarning,
              "rank %u: relaying the lane to peer %u failed: %s", rank_,
              lane.peer(), s.message());
  }
  relay_ends_[lane.index()] = raw;
  relayed_lanes_.push_back(lane.index());
  base::log(base::LogLevel::kInfo,
            "rank %u: peer %u hears this rank through other ranks; its lane "
            "(cable %s) is relayed from now on",
            rank_, lane.peer(), cable);
}

bool Engine::relay(uint32_t to, std::span<const std::byte> frame) {
  // The first kMaxRelays lanes, in the engine's order, to ranks other than
  // `to` that answer: each takes the next frame in turn.
  std::array<Lane*, kMaxRelays> carriers{};
  uint32_t count = 0;
  for (const auto& hop : lanes_) {
    if (count == kMaxRelays) break;
    if (hop->peer() != to && lane_state_[hop->index()] == kLaneLive &&
        !hop->relayed() && !hop->moving() && hop->silent_rounds() == 0) {
      carriers[count++] = hop.get();
    }
  }
  for (uint32_t k = 0; k < count; ++k) {
    Lane& hop = *carriers[(next_carrier_ + k) % count];
    if (relay_frames_for(hop) && hop.forward(frame, kFlagRelayTo, to)) {
      next_carrier_ = (next_carrier_ + k + 1) % count;
      return true;
    }
  }
  return false;
}

absl::Status Engine::serve_relays(
    bool* advanced, const std::function<void(Lane&, absl::Status)>& failed) {
  for (const auto& hop : lanes_) {
    if (!hop->has_relayed_frames()) continue;
    *advanced = true;
    for (const RelayedFrame& f : hop->take_relayed_frames()) {
      if (f.flag == kFlagRelayTo) {
        // For another rank: over a lane of this one to it, never relayed
        // again.
        bool sent = false;
        for (const auto& out : lanes_) {
          if (out->peer() == f.rank && f.rank != rank_ &&
              lane_state_[out->index()] == kLaneLive &&
              relay_frames_for(*out) && can_carry(*out) &&
              out->forward(f.bytes, kFlagRelayFrom, hop->peer())) {
            sent = true;
            break;
          }
        }
        if (!sent) hop->note_forward_dropped();
        continue;
      }
      // From rank f.rank, for its lane to this one.
      Lane* lane = nullptr;
      for (const auto& l : lanes_) {
        if (l->peer() == f.rank && movable_[l->index()] == 0) lane = l.get();
      }
      if (f.flag != kFlagRelayFrom || lane == nullptr ||
          (!lane->relayed() && !relayable(*lane))) {
        hop->note_forward_dropped();
        continue;
      }
      if (!lane->relayed()) start_relay(*lane);
      relay_ends_[lane->index()]->deliver(f.bytes);
    }
  }
  for (const uint32_t index : relayed_lanes_) {
    Lane& lane = *lanes_[index];
    if (lane_state_[index] == kLaneDead) continue;
    if (relay_ends_[index]->flush()) *advanced = true;
    if (absl::Status s = lane.poll(poll_batch_, advanced); !s.ok()) {
      failed(lane, std::move(s));
    }
  }
  return absl::OkStatus();
}

}  // namespace weft::collectives::internal
