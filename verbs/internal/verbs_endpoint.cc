#include "verbs/internal/verbs_endpoint.h"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/logging.h"
#include "verbs/device_info.h"
#include "verbs/internal/verbs_error.h"

namespace weft::verbs::internal {
namespace {

constexpr int kInitMask = abi::IBV_QP_STATE | abi::IBV_QP_PKEY_INDEX |
                          abi::IBV_QP_PORT | abi::IBV_QP_ACCESS_FLAGS;
constexpr int kRtrMask = abi::IBV_QP_STATE | abi::IBV_QP_AV |
                         abi::IBV_QP_PATH_MTU | abi::IBV_QP_DEST_QPN |
                         abi::IBV_QP_RQ_PSN;
constexpr int kRtsMask = abi::IBV_QP_STATE | abi::IBV_QP_SQ_PSN;

// A zeroed attribute struct, as verbs expects unused fields to be.
abi::ibv_qp_attr zeroed_attr() {
  abi::ibv_qp_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  return attr;
}

}  // namespace

VerbsEndpoint::VerbsEndpoint(Setup setup) : setup_(std::move(setup)) {
  setup_.domain->add_endpoint();
}

VerbsEndpoint::~VerbsEndpoint() {
  const VerbsApi& api = setup_.domain->api();
  if (qp_ != nullptr) api.destroy_qp(qp_);
  if (cq_ != nullptr) api.destroy_cq(cq_);
  // Work never completed is gone with the queue pair: its regions are free.
  for (const PostedSend& p : posted_sends_) unpin(p.pinned);
  for (const PostedRecv& p : posted_recvs_) unpin(p.pinned);
  setup_.domain->remove_endpoint();
}

ErrorPlace VerbsEndpoint::place(ErrorCause cause) const {
  ErrorPlace p;
  p.rank = setup_.info.rank;
  p.peer = setup_.info.peer;
  p.device = setup_.info.device;
  p.cause = cause;
  return p;
}

const abi::ibv_context_ops& VerbsEndpoint::ops() const {
  return setup_.domain->device().context()->ops;
}

absl::StatusOr<std::unique_ptr<VerbsEndpoint>> VerbsEndpoint::create(
    Setup setup) {
  std::unique_ptr<VerbsEndpoint> endpoint(new VerbsEndpoint(std::move(setup)));
  if (absl::Status s = endpoint->create_queues(); !s.ok()) return s;
  abi::ibv_qp_attr attr = zeroed_attr();
  attr.qp_state = abi::IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = kPort;
  attr.qp_access_flags = kAccessFlags;
  if (const int err = endpoint->modify(attr, kInitMask); err != 0) {
    return endpoint->modify_error("INIT", err);
  }
  return endpoint;
}

absl::Status VerbsEndpoint::create_queues() {
  const VerbsApi& api = setup_.domain->api();
  errno = 0;
  cq_ = api.create_cq(setup_.domain->device().context(),
                      kCompletionQueueEntries, nullptr, nullptr, 0);
  if (cq_ == nullptr) {
    return verbs_error(place(),
                       absl::StrFormat("creating a completion queue of %d "
                                       "entries (ibv_create_cq)",
                                       kCompletionQueueEntries),
                       errno);
  }
  abi::ibv_qp_init_attr init;
  std::memset(&init, 0, sizeof(init));
  init.send_cq = cq_;
  init.recv_cq = cq_;
  init.cap.max_send_wr = kMaxSends;
  init.cap.max_recv_wr = kMaxRecvs;
  init.cap.max_send_sge = setup_.domain->sges();
  init.cap.max_recv_sge = setup_.domain->sges();
  init.cap.max_inline_data = 0;
  init.qp_type = abi::IBV_QPT_UC;
  init.sq_sig_all = 0;
  errno = 0;
  qp_ = api.create_qp(setup_.domain->pd(), &init);
  if (qp_ == nullptr) {
    return verbs_error(
        place(), "creating a UC queue pair (ibv_create_qp)", errno,
        "Apple allows 10 queue pairs per device: close endpoints no longer "
        "needed, or spread peers over more cables");
  }
  return absl::OkStatus();
}

int VerbsEndpoint::modify(abi::ibv_qp_attr& attr, int mask) {
  errno = 0;
  const int rc = setup_.domain->api().modify_qp(qp_, &attr, mask);
  return rc == 0 ? 0 : errno_of(rc, errno);
}

absl::Status VerbsEndpoint::modify_error(const char* state, int err,
                                         std::string_view hint) const {
  return verbs_error(
      place(),
      absl::StrFormat("moving the queue pair (qpn %u) to %s (ibv_modify_qp)",
                      qp_->qp_num, state),
      err, hint);
}

absl::StatusOr<Destination> VerbsEndpoint::destination() const {
  Destination d;
  d.lid = setup_.lid;
  d.qp_num = qp_->qp_num;
  d.psn = kPacketSequenceNumber;
  d.gid = setup_.gid.gid;
  return d;
}

absl::Status VerbsEndpoint::move_to_rtr(const Destination& peer) {
  abi::ibv_qp_attr attr = zeroed_attr();
  attr.qp_state = abi::IBV_QPS_RTR;
  attr.path_mtu = kPathMtu;
  attr.dest_qp_num = peer.qp_num;
  attr.rq_psn = peer.psn;
  attr.ah_attr.dlid = peer.lid;
  attr.ah_attr.port_num = kPort;
  if (peer.gid_is_global()) {
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.hop_limit = kHopLimit;
    std::memcpy(attr.ah_attr.grh.dgid.raw, peer.gid.data(), peer.gid.size());
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(setup_.gid.index);
  }
  const int err = modify(attr, kRtrMask);
  if (err == 0) return absl::OkStatus();
  // Apple reports a GID it cannot use or reach as errno 22 (EINVAL) or 60
  // (ETIMEDOUT on macOS; weft's simulated provider gives ETIMEDOUT too).
  if (err != EINVAL && err != ETIMEDOUT) return modify_error("RTR", err);
  return modify_error(
      "RTR", err,
      absl::StrFormat(
          "bad or unreachable GID: the peer's GID %s (qpn %u) cannot be "
          "reached from our %s GID %s at index %d; check that both ends use "
          "the devices of the same cable and that both Thunderbolt "
          "interfaces have IPv4 addresses in one subnet",
          peer.gid_string(), peer.qp_num, gid_kind_name(setup_.gid.kind),
          gid_text(setup_.gid.gid), setup_.gid.index));
}

absl::Status VerbsEndpoint::connect(const Destination& peer) {
  if (absl::Status s = contract_.check_connect(setup_.info); !s.ok()) {
    return s;
  }
  if (absl::Status s = move_to_rtr(peer); !s.ok()) return s;
  abi::ibv_qp_attr attr = zeroed_attr();
  attr.qp_state = abi::IBV_QPS_RTS;
  attr.sq_psn = kPacketSequenceNumber;
  if (const int err = modify(attr, kRtsMask); err != 0) {
    return modify_error("RTS", err);
  }
  contract_.connected();
  base::log(base::LogLevel::kInfo,
            "rank %u: connected to peer %u cable %u on %s port %u: qpn %u, GID "
            "index %d (%s) -> peer qpn %u, lid %u, GID %s",
            setup_.info.rank, setup_.info.peer, setup_.cable,
            setup_.info.device, static_cast<unsigned>(kPort), qp_->qp_num,
            setup_.gid.index, gid_kind_name(setup_.gid.kind), peer.qp_num,
            peer.lid, peer.gid_string());
  if (setup_.trace != nullptr) {
    setup_.trace->connect(setup_.info.peer, setup_.cable);
  }
  return absl::OkStatus();
}

absl::StatusOr<VerbsEndpoint::Sges> VerbsEndpoint::sges_for(
    std::span<const Frame> parts, std::span<const uint32_t> lengths) {
  RegistrationCache& regions = setup_.domain->regions();
  Sges out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Slab* slab = parts[i].slab();
    absl::StatusOr<uint32_t> lkey = regions.acquire(slab->id());
    if (!lkey.ok()) {
      unpin(out.pinned);
      return lkey.status();
    }
    out.pinned.slab_ids[out.pinned.count++] = slab->id();
    out.entries[i].addr = reinterpret_cast<uint64_t>(parts[i].data());
    out.entries[i].length = lengths[i];
    out.entries[i].lkey = *lkey;
  }
  return out;
}

