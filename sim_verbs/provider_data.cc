// The data path: posting sends, RDMA WRITEs and receives into the
// simulator's queue pairs and polling their completions. Registered memory
// (weft's slabs and user buffers alike, at any address and alignment) is
// mirrored in the simulator's slabs: a send or write copies the caller's
// bytes in when posted, a receive copies them out when its completion is
// polled, which is when a caller may first look at them, and the bytes
// RDMA WRITEs put into a rank's regions are copied out at the rank's next
// poll_cq, before any completion it returns (so a WRITE_WITH_IMM's bytes
// are in memory when its completion is seen). So each message costs one
// copy on each side beyond the world's own (a gathered send or scattered
// receive of several entries goes through one frame of the rank's pool, no
// extra copy); the simulator's wire copy is the world's, as with weft's
// simulator fabric.
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "sim/frame_pool.h"
#include "sim_verbs/ops.h"
#include "sim_verbs/provider.h"

namespace weft::sim_verbs {
namespace {

int error_of(const absl::Status& status) {
  return status.code() == absl::StatusCode::kResourceExhausted ? ENOMEM
                                                               : EINVAL;
}

int poll_cq_op(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  Provider& p = Provider::instance();
  std::lock_guard<std::mutex> lock(p.mutex());
  return p.poll_cq(cq, num_entries, wc);
}

int post_send_op(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  Provider& p = Provider::instance();
  std::lock_guard<std::mutex> lock(p.mutex());
  return p.post_send(qp, wr, bad_wr);
}

int post_recv_op(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  Provider& p = Provider::instance();
  std::lock_guard<std::mutex> lock(p.mutex());
  return p.post_recv(qp, wr, bad_wr);
}

int req_notify_cq_op(ibv_cq* cq, int solicited_only) {
  Provider& p = Provider::instance();
  std::lock_guard<std::mutex> lock(p.mutex());
  return p.req_notify_cq(cq, solicited_only);
}

}  // namespace

void fill_operations(ibv_context_ops* ops) {
  std::memset(ops, 0, sizeof(*ops));
  ops->poll_cq = poll_cq_op;
  ops->req_notify_cq = req_notify_cq_op;
  ops->post_send = post_send_op;
  ops->post_recv = post_recv_op;
}

uint32_t Provider::depth_limit(uint32_t capacity) const {
  const uint32_t depth = config_->queue_depth;
  return depth == 0 ? capacity : std::min(capacity, depth);
}

int Provider::post_result(int err) const {
  // Apple's library returns the errno negated (-12 for a full queue).
  return config_->apple_limits ? -err : err;
}

int Provider::shadow_frame(const SimQp& qp, const ibv_sge& sge,
                           Frame* out) const {
  for (const auto& [ptr, mr] : mrs_) {
    if (mr->mr.lkey != sge.lkey) continue;
    const auto base = reinterpret_cast<uintptr_t>(mr->mr.addr);
    if (mr->owner != qp.owner || sge.addr < base ||
        sge.length > mr->mr.length ||
        sge.addr - base > mr->mr.length - sge.length) {
      return EINVAL;
    }
    absl::StatusOr<Frame> frame =
        mr->shadow->frame(sge.addr - base, sge.length);
    if (!frame.ok()) return EINVAL;
    *out = *frame;
    return 0;
  }
  return EINVAL;
}

sim::FramePool& Provider::pool_of(uint32_t rank) {
  std::unique_ptr<sim::FramePool>& pool = pools_[rank];
  if (pool == nullptr) pool = std::make_unique<sim::FramePool>(fabric_of(rank));
  return *pool;
}

// The total length of a request's entries; EINVAL past the longest
// message.
int Provider::total_length(const ibv_sge* sges, int num_sge,
                           uint32_t* out) const {
  uint64_t total = 0;
  for (int i = 0; i < num_sge; ++i) total += sges[i].length;
  if (total > kMaxMessageBytes) return EINVAL;
  *out = static_cast<uint32_t>(total);
  return 0;
}

// UC queue pairs carry SEND, SEND_WITH_IMM, RDMA_WRITE and
// RDMA_WRITE_WITH_IMM; RDMA READ and atomics are refused, as UC refuses
// them. A write is gathered as a SEND is and names its target (remote
// address and rkey), which only the receiving side checks. With one entry
// the message goes from the registered memory's shadow; several entries,
// or IBV_SEND_INLINE (up to max_inline_data, no key needed), are gathered
// into a frame of the rank's pool.
int Provider::post_one_send(SimQp& qp, const ibv_send_wr& wr) {
  const bool write =
      wr.opcode == IBV_WR_RDMA_WRITE || wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  const bool with_immediate = wr.opcode == IBV_WR_SEND_WITH_IMM ||
                              wr.opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
  // In the error state a send is taken and flushed, as verbs does.
  if ((qp.qp.state != IBV_QPS_RTS && qp.qp.state != IBV_QPS_ERR) ||
      (wr.opcode != IBV_WR_SEND && wr.opcode != IBV_WR_SEND_WITH_IMM &&
       !write) ||
      wr.num_sge < 0 ||
      static_cast<uint32_t>(wr.num_sge) > qp.cap.max_send_sge ||
      (wr.num_sge > 0 && wr.sg_list == nullptr)) {
    return EINVAL;
  }
  const uint32_t rank = qp.owner->owner->device->rank;
  // Writes that landed in this rank's memory reach it before the post
  // reads that memory into a shadow (which would otherwise overwrite them
  // there).
  apply_writes(rank);
  const bool inline_data = (wr.send_flags & IBV_SEND_INLINE) != 0;
  uint32_t length = 0;
  if (const int err = total_length(wr.sg_list, wr.num_sge, &length)) {
    return err;
  }
  if (inline_data && length > qp.cap.max_inline_data) return EINVAL;
  if (qp.sends >= depth_limit(qp.cap.max_send_wr)) return ENOMEM;
  // An entry no region of the queue pair's protection domain covers: the
  // request is taken and fails with IBV_WC_LOC_PROT_ERR, which puts the
  // queue pair in the error state (as rdma-core's software providers do).
  for (int i = 0; i < wr.num_sge && !inline_data; ++i) {
    Frame unused;
    if (shadow_frame(qp, wr.sg_list[i], &unused) != 0) {
      return protection_error(qp, wr.wr_id,
                              write ? IBV_WC_RDMA_WRITE : IBV_WC_SEND);
    }
  }
  PostedWr posted;
  if (wr.num_sge == 1 && !inline_data) {
    if (const int err = shadow_frame(qp, wr.sg_list[0], &posted.shadow)) {
      return err;
    }
    std::memcpy(posted.shadow.data(),
                reinterpret_cast<const void*>(wr.sg_list[0].addr), length);
  } else {
    Frame frame;
    for (int i = 0; i < wr.num_sge && !inline_data; ++i) {
      if (const int err = shadow_frame(qp, wr.sg_list[i], &frame)) return err;
    }
    absl::StatusOr<Frame> staged = pool_of(rank).take(length);
    if (!staged.ok()) return ENOMEM;
    uint32_t at = 0;
    for (int i = 0; i < wr.num_sge; ++i) {
      std::memcpy(staged->data() + at,
                  reinterpret_cast<const void*>(wr.sg_list[i].addr),
                  wr.sg_list[i].length);
      at += wr.sg_list[i].length;
    }
    posted.staged = *staged;
    posted.shadow = staged->sub(0, length);
  }
  const uint32_t slot = qp.next_slot++;
  const WorkId id{WorkKind::kSend, qp.owner->owner->device->peer, slot};
  std::optional<uint32_t> immediate;
  if (with_immediate) immediate = ntohl(wr.imm_data);
  absl::Status status;
  if (write) {
    status = qp.endpoint->post_rdma_write(id, posted.shadow, length,
                                          wr.wr.rdma.remote_addr,
                                          wr.wr.rdma.rkey, immediate);
  } else if (immediate.has_value()) {
    status = qp.endpoint->post_send(id, posted.shadow, length, *immediate);
  } else {
    status =
        qp.endpoint->post_send_without_immediate(id, posted.shadow, length);
  }
  if (!status.ok()) {
    if (posted.staged) pool_of(rank).give(*posted.staged);
    return error_of(status);
  }
  for (int i = 0; i < wr.num_sge && !inline_data; ++i) {
    posted.lkeys.push_back(wr.sg_list[i].lkey);
  }
  posted.wr_id = wr.wr_id;
  posted.send = true;
  posted.send_opcode = write ? IBV_WC_RDMA_WRITE : IBV_WC_SEND;
  posted.signaled =
      (wr.send_flags & IBV_SEND_SIGNALED) != 0 || qp.sq_sig_all != 0;
  posted.length = length;
  qp.posted.emplace(slot, std::move(posted));
  ++qp.sends;
  return 0;
}

// A receive of one entry lands in the registered memory's shadow; one of
// several lands in a frame of the rank's pool and is scattered when its
// completion is polled.
int Provider::post_one_recv(SimQp& qp, const ibv_recv_wr& wr) {
  if (qp.qp.state == IBV_QPS_RESET || wr.num_sge < 0 ||
      static_cast<uint32_t>(wr.num_sge) > qp.cap.max_recv_sge ||
      (wr.num_sge > 0 && wr.sg_list == nullptr)) {
    return EINVAL;
  }
  uint32_t length = 0;
  if (const int err = total_length(wr.sg_list, wr.num_sge, &length)) {
    return err;
  }
  if (qp.recvs >= depth_limit(qp.cap.max_recv_wr)) return ENOMEM;
  for (int i = 0; i < wr.num_sge; ++i) {
    Frame unused;
    if (shadow_frame(qp, wr.sg_list[i], &unused) != 0) {
      return protection_error(qp, wr.wr_id, IBV_WC_RECV);
    }
  }
  PostedWr posted;
  if (wr.num_sge == 1) {
    if (const int err = shadow_frame(qp, wr.sg_list[0], &posted.shadow)) {
      return err;
    }
    posted.user = reinterpret_cast<std::byte*>(wr.sg_list[0].addr);
  } else {
    Frame frame;
    for (int i = 0; i < wr.num_sge; ++i) {
      if (const int err = shadow_frame(qp, wr.sg_list[i], &frame)) return err;
    }
    absl::StatusOr<Frame> staged =
        pool_of(qp.owner->owner->device->rank).take(length);
    if (!staged.ok()) return ENOMEM;
    posted.staged = *staged;
    posted.shadow = staged->sub(0, length);
    posted.scatter.assign(wr.sg_list, wr.sg_list + wr.num_sge);
  }
  const uint32_t slot = qp.next_slot++;
  const WorkId id{WorkKind::kRecv, qp.owner->owner->device->peer, slot};
  absl::Status status = qp.endpoint->post_recv(id, posted.shadow);
  if (!status.ok()) {
    if (posted.staged)
      pool_of(qp.owner->owner->device->rank).give(*posted.staged);
    return error_of(status);
  }
  for (int i = 0; i < wr.num_sge; ++i)
    posted.lkeys.push_back(wr.sg_list[i].lkey);
  posted.wr_id = wr.wr_id;
  posted.length = length;
  qp.posted.emplace(slot, std::move(posted));
  ++qp.recvs;
  return 0;
}

// Posts each request of the chain at `wr` with `post_one`; on failure,
// *bad_wr is the request that failed.
template <typename Wr>
int Provider::post_chain(ibv_qp* qp, Wr* wr, Wr** bad_wr,
                         int (Provider::*post_one)(SimQp&, const Wr&)) {
  SimQp* q = find_qp(qp);
  for (Wr* w = wr; w != nullptr; w = w->next) {
    const int err = q == nullptr ? EINVAL : (this->*post_one)(*q, *w);
    if (err != 0) {
      if (bad_wr != nullptr) *bad_wr = w;
      return post_result(err);
    }
  }
  return 0;
}

int Provider::post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr) {
  note_activity();
  return post_chain(qp, wr, bad_wr, &Provider::post_one_send);
}

