// The simulated provider's objects. Each embeds the real header's structure,
// whose address is what the caller gets; the provider finds its object again
// by looking that address up in its tables (so a stale or foreign pointer is
// an error, not a crash).
#ifndef WEFT_SIM_VERBS_OBJECTS_H_
#define WEFT_SIM_VERBS_OBJECTS_H_

#include <infiniband/verbs.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fabric/endpoint.h"
#include "fabric/slab.h"

namespace weft::sim_verbs {

using GidBytes = std::array<uint8_t, 16>;

// What every simulated device reports and accepts.
inline constexpr uint8_t kPort = 1;  // one port per device
inline constexpr ibv_mtu kMaxMtu = IBV_MTU_4096;
inline constexpr ibv_mtu kActiveMtu = IBV_MTU_1024;
// Scatter/gather entries per work request (rdma-core's software RoCE
// provider allows 32; what Apple's allows is not published).
inline constexpr int kMaxSge = 16;
inline constexpr int kMaxCqe = 4096;
// Bytes an IBV_SEND_INLINE send may carry; every queue pair reports this.
inline constexpr uint32_t kMaxInlineData = 256;
// The longest message (a port's max_msg_sz).
inline constexpr uint64_t kMaxMessageBytes = uint64_t{1} << 31;

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
  // In-process: registered with the world as a region RDMA WRITEs may
  // target (under the rkey, with the MR's access), so dereg_mr unregisters.
  bool region = false;
};

struct SimCq;

// A completion channel: its events in the order they were raised, and an
// eventfd (channel.fd) whose count is the number of events not yet read,
// so the fd is readable exactly while one is pending.
struct SimChannel {
  ibv_comp_channel channel;
  SimContext* owner = nullptr;
  std::deque<SimCq*> events;
};

struct SimQp;

struct SimCq {
  ibv_cq cq;
  SimContext* owner = nullptr;
  SimChannel* channel = nullptr;  // null: no completion events
  std::vector<SimQp*> qps;        // attached queue pairs, in creation order
  // Completions taken from the simulator but not yet polled: found while
  // polling another CQ, or while looking for a completion event.
  std::vector<ibv_wc> stash;
  // Completions added to this CQ so far; an armed CQ raises its event once
  // this passes armed_mark, the count when it was armed.
  uint64_t added = 0;
  uint64_t armed_mark = 0;
  bool armed = false;
  // Events ibv_get_cq_event returned; the CQ cannot be destroyed until
  // ibv_ack_cq_events has acknowledged them all (cq.comp_events_completed).
  uint32_t events_reported = 0;
  // Client mode: a poll found this CQ empty since the rank last posted or
  // got a completion; polling it empty again is waiting.
  bool found_empty = false;
};

// A work request the simulator holds, until its completion is polled.
struct PostedWr {
  uint64_t wr_id = 0;
  bool send = false;
  // Sends: what their completion reports (IBV_WC_SEND or
  // IBV_WC_RDMA_WRITE).
  ibv_wc_opcode send_opcode = IBV_WC_SEND;
  bool signaled = true;
  std::byte* user = nullptr;  // receives of one entry: where the bytes go
  uint32_t length = 0;
  // The simulator's frame: the registered memory's shadow for one entry,
  // else `staged`'s first `length` bytes.
  Frame shadow;
  // A frame of the rank's FramePool holding a gathered send (several
  // entries, or inline) or a receive to scatter; given back on completion.
  std::optional<Frame> staged;
  std::vector<ibv_sge> scatter;  // receives of several entries
  // The local keys of its entries (none for inline data): a region with a
  // request outstanding cannot be deregistered (dereg_mr: EBUSY).
  std::vector<uint32_t> lkeys;
};

struct SimQp {
  ibv_qp qp;
  SimPd* owner = nullptr;
  SimCq* send_cq = nullptr;
  SimCq* recv_cq = nullptr;
  ibv_qp_cap cap{};
  int sq_sig_all = 0;  // as created (the data path signals per request)
  std::unique_ptr<Endpoint> endpoint;  // the simulator's queue pair
  uint32_t remote_qp_num = 0;
  int sgid_index = -1;
  // What ibv_modify_qp set, for ibv_query_qp.
  ibv_qp_attr attr{};
  uint32_t next_slot = 0;
  uint32_t sends = 0;  // outstanding
  uint32_t recvs = 0;
  std::map<uint32_t, PostedWr> posted;  // by WorkId slot
};

}  // namespace weft::sim_verbs

#endif  // WEFT_SIM_VERBS_OBJECTS_H_