void VerbsEndpoint::unpin(const Pinned& pinned) {
  for (uint32_t i = 0; i < pinned.count; ++i) {
    setup_.domain->regions().release_work(pinned.slab_ids[i]);
  }
}

absl::Status VerbsEndpoint::post_error(const char* what, int rc,
                                       int saved_errno) const {
  const int err = errno_of(rc, saved_errno);
  return verbs_error(place(), what, err,
                     err == ENOMEM ? "the library's queue is full (Apple "
                                     "fails past ~63 outstanding requests)"
                                   : "");
}

size_t VerbsEndpoint::max_parts() const {
  return std::min<size_t>(setup_.domain->sges(), kMaxParts);
}

absl::Status VerbsEndpoint::post_recv(WorkId id, const Frame& frame) {
  return post_recv_parts(id, std::span<const Frame>(&frame, 1));
}

absl::Status VerbsEndpoint::post_recv_parts(WorkId id,
                                            std::span<const Frame> parts) {
  if (absl::Status s = contract_.check_recv_parts(
          *setup_.domain, setup_.info, max_parts(), id, parts);
      !s.ok()) {
    return s;
  }
  std::array<uint32_t, kMaxParts> lengths{};
  uint32_t bytes = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    lengths[i] = parts[i].bytes();
    bytes += parts[i].bytes();
  }
  absl::StatusOr<Sges> sges =
      sges_for(parts, std::span(lengths.data(), parts.size()));
  if (!sges.ok()) return sges.status();
  abi::ibv_recv_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = id.encode();
  wr.sg_list = sges->entries.data();
  wr.num_sge = static_cast<int>(parts.size());
  abi::ibv_recv_wr* bad = nullptr;
  errno = 0;
  const int rc = ops().post_recv(qp_, &wr, &bad);
  if (rc != 0) {
    unpin(sges->pinned);
    return post_error("posting a receive (post_recv)", rc, errno);
  }
  contract_.posted(WorkKind::kRecv);
  posted_recvs_.push_back({wr.wr_id, sges->pinned});
  if (setup_.trace != nullptr) {
    setup_.trace->post_recv(setup_.info.peer, setup_.cable, id, bytes);
  }
  return absl::OkStatus();
}