int Provider::post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  note_activity();
  return post_chain(qp, wr, bad_wr, &Provider::post_one_recv);
}

int Provider::protection_error(SimQp& qp, uint64_t wr_id,
                               ibv_wc_opcode opcode) {
  // In the error state already, the request only flushes.
  const bool flushed = qp.qp.state == IBV_QPS_ERR;
  if (!flushed && !qp.endpoint->move_to_error().ok()) return EINVAL;
  qp.qp.state = IBV_QPS_ERR;
  ibv_wc wc;
  std::memset(&wc, 0, sizeof(wc));
  wc.wr_id = wr_id;
  wc.status = flushed ? IBV_WC_WR_FLUSH_ERR : IBV_WC_LOC_PROT_ERR;
  wc.opcode = opcode;
  wc.qp_num = qp.qp.qp_num;
  wc.src_qp = qp.remote_qp_num;
  SimCq& cq = opcode == IBV_WC_RECV ? *qp.recv_cq : *qp.send_cq;
  cq.stash.push_back(wc);
  ++cq.added;
  return 0;
}

void Provider::note_activity() {
  if (remote_ == nullptr) return;
  for (auto& [ptr, cq] : cqs_) cq->found_empty = false;
}

// Fills *wc from the simulator's completion; false when verbs reports
// nothing for it (a successful unsignalled send).
bool Provider::to_wc(SimQp& qp, const Completion& c, ibv_wc* wc) {
  auto it = qp.posted.find(c.id.slot);
  if (it == qp.posted.end()) return false;
  const PostedWr posted = std::move(it->second);
  qp.posted.erase(it);
  if (posted.staged) {
    // Given back once its bytes are out (below): the pool hands frames
    // out again only at a later post.
    pool_of(qp.owner->owner->device->rank).give(*posted.staged);
  }
  std::memset(wc, 0, sizeof(*wc));
  wc->wr_id = posted.wr_id;
  wc->status = static_cast<ibv_wc_status>(c.status);
  // An error completion means the queue pair is in the error state (what
  // ibv_query_qp reports from then on).
  if (!c.ok()) qp.qp.state = IBV_QPS_ERR;
  wc->qp_num = qp.qp.qp_num;
  wc->src_qp = qp.remote_qp_num;
  if (posted.send) {
    --qp.sends;
    wc->opcode = posted.send_opcode;
    return !(c.ok() && !posted.signaled);
  }
  --qp.recvs;
  if (c.from_rdma_write) {
    // The write's bytes went to its region (in memory since this poll
    // began: apply_writes); the receive's own buffer is untouched.
    wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
    if (c.ok()) {
      wc->byte_len = c.byte_len;
      wc->wc_flags = IBV_WC_WITH_IMM;
      wc->imm_data = htonl(c.immediate);
    }
    return true;
  }
  wc->opcode = IBV_WC_RECV;
  if (c.ok()) {
    wc->byte_len = c.byte_len;
    const uint32_t arrived = std::min(c.byte_len, posted.length);
    if (posted.scatter.empty()) {
      std::memcpy(posted.user, posted.shadow.data(), arrived);
    } else {
      uint32_t at = 0;
      for (const ibv_sge& sge : posted.scatter) {
        if (at == arrived) break;
        const uint32_t n = std::min(sge.length, arrived - at);
        std::memcpy(reinterpret_cast<void*>(sge.addr),
                    posted.shadow.data() + at, n);
        at += n;
      }
    }
    if (c.has_immediate) {
      wc->wc_flags = IBV_WC_WITH_IMM;
      wc->imm_data = htonl(c.immediate);
    }
  }
  return true;
}

