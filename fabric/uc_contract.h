// UcContract: what every fabric refuses before a post or a connect, checked
// in one place with one set of messages and error causes
// (docs/architecture.md, "The fabric contract"). Each fabric's endpoint
// owns one and asks it first, in every post and in connect(), before its
// own code runs; the conformance suite (tests/conformance) holds every
// fabric to the same refusals. It keeps what the checks need: the work
// requests outstanding (posted, completion not yet polled, as on verbs,
// where a queue slot frees when its completion is consumed) and where the
// pair stands (INIT, RTS, ERROR).
//
// The refusals, in the order they are checked, each an absl::Status naming
// rank, peer and device with its ErrorCause (fabric/errors.h):
//  1. InvalidArgument (kBadInput): no parts, more than Endpoint::kMaxParts,
//     or a send whose lengths do not pair with its parts.
//     Unimplemented (kResource): more parts than the endpoint's max_parts()
//     (the engine then sends or receives one frame at a time).
//  2. InvalidArgument (kBadInput): a send posted with a receive's work id,
//     or a receive with a send's.
//  3. InvalidArgument (kBadInput): a frame outside every slab and
//     registration of the endpoint's fabric (an empty Frame included); a
//     send longer than its frame; a message of more than 2^32 - 1 bytes.
//  4. FailedPrecondition (kBadInput): a send in INIT, before connect() (in
//     ERROR a send is taken and flushed, as verbs does); connect() on a
//     pair that is not in INIT.
//  5. ResourceExhausted (kResource): a post with Endpoint::kMaxSends sends
//     (kMaxRecvs receives) outstanding.
//
// The checks are inline templates over the fabric's own memory type (what
// answers "does this frame lie in my slabs or registrations?"), so a post
// costs what each fabric's own checks cost before; only a refusal leaves
// the inline path. Not thread-safe, like the endpoint that owns it.
#ifndef WEFT_FABRIC_UC_CONTRACT_H_
#define WEFT_FABRIC_UC_CONTRACT_H_

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "fabric/assert.h"
#include "fabric/endpoint.h"
#include "fabric/slab.h"
#include "fabric/work_id.h"

namespace weft {

// What a fabric's endpoints ask of its memory: whether `frame` lies inside
// a slab the fabric created or user memory registered with it.
template <typename Memory>
concept FabricMemory = requires(const Memory& memory, const Frame& frame) {
  { memory.owns(frame) } -> std::convertible_to<bool>;
};

class UcContract {
 public:
  // The queue pair's state as the contract sees it (verbs' INIT, RTS and
  // ERROR; a fabric may have finer states of its own within these).
  enum class State : uint8_t { kInit, kRts, kError };

  State state() const { return state_; }
  uint32_t sends_outstanding() const { return sends_; }
  uint32_t recvs_outstanding() const { return recvs_; }

  // connect(): FailedPrecondition unless the pair is in INIT.
  absl::Status check_connect(const EndpointInfo& info) const {
    if (state_ == State::kInit) return absl::OkStatus();
    return refuse_connect(info);
  }
  // The fabric's transitions, as they happen: connect() succeeded (INIT to
  // RTS), and the pair entered the error state (from any state).
  void connected();
  void entered_error() { state_ = State::kError; }

  template <FabricMemory Memory>
  absl::Status check_recv(const Memory& memory, const EndpointInfo& info,
                          WorkId id, const Frame& frame) const {
    return check_post(memory, info, 1, id, WorkKind::kRecv, {&frame, 1}, {});
  }
  template <FabricMemory Memory>
  absl::Status check_recv_parts(const Memory& memory, const EndpointInfo& info,
                                size_t max_parts, WorkId id,
                                std::span<const Frame> parts) const {
    return check_post(memory, info, max_parts, id, WorkKind::kRecv, parts, {});
  }
  // A send of one frame: post_send(), post_send_without_immediate(),
  // post_rdma_write().
  template <FabricMemory Memory>
  absl::Status check_send(const Memory& memory, const EndpointInfo& info,
                          WorkId id, const Frame& frame,
                          uint32_t length) const {
    return check_post(memory, info, 1, id, WorkKind::kSend, {&frame, 1},
                      {&length, 1});
  }
  template <FabricMemory Memory>
  absl::Status check_send_parts(const Memory& memory, const EndpointInfo& info,
                                size_t max_parts, WorkId id,
                                std::span<const Frame> parts,
                                std::span<const uint32_t> lengths) const {
    return check_post(memory, info, max_parts, id, WorkKind::kSend, parts,
                      lengths);
  }