absl::Status VerbsEndpoint::post_send(WorkId id, const Frame& frame,
                                      uint32_t length, uint32_t immediate) {
  return post_send_parts(id, std::span<const Frame>(&frame, 1),
                         std::span<const uint32_t>(&length, 1), immediate);
}

absl::Status VerbsEndpoint::post_send_parts(WorkId id,
                                            std::span<const Frame> parts,
                                            std::span<const uint32_t> lengths,
                                            uint32_t immediate) {
  if (absl::Status s = contract_.check_send_parts(
          *setup_.domain, setup_.info, max_parts(), id, parts, lengths);
      !s.ok()) {
    return s;
  }
  uint32_t length = 0;  // the contract checked that it fits
  for (const uint32_t l : lengths) length += l;
  absl::StatusOr<Sges> sges = sges_for(parts, lengths);
  if (!sges.ok()) return sges.status();
  abi::ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = id.encode();
  wr.sg_list = sges->entries.data();
  wr.num_sge = static_cast<int>(parts.size());
  wr.opcode = abi::IBV_WR_SEND_WITH_IMM;
  wr.send_flags = abi::IBV_SEND_SIGNALED;
  wr.imm_data = htonl(immediate);
  abi::ibv_send_wr* bad = nullptr;
  errno = 0;
  const int rc = ops().post_send(qp_, &wr, &bad);
  if (rc != 0) {
    unpin(sges->pinned);
    return post_error("posting a send (post_send)", rc, errno);
  }
  contract_.posted(WorkKind::kSend);
  const uint32_t bytes = length;
  TimeNs posted_ns = 0;
  if (setup_.trace != nullptr) {
    posted_ns = setup_.trace->now_ns();
    setup_.trace->post_send(setup_.info.peer, setup_.cable, id, bytes,
                            immediate);
  }
  posted_sends_.push_back(
      {wr.wr_id, bytes, immediate, posted_ns, sges->pinned});
  return absl::OkStatus();
}

