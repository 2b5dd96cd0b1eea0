// DeviceDomain: one open device with its protection domain and its memory
// regions, kept by a RegistrationCache within the fabric's budget: one
// region per slab of the fabric (registered when the slab or the domain is
// created, never evicted), and the user memory registered with the fabric
// (registered at its first post, evicted least recently used first). All
// endpoints on the device share it. Destroyed in reverse order of creation:
// memory regions, protection domain, then the device context.
#ifndef WEFT_VERBS_INTERNAL_DEVICE_DOMAIN_H_
#define WEFT_VERBS_INTERNAL_DEVICE_DOMAIN_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/slab.h"
#include "verbs/abi.h"
#include "verbs/internal/device.h"
#include "verbs/internal/registration_cache.h"

namespace weft::verbs::internal {

// The access flags of weft's memory regions and queue pairs: the NIC writes
// received data locally; the remote flags match MLX's registration (weft
// itself only SENDs).
inline constexpr int kAccessFlags = abi::IBV_ACCESS_LOCAL_WRITE |
                                    abi::IBV_ACCESS_REMOTE_WRITE |
                                    abi::IBV_ACCESS_REMOTE_READ;

// Scatter/gather entries weft asks of every queue pair: a frame's header
// from weft's slab and its payload from registered user memory
// (Endpoint::kMaxParts).
inline constexpr uint32_t kWantedSges = 2;

class DeviceDomain final : private Registrar {
 public:
  // Allocates the protection domain on `device`, whose port the caller has
  // checked, and takes ownership of the device. At most
  // `memory_region_budget` regions are registered at once.
  static absl::StatusOr<std::unique_ptr<DeviceDomain>> create(
      std::unique_ptr<OpenDevice> device, size_t memory_region_budget);

  DeviceDomain(const DeviceDomain&) = delete;
  DeviceDomain& operator=(const DeviceDomain&) = delete;
  ~DeviceDomain() override;

  OpenDevice& device() const { return *device_; }
  const VerbsApi& api() const { return device_->library().api(); }
  abi::ibv_pd* pd() const { return pd_; }
  const ErrorPlace& place() const { return device_->place(); }
  // Scatter/gather entries per work request of this device's queue pairs:
  // kWantedSges, or fewer when the device reports a smaller max_sge.
  uint32_t sges() const { return sges_; }

  // Registers `slab` as one memory region, kept until the domain goes.
  // REQUIRES: not yet registered.
  absl::Status register_slab(const Slab& slab);
  // Deregisters `slab_id` if registered (rolls back a failed create_slab).
  void deregister_slab(uint64_t slab_id);
  RegistrationCache& regions() { return cache_; }
  const RegistrationCache& regions() const { return cache_; }
  // Whether `frame` lies in a slab of the fabric or in user memory
  // registered with it: both are in this domain's cache (the UC contract
  // asks before a post: fabric/uc_contract.h).
  bool owns(const Frame& frame) const {
    const Slab* slab = frame.slab();
    return slab != nullptr && slab->contains(frame) &&
           cache_.contains(slab->id());
  }
  size_t memory_regions() const { return cache_.registered(); }

  // Endpoints alive on this domain (they must go before the fabric).
  void add_endpoint() { ++endpoints_; }
  void remove_endpoint() { --endpoints_; }
  int endpoints() const { return endpoints_; }

 private:
  DeviceDomain(std::unique_ptr<OpenDevice> device, abi::ibv_pd* pd,
               size_t memory_region_budget, uint32_t sges)
      : device_(std::move(device)),
        pd_(pd),
        sges_(sges),
        cache_(memory_region_budget, *this, device_->place()) {}

  // Registrar: ibv_reg_mr and ibv_dereg_mr on this protection domain.
  absl::StatusOr<Registration> register_region(
      uint64_t id, std::span<std::byte> memory) override;
  void deregister_region(const Registration& registration) override;

  std::unique_ptr<OpenDevice> device_;
  abi::ibv_pd* pd_;
  uint32_t sges_;
  RegistrationCache cache_;
  int endpoints_ = 0;
};

}  // namespace weft::verbs::internal

#endif  // WEFT_VERBS_INTERNAL_DEVICE_DOMAIN_H_
