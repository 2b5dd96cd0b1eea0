// Engine: moving a lane off a cable that stopped answering to another cable
// to the same peer (lane.h, "Moving"). The side that finds the cable cut
// opens an endpoint on the other cable's device and sends its destination
// in a kMove frame over that cable's lane, again every round-trip timeout
// until answered; the peer opens its own, connects, answers with its
// destination and waits to hear over the new endpoint; the first side
// connects on the answer and sends what was not acknowledged. Both sides
// finding the cut at once each connect on the other's kMove and answer it;
// when they chose different cables, the lower rank's choice stands.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/logging.h"
#include "collectives/engine/engine.h"

namespace weft::collectives::internal {

Lane* Engine::move_carrier(const Lane& lane) const {
  Lane* best = nullptr;
  for (const auto& other : lanes_) {
    if (other.get() == &lane || other->peer() != lane.peer() ||
        lane_state_[other->index()] != kLaneLive || other->moving() ||
        other->silent_rounds() > 0 || other->via_cable() == lane.via_cable() ||
        other->last_heard_ns() <= lane.last_heard_ns()) {
      continue;
    }
    if (best == nullptr || other->last_heard_ns() > best->last_heard_ns()) {
      best = other.get();
    }
  }
  return best;
}

absl::StatusOr<std::unique_ptr<Endpoint>> Engine::open_on(uint32_t peer,
                                                          uint32_t cable) {
  const Lane* home = lane(peer, cable);
  if (idle_fabric_ == nullptr || !idle_fabric_->lanes_may_move() ||
      home == nullptr) {
    return absl::FailedPreconditionError(
        "no fabric to open an endpoint with, or no such cable");
  }
  return idle_fabric_->open(home->home_device(), peer);
}

void Engine::consider_move(Lane& lane, TimeNs now_ns, TimeNs* wake_ns) {
  if (!lane.recovery() || lane.moving() || lane.generation() >= kMaxMoves ||
      idle_fabric_ == nullptr || !idle_fabric_->lanes_may_move() ||
      now_ns < lane.move_due_ns()) {
    return;
  }
  // Looked at again a timeout later, not at every step, whatever happens.
  lane.set_move_due_ns(now_ns + lane.rto_ns());
  Lane* carrier = move_carrier(lane);
  if (carrier == nullptr) {
    // No other cable to the peer was heard from since: ask them. An answer
    // shows the peer alive and that cable working; none (the peer itself
    // stalled or died) moves nothing.
    for (const auto& other : lanes_) {
      if (other.get() != &lane && other->peer() == lane.peer() &&
          lane_state_[other->index()] == kLaneLive && !other->moving() &&
          other->silent_rounds() == 0) {
        (void)other->probe_cable();
      }
    }
    return;
  }
  const uint32_t via = carrier->via_cable();
  absl::StatusOr<std::unique_ptr<Endpoint>> endpoint =
      open_on(lane.peer(), via);
  absl::StatusOr<Destination> own =
      endpoint.ok() ? (*endpoint)->destination() : endpoint.status();
  if (!own.ok()) {
    base::log(base::LogLevel::kWarning,
              "rank %u: cable %u to peer %u stopped answering, but no "
              "endpoint could be opened on cable %u to move its lane there: "
              "%s",
              rank_, lane.via_cable(), lane.peer(), via,
              own.status().message());
    return;
  }
  base::log(base::LogLevel::kInfo,
            "rank %u: cable %u to peer %u (%s) stopped answering (%u "
            "retransmissions unanswered, last heard %d ns ago); moving its "
            "lane to cable %u (%s)",
            rank_, lane.via_cable(), lane.peer(), lane.device(),
            lane.silent_rounds(), now_ns - lane.last_heard_ns(), via,
            carrier->device());
  lane.begin_move(*std::move(endpoint), carrier->cable(), via,
                  lane.generation() + 1);
  carrier->send_move(lane.cable(), lane.pending_generation(), via, *own,
                     /*reply=*/false);
  lane.set_move_due_ns(now_ns + carrier->rto_ns());
  *wake_ns = std::min(*wake_ns, lane.move_due_ns());
  moving_.push_back(lane.index());
}

void Engine::resend_moves(TimeNs now_ns, TimeNs* wake_ns) {
  std::erase_if(moving_, [&](uint32_t index) {
    Lane& lane = *lanes_[index];
    if (!lane.moving()) return true;
    if (now_ns >= lane.move_due_ns()) {
      Lane* carrier = this->lane(lane.peer(), lane.carrier());
      absl::StatusOr<Destination> own = lane.move_destination();
      if (carrier != nullptr && own.ok()) {
        carrier->send_move(lane.cable(), lane.pending_generation(),
                           lane.pending_via(), *own, /*reply=*/false);
      }
      lane.set_move_due_ns(
          now_ns + (carrier != nullptr ? carrier->rto_ns() : kNsPerMs));
    }
    *wake_ns = std::min(*wake_ns, lane.move_due_ns());
    return false;
  });
}

absl::Status Engine::serve_moves(Lane& carrier) {
  for (const MoveNotice& n : carrier.take_moves()) {
    Lane* lane = this->lane(carrier.peer(), n.cable);
    if (lane == nullptr || !lane->recovery() ||
        lane_state_[lane->index()] != kLaneLive ||
        this->lane(carrier.peer(), n.via_cable) == nullptr) {
      continue;
    }
    if (!lane->moving() && n.generation == lane->generation()) {
      // Moved already: the peer did not hear the answer. Again.
      absl::StatusOr<Destination> own = lane->destination();
      if (!n.reply && n.generation > 0 && own.ok()) {
        carrier.send_move(n.cable, n.generation, lane->via_cable(), *own,
                          /*reply=*/true);
      }
      continue;
    }
    if (n.via_cable == lane->via_cable()) continue;  // where it is already
    if (n.generation <= lane->generation() || n.generation > kMaxMoves ||
        (lane->moving() && n.generation != lane->pending_generation())) {
      continue;  // stale, or out of turn
    }
    // Both ends began this move, each to a cable of its own choosing: the
    // lower rank's choice stands, and the higher rank takes it.
    if (lane->moving() && lane->pending_via() != n.via_cable) {
      if (rank_ < lane->peer()) continue;
      lane->abandon_move();
    }
    // Who connects second sends its resends at once: the one answered,
    // and of two that asked at once, the lower rank.
    bool resend_now = n.reply || (lane->moving() && rank_ < lane->peer());
    if (!lane->moving()) {
      if (n.reply) continue;  // an answer to no move of this side's
      absl::StatusOr<std::unique_ptr<Endpoint>> endpoint =
          open_on(lane->peer(), n.via_cable);
      if (!endpoint.ok()) {
        base::log(base::LogLevel::kWarning,
                  "rank %u: peer %u moves the lane of cable %u to cable %u, "
                  "but no endpoint could be opened there: %s",
                  rank_, lane->peer(), lane->via_cable(), n.via_cable,
                  endpoint.status().message());
        continue;
      }
      base::log(base::LogLevel::kInfo,
                "rank %u: peer %u found cable %u stopped answering; moving "
                "its lane to cable %u",
                rank_, lane->peer(), lane->via_cable(), n.via_cable);
      lane->begin_move(*std::move(endpoint), carrier.cable(), n.via_cable,
                       n.generation);
      resend_now = false;
    }
    bool refused = false;
    absl::Status s = lane->finish_move(n.destination, resend_now, &refused);
    if (refused) {
      // The peer's endpoint is not one this side can reach: the lane stays
      // where it is (its operations end at their deadline if it is cut).
      base::log(base::LogLevel::kWarning,
                "rank %u: moving the lane of cable %u to peer %u failed: %s",
                rank_, n.cable, lane->peer(), s.message());
      continue;
    }
    if (!s.ok()) return s;
    if (!n.reply) {
      absl::StatusOr<Destination> own = lane->destination();
      if (own.ok()) {
        carrier.send_move(n.cable, n.generation, n.via_cable, *own,
                          /*reply=*/true);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace weft::collectives::internal
