// Group: the collectives API (MLX JACCL's Group, plus all_prod, broadcast,
// reduce, all_to_all and split). Every call exists blocking (returns when
// done) and asynchronous (*_async returns an Operation to drive). Buffers
// are bytes plus a DType; any size the dtype allows works, 0 bytes and more
// than 4 GiB included. A call is in place when the input is where the
// output would hold it (in == out; for all_gather, in is this rank's block
// of out; for sum_scatter, out is this rank's block of in); other overlaps
// are refused.
//
// Results are bitwise deterministic: every rank gets identical bytes and a
// rerun gives identical bytes, for every op, dtype and algorithm.
//
// Errors (absl::Status with weft::error_place() payload):
//  - InvalidArgument (cause kBadInput): bad arguments; nothing was sent and
//    the group stays usable.
//  - anything else (mismatched collectives, lost or corrupt frames, error
//    completions, a silent peer past the deadline, a dead peer's process,
//    abort()): the group is failed; peers are told, and every later call
//    is refused with FailedPrecondition (cause kGroupFailed). Rebuild the
//    group.
//
// Dead peers. A fabric may say nothing when a peer's process dies: Apple's
// UC queue pairs give no completion at all, so the survivors would wait
// out the deadline (600 s for groups started from the environment). The
// side channel (Bootstrap::check_alive()) knows at once: watch() hands the
// group that check, and while an operation runs the group consults it at
// most once per kWatchIntervalNs of the fabric clock. When it reports a
// rank gone, the running and queued operations end with Unavailable (cause
// kPeerUnavailable) naming that peer, and the peers are told as on abort().
//
// Ranks must call the same collectives in the same order with the same
// sizes, dtypes, roots and algorithm choices; a rank that does not gets
// kMismatch errors instead of corrupt data, on every rank.
//
// Not thread-safe, except abort() and revoke().
#ifndef WEFT_COLLECTIVES_GROUP_H_
#define WEFT_COLLECTIVES_GROUP_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/dtype.h"
#include "collectives/group_counters.h"
#include "collectives/group_options.h"
#include "collectives/operation.h"
#include "collectives/registered_memory.h"
#include "fabric/clock.h"
#include "fabric/progress.h"
#include "fabric/topology.h"

namespace weft {

namespace collectives::internal {
class Engine;
struct OpCall;
struct OpIdentity;
}  // namespace collectives::internal

using ConstBytes = std::span<const std::byte>;
using Bytes = std::span<std::byte>;

class Group {
 public:
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  uint32_t rank() const { return rank_; }
  uint32_t size() const { return size_; }
  // The fabric (world) rank of group rank `rank`.
  uint32_t world_rank(uint32_t rank) const {
    return members_.empty() ? rank : members_[rank];
  }
  const GroupOptions& options() const { return options_; }

