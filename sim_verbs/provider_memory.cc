// Protection domains, memory regions and completion queues. In-process,
// each memory region is also a region of the world RDMA WRITEs may
// target, and the bytes writes put into its shadow are copied on to the
// registered memory (apply_writes).
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "sim/world.h"
#include "sim_verbs/provider.h"

namespace weft::sim_verbs {
SimPd* Provider::find_pd(const ibv_pd* pd) const {
  auto it = pds_.find(pd);
  return it == pds_.end() ? nullptr : it->second.get();
}

SimCq* Provider::find_cq(const ibv_cq* cq) const {
  auto it = cqs_.find(cq);
  return it == cqs_.end() ? nullptr : it->second.get();
}

ibv_pd* Provider::alloc_pd(ibv_context* context) {
  SimContext* c = find_context(context);
  if (c == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  if (c->device->port_down) {
    // Apple's library returns NULL here when the port is down.
    errno = ENETDOWN;
    return nullptr;
  }
  auto pd = std::make_unique<SimPd>();
  std::memset(&pd->pd, 0, sizeof(pd->pd));
  pd->pd.context = context;
  pd->pd.handle = next_handle_++;
  pd->owner = c;
  ibv_pd* out = &pd->pd;
  pds_.emplace(out, std::move(pd));
  return out;
}

int Provider::dealloc_pd(ibv_pd* pd) {
  SimPd* p = find_pd(pd);
  if (p == nullptr) return EINVAL;
  for (const auto& [ptr, mr] : mrs_) {
    if (mr->owner == p) return teardown_error("ibv_dealloc_pd");
  }
  for (const auto& [ptr, qp] : qps_) {
    if (qp->owner == p) return teardown_error("ibv_dealloc_pd");
  }
  pds_.erase(pd);
  return 0;
}

Slab* Provider::shadow_for(uint32_t rank, void* addr, size_t length) {
  const ShadowKey key(rank, reinterpret_cast<uintptr_t>(addr), length);
  auto it = shadows_.find(key);
  if (it != shadows_.end()) {
    ++it->second.regions;
    return it->second.slab;
  }
  Slab* slab = nullptr;
  std::multimap<uint64_t, Slab*>& spare = spare_shadows_[rank];
  if (auto fit = spare.lower_bound(length); fit != spare.end()) {
    slab = fit->second;
    spare.erase(fit);
  } else {
    absl::StatusOr<Slab*> created = fabric_of(rank).create_slab(length);
    if (!created.ok()) return nullptr;
    slab = *created;
  }
  shadows_.emplace(key, Shadow{slab, 1});
  return slab;
}

void Provider::release_shadow(const SimMr& mr) {
  const uint32_t rank = mr.owner->owner->device->rank;
  auto it = shadows_.find(
      ShadowKey(rank, reinterpret_cast<uintptr_t>(mr.mr.addr), mr.mr.length));
  if (it == shadows_.end() || --it->second.regions > 0) return;
  Slab* slab = it->second.slab;
  spare_shadows_[rank].emplace(slab->bytes(), slab);
  shadows_.erase(it);
}

int Provider::outstanding_on(const SimMr& mr) const {
  int n = 0;
  for (const auto& [ptr, qp] : qps_) {
    if (qp->owner != mr.owner) continue;
    for (const auto& [slot, posted] : qp->posted) {
      n += static_cast<int>(
          std::count(posted.lkeys.begin(), posted.lkeys.end(), mr.mr.lkey));
    }
  }
  return n;
}

ibv_mr* Provider::reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  SimPd* p = find_pd(pd);
  const bool remote =
      (access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0;
  if (p == nullptr || addr == nullptr || length == 0 ||
      (remote && (access & IBV_ACCESS_LOCAL_WRITE) == 0)) {
    errno = EINVAL;  // verbs: remote write needs local write
    return nullptr;
  }
  const SimDevice& device = *p->owner->device;
  if (config_->apple_limits &&
      count_on(device, "mrs") >= static_cast<int>(kAppleMrsPerDevice)) {
    errno = ENOMEM;
    return nullptr;
  }
  Slab* shadow = shadow_for(device.rank, addr, length);
  if (shadow == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  auto mr = std::make_unique<SimMr>();
  std::memset(&mr->mr, 0, sizeof(mr->mr));
  mr->mr.context = pd->context;
  mr->mr.pd = pd;
  mr->mr.addr = addr;
  mr->mr.length = length;
  mr->mr.handle = next_handle_++;
  mr->mr.lkey = next_key_++;
  mr->mr.rkey = mr->mr.lkey;
  mr->owner = p;
  mr->shadow = shadow;
  // Every region is known to the world under its rkey (in this process, or
  // on the simulation server), so an RDMA WRITE naming it lands (with
  // IBV_ACCESS_REMOTE_WRITE) or is refused as a UC responder refuses it.
  const bool remote_write = (access & IBV_ACCESS_REMOTE_WRITE) != 0;
  absl::Status registered;
  if (remote_ == nullptr) {
    sim::MemoryRegion region;
    region.slab = shadow;
    region.bytes = length;
    region.address = reinterpret_cast<uintptr_t>(addr);
    region.remote_write = remote_write;
    registered = world_->register_region(device.rank, mr->mr.rkey, region);
  } else if (length > UINT32_MAX) {
    // The server names frames with 32-bit lengths.
    registered = absl::InvalidArgumentError(
        "a memory region of 4 GiB or more on the simulation server");
  } else {
    absl::StatusOr<Frame> whole =
        shadow->frame(0, static_cast<uint32_t>(length));
    registered =
        whole.ok() ? remote_->register_region(mr->mr.rkey, *whole,
                                              reinterpret_cast<uintptr_t>(addr),
                                              remote_write)
                   : whole.status();
  }
  if (!registered.ok()) {
    release_shadow(*mr);
    errno = EINVAL;
    return nullptr;
  }
  mr->region = true;
  ibv_mr* out = &mr->mr;
  mrs_.emplace(out, std::move(mr));
  return out;
}

int Provider::dereg_mr(ibv_mr* mr) {
  auto it = mrs_.find(mr);
  if (it == mrs_.end()) return EINVAL;
  const SimMr& m = *it->second;
  // rdma-core's hardware providers let the region go and fail the work
  // still posted on it with a protection error; this provider refuses
  // instead, so the program learns of the mistake at the call, and the
  // bytes a receive brings are never copied into memory its owner may
  // have freed.
  if (const int n = outstanding_on(m); n > 0) {
    return teardown_error(
        "ibv_dereg_mr",
        absl::StrFormat("%d work requests posted on the region have not "
                        "completed (poll their completions first)",
                        n)
            .c_str());
  }
  if (m.region) {
    // Writes that landed before the region goes are in its memory, as on
    // hardware; none arrives after.
    const uint32_t rank = m.owner->owner->device->rank;
    apply_writes(rank);
    const absl::Status s = remote_ != nullptr
                               ? remote_->unregister_region(m.mr.rkey)
                               : world_->unregister_region(rank, m.mr.rkey);
    if (!s.ok()) return EINVAL;
  }
  release_shadow(m);
  mrs_.erase(it);
  return 0;
}

void Provider::apply_writes(uint32_t rank) {
  const std::vector<sim::WrittenRange> writes =
      remote_ != nullptr ? remote_->take_writes() : world_->take_writes(rank);
  for (const sim::WrittenRange& w : writes) {
    std::memcpy(reinterpret_cast<void*>(w.address), w.bytes.data(),
                w.bytes.bytes());
  }
}

ibv_cq* Provider::create_cq(ibv_context* context, int cqe, void* cq_context,
                            ibv_comp_channel* channel, int comp_vector) {
  SimContext* c = find_context(context);
  SimChannel* ch = channel == nullptr ? nullptr : find_channel(channel);
  // The channel must be one of this context's; the vector one of its
  // num_comp_vectors (1), as the kernel checks.
  if (c == nullptr || cqe < 1 || cqe > kMaxCqe ||
      (channel != nullptr && (ch == nullptr || ch->owner != c)) ||
      comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
    errno = EINVAL;
    return nullptr;
  }
  auto cq = std::make_unique<SimCq>();
  std::memset(&cq->cq, 0, sizeof(cq->cq));
  cq->cq.context = context;
  cq->cq.channel = channel;
  cq->cq.cq_context = cq_context;
  cq->cq.handle = next_handle_++;
  cq->cq.cqe = cqe;
  pthread_mutex_init(&cq->cq.mutex, nullptr);
  pthread_cond_init(&cq->cq.cond, nullptr);
  cq->owner = c;
  cq->channel = ch;
  if (ch != nullptr) ++ch->channel.refcnt;
  ibv_cq* out = &cq->cq;
  cqs_.emplace(out, std::move(cq));
  return out;
}

int Provider::destroy_cq(ibv_cq* cq) {
  SimCq* c = find_cq(cq);
  if (c == nullptr) return EINVAL;
  if (!c->qps.empty()) return teardown_error("ibv_destroy_cq");
  if (c->events_reported != cq->comp_events_completed) {
    // rdma-core's ibv_destroy_cq would wait for the acknowledgement forever.
    return teardown_error("ibv_destroy_cq",
                          "completion events it reported are not "
                          "acknowledged (call ibv_ack_cq_events first)");
  }
  remove_events(*c);
  std::erase(armed_, c);
  if (c->channel != nullptr) --c->channel->channel.refcnt;
  pthread_cond_destroy(&cq->cond);
  pthread_mutex_destroy(&cq->mutex);
  cqs_.erase(cq);
  return 0;
}

}  // namespace weft::sim_verbs
