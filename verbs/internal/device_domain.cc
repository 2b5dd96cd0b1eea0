#include "verbs/internal/device_domain.h"

#include <cerrno>

#include "absl/strings/str_format.h"
#include "verbs/internal/verbs_error.h"

namespace weft::verbs::internal {
absl::StatusOr<std::unique_ptr<DeviceDomain>> DeviceDomain::create(
    std::unique_ptr<OpenDevice> device) {
  errno = 0;
  abi::ibv_pd* pd = device->library().api().alloc_pd(device->context());
  if (pd == nullptr) {
    return verbs_error(device->place(),
                       "allocating a protection domain (ibv_alloc_pd)", errno,
                       "Apple's library fails here when the port went down");
  }
  return std::unique_ptr<DeviceDomain>(new DeviceDomain(std::move(device), pd));
}

DeviceDomain::~DeviceDomain() {
  while (!regions_.empty()) {
    api().dereg_mr(regions_.back().second);
    regions_.pop_back();
  }
  api().dealloc_pd(pd_);
  // device_ closes the context after this body.
}

absl::Status DeviceDomain::register_slab(const Slab& slab) {
  errno = 0;
  abi::ibv_mr* mr = api().reg_mr(
      pd_, slab.data(), static_cast<size_t>(slab.bytes()), kAccessFlags);
  if (mr == nullptr) {
    return verbs_error(
        place(),
        absl::StrFormat("registering slab %u (%u bytes) as a memory region "
                        "(ibv_reg_mr; %u regions on this device already)",
                        slab.id(), slab.bytes(), regions_.size()),
        errno,
        "Apple allows about 100 memory regions per device: use fewer, larger "
        "slabs");
  }
  regions_.emplace_back(slab.id(), mr);
  return absl::OkStatus();
}

void DeviceDomain::deregister_slab(uint64_t slab_id) {
  for (auto it = regions_.begin(); it != regions_.end(); ++it) {
    if (it->first == slab_id) {
      api().dereg_mr(it->second);
      regions_.erase(it);
      return;
    }
  }
}

std::optional<uint32_t> DeviceDomain::lkey(uint64_t slab_id) const {
  for (const auto& [id, mr] : regions_) {
    if (id == slab_id) return mr->lkey;
  }
  return std::nullopt;
}

}  // namespace weft::verbs::internal