  // out[i] = op over ranks (in rank order for mesh) of in[i].
  // in.size() == out.size().
  absl::Status all_sum(ConstBytes in, Bytes out, DType dtype,
                       CallOptions c = {});
  absl::Status all_prod(ConstBytes in, Bytes out, DType dtype,
                        CallOptions c = {});
  absl::Status all_max(ConstBytes in, Bytes out, DType dtype,
                       CallOptions c = {});
  absl::Status all_min(ConstBytes in, Bytes out, DType dtype,
                       CallOptions c = {});
  absl::Status all_reduce(ConstBytes in, Bytes out, DType dtype, ReduceOp op,
                          CallOptions c = {});
  // out = the ranks' inputs, concatenated in rank order.
  // out.size() == size() * in.size().
  absl::Status all_gather(ConstBytes in, Bytes out, DType dtype,
                          CallOptions c = {});
  // out = block rank() of the element-wise sum of the inputs.
  // in.size() == size() * out.size().
  absl::Status sum_scatter(ConstBytes in, Bytes out, DType dtype,
                           CallOptions c = {});
  absl::Status reduce_scatter(ConstBytes in, Bytes out, DType dtype,
                              ReduceOp op, CallOptions c = {});
  // out = root's in, on every rank. `in` is read on root only.
  absl::Status broadcast(ConstBytes in, Bytes out, DType dtype, uint32_t root,
                         CallOptions c = {});
  absl::Status broadcast(Bytes buffer, DType dtype, uint32_t root) {
    return broadcast(buffer, buffer, dtype, root);
  }
  // On root, out = op over ranks of in. `out` is written on root only.
  absl::Status reduce(ConstBytes in, Bytes out, DType dtype, ReduceOp op,
                      uint32_t root, CallOptions c = {});
  // Block j of out = block rank() of rank j's in; blocks are
  // in.size() / size() bytes. in.size() == out.size().
  absl::Status all_to_all(ConstBytes in, Bytes out, DType dtype,
                          CallOptions c = {});
  // Point to point; `peer` must be joined to this rank by a cable.
  absl::Status send(ConstBytes in, DType dtype, uint32_t peer,
                    CallOptions c = {});
  absl::Status recv(Bytes out, DType dtype, uint32_t peer, CallOptions c = {});
  // Returns once every rank has entered.
  absl::Status barrier(CallOptions c = {});

  // Registers `memory` with this rank's fabric (see RegisteredMemory): an
  // operation whose input or output lies wholly inside a registration
  // sends its payload straight from there (GroupCounters::
  // payload_bytes_zero_copy counts it); any other buffer is staged
  // through weft's own frames as before. Local: each rank registers what
  // it likes, no peer needs to agree. Shared with split groups (one
  // fabric). InvalidArgument (kBadInput) for empty memory or memory
  // overlapping a live registration; FailedPrecondition for memory
  // overlapping one a failed operation still uses; Unimplemented on a
  // fabric that registers no user memory.
  absl::StatusOr<RegisteredMemory> register_memory(std::span<std::byte> memory);
  template <typename T>
  absl::StatusOr<RegisteredMemory> register_memory(std::span<T> memory) {
    return register_memory(std::as_writable_bytes(memory));
  }

  // The same, started asynchronously. Bad input gives an Operation that is
  // already done with InvalidArgument.
  Operation all_reduce_async(ConstBytes in, Bytes out, DType dtype, ReduceOp op,
                             CallOptions c = {});
  Operation all_gather_async(ConstBytes in, Bytes out, DType dtype,
                             CallOptions c = {});
  Operation reduce_scatter_async(ConstBytes in, Bytes out, DType dtype,
                                 ReduceOp op, CallOptions c = {});
  Operation broadcast_async(ConstBytes in, Bytes out, DType dtype,
                            uint32_t root, CallOptions c = {});
  Operation reduce_async(ConstBytes in, Bytes out, DType dtype, ReduceOp op,
                         uint32_t root, CallOptions c = {});
  Operation all_to_all_async(ConstBytes in, Bytes out, DType dtype,
                             CallOptions c = {});
  Operation send_async(ConstBytes in, DType dtype, uint32_t peer,
                       CallOptions c = {});
  Operation recv_async(Bytes out, DType dtype, uint32_t peer,
                       CallOptions c = {});
  Operation barrier_async(CallOptions c = {});

