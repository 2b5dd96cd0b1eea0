#include "verbs/internal/device.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "verbs/internal/verbs_error.h"
#include "verbs/port_state.h"

namespace weft::verbs::internal {

absl::StatusOr<std::unique_ptr<DeviceList>> DeviceList::get(
    const VerbsLibrary& library, const ErrorPlace& place) {
  const VerbsApi& api = library.api();
  int count = 0;
  errno = 0;
  abi::ibv_device** list = api.get_device_list(&count);
  const int err = errno;
  if (list == nullptr || count <= 0) {
    if (list != nullptr) api.free_device_list(list);
    const std::string why =
        list == nullptr
            ? absl::StrFormat("ibv_get_device_list failed: %s", errno_text(err))
            : std::string("ibv_get_device_list returned none");
    return fabric_error(
        absl::StatusCode::kFailedPrecondition, place, ErrorCause::kFabric,
        absl::StrFormat("no RDMA devices found by %s (%s): %s", library.path(),
                        why, no_devices_remedy()));
  }
  std::vector<std::string> names;
  names.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    const char* name = api.get_device_name(list[i]);
    names.emplace_back(name == nullptr ? "" : name);
  }
  return std::unique_ptr<DeviceList>(
      new DeviceList(api, list, std::move(names)));
}

DeviceList::~DeviceList() { api_.free_device_list(list_); }

abi::ibv_device* DeviceList::find(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return list_[i];
  }
  return nullptr;
}

std::string DeviceList::names() const { return absl::StrJoin(names_, ", "); }

absl::StatusOr<std::unique_ptr<OpenDevice>> OpenDevice::open(
    const VerbsLibrary& library, abi::ibv_device* device, ErrorPlace place) {
  errno = 0;
  abi::ibv_context* context = library.api().open_device(device);
  if (context == nullptr) {
    return verbs_error(place, "opening the device (ibv_open_device)", errno,
                       "check that no other process holds it and that the "
                       "user may access RDMA devices");
  }
  return std::unique_ptr<OpenDevice>(
      new OpenDevice(library, context, std::move(place)));
}

OpenDevice::~OpenDevice() { library_.api().close_device(context_); }

absl::StatusOr<abi::ibv_port_attr> OpenDevice::query_port(uint8_t port) const {
  abi::ibv_port_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  errno = 0;
  const int rc = library_.api().query_port(context_, port, &attr);
  if (rc != 0) {
    return verbs_error(place_,
                       absl::StrFormat("querying port %u (ibv_query_port)",
                                       static_cast<unsigned>(port)),
                       errno_of(rc, errno));
  }
  return attr;
}

absl::Status OpenDevice::check_port_active(uint8_t port,
                                           const abi::ibv_port_attr& attr,
                                           const ErrorPlace& place) {
  if (attr.state == abi::IBV_PORT_ACTIVE) return absl::OkStatus();
  return fabric_error(
      absl::StatusCode::kUnavailable, place, ErrorCause::kFabric,
      absl::StrFormat("port %u is %s (state %d), not PORT_ACTIVE, so nothing "
                      "can be allocated on it (Apple's ibv_alloc_pd fails on "
                      "a down port); %s",
                      static_cast<unsigned>(port), port_state_name(attr.state),
                      static_cast<int>(attr.state), port_down_causes()));
}

std::vector<GidEntry> OpenDevice::gid_table(
    uint8_t port, const abi::ibv_port_attr& attr) const {
  std::vector<GidEntry> table;
  const int length = std::min(attr.gid_tbl_len, kMaxGidTableLength);
  for (int index = 0; index < length; ++index) {
    abi::ibv_gid gid;
    std::memset(&gid, 0, sizeof(gid));
    if (library_.api().query_gid(context_, port, index, &gid) != 0) continue;
    GidEntry entry;
    entry.index = index;
    std::memcpy(entry.gid.data(), gid.raw, entry.gid.size());
    entry.kind = gid_kind(entry.gid);
    if (entry.kind != GidKind::kEmpty) table.push_back(entry);
  }
  return table;
}

std::optional<DeviceLimits> OpenDevice::limits() const {
  const VerbsApi& api = library_.api();
  if (api.query_device == nullptr) return std::nullopt;
  abi::ibv_device_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  if (api.query_device(context_, &attr) != 0) return std::nullopt;
  DeviceLimits limits;
  limits.max_qp = attr.max_qp;
  limits.max_qp_wr = attr.max_qp_wr;
  limits.max_cq = attr.max_cq;
  limits.max_cqe = attr.max_cqe;
  limits.max_mr = attr.max_mr;
  limits.max_sge = attr.max_sge;
  limits.max_pd = attr.max_pd;
  limits.phys_port_cnt = attr.phys_port_cnt;
  return limits;
}

}  // namespace weft::verbs::internal
