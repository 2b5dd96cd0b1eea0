// SimEndpoint: one simulated UC queue pair. It keeps the verbs-side state
// (INIT/RTS/ERROR and the work outstanding, in its UcContract, which checks
// every post first: fabric/uc_contract.h; posted sends and receives; the
// completion queue) and implements the rest of fabric/endpoint.h; Transport
// moves its frames over the simulated links.
//
// A work request is outstanding from the moment it is posted until poll()
// returns its completion (as on verbs, where a send queue slot frees when
// its completion is consumed), so the completion queue never holds more
// than kMaxSends + kMaxRecvs entries. So a send is outstanding while it is
// posted (not yet departed) or its completion is queued, never both, and
// likewise a receive; and a queue pair in error has nothing posted.
#ifndef WEFT_SIM_INTERNAL_SIM_ENDPOINT_H_
#define WEFT_SIM_INTERNAL_SIM_ENDPOINT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/uc_contract.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "sim/internal/fixed_ring.h"
#include "sim/trace.h"

namespace weft::sim {

class WorldCore;
class SimFabric;

namespace internal {

// The simulator lays its hot structures out by cache lines (an endpoint's
// first line, a frame in flight, a rank's prefetch lines).
inline constexpr size_t kCacheLineBytes = 64;

// The queue pair's state is the contract's (INIT, RTS, ERROR).
using QpState = UcContract::State;
const char* qp_state_name(QpState state);

// A departed frame whose bytes are still read from the sender's own frame:
// the sender may not touch that frame until it has polled the send's
// completion, so the simulator copies the bytes only then (or when the
// endpoint closes), and not at all when the frame was delivered first.
struct FrameLoan {
  static constexpr uint32_t kNone = ~uint32_t{0};
  uint32_t message = kNone;  // Transport's in-flight index
  uint32_t id = 0;           // that message's InFlight::id
  bool valid() const { return message != kNone; }
};

class SimEndpoint final : public Endpoint {
 public:
  struct PostedSend {
    WorkId id;
    Frame frame;
    uint32_t length = 0;  // of the whole message, `tail` included
    // post_send_parts() with two parts: the first `head_length` bytes come
    // from `frame`, the rest from `tail` (empty: one part).
    Frame tail;
    uint32_t head_length = 0;
    uint32_t immediate = 0;
    uint64_t ticket = 0;
    bool has_immediate = true;
    // RDMA WRITEs: where the bytes go at the peer.
    MessageOp op = MessageOp::kSend;
    uint32_t rkey = 0;
    uint64_t remote_address = 0;
  };
  struct PostedRecv {
    WorkId id;
    Frame frame;
    Frame tail;  // post_recv_parts(): the second part (empty: none)
    uint32_t capacity() const { return frame.bytes() + tail.bytes(); }
  };

  // `link` and `pair` are the device's cable's (see SimFabric::open);
  // `reaches_peer` false when that cable goes to another rank than `peer`.
  SimEndpoint(WorldCore& core, SimFabric& fabric, uint32_t peer, uint32_t cable,
              std::string device, uint32_t link, uint32_t pair,
              bool reaches_peer);
  ~SimEndpoint() override;
  // From a BlockArena of huge pages (see block_arena.h), the general heap
  // when that fails.
  static void* operator new(size_t bytes);
  static void operator delete(void* p);

  const EndpointInfo& info() const override { return info_; }
  absl::StatusOr<Destination> destination() const override { return self_; }
  absl::Status connect(const Destination& peer) override;
  absl::Status post_recv(WorkId id, const Frame& frame) override;
  absl::Status post_send(WorkId id, const Frame& frame, uint32_t length,
                         uint32_t immediate) override;
  absl::Status post_send_parts(WorkId id, std::span<const Frame> parts,
                               std::span<const uint32_t> lengths,
                               uint32_t immediate) override;
  size_t max_parts() const override { return kMaxParts; }
  absl::Status post_recv_parts(WorkId id,
                               std::span<const Frame> parts) override;
  absl::Status post_send_without_immediate(WorkId id, const Frame& frame,
                                           uint32_t length) override;
  absl::Status post_rdma_write(WorkId id, const Frame& frame, uint32_t length,
                               uint64_t remote_address, uint32_t rkey,
                               std::optional<uint32_t> immediate) override;
  absl::StatusOr<size_t> poll(std::span<Completion> out) override;
  absl::Status move_to_error() override;

  // For WorldCore and Transport.
  uint32_t qp_num() const { return self_.qp_num; }
  uint32_t rank() const { return rank_; }
  uint32_t peer() const { return peer_; }
  uint32_t cable() const { return cable_; }
  uint32_t link() const { return link_; }
  uint32_t pair() const { return pair_; }
  // False for a queue pair on a port cabled to another rank than its peer:
  // what it sends is lost on the wire and nothing reaches it (cable() and
  // link() are then the port's cable, to that other rank).
  bool cabled() const { return cabled_; }
  uint32_t remote_qp() const { return remote_qp_; }
  QpState state() const { return contract_.state(); }
  const Destination& self() const { return self_; }

