// Engine: the one progress engine of a group (and of the sub-groups split
// from it, which share its lanes). It owns the lanes, queues operations and
// runs them one at a time in submission order; each progress() step polls
// every lane, advances the running operation, services the lanes' timers
// (acknowledgements, retransmissions, probes) and enforces the operation's
// deadline on the fabric clock. A deadline error names the peer this rank
// believes silent: one it waits on and has not heard from for longest, or
// failing that the one its waited-on peers report as silent. The first error
// fails the engine: the running and queued operations end with it, every
// peer is sent an abort, and new work is refused until the group is rebuilt.
//
// A peer that closed its end on purpose (Endpoint::peer_departed(), a TCP
// goodbye) is treated as the watch treats a departed process: it ends the
// operation that still needs it, with Unavailable naming it, and lets be
// one that has everything it needed from it.
//
// A cable that stops answering while another cable to the same peer
// answers is left: its lane moves to the other cable (lane.h, "Moving";
// engine_moves.cc), the operation goes on, and the move is counted
// (GroupCounters' lanes_moved) and logged at info.
//
// A cable that stops answering where it is the only one to its peer, on
// a mesh, is routed around: its lane's frames go through other ranks
// (lane.h, "Relaying"; engine_relays.cc), spread over every one that
// answers, and each rank forwards the frames it is handed for another.
//
// A watch (watch()) is a second way to learn of a dead peer: a check of the
// side channel, consulted while an operation runs, at most once per
// interval of the fabric clock. Fabrics that give no completion for
// a dead peer (UC queue pairs) otherwise leave the survivors waiting for the
// deadline.
#ifndef WEFT_COLLECTIVES_ENGINE_ENGINE_H_
#define WEFT_COLLECTIVES_ENGINE_ENGINE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/agreement.h"
#include "collectives/engine/lane.h"
#include "collectives/engine/op_runner.h"
#include "collectives/engine/relay_endpoint.h"
#include "collectives/engine/user_memory.h"
#include "collectives/group_counters.h"
#include "fabric/clock.h"
#include "fabric/fabric.h"
#include "fabric/progress.h"

namespace weft::collectives::internal {

struct OpState {
  std::unique_ptr<OpRunner> runner;
  TimeNs timeout_ns = 0;
  TimeNs deadline_ns = kNeverNs;
  bool done = false;
  absl::Status status;
};

// An agreement to run (Group::agree, Group::shrink; agreement.h).
struct AgreementRun {
  std::unique_ptr<Agreement> agreement;
  // The world rank of each group rank of the agreeing group.
  std::vector<uint32_t> members;
  // Called once, when this rank decided: the operation's status.
  std::function<absl::Status(const AgreementOutcome&)> on_decided;
};

class Engine : public RelayPath {
 public:
  // Most operations queued at once; more is ResourceExhausted.
  static constexpr size_t kMaxQueued = 4096;
  // How long destruction keeps resending frames not yet acknowledged.
  static constexpr TimeNs kLingerNs = 100 * kNsPerMs;
  // Steps without the clock moving after which destruction stops waiting
  // (a simulator's clock moves only while its world runs).
  static constexpr uint32_t kLingerStillSteps = 64;
  // With this many ranks taking turns on one core (Fabric::
  // ranks_sharing_core()), each step first asks the cache for the lines it
  // will read. weft_sim_bench: a 128-rank ring all-sum 14% and a 1024-rank
  // one 14-17% faster with it, 8-rank all-reduce loops 5-20% slower (their
  // state stays in cache); on hardware a rank owns its core and never
  // prefetches.
  static constexpr uint32_t kPrefetchMinRanks = 64;
  // A waited-on peer silent for this share of the deadline is probed
  // (probe_after_ns), and never later than kMaxProbeAfterNs.
  static constexpr TimeNs kProbesPerDeadline = 16;
  static constexpr TimeNs kMaxProbeAfterNs = 10 * kNsPerMs;
  // A relayed lane's frames go through at most this many ranks (each
  // carrying lane holds relay frames of its own, so a big mesh does not
  // set them up on every lane): on 8 ranks every other rank, six.
  static constexpr uint32_t kMaxRelays = 8;

  Engine(const Clock& clock, uint32_t rank,
         std::vector<std::unique_ptr<Lane>> lanes,
         uint32_t ranks_sharing_core = 1);
  // Lingers: operations end before their last frames are acknowledged, so
  // a healthy engine with nothing queued keeps stepping (resending what is
  // lost) until every frame is acknowledged, for at most kLingerNs, and
  // not at all while the clock stands still. A peer then finishes its last
  // operation even when this rank destroys its group right after its own.
  ~Engine() override;

