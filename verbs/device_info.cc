#include "verbs/device_info.h"

#include <cstring>
#include <memory>
#include <utility>

#include "verbs/internal/device.h"

namespace weft::verbs {
namespace {

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
  info.limits = (*opened)->limits();
  return info;
}

}  // namespace

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