  // The oldest send not yet departed, or nullptr.
  const PostedSend* front_send() {
    return sends_.empty() ? nullptr : &sends_.front();
  }
  // Completes the oldest send with `status` (success: it departed, its
  // frame on `loan` until the completion is polled).
  void complete_front_send(WcStatus status, FrameLoan loan = {});
  bool has_recv() const { return !recvs_.empty(); }
  // The i-th oldest posted receive, or nullptr when fewer are posted.
  const PostedRecv* posted_recv(size_t i) const {
    return i < recvs_.size() ? &recvs_[i] : nullptr;
  }
  // Where the completion queue's slots lie now (the second thing a poll
  // reads, after the endpoint's first cache line).
  const void* completion_slots() const { return completions_.slots(); }
  // Whether work outstanding here still reads or writes `slab`: a send or
  // receive posted on a frame of it, not yet completed.
  bool uses_slab(const Slab* slab) const;
  // Takes the oldest posted receive. REQUIRES: has_recv().
  PostedRecv take_recv();
  // Queues a receive completion (`from_rdma_write`: the receive was
  // consumed by an RDMA WRITE with immediate).
  void complete_recv(const PostedRecv& recv, WcStatus status, uint32_t bytes,
                     uint32_t immediate, bool has_immediate = true,
                     bool from_rdma_write = false);
  // Moves to the error state and flushes every posted work request.
  void enter_error();
  // "qpn 260 to peer 1 on sim_0_1_0: RTS, 2 sends and 1 receive posted, ..."
  std::string describe() const;

  // WEFT_ASSERTs the counts of work requests outstanding against the
  // queues and the state. O(kMaxSends + kMaxRecvs).
  void check_invariants() const;

 private:
  // A queued completion, packed into 32 bytes (a Completion is 48 and
  // carries its status's name, which the status gives back): an endpoint
  // keeps room for the most it ever had queued (up to kMaxSends +
  // kMaxRecvs), and a world of 256 ranks on a mesh has 65,280 endpoints.
  struct Queued {
    uint32_t peer = 0;  // the completion's WorkId
    uint32_t slot = 0;
    uint32_t byte_len = 0;
    uint32_t immediate = 0;
    WcStatus status = WcStatus::kSuccess;
    FrameLoan loan;  // sends: ends when the completion is polled
    WorkKind kind = WorkKind::kSend;
    bool has_immediate = false;
    bool from_rdma_write = false;
    bool is_send = false;

    // Inline: every completion is packed once and unpacked once.
    static Queued of(const Completion& c, bool is_send, FrameLoan loan) {
      Queued q;
      q.peer = c.id.peer;
      q.slot = c.id.slot;
      q.byte_len = c.byte_len;
      q.immediate = c.immediate;
      q.status = c.status;
      q.loan = loan;
      q.kind = c.id.kind;
      q.has_immediate = c.has_immediate;
      q.from_rdma_write = c.from_rdma_write;
      q.is_send = is_send;
      return q;
    }
    // The status's name is looked up only for a failure (a Completion's
    // default name is success's).
    Completion completion() const {
      Completion c;
      c.id = WorkId{kind, peer, slot};
      c.status = status;
      if (status != WcStatus::kSuccess) c.status_name = wc_status_name(status);
      c.byte_len = byte_len;
      c.has_immediate = has_immediate;
      c.immediate = immediate;
      c.from_rdma_write = from_rdma_write;
      return c;
    }
  };
  static_assert(sizeof(Queued) <= 32, "a queued completion grew");
  // Completions an endpoint has room for from the start.
  static constexpr size_t kQueuedFirst = 8;
  // poll() once it knows there is something: moves completions to `out`.
  ABSL_ATTRIBUTE_NOINLINE size_t drain(std::span<Completion> out);
  // post_recv() and post_recv_parts() once the contract took the post
  // (inlined into both: every receive posted passes here).
  ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status post_checked_recv(
      const PostedRecv& recv);
  void push_completion(const Completion& c, bool is_send, FrameLoan loan = {});
  // complete_front_send() and complete_recv() without the check, for
  // flushing (the endpoint is consistent only once all are flushed).
  void queue_send_completion(WcStatus status, FrameLoan loan = {});
  void queue_recv_completion(const PostedRecv& recv, WcStatus status,
                             uint32_t bytes, uint32_t immediate,
                             bool has_immediate = true,
                             bool from_rdma_write = false);
  // Posts `send` (its ticket is given here), a SEND or an RDMA WRITE, once
  // the contract took it. Inlined into each kind of send, which hands over
  // its own `send` (no copy on the way to the queue).
  ABSL_ATTRIBUTE_ALWAYS_INLINE inline absl::Status post(PostedSend& send);
  // connect()'s refusals of a destination (kBadInput).
  absl::Status error(absl::StatusCode code, std::string_view message) const;

  // The first cache line (with the vtable pointer) holds what a poll, a
  // post and the frame path read at every frame, the completion queue's
  // indices last: in a world of many ranks an endpoint is cold whenever
  // its rank is stepped, and an empty poll then costs one miss, not two.
  WorldCore& core_;
  SimFabric& fabric_;
  // The state and the work outstanding (posted, completion not yet polled).
  UcContract contract_;
  uint32_t rank_;  // info_.rank and info_.peer, kept here for the above
  uint32_t peer_;
  uint32_t cable_;
  uint32_t link_;
  uint32_t pair_;
  bool cabled_;
  FixedRing<Queued, kMaxSends + kMaxRecvs> completions_;
  FixedRing<PostedSend, kMaxSends> sends_;
  FixedRing<PostedRecv, kMaxRecvs> recvs_;
  uint32_t remote_qp_ = 0;
  uint64_t next_ticket_ = 0;
  EndpointInfo info_;
  Destination self_;
};

}  // namespace internal
}  // namespace weft::sim

#endif  // WEFT_SIM_INTERNAL_SIM_ENDPOINT_H_
