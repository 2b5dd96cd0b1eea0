// The device list and open device contexts, shared by the verbs fabric and
// device listing: each owns one library object and releases it once.
#ifndef WEFT_VERBS_INTERNAL_DEVICE_H_
#define WEFT_VERBS_INTERNAL_DEVICE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "verbs/abi.h"
#include "verbs/device_info.h"
#include "verbs/gid.h"
#include "verbs/loader.h"

namespace weft::verbs::internal {

// Longest GID table weft reads (Apple's hold a handful of entries; rdma-core
// devices up to 256).
inline constexpr int kMaxGidTableLength = 256;

// The library's device list, freed on destruction. Devices that were not
// opened become invalid once it is freed, so owners keep it while they may
// still open devices.
class DeviceList {
 public:
  // FailedPrecondition "no RDMA devices ..." when the list is empty or the
  // library cannot list devices at all, with what to check.
  static absl::StatusOr<std::unique_ptr<DeviceList>> get(
      const VerbsLibrary& library, const ErrorPlace& place);

  DeviceList(const DeviceList&) = delete;
  DeviceList& operator=(const DeviceList&) = delete;
  ~DeviceList();

  size_t size() const { return names_.size(); }
  const std::string& name(size_t i) const { return names_[i]; }
  abi::ibv_device* device(size_t i) const { return list_[i]; }
  // nullptr when no device has that name.
  abi::ibv_device* find(std::string_view name) const;
  // "rdma_en2, rdma_en3".
  std::string names() const;

 private:
  DeviceList(const VerbsApi& api, abi::ibv_device** list,
             std::vector<std::string> names)
      : api_(api), list_(list), names_(std::move(names)) {}

  const VerbsApi& api_;
  abi::ibv_device** list_;
  std::vector<std::string> names_;
};

// One open device context, closed on destruction.
class OpenDevice {
 public:
  // `place` names the device (and rank) for errors.
  static absl::StatusOr<std::unique_ptr<OpenDevice>> open(
      const VerbsLibrary& library, abi::ibv_device* device, ErrorPlace place);

  OpenDevice(const OpenDevice&) = delete;
  OpenDevice& operator=(const OpenDevice&) = delete;
  ~OpenDevice();

  const VerbsLibrary& library() const { return library_; }
  abi::ibv_context* context() const { return context_; }
  const ErrorPlace& place() const { return place_; }

  absl::StatusOr<abi::ibv_port_attr> query_port(uint8_t port) const;
  // OK when `port` is ACTIVE; otherwise Unavailable at `place` naming its
  // state and the likely causes.
  static absl::Status check_port_active(uint8_t port,
                                        const abi::ibv_port_attr& attr,
                                        const ErrorPlace& place);
  // The port's non-empty GID entries, in index order (at most
  // kMaxGidTableLength are read). Entries the library cannot read are
  // skipped, as ibv_devinfo does.
  std::vector<GidEntry> gid_table(uint8_t port,
                                  const abi::ibv_port_attr& attr) const;
  // The device's limits (ibv_query_device); nullopt when the library lacks
  // the call or it failed.
  std::optional<DeviceLimits> limits() const;

 private:
  OpenDevice(const VerbsLibrary& library, abi::ibv_context* context,
             ErrorPlace place)
      : library_(library), context_(context), place_(std::move(place)) {}

  const VerbsLibrary& library_;
  abi::ibv_context* context_;
  ErrorPlace place_;
};

}  // namespace weft::verbs::internal

#endif  // WEFT_VERBS_INTERNAL_DEVICE_H_