Completion VerbsEndpoint::to_completion(const abi::ibv_wc& wc,
                                        const WorkId& id) {
  Completion c;
  c.id = id;
  c.status = static_cast<WcStatus>(wc.status);
  c.status_name = setup_.domain->device().library().status_name(wc.status);
  // Work this endpoint posted is outstanding until its completion is
  // polled here.
  if (id.kind == WorkKind::kSend) {
    auto it =
        std::find_if(posted_sends_.begin(), posted_sends_.end(),
                     [&](const PostedSend& p) { return p.wr_id == wc.wr_id; });
    if (it != posted_sends_.end()) {
      contract_.polled(WorkKind::kSend);
      c.byte_len = it->length;
      record(c, &*it);
      unpin(it->pinned);
      posted_sends_.erase(it);
    }
    return c;
  }
  auto it =
      std::find_if(posted_recvs_.begin(), posted_recvs_.end(),
                   [&](const PostedRecv& p) { return p.wr_id == wc.wr_id; });
  if (it != posted_recvs_.end()) {
    contract_.polled(WorkKind::kRecv);
    unpin(it->pinned);
    posted_recvs_.erase(it);
  }
  // Verbs defines byte_len and the immediate only for successful receives.
  if (c.ok()) {
    c.byte_len = wc.byte_len;
    c.has_immediate = (wc.wc_flags & abi::IBV_WC_WITH_IMM) != 0;
    c.immediate = c.has_immediate ? ntohl(wc.imm_data) : 0;
  }
  record(c, nullptr);
  return c;
}

void VerbsEndpoint::record(const Completion& c, const PostedSend* sent) {
  timeline::TimelineRecorder* trace = setup_.trace;
  if (trace == nullptr) return;
  const uint32_t peer = setup_.info.peer;
  trace->completion(peer, setup_.cable, c.id, c.status, c.byte_len,
                    sent != nullptr ? sent->immediate : c.immediate);
  if (!c.ok()) return;
  if (sent != nullptr) {
    trace->sent(peer, setup_.cable, sent->posted_ns, ++frames_sent_,
                sent->immediate, sent->length);
  } else {
    trace->arrived(peer, setup_.cable, ++frames_arrived_, c.immediate,
                   c.byte_len);
  }
}

absl::StatusOr<size_t> VerbsEndpoint::poll(std::span<Completion> out) {
  std::array<abi::ibv_wc, kMaxPollBatch> wcs;
  const size_t want = std::min(out.size(), wcs.size());
  if (want == 0) return size_t{0};
  errno = 0;
  const int rc = ops().poll_cq(cq_, static_cast<int>(want), wcs.data());
  if (rc < 0) {
    return verbs_error(place(), "polling the completion queue (poll_cq)",
                       errno_of(rc, errno));
  }
  const size_t n = std::min(static_cast<size_t>(rc), want);
  for (size_t i = 0; i < n; ++i) {
    std::optional<WorkId> id = WorkId::decode(wcs[i].wr_id);
    if (!id.has_value()) {
      return fabric_error(
          absl::StatusCode::kInternal, place(), ErrorCause::kFabric,
          absl::StrFormat("the library returned a completion for work weft "
                          "never posted (wr_id 0x%x, status %d)",
                          wcs[i].wr_id, static_cast<int>(wcs[i].status)));
    }
    out[i] = to_completion(wcs[i], *id);
  }
  return n;
}

}  // namespace weft::verbs::internal
