// How weft names what it reads off a verbs port (its state, MTU and link
// layer, as rdma-core spells them) and what it tells a user to do when a
// port is not active or the library lists no devices. Pure functions, used
// by device listing (device_info.h) and by the fabric's own checks.
#ifndef WEFT_VERBS_PORT_STATE_H_
#define WEFT_VERBS_PORT_STATE_H_

#include <string_view>

namespace weft::verbs {

// rdma-core's ibv_port_state_str() spelling: "PORT_ACTIVE", "PORT_DOWN", ...
std::string_view port_state_name(int state);
// 256 .. 4096 for IBV_MTU_256 .. IBV_MTU_4096; 0 for anything else.
int mtu_bytes(int mtu);
// "InfiniBand", "Ethernet", "unspecified".
std::string_view link_layer_name(int link_layer);

// Why a port that is not ACTIVE usually is not, and what to do.
std::string_view port_down_causes();
// What to check when the library lists no devices (platform-specific).
std::string_view no_devices_remedy();

}  // namespace weft::verbs

#endif  // WEFT_VERBS_PORT_STATE_H_
