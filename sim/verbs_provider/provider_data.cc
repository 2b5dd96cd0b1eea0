// The data path: posting sends and receives into the simulator's queue
// pairs and polling their completions. Registered memory is mirrored in the
// simulator's slabs: a send copies the caller's bytes in when posted, a
// receive copies them out when its completion is polled, which is when a
// caller may first look at them.
#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/verbs_provider/ops.h"
#include "sim/verbs_provider/provider.h"

namespace weft::verbs::provider {
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

int Provider::post_one_send(SimQp& qp, const ibv_send_wr& wr) {
  if (qp.qp.state != IBV_QPS_RTS || wr.opcode != IBV_WR_SEND_WITH_IMM ||
      wr.num_sge != kMaxSge || (wr.send_flags & IBV_SEND_INLINE) != 0) {
    return EINVAL;
  }
  if (qp.sends >= depth_limit(qp.cap.max_send_wr)) return ENOMEM;
  PostedWr posted;
  if (const int err = shadow_frame(qp, wr.sg_list[0], &posted.shadow)) {
    return err;
  }
  std::memcpy(posted.shadow.data(),
              reinterpret_cast<const void*>(wr.sg_list[0].addr),
              wr.sg_list[0].length);
  const uint32_t slot = qp.next_slot++;
  const WorkId id{WorkKind::kSend, qp.owner->owner->device->peer, slot};
  absl::Status status = qp.endpoint->post_send(
      id, posted.shadow, wr.sg_list[0].length, ntohl(wr.imm_data));
  if (!status.ok()) return error_of(status);
  posted.wr_id = wr.wr_id;
  posted.send = true;
  posted.signaled = (wr.send_flags & IBV_SEND_SIGNALED) != 0;
  posted.length = wr.sg_list[0].length;
  qp.posted.emplace(slot, posted);
  ++qp.sends;
  return 0;
}

int Provider::post_one_recv(SimQp& qp, const ibv_recv_wr& wr) {
  if (qp.qp.state == IBV_QPS_RESET || wr.num_sge != kMaxSge) return EINVAL;
  if (qp.recvs >= depth_limit(qp.cap.max_recv_wr)) return ENOMEM;
  PostedWr posted;
  if (const int err = shadow_frame(qp, wr.sg_list[0], &posted.shadow)) {
    return err;
  }
  const uint32_t slot = qp.next_slot++;
  const WorkId id{WorkKind::kRecv, qp.owner->owner->device->peer, slot};
  absl::Status status = qp.endpoint->post_recv(id, posted.shadow);
  if (!status.ok()) return error_of(status);
  posted.wr_id = wr.wr_id;
  posted.user = reinterpret_cast<std::byte*>(wr.sg_list[0].addr);
  posted.length = wr.sg_list[0].length;
  qp.posted.emplace(slot, posted);
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
  return post_chain(qp, wr, bad_wr, &Provider::post_one_send);
}

int Provider::post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr) {
  return post_chain(qp, wr, bad_wr, &Provider::post_one_recv);
}

// Fills *wc from the simulator's completion; false when verbs reports
// nothing for it (a successful unsignalled send).
bool Provider::to_wc(SimQp& qp, const Completion& c, ibv_wc* wc) {
  auto it = qp.posted.find(c.id.slot);
  if (it == qp.posted.end()) return false;
  const PostedWr posted = it->second;
  qp.posted.erase(it);
  std::memset(wc, 0, sizeof(*wc));
  wc->wr_id = posted.wr_id;
  wc->status = static_cast<ibv_wc_status>(c.status);
  wc->qp_num = qp.qp.qp_num;
  wc->src_qp = qp.remote_qp_num;
  if (posted.send) {
    --qp.sends;
    wc->opcode = IBV_WC_SEND;
    return !(c.ok() && !posted.signaled);
  }
  --qp.recvs;
  wc->opcode = IBV_WC_RECV;
  if (c.ok()) {
    wc->byte_len = c.byte_len;
    std::memcpy(posted.user, posted.shadow.data(),
                std::min(c.byte_len, posted.length));
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
      SimCq& target = wc.opcode == IBV_WC_SEND ? *qp.send_cq : *qp.recv_cq;
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
  world_->advance_to(world_->clock().now_ns() + config_->poll_step_ns);
  int filled = 0;
  while (filled < num_entries && !c->stash.empty()) {
    wc[filled++] = c->stash.front();
    c->stash.erase(c->stash.begin());
  }
  for (SimQp* qp : c->qps) {
    if (filled == num_entries) break;
    filled += drain(*qp, *c, wc + filled, num_entries - filled);
  }
  raise_events();
  return filled;
}

}  // namespace weft::verbs::provider
