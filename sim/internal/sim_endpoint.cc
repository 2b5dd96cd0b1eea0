#include "sim/internal/sim_endpoint.h"

#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/assert.h"
#include "fabric/errors.h"
#include "sim/internal/block_arena.h"
#include "sim/internal/sim_fabric.h"
#include "sim/internal/world_core.h"

namespace weft::sim::internal {
namespace {

// psn is 24 bits on verbs.
constexpr uint32_t kPsnMask = 0xff'ffff;
constexpr uint32_t kPsnMultiplier = 0x9e37'79b1;
// GIDs are IPv4-mapped ::ffff:10.x.y.z: 12 bits of rank, 12 of device.
constexpr uint32_t kGidNet = 10;
constexpr uint32_t kGidFieldBits = 12;
constexpr uint32_t kGidFieldMask = (1u << kGidFieldBits) - 1;

Destination make_destination(uint32_t qp_num, uint32_t rank,
                             uint32_t device_index) {
  Destination d;
  d.lid = 0;  // RoCE-style: addressed by GID
  d.qp_num = qp_num;
  d.psn = (qp_num * kPsnMultiplier) & kPsnMask;
  const uint32_t host = ((rank & kGidFieldMask) << kGidFieldBits) |
                        (device_index & kGidFieldMask);
  d.gid[10] = 0xff;
  d.gid[11] = 0xff;
  d.gid[12] = static_cast<uint8_t>(kGidNet);
  d.gid[13] = static_cast<uint8_t>(host >> 16);
  d.gid[14] = static_cast<uint8_t>(host >> 8);
  d.gid[15] = static_cast<uint8_t>(host);
  return d;
}

// Its status_name is left unset: the completion is packed into a Queued,
// which drops the name, and gets it back when it is polled.
Completion make_completion(WorkId id, WcStatus status, uint32_t bytes) {
  Completion c;
  c.id = id;
  c.status = status;
  c.byte_len = status == WcStatus::kSuccess ? bytes : 0;
  return c;
}

// Under AddressSanitizer endpoints stay on the heap, so a use after close
// is still caught.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUseArena = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kUseArena = false;
#else
constexpr bool kUseArena = true;
#endif
#else
constexpr bool kUseArena = true;
#endif

// Never destroyed: endpoints may be deleted during static destruction.
BlockArena& endpoint_arena() {
  static BlockArena* arena = new BlockArena(sizeof(SimEndpoint));
  return *arena;
}

}  // namespace

void* SimEndpoint::operator new(size_t bytes) {
  void* p = kUseArena && bytes == sizeof(SimEndpoint)
                ? endpoint_arena().allocate()
                : nullptr;
  return p != nullptr ? p : ::operator new(bytes);
}

void SimEndpoint::operator delete(void* p) {
  if (p == nullptr) return;
  if (kUseArena && endpoint_arena().owns(p)) {
    endpoint_arena().release(p);
  } else {
    ::operator delete(p);
  }
}

const char* qp_state_name(QpState state) {
  switch (state) {
    case QpState::kInit:
      return "INIT";
    case QpState::kRts:
      return "RTS";
    case QpState::kError:
      return "ERROR";
  }
  return "?";
}

SimEndpoint::SimEndpoint(WorldCore& core, SimFabric& fabric, uint32_t peer,
                         uint32_t cable, std::string device, uint32_t link,
                         uint32_t pair, bool reaches_peer)
    : core_(core),
      fabric_(fabric),
      rank_(fabric.rank()),
      peer_(peer),
      cable_(cable),
      link_(link),
      pair_(pair),
      cabled_(reaches_peer) {
  // Room for a few completions from the start, so a rank's prefetch
  // lines (WorldCore::set_prefetch_lines) can name where they lie.
  completions_.reserve(kQueuedFirst);
  info_.rank = rank_;
  info_.peer = peer;
  info_.device = std::move(device);
  self_ = make_destination(core.next_qp_num(), info_.rank,
                           fabric.device_index(info_.device));
  core.register_endpoint(this);
  fabric.add_endpoint(this);
}

SimEndpoint::~SimEndpoint() {
  // Unpolled send completions: the caller may reuse those frames now.
  for (size_t i = 0; i < completions_.size(); ++i) {
    if (completions_[i].loan.valid())
      core_.transport().end_loan(completions_[i].loan);
  }
  core_.unregister_endpoint(self_.qp_num);
  fabric_.remove_endpoint(this);
  fabric_.release_qp(info_.device);
}

absl::Status SimEndpoint::error(absl::StatusCode code,
                                std::string_view message) const {
  return make_error(
      code, {info_.rank, info_.peer, info_.device, ErrorCause::kBadInput},
      message);
}

absl::Status SimEndpoint::connect(const Destination& peer) {
  if (absl::Status s = contract_.check_connect(info_); !s.ok()) return s;
  const SimEndpoint* remote = core_.endpoint(peer.qp_num);
  if (remote == nullptr) {
    return error(absl::StatusCode::kNotFound,
                 absl::StrFormat("destination qpn %u does not exist (closed or "
                                 "never opened); exchange destinations again",
                                 peer.qp_num));
  }
  // Two queue pairs each on the cable to the other's rank must be on the
  // same cable (the simulator refuses what would lose every frame); one on
  // a port cabled elsewhere connects, as on hardware, and loses its frames.
  if (remote->rank() != info_.peer || remote->peer() != info_.rank ||
      (cabled_ && remote->cabled() && remote->cable() != cable_)) {
    return error(
        absl::StatusCode::kInvalidArgument,
        absl::StrFormat("destination qpn %u belongs to rank %u's "
                        "endpoint to rank %u on cable %u, not to rank "
                        "%u's endpoint to rank %u on cable %u",
                        peer.qp_num, remote->rank(), remote->peer(),
                        remote->cable(), info_.peer, info_.rank, cable_));
  }
  if (peer.gid != remote->self().gid) {
    return error(absl::StatusCode::kInvalidArgument,
                 absl::StrFormat("destination qpn %u has GID %s but the queue "
                                 "pair's port has %s (verbs: RTR fails with "
                                 "errno 22)",
                                 peer.qp_num, peer.gid_string(),
                                 remote->self().gid_string()));
  }
  remote_qp_ = peer.qp_num;
  contract_.connected();
  TraceEvent e =
      core_.trace_event(TraceKind::kConnect, info_.rank, info_.peer, cable_);
  core_.record(e);
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

absl::Status SimEndpoint::post_recv(WorkId id, const Frame& frame) {
  if (absl::Status s = contract_.check_recv(fabric_, info_, id, frame);
      !s.ok()) {
    return s;
  }
  return post_checked_recv(PostedRecv{id, frame, Frame()});
}

absl::Status SimEndpoint::post_recv_parts(WorkId id,
                                          std::span<const Frame> parts) {
  if (absl::Status s =
          contract_.check_recv_parts(fabric_, info_, kMaxParts, id, parts);
      !s.ok()) {
    return s;
  }
  return post_checked_recv(
      PostedRecv{id, parts[0], parts.size() > 1 ? parts[1] : Frame()});
}

inline absl::Status SimEndpoint::post_checked_recv(const PostedRecv& recv) {
  contract_.posted(WorkKind::kRecv);
  ++core_.counters().posted_recvs;
  TraceEvent e = core_.trace_event(TraceKind::kPostRecv, rank_, peer_, cable_);
  e.work = recv.id;
  e.bytes = recv.capacity();
  core_.record(e);
  if (state() == QpState::kError) {
    queue_recv_completion(recv, WcStatus::kWrFlushErr, 0, 0);
  } else {
    recvs_.push_back(recv);
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

absl::Status SimEndpoint::post_send(WorkId id, const Frame& frame,
                                    uint32_t length, uint32_t immediate) {
  if (absl::Status s = contract_.check_send(fabric_, info_, id, frame, length);
      !s.ok()) {
    return s;
  }
  PostedSend send;
  send.id = id;
  send.frame = frame;
  send.length = length;
  send.immediate = immediate;
  return post(send);
}

absl::Status SimEndpoint::post_send_parts(WorkId id,
                                          std::span<const Frame> parts,
                                          std::span<const uint32_t> lengths,
                                          uint32_t immediate) {
  if (absl::Status s = contract_.check_send_parts(fabric_, info_, kMaxParts, id,
                                                  parts, lengths);
      !s.ok()) {
    return s;
  }
  PostedSend send;
  send.id = id;
  send.frame = parts[0];
  send.length = lengths[0];
  send.immediate = immediate;
  if (parts.size() > 1) {
    send.head_length = lengths[0];
    send.tail = parts[1];
    send.length += lengths[1];
  }
  return post(send);
}

absl::Status SimEndpoint::post_send_without_immediate(WorkId id,
                                                      const Frame& frame,
                                                      uint32_t length) {
  if (absl::Status s = contract_.check_send(fabric_, info_, id, frame, length);
      !s.ok()) {
    return s;
  }
  PostedSend send;
  send.id = id;
  send.frame = frame;
  send.length = length;
  send.has_immediate = false;
  return post(send);
}

absl::Status SimEndpoint::post_rdma_write(WorkId id, const Frame& frame,
                                          uint32_t length,
                                          uint64_t remote_address,
                                          uint32_t rkey,
                                          std::optional<uint32_t> immediate) {
  if (absl::Status s = contract_.check_send(fabric_, info_, id, frame, length);
      !s.ok()) {
    return s;
  }
  PostedSend send;
  send.id = id;
  send.frame = frame;
  send.length = length;
  send.immediate = immediate.value_or(0);
  send.has_immediate = immediate.has_value();
  send.op = immediate.has_value() ? MessageOp::kRdmaWriteWithImmediate
                                  : MessageOp::kRdmaWrite;
  send.rkey = rkey;
  send.remote_address = remote_address;
  return post(send);
}

inline absl::Status SimEndpoint::post(PostedSend& send) {
  contract_.posted(WorkKind::kSend);
  ++core_.counters().posted_sends;
  TraceEvent e = core_.trace_event(TraceKind::kPostSend, rank_, peer_, cable_);
  e.work = send.id;
  e.sequence = send.immediate;
  e.bytes = send.length;
  e.op = send.op;
  e.rkey = send.rkey;
  core_.record(e);
  if (state() == QpState::kError) {
    push_completion(make_completion(send.id, WcStatus::kWrFlushErr, 0), true);
  } else {
    send.ticket = next_ticket_++;
    sends_.push_back(send);
    core_.transport().schedule_departure(*this, send.ticket, send.length);
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

absl::StatusOr<size_t> SimEndpoint::poll(std::span<Completion> out) {
  // Most polls find nothing: leave before any other work.
  if (completions_.empty()) return size_t{0};
  return drain(out);
}

size_t SimEndpoint::drain(std::span<Completion> out) {
  size_t n = 0;
  while (n < out.size() && !completions_.empty()) {
    const Queued& q = completions_.front();
    out[n++] = q.completion();
    contract_.polled(q.is_send ? WorkKind::kSend : WorkKind::kRecv);
    // Polled: from now on the caller may reuse a sent frame.
    if (q.loan.valid()) core_.transport().end_loan(q.loan);
    completions_.pop_front();
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return n;
}

bool SimEndpoint::uses_slab(const Slab* slab) const {
  for (size_t i = 0; i < sends_.size(); ++i) {
    if (sends_[i].frame.slab() == slab || sends_[i].tail.slab() == slab)
      return true;
  }
  for (size_t i = 0; i < recvs_.size(); ++i) {
    if (recvs_[i].frame.slab() == slab || recvs_[i].tail.slab() == slab)
      return true;
  }
  // A departed send whose completion is not polled yet may still be read
  // from its frames (FrameLoan).
  for (size_t i = 0; i < completions_.size(); ++i) {
    const FrameLoan& loan = completions_[i].loan;
    if (loan.valid() && core_.transport().loan_reads(loan, *slab)) return true;
  }
  return false;
}

void SimEndpoint::push_completion(const Completion& c, bool is_send,
                                  FrameLoan loan) {
  completions_.push_back(Queued::of(c, is_send, loan));
  core_.note_completion(*this, c);
}

void SimEndpoint::complete_front_send(WcStatus status, FrameLoan loan) {
  queue_send_completion(status, loan);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void SimEndpoint::queue_send_completion(WcStatus status, FrameLoan loan) {
  const PostedSend& s = sends_.front();
  push_completion(make_completion(s.id, status, s.length), true, loan);
  sends_.pop_front();
}

// Not checked here: the receive is outstanding but in neither queue until
// complete_recv() (which checks) queues its completion.
SimEndpoint::PostedRecv SimEndpoint::take_recv() {
  PostedRecv r = recvs_.front();
  recvs_.pop_front();
  return r;
}

void SimEndpoint::complete_recv(const PostedRecv& recv, WcStatus status,
                                uint32_t bytes, uint32_t immediate,
                                bool has_immediate, bool from_rdma_write) {
  queue_recv_completion(recv, status, bytes, immediate, has_immediate,
                        from_rdma_write);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void SimEndpoint::queue_recv_completion(const PostedRecv& recv, WcStatus status,
                                        uint32_t bytes, uint32_t immediate,
                                        bool has_immediate,
                                        bool from_rdma_write) {
  Completion c = make_completion(recv.id, status, bytes);
  if (status == WcStatus::kSuccess && has_immediate) {
    c.has_immediate = true;
    c.immediate = immediate;
  }
  c.from_rdma_write = from_rdma_write;
  push_completion(c, false);
}

absl::Status SimEndpoint::move_to_error() {
  if (state() != QpState::kError) enter_error();
  return absl::OkStatus();
}

void SimEndpoint::enter_error() {
  contract_.entered_error();
  // Checked once flushed: in error, nothing is posted.
  while (!sends_.empty()) queue_send_completion(WcStatus::kWrFlushErr);
  while (!recvs_.empty())
    queue_recv_completion(take_recv(), WcStatus::kWrFlushErr, 0, 0);
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void SimEndpoint::check_invariants() const {
  WEFT_ASSERT(rank_ == info_.rank && peer_ == info_.peer,
              "an endpoint's cached rank or peer differs from its info");
  contract_.check_invariants();
  const uint32_t sends_outstanding = contract_.sends_outstanding();
  const uint32_t recvs_outstanding = contract_.recvs_outstanding();
  // Outstanding from posting until the completion is polled: each is still
  // posted or has its completion queued, never both.
  uint32_t send_completions = 0;
  for (size_t i = 0; i < completions_.size(); ++i) {
    const Queued& q = completions_[i];
    send_completions += q.is_send ? 1 : 0;
    WEFT_ASSERT(
        !q.loan.valid() || (q.is_send && q.status == WcStatus::kSuccess),
        "a frame is on loan for a completion other than a sent one");
  }
  WEFT_ASSERT(sends_.size() + send_completions == sends_outstanding,
              "an endpoint's sends outstanding miscount its posted sends "
              "and their queued completions");
  WEFT_ASSERT(recvs_.size() + (completions_.size() - send_completions) ==
                  recvs_outstanding,
              "an endpoint's receives outstanding miscount its posted "
              "receives and their queued completions");
  // An error flushes everything posted; sends are only posted once
  // connected.
  WEFT_ASSERT(state() != QpState::kError || (sends_.empty() && recvs_.empty()),
              "an endpoint in error still has work requests posted");
  WEFT_ASSERT(state() == QpState::kRts || sends_.empty(),
              "an endpoint not ready to send has sends posted");
  for (size_t i = 0; i < sends_.size(); ++i) {
    WEFT_ASSERT(sends_[i].ticket < next_ticket_ &&
                    (i == 0 || sends_[i - 1].ticket < sends_[i].ticket),
                "an endpoint's posted sends are out of posting order");
  }
}

std::string SimEndpoint::describe() const {
  std::string out = absl::StrFormat(
      "qpn %u to peer %u on %s: %s, %u sends and %u receives outstanding "
      "(%u not yet departed, %u receives still posted, %u completions not "
      "polled)",
      self_.qp_num, info_.peer, info_.device, qp_state_name(state()),
      contract_.sends_outstanding(), contract_.recvs_outstanding(),
      sends_.size(), recvs_.size(), completions_.size());
  return out;
}

}  // namespace weft::sim::internal
