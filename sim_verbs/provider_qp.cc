// Queue pairs: creation, destruction, the state machine and ibv_query_qp.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "sim_verbs/provider.h"
#include "sim_verbs/qp_transitions.h"

namespace weft::sim_verbs {
namespace {

constexpr int kSupportedAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
    IBV_ACCESS_REMOTE_ATOMIC;

bool is_empty(const GidBytes& gid) {
  return std::all_of(gid.begin(), gid.end(), [](uint8_t b) { return b == 0; });
}

bool is_ipv4_mapped(const GidBytes& gid) {
  constexpr size_t kZeros = 10;
  return std::all_of(gid.begin(), gid.begin() + kZeros,
                     [](uint8_t b) { return b == 0; }) &&
         gid[kZeros] == 0xff && gid[kZeros + 1] == 0xff;
}

// Copies what `mask` says `attr` sets into `kept` (for ibv_query_qp).
void remember(const ibv_qp_attr& attr, int mask, ibv_qp_attr* kept) {
  if ((mask & IBV_QP_STATE) != 0) kept->qp_state = attr.qp_state;
  if ((mask & IBV_QP_ACCESS_FLAGS) != 0) {
    kept->qp_access_flags = attr.qp_access_flags;
  }
  if ((mask & IBV_QP_PKEY_INDEX) != 0) kept->pkey_index = attr.pkey_index;
  if ((mask & IBV_QP_PORT) != 0) kept->port_num = attr.port_num;
  if ((mask & IBV_QP_AV) != 0) kept->ah_attr = attr.ah_attr;
  if ((mask & IBV_QP_PATH_MTU) != 0) kept->path_mtu = attr.path_mtu;
  if ((mask & IBV_QP_RQ_PSN) != 0) kept->rq_psn = attr.rq_psn;
  if ((mask & IBV_QP_SQ_PSN) != 0) kept->sq_psn = attr.sq_psn;
  if ((mask & IBV_QP_DEST_QPN) != 0) kept->dest_qp_num = attr.dest_qp_num;
}

bool caps_ok(const ibv_qp_cap& cap) {
  return cap.max_send_wr >= 1 && cap.max_send_wr <= kMaxQueueDepth &&
         cap.max_recv_wr >= 1 && cap.max_recv_wr <= kMaxQueueDepth &&
         cap.max_send_sge <= static_cast<uint32_t>(kMaxSge) &&
         cap.max_recv_sge <= static_cast<uint32_t>(kMaxSge) &&
         cap.max_inline_data <= kMaxInlineData;
}

}  // namespace

SimQp* Provider::find_qp(const ibv_qp* qp) const {
  auto it = qps_.find(qp);
  return it == qps_.end() ? nullptr : it->second.get();
}

ibv_qp* Provider::create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  SimPd* p = find_pd(pd);
  SimCq* send_cq = attr == nullptr ? nullptr : find_cq(attr->send_cq);
  SimCq* recv_cq = attr == nullptr ? nullptr : find_cq(attr->recv_cq);
  errno = EINVAL;
  if (p == nullptr || send_cq == nullptr || recv_cq == nullptr ||
      send_cq->owner != p->owner || recv_cq->owner != p->owner ||
      attr->srq != nullptr) {
    return nullptr;
  }
  if (attr->qp_type != IBV_QPT_UC) {
    std::fprintf(stderr,
                 "weft simulated verbs provider: ibv_create_qp: only "
                 "unreliable connected (IBV_QPT_UC) queue pairs are "
                 "simulated, as Apple's RDMA over Thunderbolt offers only "
                 "those; this asked for type %d (EOPNOTSUPP)\n",
                 static_cast<int>(attr->qp_type));
    errno = EOPNOTSUPP;
    return nullptr;
  }
  const SimDevice& device = *p->owner->device;
  if (!caps_ok(attr->cap) || device.peer == kNoPeer) return nullptr;
  if (config_->apple_limits &&
      count_on(device, "qps") >= static_cast<int>(kAppleQpsPerDevice)) {
    errno = ENOMEM;
    return nullptr;
  }
  absl::StatusOr<std::unique_ptr<Endpoint>> endpoint =
      fabric_of(device.rank).open(device.name, device.peer);
  if (!endpoint.ok()) {
    errno = endpoint.status().code() == absl::StatusCode::kResourceExhausted
                ? ENOMEM
                : EINVAL;
    return nullptr;
  }
  auto qp = std::make_unique<SimQp>();
  std::memset(&qp->qp, 0, sizeof(qp->qp));
  qp->qp.context = pd->context;
  qp->qp.qp_context = attr->qp_context;
  qp->qp.pd = pd;
  qp->qp.send_cq = attr->send_cq;
  qp->qp.recv_cq = attr->recv_cq;
  qp->qp.handle = next_handle_++;
  qp->qp.qp_num = (*endpoint)->destination()->qp_num;
  qp->qp.state = IBV_QPS_RESET;
  qp->qp.qp_type = IBV_QPT_UC;
  pthread_mutex_init(&qp->qp.mutex, nullptr);
  pthread_cond_init(&qp->qp.cond, nullptr);
  qp->owner = p;
  qp->send_cq = send_cq;
  qp->recv_cq = recv_cq;
  // As real providers do, the capacities granted go back in attr->cap:
  // every queue pair takes inline sends up to kMaxInlineData.
  attr->cap.max_inline_data = kMaxInlineData;
  qp->cap = attr->cap;
  qp->sq_sig_all = attr->sq_sig_all;
  qp->attr.qp_state = IBV_QPS_RESET;
  qp->attr.cur_qp_state = IBV_QPS_RESET;
  qp->attr.path_mtu = kActiveMtu;
  qp->attr.port_num = kPort;
  qp->endpoint = *std::move(endpoint);
  SimQp* raw = qp.get();
  send_cq->qps.push_back(raw);
  if (recv_cq != send_cq) recv_cq->qps.push_back(raw);
  qps_by_num_[raw->qp.qp_num] = raw;
  ibv_qp* out = &raw->qp;
  qps_.emplace(out, std::move(qp));
  errno = 0;
  return out;
}

