// Endpoint: one unreliable-connected (UC) queue pair to one peer over one
// cable, with exactly the semantics of verbs UC on every fabric:
//
//  - post_recv() queues a receive; post_send() queues a SEND with a 32-bit
//    immediate. At most kMaxSends sends and kMaxRecvs receives may be
//    outstanding; posting past that is ResourceExhausted, never a block.
//  - A send completes when it has left the sender, not when it arrived.
//    Nothing is ever retransmitted.
//  - A message that arrives when no receive is posted is dropped silently.
//    Receives are consumed in posting order. A message longer than the
//    receive's frame completes that receive with IBV_WC_LOC_LEN_ERR.
//  - After an error completion the pair is in the error state: every other
//    outstanding and later work request completes with IBV_WC_WR_FLUSH_ERR.
//  - A dead peer produces no completion at all; callers need deadlines.
//
// Every fabric's endpoint refuses a post that breaks a REQUIRES below (and
// a send before connect(), a connect() after one) the same way, with one
// set of messages and error causes: fabric/uc_contract.h, checked in
// front of the fabric's own code. This interface stays what users
// implement and mock (fabric/testing/mock_fabric.h).
//
// Not thread-safe: one thread drives an endpoint at a time.
#ifndef WEFT_FABRIC_ENDPOINT_H_
#define WEFT_FABRIC_ENDPOINT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/completion.h"
#include "fabric/destination.h"
#include "fabric/slab.h"
#include "fabric/work_id.h"

namespace weft {

// Who is at each end, for error messages and traces.
struct EndpointInfo {
  uint32_t rank = 0;
  uint32_t peer = 0;
  std::string device;
};

class Endpoint {
 public:
  static constexpr uint32_t kMaxSends = 32;
  static constexpr uint32_t kMaxRecvs = 32;
  // Largest completion batch poll() is asked to fill at once.
  static constexpr size_t kMaxPollBatch = 64;

  virtual ~Endpoint() = default;

  virtual const EndpointInfo& info() const = 0;

  // What the peer passes to its connect().
  virtual absl::StatusOr<Destination> destination() const = 0;
  // Moves the pair to ready-to-send towards `peer`. REQUIRES: called once.
  virtual absl::Status connect(const Destination& peer) = 0;

  // REQUIRES: `frame` lies in a slab created by this endpoint's fabric or
  // memory registered with it; `id` is a receive's.
  virtual absl::Status post_recv(WorkId id, const Frame& frame) = 0;
  // Sends the first `length` bytes of `frame` with `immediate` (host order;
  // big-endian on the wire). REQUIRES: connect() ran; `frame` as above,
  // length <= frame.bytes(); `id` is a send's.
  virtual absl::Status post_send(WorkId id, const Frame& frame, uint32_t length,
                                 uint32_t immediate) = 0;
  // Scatter and gather (verbs' sg_list): a message made of, or received
  // into, up to kMaxParts frames back to back, each in a slab of this
  // endpoint's fabric (its own or registered user memory). weft sends a
  // frame's 64-byte header from its own slab and the payload straight from
  // registered user memory, and receives the same way.
  static constexpr size_t kMaxParts = 2;
  // Parts this endpoint takes in one post_send_parts()/post_recv_parts()
  // (1 to kMaxParts). With 2 the engine keeps each frame's 64-byte header
  // apart from its payload (a lane's headers side by side, each payload
  // page-aligned), so a small control frame writes a few bytes of a shared
  // page instead of a page of its own. Default: 1.
  virtual size_t max_parts() const { return 1; }
  // Sends the first lengths[i] bytes of parts[i], in order, as one message
  // with `immediate`. REQUIRES: 1 <= parts.size() == lengths.size() <=
  // kMaxParts, lengths[i] <= parts[i].bytes(). Default: one part goes to
  // post_send(); more are Unimplemented.
  virtual absl::Status post_send_parts(WorkId id, std::span<const Frame> parts,
                                       std::span<const uint32_t> lengths,
                                       uint32_t immediate) {
    if (parts.size() == 1 && lengths.size() == 1) {
      return post_send(id, parts[0], lengths[0], immediate);
    }
    return absl::UnimplementedError("this fabric sends only one frame");
  }
  // Receives one message scattered over `parts` in order: its first
  // parts[0].bytes() bytes into parts[0], the next into parts[1], ...; a
  // message longer than all parts together is IBV_WC_LOC_LEN_ERR. The
  // completion's byte length is the whole message's. REQUIRES: 1 <=
  // parts.size() <= kMaxParts. Default: one part goes to post_recv(); more
  // are Unimplemented.
  virtual absl::Status post_recv_parts(WorkId id,
                                       std::span<const Frame> parts) {
    if (parts.size() == 1) return post_recv(id, parts[0]);
    return absl::UnimplementedError("this fabric receives into one frame");
  }

