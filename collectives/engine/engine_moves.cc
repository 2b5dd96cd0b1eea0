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
  // Heard from since `lane` was last (the peer is alive and that cable
  // works) first; else any other cable to the peer not itself silent (one
  // that carried no traffic yet: the move frame asks it, and only an
  // answer completes the move).
  Lane* best = nullptr;
  auto better = [&](const Lane& other) {
    if (best == nullptr) return true;
    const bool fresh = other.last_heard_ns() > lane.last_heard_ns();
    const bool best_fresh = best->last_heard_ns() > lane.last_heard_ns();
    if (fresh != best_fresh) return fresh;
    return other.last_heard_ns() > best->last_heard_ns();
  };
  for (const auto& other : lanes_) {
    if (other.get() == &lane || other->peer() != lane.peer() ||
        lane_state_[other->index()] != kLaneLive || other->moving() ||
        other->silent_rounds() > 0 || other->via_cable() == lane.via_cable()) {
      continue;
    }
    if (better(*other)) best = other.get();
  }
  return best;
}

void Engine::consider_move(Lane& lane, TimeNs now_ns, TimeNs* wake_ns) {
  if (!lane.recovery() || lane.moving() || lane.generation() >= kMaxMoves ||
      idle_fabric_ == nullptr || now_ns < lane.move_due_ns()) {
    return;
  }
  Lane* carrier = move_carrier(lane);
  if (carrier == nullptr) {
    // Every other cable to the peer is silent too (the peer itself may
    // be): looked at again a timeout later, not at every step.
    lane.set_move_due_ns(now_ns + lane.rto_ns());
    return;
  }
  absl::StatusOr<std::unique_ptr<Endpoint>> endpoint =
      idle_fabric_->open(carrier->device(), lane.peer());
  absl::StatusOr<Destination> own =
      endpoint.ok() ? (*endpoint)->destination() : endpoint.status();
  if (!own.ok()) {
    // Stays where it is; tried again a timeout later.
    lane.set_move_due_ns(now_ns + carrier->rto_ns());
    *wake_ns = std::min(*wake_ns, lane.move_due_ns());
    base::log(base::LogLevel::kWarning,
              "rank %u: cable %u to peer %u stopped answering, but no "
              "endpoint could be opened on %s to move its lane there: %s",
              rank_, lane.via_cable(), lane.peer(), carrier->device(),
              own.status().message());
    return;
  }
  base::log(base::LogLevel::kInfo,
            "rank %u: cable %u to peer %u (%s) stopped answering (%u "
            "retransmissions unanswered, last heard %d ns ago); moving its "
            "lane to cable %u (%s)",
            rank_, lane.via_cable(), lane.peer(), lane.device(),
            lane.silent_rounds(), now_ns - lane.last_heard_ns(),
            carrier->via_cable(), carrier->device());
  lane.begin_move(*std::move(endpoint), carrier->cable(),
                  carrier->via_cable(), lane.generation() + 1);
  carrier->send_move(lane.cable(), lane.pending_generation(), *own,
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
        carrier->send_move(lane.cable(), lane.pending_generation(), *own,
                           /*reply=*/false);
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
    if (lane == nullptr || lane == &carrier || !lane->recovery() ||
        lane_state_[lane->index()] != kLaneLive) {
      continue;
    }
    if (!lane->moving() && n.generation == lane->generation()) {
      // Moved already: the peer did not hear the answer. Again.
      absl::StatusOr<Destination> own = lane->destination();
      if (!n.reply && n.generation > 0 && own.ok()) {
        carrier.send_move(n.cable, n.generation, *own, /*reply=*/true);
      }
      continue;
    }
    if (n.generation <= lane->generation() || n.generation > kMaxMoves ||
        (lane->moving() && n.generation != lane->pending_generation())) {
      continue;  // stale, or out of turn
    }
    // Both ends began this move, each over a cable of its own choosing:
    // the lower rank's choice stands, and the higher rank takes it.
    if (lane->moving() && lane->carrier() != carrier.cable()) {
      if (rank_ < lane->peer()) continue;
      lane->abandon_move();
    }
    // Who connects second sends its resends at once: the one answered,
    // and of two that asked at once, the lower rank.
    bool resend_now = n.reply || (lane->moving() && rank_ < lane->peer());
    if (!lane->moving()) {
      if (n.reply) continue;  // an answer to no move of this side's
      absl::StatusOr<std::unique_ptr<Endpoint>> endpoint =
          idle_fabric_ == nullptr
              ? absl::FailedPreconditionError("no fabric to open endpoints")
              : idle_fabric_->open(carrier.device(), lane->peer());
      if (!endpoint.ok()) {
        base::log(base::LogLevel::kWarning,
                  "rank %u: peer %u moves the lane of cable %u to cable %u, "
                  "but no endpoint could be opened on %s: %s",
                  rank_, lane->peer(), lane->via_cable(),
                  carrier.via_cable(), carrier.device(),
                  endpoint.status().message());
        continue;
      }
      base::log(base::LogLevel::kInfo,
                "rank %u: peer %u found cable %u stopped answering; moving "
                "its lane to cable %u (%s)",
                rank_, lane->peer(), lane->via_cable(), carrier.via_cable(),
                carrier.device());
      lane->begin_move(*std::move(endpoint), carrier.cable(),
                       carrier.via_cable(), n.generation);
      resend_now = false;
    }
    absl::Status s = lane->finish_move(n.destination, resend_now);
    if (!s.ok()) return s;
    if (!n.reply) {
      absl::StatusOr<Destination> own = lane->destination();
      if (own.ok()) {
        carrier.send_move(n.cable, n.generation, *own, /*reply=*/true);
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace weft::collectives::internal
