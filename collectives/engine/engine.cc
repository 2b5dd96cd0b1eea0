#include "collectives/engine/engine.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "base/logging.h"
#include "collectives/engine/op_lane.h"
#include "collectives/internal/op_kind.h"
#include "fabric/assert.h"
#include "fabric/errors.h"

namespace weft::collectives::internal {
namespace {

uint64_t lane_key(uint32_t peer, uint32_t cable) {
  return (uint64_t{peer} << 32) | cable;
}

}  // namespace

Engine::Engine(const Clock& clock, uint32_t rank,
               std::vector<std::unique_ptr<Lane>> lanes,
               uint32_t ranks_sharing_core)
    : clock_(clock),
      rank_(rank),
      lanes_(std::move(lanes)),
      poll_batch_(Endpoint::kMaxPollBatch),
      waiting_(lanes_.size(), 0),
      prefetch_(ranks_sharing_core >= kPrefetchMinRanks),
      lane_state_(lanes_.size(), kLaneLive),
      movable_(lanes_.size(), 0),
      relay_ends_(lanes_.size(), nullptr) {
  for (uint32_t i = 0; i < lanes_.size(); ++i) {
    lanes_[i]->set_index(i);
    by_peer_.emplace_back(lane_key(lanes_[i]->peer(), lanes_[i]->cable()),
                          lanes_[i].get());
  }
  std::sort(by_peer_.begin(), by_peer_.end());
  // A lane can move only where its peer has another (sorted by peer:
  // neighbours).
  for (size_t i = 0; i + 1 < by_peer_.size(); ++i) {
    if (by_peer_[i].second->peer() == by_peer_[i + 1].second->peer()) {
      movable_[by_peer_[i].second->index()] = 1;
      movable_[by_peer_[i + 1].second->index()] = 1;
    }
  }
}

Engine::~Engine() {
  // Queued operations may point into buffers already freed: never run
  // them here.
  if (failure_.ok() && queue_.empty() && agreement_ == nullptr) {
    step_until(deadline_after(clock_.now_ns(), kLingerNs),
               [](const Progress& p) { return p.is_done(); });
  }
  // The operations, then the lanes (whose endpoints close, ending any send
  // or receive still posted on registered memory), then the registrations
  // still held, so that handles outliving the group do nothing.
  runner_ = nullptr;
  queue_.clear();
  by_peer_.clear();
  lanes_.clear();
  if (user_memory_ != nullptr) user_memory_->detach();
}

void Engine::step_until(TimeNs until_ns,
                        const std::function<bool(const Progress&)>& finished) {
  TimeNs last_ns = clock_.now_ns();
  uint32_t still = 0;
  for (;;) {
    const Progress p = progress();
    if (finished(p)) return;
    if (p.state == Progress::State::kWaiting && !moved()) {
      idle(std::min(p.wake_at_ns, until_ns));
    }
    const TimeNs now_ns = clock_.now_ns();
    if (now_ns >= until_ns) return;
    still = now_ns == last_ns ? still + 1 : 0;
    if (still == kLingerStillSteps) return;
    last_ns = now_ns;
  }
}

void Engine::set_idle_fabric(Fabric* fabric) {
  idle_fabric_ = fabric;
  user_memory_ =
      fabric != nullptr ? std::make_shared<UserMemory>(*fabric) : nullptr;
}

void Engine::watch(std::function<absl::Status()> check, TimeNs interval_ns) {
  WEFT_ASSERT(interval_ns > 0, "a watch needs an interval above 0");
  watch_ = std::move(check);
  peeked_ = absl::OkStatus();
  watch_interval_ns_ = interval_ns;
  next_watch_ns_ = watch_ ? clock_.now_ns() : kNeverNs;
}

Lane* Engine::lane(uint32_t peer, uint32_t cable) const {
  const uint64_t key = lane_key(peer, cable);
  auto it = std::lower_bound(by_peer_.begin(), by_peer_.end(), key,
                             [](const std::pair<uint64_t, Lane*>& e,
                                uint64_t k) { return e.first < k; });
  return it == by_peer_.end() || it->first != key ? nullptr : it->second;
}

std::shared_ptr<OpState> Engine::finished(absl::Status status) {
  auto op = std::make_shared<OpState>();
  op->done = true;
  op->status = std::move(status);
  return op;
}

absl::Status Engine::refusal() const {
  // A revoked group refuses with the revocation itself: who revoked and
  // why, the same on every rank it reached (ULFM's MPI_ERR_REVOKED).
  if (const std::optional<ErrorPlace> place = error_place(failure_);
      place && place->cause == ErrorCause::kRevoked) {
    return failure_;
  }
  return make_error(
      absl::StatusCode::kFailedPrecondition,
      ErrorPlace{rank_, kNoPeer, "", ErrorCause::kGroupFailed},
      absl::StrFormat("this group failed earlier and refuses new work; "
                      "rebuild it. The first error was: %s",
                      failure_.message()));
}

void Engine::revoke(std::string reason) {
  {
    std::lock_guard<std::mutex> lock(revoke_mu_);
    if (revoke_requested_.load(std::memory_order_relaxed)) return;
    if (reason.size() > kMaxAbortText) reason.resize(kMaxAbortText);
    revoke_reason_ = std::move(reason);
  }
  revoke_requested_.store(true, std::memory_order_release);
}

absl::Status Engine::revoked_error(std::string_view reason) const {
  return make_error(
      absl::StatusCode::kAborted,
      ErrorPlace{rank_, kNoPeer, "", ErrorCause::kRevoked},
      absl::StrFormat("rank %u revoked the group: %s", rank_, reason));
}

std::shared_ptr<OpState> Engine::submit(std::unique_ptr<OpRunner> runner,
                                        TimeNs timeout_ns, uint32_t epoch) {
  if (epoch != epoch_) {
    return finished(
        make_error(absl::StatusCode::kFailedPrecondition,
                   ErrorPlace{rank_, kNoPeer, "", ErrorCause::kGroupFailed},
                   "this group was shrunk and refuses new work; use the group "
                   "shrink() returned"));
  }
  if (agreement_ != nullptr) {
    return finished(make_error(
        absl::StatusCode::kFailedPrecondition,
        ErrorPlace{rank_, kNoPeer, "", ErrorCause::kBadInput},
        "an agreement (agree() or shrink()) is running; start operations "
        "once it has ended"));
  }
  if (!failure_.ok()) return finished(refusal());
  if (queue_.size() >= kMaxQueued) {
    return finished(make_error(
        absl::StatusCode::kResourceExhausted,
        ErrorPlace{rank_, kNoPeer, "", ErrorCause::kResource},
        absl::StrFormat("%u operations are queued already; wait for some "
                        "to finish before starting more",
                        queue_.size())));
  }
  auto op = std::make_shared<OpState>();
  op->runner = std::move(runner);
  op->timeout_ns = timeout_ns;
  queue_.push_back(op);
  return op;
}

void Engine::prefetch_state() const {
  // A scheduler running many ranks on one core steps this one long after
  // its last step: its lanes and its running operation are cold. Asking for
  // all their lines at once costs one wait instead of one per line.
  for (const auto& lane : lanes_) lane->prefetch();
  if (runner_ != nullptr) runner_->prefetch_state();
}

absl::Status Engine::poll_lanes(bool* advanced) {
  // A lane has at most kMaxDepth receives, as many data sends, an
  // acknowledgement, an abort and a move outstanding: one poll drains it.
  // (Its sends, relay frames included, stay within Endpoint::kMaxSends.)
  static_assert(Endpoint::kMaxPollBatch >=
                    GroupOptions::kMaxDepth + Endpoint::kMaxSends,
                "one poll must drain a lane (see progress())");
  bool relayed_frames = false;
  for (const auto& lane : lanes_) {
    const uint8_t state = lane_state_[lane->index()];
    if (state == kLaneDead) continue;
    absl::Status s = lane->poll(poll_batch_, advanced);
    if (!s.ok() && state == kLaneDetached) {
      lane_state_[lane->index()] = kLaneDead;
      continue;
    }
    if (s.ok() && lane->has_moves()) s = serve_moves(*lane);
    if (!s.ok()) return s;
    relayed_frames |= lane->has_relayed_frames();
  }
  // Relayed frames are served once every lane was polled, so a frame that
  // came over a lane's own cable counts before one a relay brought.
  if (!relayed_frames && relayed_lanes_.empty()) return absl::OkStatus();
  absl::Status first;
  (void)serve_relays(advanced, [&](Lane& lane, absl::Status s) {
    if (lane_state_[lane.index()] == kLaneDetached) {
      lane_state_[lane.index()] = kLaneDead;
    } else if (first.ok()) {
      first = std::move(s);
    }
  });
  return first;
}

absl::Status Engine::run_queue(bool* advanced) {
  while (!queue_.empty()) {
    OpState& op = *queue_.front();
    if (!running_) {
      running_ = true;
      runner_ = op.runner.get();
      op.deadline_ns = deadline_after(clock_.now_ns(), op.timeout_ns);
      absl::Status s = op.runner->start();
      if (!s.ok()) return s;
    }
    absl::Status s = op.runner->advance(advanced);
    if (!s.ok()) return s;
    if (!op.runner->done()) {
      if (prefetch_) op.runner->prefetch_next();
      return absl::OkStatus();
    }
    // Done: every send completed, so nothing reads user memory now but
    // a resend to come, which goes from the lane's own frame from here;
    // every frame was consumed, so every receive posted into user memory
    // has completed (receive_targets.h).
    // Checked in every build: were it broken, the fabric could read or
    // write the caller's memory after the call returned.
    if (!op.runner->detach_user_memory()) {
      ::weft::fabric::internal::assertion_failed(
          "op.runner->detach_user_memory()",
          "an operation ended with sends in flight or receives posted into "
          "user memory",
          __FILE__, __LINE__);
    }
    op.done = true;
    op.runner.reset();
    queue_.pop_front();
    running_ = false;
    runner_ = nullptr;
    *advanced = true;
  }
  return absl::OkStatus();
}

TimeNs Engine::probe_after_ns() const {
  if (!running_) return 0;
  // A sixteenth of the deadline leaves time for probes to hop along a
  // chain of waiting ranks before anyone's deadline.
  return std::clamp<TimeNs>(queue_.front()->timeout_ns / kProbesPerDeadline,
                            RecoveryOptions::kMinRtoNs, kMaxProbeAfterNs);
}

void Engine::mark_waiting() {
  std::fill(waiting_.begin(), waiting_.end(), 0);
  if (running_) queue_.front()->runner->mark_waiting(waiting_);
}

uint32_t Engine::suspect(uint32_t* heard_from) {
  mark_waiting();
  return suspect_at(clock_.now_ns(), heard_from);
}

uint32_t Engine::suspect_at(TimeNs now_ns, uint32_t* heard_from) const {
  *heard_from = kNoPeer;
  if (!running_) return kNoPeer;
  const TimeNs probe_ns = probe_after_ns();
  const Lane* quietest = nullptr;
  const Lane* reporter = nullptr;
  for (const auto& lane : lanes_) {
    if (waiting_[lane->index()] == 0) continue;
    if (lane->silent_at(now_ns, probe_ns)) {
      if (quietest == nullptr ||
          lane->last_heard_ns() < quietest->last_heard_ns()) {
        quietest = lane.get();
      }
    } else if (reporter == nullptr && lane->peer_suspect() != kNoPeer &&
               lane->peer_suspect() != rank_) {
      reporter = lane.get();
    }
  }
  if (quietest != nullptr) return quietest->peer();
  if (reporter == nullptr) return kNoPeer;
  *heard_from = reporter->peer();
  return reporter->peer_suspect();
}

absl::Status Engine::service_lanes(TimeNs now_ns, bool* advanced,
                                   TimeNs* wake_ns) {
  mark_waiting();
  const TimeNs probe_ns = probe_after_ns();
  // Only an acknowledgement carries the suspect: worked out on first need,
  // from what held before any lane was serviced (as waiting_ does).
  uint32_t silent = kNoPeer;
  bool known = false;
  auto suspect_now = [&] {
    if (!known) {
      uint32_t heard_from = kNoPeer;
      silent = suspect_at(now_ns, &heard_from);
      known = true;
    }
    return silent;
  };
  for (const auto& lane : lanes_) {
    const uint8_t state = lane_state_[lane->index()];
    if (state == kLaneDead) continue;
    const Lane::Watch watch{waiting_[lane->index()] != 0, probe_ns};
    absl::Status s =
        lane->service_at(now_ns, watch, suspect_now, advanced, wake_ns);
    if (!s.ok() && state == kLaneDetached) {
      lane_state_[lane->index()] = kLaneDead;
      continue;
    }
    if (!s.ok()) return s;
    // Cut: its frames go unanswered, or, with nothing of its own to
    // resend (a credit report lost on the way, say), its probes do.
    if (state == kLaneLive && movable_[lane->index()] != 0 &&
        (lane->cut() ||
         (watch.waiting && probe_ns > 0 && lane->silent_at(now_ns, probe_ns)))) {
      consider_move(*lane, now_ns, wake_ns);
    } else if (state == kLaneLive && movable_[lane->index()] == 0 &&
               lane->cut() && !lane->relayed()) {
      // Only frames unanswered: a silent peer may be a slow one (waiting
      // on the pair that lost its cable, say), not one cut off.
      consider_relay(*lane, now_ns, wake_ns);
    }
  }
  if (!moving_.empty()) resend_moves(now_ns, wake_ns);
  return absl::OkStatus();
}

absl::Status Engine::deadline_error(const OpState& op) {
  uint32_t blamed = OpRunner::kNoLane;
  const std::string outstanding = op.runner->outstanding(&blamed);
  const Lane* blame =
      blamed == OpRunner::kNoLane ? nullptr : lanes_[blamed].get();
  ErrorPlace place{rank_, kNoPeer, "", ErrorCause::kDeadline};
  uint32_t heard_from = kNoPeer;
  const uint32_t silent = suspect(&heard_from);
  std::string why = "the peer may have crashed, lost frames or been cut off";
  const Lane* charged = blame;  // the cable the deadline is counted against
  if (silent != kNoPeer) {
    const Lane* direct = nullptr;
    for (const auto& lane : lanes_) {
      if (lane->peer() == silent) direct = lane.get();
    }
    charged = direct;
    place = direct != nullptr
                ? direct->place(ErrorCause::kDeadline)
                : ErrorPlace{rank_, silent, "", ErrorCause::kDeadline};
    why = heard_from == kNoPeer
              ? absl::StrFormat("peer %u has been silent for %d ns", silent,
                                clock_.now_ns() - direct->last_heard_ns())
              : absl::StrFormat(
                    "peer %u, which this rank waits on, reports "
                    "peer %u silent",
                    heard_from, silent);
  } else if (blame != nullptr) {
    place = blame->place(ErrorCause::kDeadline);
  }
  count_deadline(charged, place.peer);
  return make_error(
      absl::StatusCode::kDeadlineExceeded, place,
      absl::StrFormat("%s did not finish within its %d ns deadline; %s. "
                      "Outstanding: %s",
                      describe_op(op.runner->identity()), op.timeout_ns, why,
                      outstanding));
}

absl::Status Engine::consult_watch(TimeNs now_ns) {
  if (now_ns < next_watch_ns_) return absl::OkStatus();
  next_watch_ns_ = deadline_after(now_ns, watch_interval_ns_);
  const absl::Status said = next_departure();
  if (said.ok()) return said;
  const std::optional<ErrorPlace> from = error_place(said);
  const uint32_t peer =
      from.has_value() && from->peer != rank_ ? from->peer : kNoPeer;
  note_dead(peer);
  // A peer that has done its part of the running operation may leave: a
  // rank that finished the job's last collective exits while others still
  // wait on a third. Only a departure this operation waits on ends it; the
  // next one that needs the departed peer ends at its first step.
  if (peer != kNoPeer) {
    mark_waiting();
    bool needed = false;
    for (const auto& lane : lanes_) {
      needed |= lane->peer() == peer && waiting_[lane->index()] != 0;
    }
    if (!needed) return absl::OkStatus();
  }
  ErrorPlace place{rank_, peer, "", ErrorCause::kPeerUnavailable};
  for (const auto& lane : lanes_) {
    if (lane->peer() == peer) {
      place = lane->place(ErrorCause::kPeerUnavailable);
      break;
    }
  }
  // The watch is the side channel on hardware, the simulator's record of
  // departures in a simulated world: its own words say which.
  const std::string who =
      peer == kNoPeer ? "a peer" : absl::StrFormat("peer %u", peer);
  const std::string what = absl::IsUnavailable(said)
                               ? "is gone (its process exited or was killed)"
                               : "may be gone (the liveness check failed)";
  return make_error(absl::StatusCode::kUnavailable, place,
                    absl::StrFormat("%s %s; not waiting for it (the check "
                                    "says: %s)",
                                    who, what, said.message()));
}

absl::Status Engine::check_departures() const {
  const uint32_t departed = queue_.front()->runner->departed_needed();
  if (departed == OpRunner::kNoLane) return absl::OkStatus();
  const Lane* gone = lanes_[departed].get();
  return make_error(
      absl::StatusCode::kUnavailable, gone->place(ErrorCause::kPeerUnavailable),
      absl::StrFormat("peer %u closed its end (its group or program ended) "
                      "while %s still needed it; every rank must run the "
                      "same collectives before destroying its group",
                      gone->peer(), describe_op(runner_->identity())));
}

void Engine::count_deadline(const Lane* charged, uint32_t peer) {
  Lane* target = nullptr;
  for (const auto& lane : lanes_) {
    if (lane.get() == charged) {
      target = lane.get();
      break;
    }
    if (target == nullptr && lane->peer() == peer) target = lane.get();
  }
  if (target != nullptr) {
    target->note_deadline();
  } else {
    ++unblamed_deadlines_;
  }
}

GroupCounters Engine::counters() const {
  GroupCounters out;
  for (const auto& lane : lanes_) {
    const LaneStats& st = lane->stats();
    PeerCounters p;
    p.peer = lane->peer();
    p.cable = lane->cable();
    p.device = lane->device();
    p.counts.frames_sent = st.data_sent;
    p.counts.frames_resent = st.retransmitted;
    p.counts.frames_received = st.data_received;
    p.counts.duplicates_dropped = st.duplicates;
    p.counts.frames_held_early = st.placed_early;
    p.counts.acks_sent = st.acks_sent;
    p.counts.probes_sent = st.probes_sent;
    p.counts.credit_stalls = st.credit_stalls;
    p.counts.deadlines_hit = st.deadlines;
    p.counts.lanes_moved = st.moves;
    p.counts.lane_relayed = st.relayed;
    p.counts.frames_relayed = st.frames_forwarded;
    p.counts.relayed_bytes = st.bytes_forwarded;
    p.counts.relay_drops = st.forwards_dropped;
    if (const RelayEndpoint* end = relay_ends_[lane->index()]) {
      p.counts.frames_via_relays = end->frames_sent();
      p.counts.frames_from_relays = end->frames_delivered();
      p.counts.relay_drops += end->frames_lost();
    }
    out.total += p.counts;
    out.payload_bytes_zero_copy += st.bytes_zero_copy;
    out.payload_bytes_staged += st.bytes_staged;
    out.payload_bytes_received_in_place += st.bytes_received_in_place;
    out.payload_bytes_moved_aside += st.bytes_moved_aside;
    out.peers.push_back(std::move(p));
  }
  std::sort(out.peers.begin(), out.peers.end(),
            [](const PeerCounters& a, const PeerCounters& b) {
              return std::tie(a.peer, a.cable) < std::tie(b.peer, b.cable);
            });
  out.total.deadlines_hit += unblamed_deadlines_;
  return out;
}

Progress Engine::serve_failed() {
  // Only tell the peers again (each copy goes once the previous left); what
  // arrives is drained and ignored. Once an agreement ran, the lanes are
  // also served (acknowledgements, resends): its last messages still
  // reach the members, and a shrink to come finds its lanes alive.
  bool advanced = false;
  const TimeNs now_ns = clock_.now_ns();
  TimeNs wake_ns = kNeverNs;
  for (const auto& lane : lanes_) {
    if (lane_state_[lane->index()] == kLaneDead) continue;
    (void)lane->poll(poll_batch_, &advanced);
    lane->resend_abort();
    if (!agreed_.empty()) {
      (void)lane->service_at(
          now_ns, Lane::Watch{}, [] { return kNoPeer; }, &advanced, &wake_ns);
    }
  }
  if (!agreed_.empty() && !relayed_lanes_.empty()) {
    (void)serve_relays(&advanced, [](Lane&, absl::Status) {});
  }
  if (lingering_ != nullptr) flush_lingering(&advanced);
  return Progress::done();
}

Progress Engine::progress() {
  moved_ = false;
  if (agreement_ != nullptr) return run_agreement();
  if (!failure_.ok()) return serve_failed();
  if (revoke_requested_.load(std::memory_order_acquire)) {
    std::string reason;
    {
      std::lock_guard<std::mutex> lock(revoke_mu_);
      reason = revoke_reason_;
    }
    fail(revoked_error(reason), rank_, /*every_op=*/true, reason);
    return Progress::done();
  }
  if (abort_requested_.load(std::memory_order_relaxed)) {
    fail(make_error(absl::StatusCode::kCancelled,
                    ErrorPlace{rank_, kNoPeer, "", ErrorCause::kCancelled},
                    "abort() was called; pending operations were cancelled"),
         rank_, /*every_op=*/true);
    return Progress::done();
  }
  if (prefetch_) prefetch_state();
  bool advanced = false;
  // Whether a step now could do more than this one did (see below).
  bool again = false;
  TimeNs wake_ns = kNeverNs;
  TimeNs serviced_ns = kNeverNs;  // the clock the lanes were serviced at
  absl::Status s = poll_lanes(&advanced);
  if (s.ok() && (!retired_ids_.empty() || !agreed_.empty())) {
    s = drop_retired();
    if (lingering_ != nullptr) flush_lingering(&advanced);
  }
  if (s.ok()) s = run_queue(&advanced);
  // A frame the lanes' timers sent (a resend, an acknowledgement) can
  // change what the operation waits on, and so what the timers owe next.
  if (s.ok()) {
    serviced_ns = clock_.now_ns();
    s = service_lanes(serviced_ns, &again, &wake_ns);
  }
  advanced |= again;
  // Sending an owed acknowledgement can be what finishes the operation;
  // the next one (if any) then starts before its lanes were serviced.
  if (s.ok() && running_ && queue_.front()->runner->done()) {
    bool ended = false;
    s = run_queue(&ended);
    advanced |= ended;
    again |= ended;
  }
  // A dead peer's process ends every operation, queued ones too, as
  // abort() does: none of them can finish.
  bool every_op = false;
  if (s.ok() && running_ && watch_) {
    s = consult_watch(clock_.now_ns());
    every_op = !s.ok();
  }
  // A stuck operation only: one that moves needs nothing it lacks yet.
  if (s.ok() && running_ && !advanced) {
    s = check_departures();
    every_op = !s.ok();
  }
  if (s.ok() && running_ && clock_.now_ns() >= queue_.front()->deadline_ns) {
    s = deadline_error(*queue_.front());
  }
  if (!s.ok()) {
    uint32_t origin = rank_;
    for (const auto& lane : lanes_) {
      if (lane->abort_origin().has_value()) origin = *lane->abort_origin();
    }
    fail(std::move(s), origin, every_op);
    return Progress::done();
  }
  moved_ = advanced;
  // A step drains every lane's completions (a poll batch holds more than
  // a lane can have outstanding) and runs the operation until it is stuck:
  // another step at this instant would find nothing new unless a
  // completion arrives, which wakes the caller anyway. So a step that
  // moved something asks to be called again only when a lane's timer sent
  // a frame or an operation ended after the lanes were serviced;
  // otherwise it reports what it waits for, and a scheduler running many
  // ranks does not step this one again for nothing.
  if (again) return Progress::advanced();
  if (queue_.empty()) {
    // Operations end before their last frames are acknowledged: a lane
    // may still hold frames to resend, or owe a delayed acknowledgement.
    // The caller comes back at that timer (or a completion); done once
    // nothing is pending.
    const bool settled =
        std::all_of(lanes_.begin(), lanes_.end(), [this](const auto& l) {
          return lane_state_[l->index()] != kLaneLive || l->settled();
        });
    return settled ? Progress::done() : waiting(serviced_ns, wake_ns, advanced);
  }
  if (running_) {
    wake_ns = std::min({wake_ns, queue_.front()->deadline_ns, next_watch_ns_});
  }
  return waiting(serviced_ns, wake_ns, advanced);
}

Progress Engine::waiting(TimeNs serviced_ns, TimeNs wake_ns, bool advanced) {
  // A step that moved nothing is stepped next at wake_ns (or a completion).
  // A wake-up not later than the instant the lanes were serviced at has
  // the caller step again at once with nothing new to do: a busy spin on
  // hardware, and in a simulated world, whose clock moves only when every
  // rank waits for a later instant, a livelock (a lane's timer that
  // counted an acknowledgement or probe it could not send was one).
  WEFT_ASSERT(advanced || wake_ns > serviced_ns,
              "an engine step that moved nothing asks to be woken at or "
              "before the instant it ran: a timer is due that nothing "
              "serves");
  return Progress::waiting(wake_ns);
}

void Engine::idle(TimeNs wake_at_ns) {
  if (idle_fabric_ == nullptr) return;
  idle_fabric_->idle(wake_at_ns);
  if (!failure_.ok()) return;
  if (absl::Status health = idle_fabric_->health(); !health.ok()) {
    fail(std::move(health), rank_, /*every_op=*/true);
  }
}

void Engine::finish_sends(TimeNs until_ns) {
  if (idle_fabric_ == nullptr || !idle_fabric_->host_moves_sends()) return;
  // Lanes outside this epoch's groups (begin_epoch) are not waited for:
  // a dead peer's never drain.
  auto finished = [this](const Progress&) {
    return !failure_.ok() || !queue_.empty() ||
           std::none_of(lanes_.begin(), lanes_.end(), [this](const auto& l) {
             return lane_state_[l->index()] == kLaneLive && l->sends_pending();
           });
  };
  if (finished(Progress{})) return;
  step_until(until_ns, finished);
}

void Engine::fail(absl::Status status, uint32_t origin, bool every_op,
                  std::string_view own_text) {
  // Once per group: the group is unusable from here on.
  base::log(
      base::LogLevel::kInfo,
      "rank %u: the group failed (began on rank %u), telling %u lane(s): %s",
      rank_, origin, lanes_.size(), status.ToString());
  failure_ = status;
  const std::optional<ErrorPlace> place = error_place(status);
  const ErrorCause cause = place ? place->cause : ErrorCause::kUnknown;
  const uint32_t blamed = place ? place->peer : kNoPeer;
  if (cause == ErrorCause::kPeerUnavailable || cause == ErrorCause::kDeadline) {
    note_dead(blamed);
  }
  // Tell the peers the failure in its own words: relayed from a peer's
  // abort, that is the text the abort carried, not this rank's wrapping
  // of it, which would nest once more at every hop around a ring.
  std::string_view text =
      own_text.empty() ? base::to_std(status.message()) : own_text;
  if (origin != rank_) {
    for (const auto& lane : lanes_) {
      if (lane->abort_origin() != origin) continue;
      text = lane->abort_text();
      break;
    }
  }
  for (const auto& lane : lanes_) {
    lane->send_abort(cause, origin, blamed, text);
  }
  bool first = true;
  for (const auto& op : queue_) {
    // Best effort: a send not yet completed may still read user memory,
    // and its registration stays with the fabric until the engine closes
    // (UserMemory::detach).
    if (op->runner != nullptr) op->runner->detach_user_memory();
    op->done = true;
    op->status = every_op || first ? status : refusal();
    op->runner.reset();
    first = false;
  }
  queue_.clear();
  running_ = false;
  runner_ = nullptr;
}

}  // namespace weft::collectives::internal