int Provider::drain(SimQp& qp, SimCq& cq, ibv_wc* out, int room) {
  int filled = 0;
  std::array<Completion, Endpoint::kMaxPollBatch> batch;
  while (filled < room) {
    const size_t want =
        std::min(batch.size(), static_cast<size_t>(room - filled));
    absl::StatusOr<size_t> n = qp.endpoint->poll(std::span(batch.data(), want));
    if (!n.ok() || *n == 0) break;
    for (size_t i = 0; i < *n; ++i) {
      ibv_wc wc;
      if (!to_wc(qp, batch[i], &wc)) continue;
      const bool received =
          wc.opcode == IBV_WC_RECV || wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM;
      SimCq& target = received ? *qp.recv_cq : *qp.send_cq;
      ++target.added;
      if (&target == &cq) {
        out[filled++] = wc;
      } else {
        target.stash.push_back(wc);
      }
    }
  }
  return filled;
}

int Provider::poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc) {
  SimCq* c = find_cq(cq);
  if (c == nullptr || num_entries < 0 || wc == nullptr) return -EINVAL;
  if (remote_ == nullptr) {
    world_->advance_to(world_->clock().now_ns() + config_->poll_step_ns);
  }
  apply_writes(c->owner->device->rank);
  auto take = [&] {
    int filled = 0;
    while (filled < num_entries && !c->stash.empty()) {
      wc[filled++] = c->stash.front();
      c->stash.erase(c->stash.begin());
    }
    for (SimQp* qp : c->qps) {
      if (filled == num_entries) break;
      filled += drain(*qp, *c, wc + filled, num_entries - filled);
    }
    return filled;
  };
  int filled = take();
  // On the server, polling a CQ empty that was already found empty since
  // the rank last posted or got a completion is waiting: the thread blocks
  // until the server has something for the rank (time moves only while
  // every rank waits, and a rank waits only when all its threads do:
  // provider_waits.cc). A first empty poll returns 0 at once, as programs
  // poll before they post. Completions other CQs hold do not keep it from
  // waiting: another thread may be about to take them (it then runs, and
  // the rank does not wait), or no one polls that CQ now. Programs that
  // say when they wait (idle()) never wait here.
  if (remote_ != nullptr && filled == 0 && num_entries > 0 &&
      !announces_waits_) {
    if (!c->found_empty) {
      c->found_empty = true;
    } else {
      if (const int err = wait_at_server(
              absl::StrFormat("ibv_poll_cq (cq %p)", static_cast<void*>(cq)),
              std::nullopt);
          err != 0) {
        return -err;
      }
      note_activity();
      apply_writes(c->owner->device->rank);
      filled = take();
    }
  }
  if (filled > 0) note_activity();
  raise_events();
  return filled;
}

}  // namespace weft::sim_verbs
