#include "verbs/device_info.h"

#include <cstring>
#include <memory>

#include "verbs/internal/device.h"

namespace weft::verbs {
namespace {

constexpr int kMinMtuBytes = 256;

#if defined(__APPLE__)
constexpr std::string_view kNoDevicesRemedy =
    "check that this Mac runs macOS 26.2 or later, that RDMA is enabled "
    "(`rdma_ctl status`; enable it with `rdma_ctl enable` in Recovery mode, "
    "then restart), and that a Thunderbolt 5 cable joins it to another Mac";
#else
constexpr std::string_view kNoDevicesRemedy =
    "this host has no RDMA adapter, or its kernel driver and ib_uverbs are "
    "not loaded; `ibv_devices` lists what rdma-core sees";
#endif

std::optional<DeviceLimits> query_limits(const internal::OpenDevice& device) {
  const VerbsApi& api = device.library().api();
  if (api.query_device == nullptr) return std::nullopt;
  abi::ibv_device_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  if (api.query_device(device.context(), &attr) != 0) return std::nullopt;
  DeviceLimits limits;
  limits.max_qp = attr.max_qp;
  limits.max_qp_wr = attr.max_qp_wr;
  limits.max_cq = attr.max_cq;
  limits.max_cqe = attr.max_cqe;
  limits.max_mr = attr.max_mr;
  limits.max_pd = attr.max_pd;
  limits.phys_port_cnt = attr.phys_port_cnt;
  return limits;
}

uint64_t from_big_endian(uint64_t wire) {
  uint8_t bytes[sizeof(wire)];
  std::memcpy(bytes, &wire, sizeof(wire));
  uint64_t value = 0;
  for (uint8_t b : bytes) value = (value << 8) | b;
  return value;
}

DeviceInfo describe(const VerbsLibrary& library, abi::ibv_device* device,
                    std::string name) {
  DeviceInfo info;
  info.name = std::move(name);
  const VerbsApi& api = library.api();
  if (api.get_device_guid != nullptr) {
    info.node_guid = from_big_endian(api.get_device_guid(device));
  }
  ErrorPlace place;
  place.device = info.name;
  auto opened = internal::OpenDevice::open(library, device, place);
  if (!opened.ok()) {
    info.status = opened.status();
    return info;
  }
  auto port = (*opened)->query_port(kPort);
  if (!port.ok()) {
    info.status = port.status();
    return info;
  }
  info.port_state = port->state;
  info.active_mtu = port->active_mtu;
  info.max_mtu = port->max_mtu;
  info.link_layer = port->link_layer;
  info.lid = port->lid;
  info.gid_table_length = port->gid_tbl_len;
  info.gids = (*opened)->gid_table(kPort, *port);
  info.limits = query_limits(**opened);
  return info;
}

}  // namespace

std::string_view port_state_name(int state) {
  switch (state) {
    case abi::IBV_PORT_NOP:
      return "PORT_NOP";
    case abi::IBV_PORT_DOWN:
      return "PORT_DOWN";
    case abi::IBV_PORT_INIT:
      return "PORT_INIT";
    case abi::IBV_PORT_ARMED:
      return "PORT_ARMED";
    case abi::IBV_PORT_ACTIVE:
      return "PORT_ACTIVE";
    case abi::IBV_PORT_ACTIVE_DEFER:
      return "PORT_ACTIVE_DEFER";
    default:
      return "invalid state";
  }
}

int mtu_bytes(int mtu) {
  if (mtu < abi::IBV_MTU_256 || mtu > abi::IBV_MTU_4096) return 0;
  return kMinMtuBytes << (mtu - abi::IBV_MTU_256);
}

std::string_view link_layer_name(int link_layer) {
  switch (link_layer) {
    case abi::IBV_LINK_LAYER_INFINIBAND:
      return "InfiniBand";
    case abi::IBV_LINK_LAYER_ETHERNET:
      return "Ethernet";
    default:
      return "unspecified";
  }
}

std::string_view port_down_causes() {
  return "likely causes: the Thunderbolt cable is unplugged or the Mac at the "
         "other end is off; the Thunderbolt interface is a member of the "
         "Thunderbolt Bridge (remove it from the bridge in System Settings > "
         "Network); RDMA is not enabled (`rdma_ctl enable` in Recovery mode, "
         "then restart)";
}

std::string_view no_devices_remedy() { return kNoDevicesRemedy; }

bool DeviceInfo::port_active() const {
  return status.ok() && port_state == abi::IBV_PORT_ACTIVE;
}

std::optional<GidEntry> DeviceInfo::ipv4_gid() const {
  for (const GidEntry& entry : gids) {
    if (entry.kind == GidKind::kIpv4Mapped) return entry;
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<DeviceInfo>> list_devices(
    const VerbsLibrary& library) {
  auto list = internal::DeviceList::get(library, ErrorPlace{});
  if (!list.ok()) return list.status();
  std::vector<DeviceInfo> out;
  out.reserve((*list)->size());
  for (size_t i = 0; i < (*list)->size(); ++i) {
    out.push_back(describe(library, (*list)->device(i), (*list)->name(i)));
  }
  return out;
}

}  // namespace weft::verbs
