// DeviceDomain: one open device with its protection domain and the memory
// regions of the fabric's slabs (one region per slab, registered once). All
// endpoints on the device share it. Destroyed in reverse order of creation:
// memory regions, protection domain, then the device context.
#ifndef WEFT_VERBS_INTERNAL_DEVICE_DOMAIN_H_
#define WEFT_VERBS_INTERNAL_DEVICE_DOMAIN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/slab.h"
#include "verbs/abi.h"
#include "verbs/internal/device.h"

namespace weft::verbs::internal {

// The access flags of weft's memory regions and queue pairs: the NIC writes
// received data locally; the remote flags match MLX's registration (weft
// itself only SENDs).
inline constexpr int kAccessFlags = abi::IBV_ACCESS_LOCAL_WRITE |
                                    abi::IBV_ACCESS_REMOTE_WRITE |
                                    abi::IBV_ACCESS_REMOTE_READ;

class DeviceDomain {
 public:
  // Allocates the protection domain on `device`, whose port the caller has
  // checked, and takes ownership of the device.
  static absl::StatusOr<std::unique_ptr<DeviceDomain>> create(
      std::unique_ptr<OpenDevice> device);

  DeviceDomain(const DeviceDomain&) = delete;
  DeviceDomain& operator=(const DeviceDomain&) = delete;
  ~DeviceDomain();

  OpenDevice& device() const { return *device_; }
  const VerbsApi& api() const { return device_->library().api(); }
  abi::ibv_pd* pd() const { return pd_; }
  const ErrorPlace& place() const { return device_->place(); }

  // Registers `slab` as one memory region. REQUIRES: not yet registered.
  absl::Status register_slab(const Slab& slab);
  // Deregisters `slab_id` if registered (rolls back a failed create_slab).
  void deregister_slab(uint64_t slab_id);
  // The local key of `slab_id`'s region; nullopt when not registered here.
  std::optional<uint32_t> lkey(uint64_t slab_id) const;
  size_t memory_regions() const { return regions_.size(); }

  // Endpoints alive on this domain (they must go before the fabric).
  void add_endpoint() { ++endpoints_; }
  void remove_endpoint() { --endpoints_; }
  int endpoints() const { return endpoints_; }

 private:
  DeviceDomain(std::unique_ptr<OpenDevice> device, abi::ibv_pd* pd)
      : device_(std::move(device)), pd_(pd) {}

  std::unique_ptr<OpenDevice> device_;
  abi::ibv_pd* pd_;
  // (slab id, region), in registration order.
  std::vector<std::pair<uint64_t, abi::ibv_mr*>> regions_;
  int endpoints_ = 0;
};

}  // namespace weft::verbs::internal

#endif  // WEFT_VERBS_INTERNAL_DEVICE_DOMAIN_H_
