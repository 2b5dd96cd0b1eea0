#include "verbs/port_state.h"

#include "verbs/abi.h"

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

}  // namespace weft::verbs
