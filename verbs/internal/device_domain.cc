#include "verbs/internal/device_domain.h"

#include <algorithm>
#include <cerrno>
#include <optional>

#include "absl/strings/str_format.h"
#include "verbs/device_info.h"
#include "verbs/internal/verbs_error.h"

namespace weft::verbs::internal {
absl::StatusOr<std::unique_ptr<DeviceDomain>> DeviceDomain::create(
    std::unique_ptr<OpenDevice> device, size_t memory_region_budget) {
  // A device that reports fewer entries gets queue pairs of that many, and
  // posts of more parts are refused (VerbsEndpoint); one that cannot be
  // queried is asked for kWantedSges, and ibv_create_qp says if it cannot.
  uint32_t sges = kWantedSges;
  if (std::optional<DeviceLimits> limits = device->limits();
      limits.has_value() && limits->max_sge >= 1) {
    sges = std::min(sges, static_cast<uint32_t>(limits->max_sge));
  }
  errno = 0;
  abi::ibv_pd* pd = device->library().api().alloc_pd(device->context());
  if (pd == nullptr) {
    return verbs_error(device->place(),
                       "allocating a protection domain (ibv_alloc_pd)", errno,
                       "Apple's library fails here when the port went down");
  }
  return std::unique_ptr<DeviceDomain>(
      new DeviceDomain(std::move(device), pd, memory_region_budget, sges));
}

DeviceDomain::~DeviceDomain() {
  cache_.clear();  // every region, before its protection domain
  api().dealloc_pd(pd_);
  // device_ closes the context after this body.
}

absl::Status DeviceDomain::register_slab(const Slab& slab) {
  return cache_.add_permanent(slab.id(),
                              {slab.data(), static_cast<size_t>(slab.bytes())});
}

void DeviceDomain::deregister_slab(uint64_t slab_id) {
  (void)cache_.remove(slab_id);  // a slab has no work outstanding yet
}

absl::StatusOr<Registration> DeviceDomain::register_region(
    uint64_t id, std::span<std::byte> memory) {
  errno = 0;
  abi::ibv_mr* mr =
      api().reg_mr(pd_, memory.data(), memory.size(), kAccessFlags);
  if (mr == nullptr) {
    return verbs_error(
        place(),
        absl::StrFormat("registering slab %u (%u bytes) as a memory region "
                        "(ibv_reg_mr; %u regions on this device already)",
                        id, memory.size(), cache_.registered()),
        errno,
        "Apple allows about 100 memory regions per device: use fewer, larger "
        "slabs and registered buffers, or lower "
        "VerbsFabricOptions::memory_region_budget");
  }
  return Registration{mr, mr->lkey};
}

void DeviceDomain::deregister_region(const Registration& registration) {
  api().dereg_mr(static_cast<abi::ibv_mr*>(registration.handle));
}

}  // namespace weft::verbs::internal