  // One non-blocking step of every queued operation (see Operation). With
  // nothing queued it still serves the peers: it resends frames that were
  // not acknowledged in time, answers a resent frame whose acknowledgement
  // was lost and sends owed acknowledgements. An operation ends as soon as
  // its own part is done, before the peers acknowledged its last frames
  // (with recovery on), so a peer may still need this rank: call it now and
  // then between operations, or start the next one. With nothing queued it
  // returns kWaiting (with the next timer) while frames await
  // acknowledgement, and kDone once nothing is pending. Destroying the last
  // group of an engine does that itself for up to 100 ms (on a clock that
  // runs by itself; a simulator's does not, so drive the world instead).
  Progress progress();
  // Thread-safe: pending and later operations end with Cancelled.
  void abort();
  // Revokes the group (ULFM's MPIX_Comm_revoke, NCCL's ncclCommRevoke):
  // not collective, idempotent (the first reason stands), callable from
  // any thread. Every pending and later operation on this rank, and on
  // every rank the revocation reaches, ends with Aborted (cause kRevoked)
  // saying which rank revoked and `reason` (at most 448 bytes are kept).
  // It takes effect at this rank's next engine step (the thread driving
  // the group, or the next call) and travels as a failure does: sent to
  // every peer joined by a cable and relayed by each, each hop at most one
  // frame's flight behind the data the sender had already handed to that
  // cable (docs/fault-tolerance.md has the figures). A rank hears of it at
  // its own next step: a rank that calls nothing never learns. Best
  // effort over a lossy cable, as abort() is (three copies). Nothing
  // changes on a group that failed already (its first error stands).
  // Shared with split groups (one engine).
  void revoke(std::string_view reason);
  // How often watch()'s check is consulted while an operation runs: a
  // dead peer is noticed this long after its side channel closed at most,
  // for one non-blocking check (a socket poll) per interval.
  static constexpr TimeNs kWatchIntervalNs = 50 * kNsPerMs;
  // Gives the group a liveness check, typically
  //   group.watch([&bootstrap] { return bootstrap.check_alive(); });
  // consulted at the first step of a running operation and then at most
  // once per kWatchIntervalNs of the fabric clock, whether the operation is
  // driven by a blocking call, wait() or progress() (a scheduler driving
  // progress() is woken for it). A non-OK answer whose error_place() names
  // the rank that is gone fails the group: the running and queued
  // operations end with Unavailable (cause kPeerUnavailable, that peer)
  // saying it is gone and what the check said, peers are told, later calls are
  // refused. Shared with split groups (one engine; the last call wins). An
  // empty function stops watching; without a check nothing changes. A
  // group formed on a fabric that keeps a record of departed peers
  // (Fabric::departures: the simulator's) watches that from the start.
  // REQUIRES: `check` does not block and outlives its use here.
  void watch(std::function<absl::Status()> check);
  // OK while the group works; else the error that failed it.
  absl::Status health() const;
  // Frames sent, resent, received and dropped as duplicates, credit
  // stalls, probes and deadlines, per cable to each peer and in total,
  // since the group formed (see GroupCounters; shared with split groups).
  // Works on a failed group too.
  GroupCounters counters() const;

  // ---- After a failure (docs/fault-tolerance.md; ULFM's MPIX_Comm_agree
  // and MPIX_Comm_shrink). Both are collective over the ranks still
  // alive, work on a failed or revoked group, and need every pair of the
  // group's ranks joined by a cable (a mesh; InvalidArgument otherwise:
  // the survivors of a ring are not a ring). No operation may be queued
  // on the group's engine (FailedPrecondition). They decide by a
  // fault-tolerant agreement over the group's own lanes: every rank that
  // returns OK gets the same answer, even when ranks fail while it runs.
  // A rank learns that another failed from the group's watch (the side
  // channel; on the simulator, its record of departures), from the
  // fabric (an error completion, retransmissions exhausted, a peer that
  // closed its end), or, at the start, from the error that failed the
  // group (the peer a deadline or a departure named). A rank that fails
  // silently, with no watch set, is waited for until the deadline
  // (CallOptions::timeout_ns, else GroupOptions::timeout_ns):
  // DeadlineExceeded naming it.