  // A SEND without an immediate (verbs' IBV_WR_SEND): its receive completes
  // with has_immediate false. weft's own traffic always carries one; the
  // simulator offers this for the verbs programs of others it runs.
  // Default: Unimplemented.
  virtual absl::Status post_send_without_immediate(WorkId id,
                                                   const Frame& frame,
                                                   uint32_t length) {
    (void)id;
    (void)frame;
    (void)length;
    return absl::UnimplementedError("this fabric sends only with an immediate");
  }
  // An RDMA WRITE (verbs' IBV_WR_RDMA_WRITE; with `immediate`,
  // IBV_WR_RDMA_WRITE_WITH_IMM): the first `length` bytes of `frame` go to
  // [remote_address, remote_address + length) of the peer's memory region
  // `rkey`. It completes on departure, like a SEND. At the peer a write
  // consumes no receive; one with an immediate consumes the oldest posted
  // receive (its frame untouched) and completes it with from_rdma_write,
  // the immediate and byte_len `length`. As UC does, the peer drops it
  // silently when the key names no region open to remote writes, the range
  // is outside the region, or (with an immediate) no receive is posted.
  // weft's own traffic never writes; the simulator offers this for the
  // verbs programs of others it runs. Default: Unimplemented.
  virtual absl::Status post_rdma_write(WorkId id, const Frame& frame,
                                       uint32_t length, uint64_t remote_address,
                                       uint32_t rkey,
                                       std::optional<uint32_t> immediate) {
    (void)id;
    (void)frame;
    (void)length;
    (void)remote_address;
    (void)rkey;
    (void)immediate;
    return absl::UnimplementedError("this fabric does not carry RDMA writes");
  }

  // Moves the queue pair to the error state (verbs: ibv_modify_qp to
  // IBV_QPS_ERR): every outstanding and every later work request completes
  // with IBV_WC_WR_FLUSH_ERR. For verbs programs of others the simulator
  // runs. Default: Unimplemented.
  virtual absl::Status move_to_error() {
    return absl::UnimplementedError(
        "this fabric does not move queue pairs to the error state on request");
  }

  // Why the endpoint entered the error state, where the fabric knows more
  // than a completion's status can say (the TCP fabric: which peer, at
  // which address, closed or reset the connection, or could not be
  // reached); OK otherwise. The error completions' own error carries it.
  // Default: OK (a verbs provider says no more than the status).
  virtual absl::Status failure() const { return absl::OkStatus(); }

  // Fills a prefix of `out` with finished work; returns how many. Never
  // blocks. An error return means the endpoint itself failed (not a work
  // request: those come back as completions with a status).
  virtual absl::StatusOr<size_t> poll(std::span<Completion> out) = 0;

  // Whether the peer closed its end on purpose (its group or program
  // ended) and said so, on a fabric that can tell (TCP: the peer's
  // goodbye). That is no error: everything the peer sent before it is
  // delivered; later sends complete and are dropped, as UC drops a message
  // nobody receives; posted receives stay posted, and nothing more
  // arrives. A peer that crashed or was cut off never counts as departed:
  // it stays silent (UC) or fails the endpoint (a TCP connection closed or
  // reset without a goodbye). Default: false (verbs UC cannot tell).
  virtual bool peer_departed() const { return false; }
};

}  // namespace weft

#endif  // WEFT_FABRIC_ENDPOINT_H_
