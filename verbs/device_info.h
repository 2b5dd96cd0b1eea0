// What the RDMA library reports about this machine's devices: names, port 1's
// state, MTU, link layer and GID table, and the device limits. Used by
// `weft-devices` and by anyone checking a machine before running weft; the
// remedy texts here are the ones the verbs fabric's errors give.
#ifndef WEFT_VERBS_DEVICE_INFO_H_
#define WEFT_VERBS_DEVICE_INFO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "verbs/gid.h"
#include "verbs/loader.h"
#include "verbs/port_state.h"

namespace weft::verbs {

// The port weft uses on every device (Thunderbolt RDMA devices have one).
inline constexpr uint8_t kPort = 1;

struct DeviceLimits {
  int max_qp = 0;
  int max_qp_wr = 0;
  int max_cq = 0;
  int max_cqe = 0;
  int max_mr = 0;
  int max_sge = 0;  // scatter/gather entries per work request
  int max_pd = 0;
  int phys_port_cnt = 0;
};

struct DeviceInfo {
  std::string name;
  // Host order; nullopt when the library lacks ibv_get_device_guid.
  std::optional<uint64_t> node_guid;
  // Not OK when the device could not be opened or its port queried; the
  // fields below are then unset.
  absl::Status status;
  int port_state = 0;
  int active_mtu = 0;
  int max_mtu = 0;
  int link_layer = 0;
  uint16_t lid = 0;
  int gid_table_length = 0;
  std::vector<GidEntry> gids;  // non-empty entries, in index order
  // nullopt when the library lacks ibv_query_device or it failed.
  std::optional<DeviceLimits> limits;

  bool port_active() const;
  // The first IPv4-mapped GID, if any.
  std::optional<GidEntry> ipv4_gid() const;
};

// Every device the library lists, each opened, queried and closed again.
// FailedPrecondition "no RDMA devices ..." when there are none.
absl::StatusOr<std::vector<DeviceInfo>> list_devices(
    const VerbsLibrary& library);

}  // namespace weft::verbs

#endif  // WEFT_VERBS_DEVICE_INFO_H_