  // What agree() decides.
  struct Agreed {
    // The AND of the flags of every rank whose proposal was decided.
    uint32_t flags = 0;
    // This group's ranks left out: failed, or reported failed by a rank
    // when it proposed. Ascending.
    std::vector<uint32_t> failed;
  };
  // Every rank proposes `flags`; the answer is the same on every rank
  // that returns OK. The group stays as it was (failed or not).
  absl::StatusOr<Agreed> agree(uint32_t flags, CallOptions c = {});
  // REQUIRES: *agreed outlives the operation; set once it ended OK.
  Operation agree_async(uint32_t flags, Agreed* agreed, CallOptions c = {});
  // A new group of the ranks the agreement kept, in this group's rank
  // order (new rank i is the i-th of them), sharing this group's engine
  // and cables, on every rank that returns OK. From then on this group
  // and the groups split from it refuse new work (FailedPrecondition,
  // kGroupFailed), and frames of their operations are dropped where they
  // are found: the new group's id differs from every earlier group's.
  // A rank the agreement left out gets FailedPrecondition (cause
  // kExcluded) and must leave the job.
  absl::StatusOr<std::unique_ptr<Group>> shrink(CallOptions c = {});
  // REQUIRES: *shrunk outlives the operation; set once it ended OK.
  Operation shrink_async(std::unique_ptr<Group>* shrunk, CallOptions c = {});

  // A sub-group of `ranks` (this group's ranks; the new group's rank i is
  // ranks[i]), sharing this group's cables and engine. Local: every member
  // must call it with the same list, in the same order relative to other
  // calls; ranks outside the list do not call it. Operations of parent and
  // sub-groups run in the order they are started.
  absl::StatusOr<std::unique_ptr<Group>> split(
      std::span<const uint32_t> ranks) const;

 private:
  friend class GroupBuilder;
  // `members`: the world rank of each group rank; empty for the whole
  // world in rank order.
  Group(std::shared_ptr<collectives::internal::Engine> engine,
        std::shared_ptr<const Topology> topology, std::vector<uint32_t> members,
        uint32_t rank, GroupOptions options);

  // Which algorithm and how many cables (and ring directions) a call uses;
  // InvalidArgument when the topology cannot carry it.
  struct RouteChoice {
    Algorithm algorithm = Algorithm::kMeshExchange;
    uint32_t lanes = 1;
    uint32_t directions = 1;
  };
  absl::StatusOr<RouteChoice> route(const collectives::internal::OpCall& call,
                                    uint64_t bytes) const;
  // What every frame of the call says about it (advances the sequence).
  collectives::internal::OpIdentity identity(
      const collectives::internal::OpCall& call, uint64_t bytes,
      Algorithm algorithm);
  Operation start(const collectives::internal::OpCall& call);
  // Starts the agreement behind agree() and shrink(); on_decided gets the
  // decision (this group's ranks) and gives the operation's status.
  Operation start_agreement(
      uint32_t flags, CallOptions c,
      std::function<absl::Status(const std::vector<uint32_t>& members,
                                 const std::vector<uint32_t>& failed,
                                 uint32_t flags)>
          on_decided);
  uint32_t cables(uint32_t a, uint32_t b) const;  // group ranks

  std::shared_ptr<collectives::internal::Engine> engine_;
  std::shared_ptr<const Topology> topology_;
  // The world rank of each group rank; empty when group rank r is world
  // rank r for every rank of the world, so that a simulated world of n
  // ranks does not hold n lists of n.
  std::vector<uint32_t> members_;
  uint32_t size_;
  uint32_t rank_;
  GroupOptions options_;
  // The engine's epoch when the group was made (Engine::epoch): a group
  // of an earlier one was replaced by shrink().
  uint32_t epoch_ = 0;
  uint32_t group_id_;
  uint32_t op_seq_ = 0;
  uint32_t agree_seq_ = 0;  // agree() and shrink() calls so far
  // Per peer that send/recv has been used with: its sequence.
  std::map<uint32_t, uint32_t> sent_seq_;
  std::map<uint32_t, uint32_t> recv_seq_;
  uint32_t mesh_cables_ = 0;  // 0: not fully connected
  uint32_t ring_cables_ = 0;  // 0: no ring in rank order
};

}  // namespace weft

#endif  // WEFT_COLLECTIVES_GROUP_H_