  // Counting: a post the fabric took, and each completion poll() hands
  // out. REQUIRES (polled): one of that kind is outstanding. Inline: every
  // post and every completion counts.
  void posted(WorkKind kind) {
    ++(kind == WorkKind::kSend ? sends_ : recvs_);
    WEFT_CHECK_INVARIANTS_OF(*this);
  }
  void polled(WorkKind kind) {
    uint32_t& count = kind == WorkKind::kSend ? sends_ : recvs_;
    WEFT_ASSERT(count > 0, "a completion polled for work never posted");
    --count;
  }

  // WEFT_ASSERTs the counts within the limits. O(1).
  void check_invariants() const;

 private:
  static constexpr uint64_t kMaxMessageBytes = ~uint32_t{0};

  // Every post's checks, in the order above. `lengths`: a send's, one per
  // part (a receive has none).
  template <FabricMemory Memory>
  absl::Status check_post(const Memory& memory, const EndpointInfo& info,
                          size_t max_parts, WorkId id, WorkKind kind,
                          std::span<const Frame> parts,
                          std::span<const uint32_t> lengths) const {
    const bool send = kind == WorkKind::kSend;
    if (parts.empty() || parts.size() > max_parts ||
        (send && lengths.size() != parts.size())) {
      return refuse_shape(info, max_parts, parts.size(), lengths.size(), send);
    }
    if (id.kind != kind) return refuse_kind(info, id, send);
    uint64_t total = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
      // A post of one frame names "the frame", one of parts "part i".
      const int part = parts.size() == 1 ? -1 : static_cast<int>(i);
      if (!memory.owns(parts[i])) return refuse_memory(info, send, part);
      if (!send) continue;
      if (lengths[i] > parts[i].bytes()) {
        return refuse_length(info, part, lengths[i], parts[i].bytes());
      }
      total += lengths[i];
    }
    if (total > kMaxMessageBytes) return refuse_total(info, total);
    if (send && state_ == State::kInit) return refuse_not_connected(info);
    if ((send ? sends_ : recvs_) >=
        (send ? Endpoint::kMaxSends : Endpoint::kMaxRecvs)) {
      return refuse_outstanding(info, send);
    }
    return absl::OkStatus();
  }

  // The refusals' statuses, out of line (and cold): only a refusal builds
  // one.
  ABSL_ATTRIBUTE_COLD static absl::Status refuse_shape(const EndpointInfo& info,
                                                       size_t max_parts,
                                                       size_t parts,
                                                       size_t lengths,
                                                       bool send);
  ABSL_ATTRIBUTE_COLD static absl::Status refuse_kind(const EndpointInfo& info,
                                                      WorkId id, bool send);
  // `part` -1: the frame of a one-frame post.
  ABSL_ATTRIBUTE_COLD static absl::Status refuse_memory(
      const EndpointInfo& info, bool send, int part);
  ABSL_ATTRIBUTE_COLD static absl::Status refuse_length(
      const EndpointInfo& info, int part, uint32_t length,
      uint32_t frame_bytes);
  ABSL_ATTRIBUTE_COLD static absl::Status refuse_total(const EndpointInfo& info,
                                                       uint64_t total);
  ABSL_ATTRIBUTE_COLD static absl::Status refuse_not_connected(
      const EndpointInfo& info);
  ABSL_ATTRIBUTE_COLD absl::Status refuse_connect(
      const EndpointInfo& info) const;
  ABSL_ATTRIBUTE_COLD absl::Status refuse_outstanding(const EndpointInfo& info,
                                                      bool send) const;

  uint32_t sends_ = 0;
  uint32_t recvs_ = 0;
  State state_ = State::kInit;
};

}  // namespace weft

#endif  // WEFT_FABRIC_UC_CONTRACT_H_