  uint32_t rank() const { return rank_; }
  const Clock& clock() const { return clock_; }
  // The fabric whose idle() the engine calls when it has nothing to do
  // (Fabric::idle), and with which user memory is registered; nullptr:
  // none. REQUIRES: outlives the engine and its registrations.
  void set_idle_fabric(Fabric* fabric);
  // Whether this rank may relay a lane whose only cable died (lane.h,
  // "Relaying"): it has a lane to every other rank of the world. Off by
  // default.
  void allow_relays(bool allow) { relays_allowed_ = allow; }
  // The user memory registered with that fabric (nullptr: no fabric).
  const std::shared_ptr<UserMemory>& user_memory() const {
    return user_memory_;
  }
  // Nothing to do until a completion or `wake_at_ns`: tells the fabric.
  // A fabric that can no longer make progress (Fabric::health()) fails the
  // engine with its error.
  void idle(TimeNs wake_at_ns);
  // Consults `check` at the first step of a running operation and then at
  // most once per `interval_ns` (REQUIRES: > 0); a non-OK answer names (in its
  // error_place) the rank whose process is gone, and fails the engine with
  // Unavailable (kPeerUnavailable): the running and queued operations end
  // with it and the peers are told. An empty function stops watching.
  // REQUIRES: `check` does not block.
  void watch(std::function<absl::Status()> check, TimeNs interval_ns);
  // The lane to world rank `peer` over `cable`; nullptr when there is none.
  Lane* lane(uint32_t peer, uint32_t cable) const;

  // For a blocking call that just ended: on a fabric whose sends move
  // only while the host calls in (Fabric::host_moves_sends()), keeps
  // stepping (arrivals are served meanwhile) until every send posted has
  // completed, `until_ns` passes, another operation is queued or the
  // engine failed. Returns at once on other fabrics.
  void finish_sends(TimeNs until_ns);

  // Queues an operation behind those already queued. On a failed engine the
  // result is finished with the refusal; so it is for a group of an epoch
  // before the engine's (shrink() replaced it).
  std::shared_ptr<OpState> submit(std::unique_ptr<OpRunner> runner,
                                  TimeNs timeout_ns, uint32_t epoch);
  // Runs an agreement, on a failed engine too: each step polls and serves
  // the lanes of its members, and what would fail a collective (a lane's
  // error, the watch naming a peer, a departure) only has the agreement
  // suspect that member. Ends with on_decided's status, or with
  // DeadlineExceeded after `timeout_ns` naming a member it still waits on.
  // FailedPrecondition while operations are queued or another agreement
  // runs.
  std::shared_ptr<OpState> submit_agreement(AgreementRun run,
                                            TimeNs timeout_ns);
  // Groups: the epoch a new group belongs to, and its id (frames of a
  // group of an earlier epoch are dropped wherever they are found).
  uint32_t epoch() const { return epoch_; }
  void register_group(uint32_t group_id);
  // The world ranks this engine learned are gone: named by the watch, or
  // blamed by the failure that failed it (a deadline, a departure).
  const std::vector<uint32_t>& known_dead() const { return known_dead_; }
  // A shrink decided: the groups of the current epoch are retired (their
  // frames dropped, their calls refused), the engine is healthy again,
  // and its lanes to world ranks outside `members` are detached (their
  // errors fail nothing; the first one stops them).
  void begin_epoch(std::span<const uint32_t> members);
  // A frame of an operation that can no longer want it: of a retired
  // group, of a finished agreement, or (while an agreement runs) of an
  // operation of this epoch's groups, which failed.
  bool stale(const OpIdentity& op) const;
  static std::shared_ptr<OpState> finished(absl::Status status);

  // One non-blocking step. kDone when nothing is queued and every frame
  // sent was acknowledged, or when it failed.
  Progress progress();
  // Thread-safe: the next progress() fails everything with Cancelled.
  void abort() { abort_requested_.store(true, std::memory_order_relaxed); }
  // Thread-safe and idempotent (the first reason stands): the next
  // progress() fails the engine with revoked_error(), ending every pending
  // operation with it, and tells every peer, whose engines end theirs with
  // it too and relay it. Later operations are refused with the same error.
  // Nothing changes on an engine that failed already.
  void revoke(std::string reason);
  // Whether the last progress() moved anything (it may report kWaiting
  // even so: nothing more can move until a completion or a timer).
  bool moved() const { return moved_; }
  // OK, or the error that failed the engine.
  const absl::Status& health() const { return failure_; }
  // What every lane counted so far (see GroupCounters). O(lanes).
  GroupCounters counters() const;
  // RelayPath (for the relayed lanes' endpoints, engine_relays.cc):
  // `frame` for world rank `to` goes to the next lane, in turn, to a rank
  // other than `to` that answers and has a relay frame free.
  bool relay(uint32_t to, std::span<const std::byte> frame) override;

