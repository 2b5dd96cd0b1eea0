// The simulation server's per-client, per-rank and per-queue-pair state,
// and the constants both halves of FabricServer use: fabric_server.cc (the
// clients: the socket, their requests) and fabric_server_world.cc (the
// barrier: applying requests to the world, moving time, answering waits,
// the deadlock report). Private to weft_sim_server.
#ifndef WEFT_SIM_SERVER_INTERNAL_SERVER_STATE_H_
#define WEFT_SIM_SERVER_INTERNAL_SERVER_STATE_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "fabric/clock.h"
#include "fabric/endpoint.h"
#include "fabric/slab.h"
#include "sim_server/fabric_server.h"
#include "sim_server/shared_memory.h"
#include "sim_server/wire.h"

namespace weft::sim_server {

using SteadyClock = std::chrono::steady_clock;

// How long a write to a client may wait for it to read.
inline constexpr auto kWriteDeadline = std::chrono::seconds(10);
// The poll loop's period, for tick() and the connect deadline.
inline constexpr int kTickMs = 100;
// Queue pair numbers handed out: rank r's k-th is ((r + 1) << 12) | k, a
// function of the rank's own calls only, so they do not depend on which
// process asked first.
inline constexpr uint32_t kQpsPerRank = 1u << 12;
// The thread a request the server queues itself names (a rank that left:
// its queue pairs' closes); no client thread has id 0.
inline constexpr uint32_t kServerThread = 0;
// Requests a rank may queue before it waits once (a program that posts
// for ever without polling is broken, and must not exhaust the server).
inline constexpr size_t kMaxQueuedActions = size_t{1} << 22;

inline WallDeadline write_deadline() {
  return SteadyClock::now() + kWriteDeadline;
}

inline std::string micros(TimeNs ns) {
  return absl::StrFormat("%.3f us", static_cast<double>(ns) / kNsPerUs);
}

struct FabricServer::Client {
  int fd = -1;
  MessageReader reader;
  bool hello = false;
  uint32_t rank = 0;
  pid_t pid = 0;
  std::string program;
  // The post ring in memory the client shares (its mapping owned here).
  std::unique_ptr<Slab> channel;
  std::optional<MessageRing> ring;
  // The client's slabs, adopted into its rank's simulated fabric, by the
  // client's slab id, and the ids by slab.
  std::map<uint64_t, Slab*> slabs;
  std::map<const Slab*, uint64_t> slab_ids;
};

// A change to the world a client asked for, applied at the barrier.
struct FabricServer::Action {
  MsgType type = MsgType::kConnect;
  uint32_t thread = 0;  // the client's thread that asked (protocol.h)
  uint32_t qp_num = 0;
  uint32_t remote_qp_num = 0;
  uint64_t work_id = 0;
  uint32_t immediate = 0;
  uint32_t length = 0;
  bool has_immediate = true;
  Frame frame;  // posts and regions: in one of the client's slabs
  // RDMA WRITEs: the far end's address and key; regions: the key, the
  // address the frame mirrors and whether writes may land.
  bool rdma_write = false;
  uint64_t address = 0;
  uint32_t rkey = 0;
  bool remote_write = false;
};

struct FabricServer::Rank {
  uint32_t index = 0;
  bool expected = false;
  Client* client = nullptr;
  bool ever_connected = false;
  bool gone = false;
  bool crash_noticed = false;
  // Waiting in the fabric: the call, and the latest virtual time to wake.
  bool waiting = false;
  std::string waits_in;
  std::optional<TimeNs> wake_at;
  // Wall time since it started or stopped waiting (connected, for one not
  // connected yet: the server's start), and the last request seen from
  // it in verbs' words: for ServerOptions::hold_report.
  SteadyClock::time_point since = SteadyClock::now();
  std::string last_call = "none";
  std::deque<Action> actions;
  // Completions not yet handed to the client: the Step body's tail; then
  // what RDMA WRITEs put into its regions.
  uint32_t outbox_count = 0;
  std::vector<std::byte> outbox;
  uint32_t writes_count = 0;
  std::vector<std::byte> writes;
  // Departures (FabricServer::departures_) this rank has been sent: a
  // prefix of them, as what is visible at a time only grows.
  size_t departures_told = 0;
  uint32_t next_qp = 0;
};

struct FabricServer::Qp {
  uint32_t num = 0;
  uint32_t rank = 0;
  uint32_t peer = 0;
  std::string device;
  std::unique_ptr<Endpoint> ep;  // opened at the first barrier after kOpen
  bool open_failed = false;
  bool connected = false;
  bool to_nowhere = false;  // connected to a queue pair that does not exist
  // Work the simulator's queue pair has no room for yet (it holds
  // Endpoint::kMaxSends and kMaxRecvs), posted in order as room frees.
  std::deque<Action> sends_waiting;
  std::deque<Action> recvs_waiting;
  uint32_t sends_in_sim = 0;
  uint32_t recvs_in_sim = 0;
  // For deadlock reports.
  uint64_t sent = 0;
  uint64_t received = 0;
  std::string last_sent = "none";
  std::string last_received = "none";
};

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_INTERNAL_SERVER_STATE_H_
