// Engine: what it does after a failure (engine.h): the agreement behind
// Group::agree() and shrink() (agreement.h), run on a failed engine too;
// the epochs shrink() begins, with the groups and agreements they retire
// and whose late frames are dropped; and the ranks it learned are gone.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/engine/engine.h"
#include "collectives/engine/op_lane.h"
#include "collectives/internal/op_kind.h"
#include "fabric/errors.h"

namespace weft::collectives::internal {
namespace {

// How long, in deadlines of the agreement, its last messages to members it
// suspected keep going out (a member reported failed may be alive, slow,
// and waiting to learn it was left out).
constexpr TimeNs kLingeringDeadlines = 8;

}  // namespace

void Engine::register_group(uint32_t group_id) {
  if (std::find(live_ids_.begin(), live_ids_.end(), group_id) ==
      live_ids_.end()) {
    live_ids_.push_back(group_id);
  }
}

void Engine::note_dead(uint32_t peer) {
  if (peer == kNoPeer || peer == rank_) return;
  auto at = std::lower_bound(known_dead_.begin(), known_dead_.end(), peer);
  if (at == known_dead_.end() || *at != peer) known_dead_.insert(at, peer);
}

void Engine::suspect(uint32_t peer) {
  note_dead(peer);
  if (agreement_ == nullptr) return;
  const std::vector<uint32_t>& members = agreement_->members;
  for (uint32_t r = 0; r < members.size(); ++r) {
    if (members[r] == peer) agreement_->agreement->suspect(r);
  }
}

bool Engine::retired(const OpIdentity& op) const {
  if (std::find(retired_ids_.begin(), retired_ids_.end(), op.group_id) !=
      retired_ids_.end()) {
    return true;
  }
  if (op.kind != kAgreeKind) return false;
  for (const auto& [group_id, seq] : agreed_) {
    if (group_id == op.group_id && !seq_after(op.op_seq, seq)) return true;
  }
  return false;
}

bool Engine::stale(const OpIdentity& op) const {
  return retired(op) ||
         (op.kind != kAgreeKind && std::find(live_ids_.begin(), live_ids_.end(),
                                             op.group_id) != live_ids_.end());
}

void Engine::flush_lingering(bool* advanced) {
  if (clock_.now_ns() < lingering_until_ns_) {
    (void)lingering_->send_pending(advanced);
    if (!lingering_->all_sent()) return;
  }
  lingering_.reset();  // all sent, or past its time
}

absl::Status Engine::drop_retired() {
  for (const auto& lane : lanes_) {
    if (lane_state_[lane->index()] == kLaneDead) continue;
    while (lane->inbox_size() > 0 && retired(lane->inbox(0).header.op)) {
      absl::Status s =
          OpLane(lane.get()).consume_front([](std::span<const std::byte>) {
            return absl::OkStatus();
          });
      if (!s.ok()) return s;
      moved_ = true;
    }
  }
  return absl::OkStatus();
}

std::shared_ptr<OpState> Engine::submit_agreement(AgreementRun run,
                                                  TimeNs timeout_ns) {
  if (agreement_ != nullptr || !queue_.empty()) {
    return finished(make_error(
        absl::StatusCode::kFailedPrecondition,
        ErrorPlace{rank_, kNoPeer, "", ErrorCause::kBadInput},
        agreement_ != nullptr
            ? "another agreement (agree() or shrink()) is running on this "
              "group's engine; wait for it first"
            : "operations are still queued on this group's engine; wait for "
              "them (or revoke the group) before agree() or shrink()"));
  }
  auto op = std::make_shared<OpState>();
  op->timeout_ns = timeout_ns;
  op->deadline_ns = deadline_after(clock_.now_ns(), timeout_ns);
  agreement_ = std::make_unique<AgreementRun>(std::move(run));
  agreement_op_ = op;
  return op;
}

void Engine::begin_epoch(std::span<const uint32_t> members) {
  retired_ids_.insert(retired_ids_.end(), live_ids_.begin(), live_ids_.end());
  live_ids_.clear();
  for (const auto& lane : lanes_) {
    if (std::find(members.begin(), members.end(), lane->peer()) ==
        members.end()) {
      lane_state_[lane->index()] = kLaneDetached;
    }
  }
  failure_ = absl::OkStatus();
  abort_requested_.store(false, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(revoke_mu_);
    revoke_requested_.store(false, std::memory_order_relaxed);
    revoke_reason_.clear();
  }
  ++epoch_;
}

Progress Engine::run_agreement() {
  AgreementRun& run = *agreement_;
  Agreement& a = *run.agreement;
  OpState& op = *agreement_op_;
  bool advanced = false;
  auto end = [&](absl::Status status) {
    op.status = std::move(status);
    op.done = true;
    agreement_.reset();
    agreement_op_.reset();
    return Progress::done();
  };
  if (abort_requested_.load(std::memory_order_relaxed)) {
    absl::Status cancelled =
        make_error(absl::StatusCode::kCancelled,
                   ErrorPlace{rank_, kNoPeer, "", ErrorCause::kCancelled},
                   "abort() was called; the agreement was cancelled");
    if (failure_.ok()) fail(cancelled, rank_, /*every_op=*/true);
    return end(cancelled);
  }
  // A lane's error: an abort from the peer fails this engine's group (if
  // it had not failed) but says nothing of the peer; any other error of a
  // member's lane has the agreement suspect it.
  auto lane_failed = [&](const Lane& lane, absl::Status s) {
    if (lane_state_[lane.index()] == kLaneDetached) {
      lane_state_[lane.index()] = kLaneDead;  // outside every group now
      return;
    }
    if (s.code() != absl::StatusCode::kAborted) suspect(lane.peer());
    if (failure_.ok()) {
      const uint32_t origin = lane.abort_origin().value_or(rank_);
      fail(std::move(s), origin, /*every_op=*/true);
    }
  };
  for (const auto& lane : lanes_) {
    if (lane_state_[lane->index()] == kLaneDead) continue;
    absl::Status s = lane->poll(poll_batch_, &advanced);
    if (!s.ok()) lane_failed(*lane, std::move(s));
    if (lane->peer_departed()) suspect(lane->peer());
  }
  // Relayed frames go on while the agreement runs (a pair's only cable
  // died: lane.h, "Relaying").
  (void)serve_relays(&advanced, lane_failed);
  TimeNs now_ns = clock_.now_ns();
  if (watch_ && now_ns >= next_watch_ns_) {
    next_watch_ns_ = deadline_after(now_ns, watch_interval_ns_);
    // A watch names one gone rank a call, each in turn.
    for (size_t i = 0; i <= run.members.size(); ++i) {
      const absl::Status said = next_departure();
      const std::optional<ErrorPlace> from = error_place(said);
      if (said.ok() || !from.has_value() || from->peer == kNoPeer ||
          from->peer == rank_) {
        break;
      }
      const bool known = std::binary_search(known_dead_.begin(),
                                            known_dead_.end(), from->peer);
      suspect(from->peer);
      if (known) break;
    }
  }
  if (absl::Status s = a.advance(&advanced); !s.ok()) {
    // A member that sent what no agreement sends is left out.
    const std::optional<ErrorPlace> from = error_place(s);
    if (from.has_value()) suspect(from->peer);
    advanced = true;
  }
  std::fill(waiting_.begin(), waiting_.end(), 0);
  a.mark_waiting(waiting_);
  const TimeNs probe_ns =
      std::clamp<TimeNs>(op.timeout_ns / kProbesPerDeadline,
                         RecoveryOptions::kMinRtoNs, kMaxProbeAfterNs);
  now_ns = clock_.now_ns();
  TimeNs wake_ns = kNeverNs;
  bool again = false;
  for (const auto& lane : lanes_) {
    if (lane_state_[lane->index()] == kLaneDead) continue;
    const Lane::Watch watch{waiting_[lane->index()] != 0, probe_ns};
    absl::Status s = lane->service_at(
        now_ns, watch, [] { return kNoPeer; }, &again, &wake_ns);
    if (!s.ok()) lane_failed(*lane, std::move(s));
  }
  advanced |= again;
  if (a.done()) {
    agreed_.emplace_back(a.identity().group_id, a.identity().op_seq);
    absl::Status decided = run.on_decided(a.outcome());
    if (!a.all_sent()) {
      lingering_ = std::move(run.agreement);
      lingering_until_ns_ =
          deadline_after(now_ns, kLingeringDeadlines * op.timeout_ns);
    }
    return end(std::move(decided));
  }
  if (now_ns >= op.deadline_ns) {
    const uint32_t awaited = a.awaited();
    const uint32_t peer = awaited == kNoPeer ? kNoPeer : run.members[awaited];
    absl::Status late = make_error(
        absl::StatusCode::kDeadlineExceeded,
        ErrorPlace{rank_, peer, "", ErrorCause::kDeadline},
        absl::StrFormat("%s did not decide within its %d ns deadline: %s. "
                        "Check that every rank still alive calls it (the "
                        "same number of agree() and shrink() calls on the "
                        "same group); a rank that died silently is named "
                        "only by a watch (Group::watch)",
                        describe_op(a.identity()), op.timeout_ns,
                        a.outstanding()));
    if (failure_.ok()) fail(late, rank_, /*every_op=*/true);
    return end(std::move(late));
  }
  moved_ = advanced;
  if (again) return Progress::advanced();
  wake_ns = std::min(wake_ns, op.deadline_ns);
  if (watch_) wake_ns = std::min(wake_ns, next_watch_ns_);
  return waiting(now_ns, wake_ns, advanced);
}

}  // namespace weft::collectives::internal