 private:
  // Steps until `finished` says so after a step, `until_ns` passes, or
  // kLingerStillSteps steps in a row leave the clock where it was (a
  // test's clock must not hold the caller): the linger and finish_sends().
  void step_until(TimeNs until_ns,
                  const std::function<bool(const Progress&)>& finished);
  // Asks the cache for what a step reads (see progress()).
  void prefetch_state() const;
  // progress() of a failed engine.
  Progress serve_failed();
  // progress() while an agreement runs.
  Progress run_agreement();
  // Has the running agreement suspect world rank `peer` (when a member).
  void suspect(uint32_t peer);
  void note_dead(uint32_t peer);
  // Drops the frames of retired groups and finished agreements found at
  // the head of an inbox.
  absl::Status drop_retired();
  // Sends what lingering_ still owes.
  void flush_lingering(bool* advanced);
  bool retired(const OpIdentity& op) const;
  absl::Status poll_lanes(bool* advanced);
  // Moving lanes (engine_moves.cc). Begins moving `lane` (cut: its cable
  // stopped answering) to another cable to its peer that answers, if any.
  void consider_move(Lane& lane, TimeNs now_ns, TimeNs* wake_ns);
  // Serves the kMove frames the peer sent over `carrier`.
  absl::Status serve_moves(Lane& carrier);
  // Sends again the kMove frames of moves still waiting for the peer's
  // answer that are due; *wake_ns lowered to the next one due.
  void resend_moves(TimeNs now_ns, TimeNs* wake_ns);
  // The lane of `lane`'s peer on another physical cable heard from after
  // `lane` was (the peer is alive, that cable works), last heard first;
  // none silent or moving. nullptr when there is none.
  Lane* move_carrier(const Lane& lane) const;
  // Relaying (engine_relays.cc). Whether `lane` may be relayed: relays
  // allowed, recovery on, the only lane to its peer, a fabric whose lanes
  // may move.
  bool relayable(const Lane& lane) const;
  // `lane` is cut: while lanes to other ranks answer, asks the peer
  // through them (a probe, relayed) whether it hears; the lane is relayed
  // once it hears the peer through a relay.
  void consider_relay(Lane& lane, TimeNs now_ns, TimeNs* wake_ns);
  // Relays `lane` from now on (logged at info).
  void start_relay(Lane& lane);
  // Gives `lane` its relay frames (a slab of its own), on first need.
  // False when the fabric has no memory for them.
  bool relay_frames_for(Lane& lane);
  // Serves what the lanes' relayed frames ask (forwarded to the rank they
  // are for, or handed to the relayed lane they belong to), hands on the
  // relayed lanes' sends waiting for a relay, and polls those lanes
  // (`failed` gets a relayed lane whose poll failed, and why).
  absl::Status serve_relays(
      bool* advanced, const std::function<void(Lane&, absl::Status)>& failed);
  // A new endpoint towards `peer` on the device of its physical `cable`.
  absl::StatusOr<std::unique_ptr<Endpoint>> open_on(uint32_t peer,
                                                    uint32_t cable);
  absl::Status run_queue(bool* advanced);
  // Services every lane at `now_ns`; *wake_ns is the earliest lane timer.
  absl::Status service_lanes(TimeNs now_ns, bool* advanced, TimeNs* wake_ns);
  // progress()'s answer when it waits, asserting that a step that moved
  // nothing (!advanced) asks to be woken later than `serviced_ns`.
  static Progress waiting(TimeNs serviced_ns, TimeNs wake_ns, bool advanced);
  // The peer the running operation waits on that looks dead (see above);
  // kNoPeer when none does. *heard_from is the peer that reported it
  // (kNoPeer when this rank saw the silence itself).
  uint32_t suspect(uint32_t* heard_from);
  // suspect() at `now_ns`, given which lanes the running operation waits
  // on (waiting_, filled by mark_waiting()).
  uint32_t suspect_at(TimeNs now_ns, uint32_t* heard_from) const;
  // Fills waiting_ for the running operation (all false when none runs).
  void mark_waiting();
  // How long the running operation lets a waited-on peer stay silent
  // before probing it (0: no operation runs).
  TimeNs probe_after_ns() const;
  absl::Status deadline_error(const OpState& op);
  // The watch's next answer: the one peeked at (departure_known()) if
  // any, else the watch's own. REQUIRES: watch_ set.
  absl::Status next_departure();
  // Whether the watch names a gone rank: one it named and consult_watch()
  // has still to report, or, when the watch is due at `now_ns`, its answer
  // now. That consult is the interval's (the watch is still consulted once
  // per interval, Group::watch); a departure it names is kept for
  // next_departure() and reported by consult_watch() at once. Between
  // consults the last answer stands (a departure since is learned at the
  // next one, as without relays).
  bool departure_known(TimeNs now_ns);
  // Consults the watch if it is due: the error for the dead peer it names,
  // or OK.
  absl::Status consult_watch(TimeNs now_ns);
  // Unavailable naming the peer when the running operation still needs
  // one that closed its end on purpose (OpRunner::departed_needed()); OK
  // otherwise.
  absl::Status check_departures() const;
  // Counts a deadline against `charged`, the cable the error names, or
  // when there is none against the first lane to `peer` (or none at all).
  void count_deadline(const Lane* charged, uint32_t peer);
  absl::Status refusal() const;
  // Aborted (kRevoked): this rank revoked the group, for `reason`.
  absl::Status revoked_error(std::string_view reason) const;
  // Ends the running operation with `status`, and the queued ones with it
  // too (`every_op`) or with the refusal; tells every peer, in `own_text`
  // when set (a revocation's reason) and else in the status's message.
  void fail(absl::Status status, uint32_t origin, bool every_op,
            std::string_view own_text = {});