int Provider::destroy_qp(ibv_qp* qp) {
  SimQp* q = find_qp(qp);
  if (q == nullptr) return EINVAL;
  for (SimCq* cq : {q->send_cq, q->recv_cq}) {
    cq->qps.erase(std::remove(cq->qps.begin(), cq->qps.end(), q),
                  cq->qps.end());
    std::erase_if(cq->stash,
                  [&](const ibv_wc& wc) { return wc.qp_num == qp->qp_num; });
  }
  qps_by_num_.erase(qp->qp_num);
  pthread_cond_destroy(&q->qp.cond);
  pthread_mutex_destroy(&q->qp.mutex);
  std::vector<Frame> staged;
  for (const auto& [slot, posted] : q->posted) {
    if (posted.staged) staged.push_back(*posted.staged);
  }
  const uint32_t rank = q->owner->owner->device->rank;
  qps_.erase(qp);  // destroys the simulator's queue pair
  // Only now: the simulator no longer reads them.
  for (const Frame& f : staged) pool_of(rank).give(f);
  return 0;
}

SimDevice* Provider::far_end(const SimDevice& device) const {
  if (device.peer == kNoPeer) return nullptr;
  const Topology& topology = config_->topology;
  const auto& mine = topology.devices(device.rank, device.peer);
  const auto& theirs = topology.devices(device.peer, device.rank);
  const size_t cable = static_cast<size_t>(
      std::find(mine.begin(), mine.end(), device.name) - mine.begin());
  if (cable >= theirs.size()) return nullptr;
  for (const auto& d : devices_) {
    if (d->rank == device.peer && d->name == theirs[cable]) return d.get();
  }
  return nullptr;
}

const SimDevice* Provider::port_of_gid(const GidBytes& gid) const {
  for (const auto& d : devices_) {
    if (std::find(d->gids.begin(), d->gids.end(), gid) != d->gids.end()) {
      return d.get();
    }
  }
  return nullptr;
}

