// The simulated provider's objects. Each embeds the real header's structure,
// whose address is what the caller gets; the provider finds its object again
// by looking that address up in its tables (so a stale or foreign pointer is
// an error, not a crash).
#ifndef WEFT_SIM_VERBS_PROVIDER_OBJECTS_H_
#define WEFT_SIM_VERBS_PROVIDER_OBJECTS_H_

#include <infiniband/verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fabric/endpoint.h"
#include "fabric/slab.h"

namespace weft::verbs::provider {

using GidBytes = std::array<uint8_t, 16>;

// What every simulated device reports and accepts.
inline constexpr uint8_t kPort = 1;  // one port per device
inline constexpr ibv_mtu kMaxMtu = IBV_MTU_4096;
inline constexpr ibv_mtu kActiveMtu = IBV_MTU_1024;
inline constexpr int kMaxSge = 1;  // scatter entries per work request
inline constexpr int kMaxCqe = 4096;

// One RDMA device of one rank: a cable end.
struct SimDevice {
  ibv_device device;  // handed out in device lists
  uint32_t rank = 0;
  uint32_t index = 0;  // among the rank's devices
  std::string name;
  // The rank at the other end; kNoPeer when the device joins several.
  uint32_t peer = 0;
  bool port_down = false;
  std::vector<GidBytes> gids;  // the port's table; all-zero entries unused
};

struct SimContext {
  ibv_context context;
  uint32_t handle = 0;
  SimDevice* device = nullptr;
};

struct SimPd {
  ibv_pd pd;
  SimContext* owner = nullptr;
};

struct SimMr {
  ibv_mr mr;
  SimPd* owner = nullptr;
  Slab* shadow = nullptr;  // the simulator's copy of the registered bytes
};

struct SimQp;

struct SimCq {
  ibv_cq cq;
  SimContext* owner = nullptr;
  std::vector<SimQp*> qps;    // attached queue pairs, in creation order
  std::vector<ibv_wc> stash;  // completions found while polling another CQ
};

// A work request the simulator holds, until its completion is polled.
struct PostedWr {
  uint64_t wr_id = 0;
  bool send = false;
  bool signaled = true;
  std::byte* user = nullptr;  // receives: where the bytes go
  uint32_t length = 0;
  Frame shadow;
};

struct SimQp {
  ibv_qp qp;
  SimPd* owner = nullptr;
  SimCq* send_cq = nullptr;
  SimCq* recv_cq = nullptr;
  ibv_qp_cap cap{};
  std::unique_ptr<Endpoint> endpoint;  // the simulator's queue pair
  uint32_t remote_qp_num = 0;
  int sgid_index = -1;
  uint32_t next_slot = 0;
  uint32_t sends = 0;  // outstanding
  uint32_t recvs = 0;
  std::map<uint32_t, PostedWr> posted;  // by WorkId slot
};

}  // namespace weft::verbs::provider

#endif  // WEFT_SIM_VERBS_PROVIDER_OBJECTS_H_