  const Clock& clock_;
  Fabric* idle_fabric_ = nullptr;
  std::shared_ptr<UserMemory> user_memory_;
  uint32_t rank_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::vector<Completion> poll_batch_;  // scratch for Lane::poll
  std::vector<uint8_t> waiting_;        // per lane: the operation waits on it
  // (peer, cable) -> lane, sorted by key: each operation looks lanes up
  // as it is built, and a few dozen sorted entries beat a tree's nodes.
  std::vector<std::pair<uint64_t, Lane*>> by_peer_;
  std::deque<std::shared_ptr<OpState>> queue_;  // front is running
  bool running_ = false;
  const bool prefetch_;         // see kPrefetchMinRanks
  OpRunner* runner_ = nullptr;  // the front operation's, while it runs
  bool moved_ = false;
  absl::Status failure_;
  uint64_t unblamed_deadlines_ = 0;  // deadlines that named no peer's lane
  std::atomic<bool> abort_requested_{false};
  std::atomic<bool> revoke_requested_{false};
  // The agreement running (nullptr: none) and its operation.
  std::unique_ptr<AgreementRun> agreement_;
  std::shared_ptr<OpState> agreement_op_;
  // An agreement that ended with messages to suspected members not sent:
  // sent while their lanes take them, until its deadline.
  std::unique_ptr<Agreement> lingering_;
  TimeNs lingering_until_ns_ = 0;
  uint32_t epoch_ = 0;
  std::vector<uint32_t> live_ids_;     // group ids of this epoch
  std::vector<uint32_t> retired_ids_;  // group ids of earlier epochs
  // Per group id, the last agreement finished (its late frames dropped).
  std::vector<std::pair<uint32_t, uint32_t>> agreed_;
  // Per lane: live; detached (its peer is outside the groups of this
  // epoch, begin_epoch(): served, but its errors fail nothing and its
  // first error makes it dead); dead (neither polled nor served).
  static constexpr uint8_t kLaneLive = 0;
  static constexpr uint8_t kLaneDetached = 1;
  static constexpr uint8_t kLaneDead = 2;
  std::vector<uint8_t> lane_state_;
  std::vector<uint32_t> moving_;   // lanes with a move under way
  std::vector<uint8_t> movable_;   // per lane: its peer has another lane
  // Relaying: per lane its relay endpoint (owned by the lane; nullptr:
  // not relayed), the lanes relayed, and which of the carriers takes the
  // next relayed frame.
  std::vector<RelayEndpoint*> relay_ends_;
  std::vector<uint32_t> relayed_lanes_;
  uint32_t next_carrier_ = 0;
  bool relays_allowed_ = false;
  std::vector<uint32_t> known_dead_;  // sorted
  std::mutex revoke_mu_;
  std::string revoke_reason_;            // guarded by revoke_mu_; set once
  std::function<absl::Status()> watch_;  // empty: not watching
  absl::Status peeked_;  // the watch's answer departure_known() kept
  TimeNs watch_interval_ns_ = 0;
  TimeNs next_watch_ns_ = kNeverNs;  // when the watch is due
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_ENGINE_H_