// EINVAL for what is malformed (Apple: errno 22), ETIMEDOUT for a GID that
// no port at the other end of this cable answers to (Apple: errno 60).
int Provider::move_to_rtr(SimQp& qp, const ibv_qp_attr& attr) {
  const SimDevice& mine = *qp.owner->owner->device;
  const ibv_ah_attr& ah = attr.ah_attr;
  if (attr.path_mtu < IBV_MTU_256 || attr.path_mtu > kActiveMtu ||
      ah.port_num != kPort || ah.is_global == 0 ||
      ah.grh.sgid_index >= mine.gids.size() ||
      is_empty(mine.gids[ah.grh.sgid_index])) {
    return EINVAL;
  }
  GidBytes dgid;
  std::memcpy(dgid.data(), ah.grh.dgid.raw, dgid.size());
  if (is_empty(dgid)) return EINVAL;
  const SimDevice* far = far_end(mine);
  if (is_ipv4_mapped(dgid) != is_ipv4_mapped(mine.gids[ah.grh.sgid_index]) ||
      far == nullptr || port_of_gid(dgid) != far) {
    return ETIMEDOUT;
  }
  Destination destination;
  if (remote_ != nullptr) {
    // The far end is another process's; the server connects the two (and
    // a number that names no queue pair there leaves this one sending into
    // nothing, as UC does).
    destination.qp_num = attr.dest_qp_num;
  } else {
    auto remote = qps_by_num_.find(attr.dest_qp_num);
    if (remote == qps_by_num_.end() ||
        remote->second->owner->owner->device != far) {
      return EINVAL;
    }
    absl::StatusOr<Destination> d = remote->second->endpoint->destination();
    if (!d.ok()) return EINVAL;
    destination = *d;
  }
  if (!qp.endpoint->connect(destination).ok()) return EINVAL;
  qp.remote_qp_num = attr.dest_qp_num;
  qp.sgid_index = ah.grh.sgid_index;
  return 0;
}

int Provider::modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask) {
  SimQp* q = find_qp(qp);
  if (q == nullptr || attr == nullptr) return EINVAL;
  const ibv_qp_state current = qp->state;
  const ibv_qp_state next =
      (mask & IBV_QP_STATE) != 0 ? attr->qp_state : current;
  if (const int err = check_uc_transition(current, next, mask); err != 0) {
    return err;
  }
  if ((mask & IBV_QP_PORT) != 0 && attr->port_num != kPort) return EINVAL;
  if ((mask & IBV_QP_PKEY_INDEX) != 0 && attr->pkey_index != 0) return EINVAL;
  if ((mask & IBV_QP_ACCESS_FLAGS) != 0 &&
      (attr->qp_access_flags & ~kSupportedAccess) != 0) {
    return EINVAL;
  }
  if (next == IBV_QPS_ERR) {
    // Every outstanding and later request flushes, as verbs does (a queue
    // pair still in RESET has nothing to flush and no simulator state to
    // move).
    if (current != IBV_QPS_RESET && current != IBV_QPS_ERR &&
        !q->endpoint->move_to_error().ok()) {
      return EINVAL;
    }
    qp->state = next;
    return 0;
  }
  if (next == IBV_QPS_RESET && current != next) {
    // Back to RESET is not simulated: the simulator's queue pairs move
    // forward only (to RTS, then maybe to the error state).
    return EOPNOTSUPP;
  }
  if (current == IBV_QPS_INIT && next == IBV_QPS_RTR) {
    if (const int err = move_to_rtr(*q, *attr); err != 0) return err;
  }
  qp->state = next;
  remember(*attr, mask, &q->attr);
  return 0;
}

int Provider::query_qp(ibv_qp* qp, ibv_qp_attr* attr, int /*mask*/,
                       ibv_qp_init_attr* init_attr) {
  SimQp* q = find_qp(qp);
  if (q == nullptr || attr == nullptr || init_attr == nullptr) return EINVAL;
  // Every field, whatever the mask, as rdma-core's command path fills them
  // from the kernel's answer (the mask only says which the caller reads).
  *attr = q->attr;
  attr->qp_state = qp->state;
  attr->cur_qp_state = qp->state;
  attr->cap = q->cap;
  std::memset(init_attr, 0, sizeof(*init_attr));
  init_attr->qp_context = qp->qp_context;
  init_attr->send_cq = qp->send_cq;
  init_attr->recv_cq = qp->recv_cq;
  init_attr->cap = attr->cap;
  init_attr->qp_type = qp->qp_type;
  init_attr->sq_sig_all = q->sq_sig_all;
  return 0;
}

}  // namespace weft::sim_verbs
