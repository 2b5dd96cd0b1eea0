// RemoteWorld: one rank of a world that `weft-sim serve` simulates, seen
// from the rank's own process. Its fabric (kind "sim") opens endpoints
// whose work travels to the server (protocol.h) and whose completions come
// back when the rank waits: the simulated verbs provider uses it in place
// of an in-process sim::World when WEFT_SIM_SERVER is set, so a verbs
// program's queue pairs live in the server's world, under its faults and
// its virtual clock.
//
// Waiting is explicit: when a poll finds nothing, the caller calls wait(),
// which blocks until the server has something for this rank (it moves time
// only when every rank waits). Not thread-safe; the provider serialises
// calls.
#ifndef WEFT_SIM_SERVER_REMOTE_WORLD_H_
#define WEFT_SIM_SERVER_REMOTE_WORLD_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/fabric.h"
#include "fabric/topology.h"
#include "sim/world.h"
#include "sim_server/departures.h"
#include "sim_server/shared_memory.h"
#include "sim_server/wire.h"

namespace weft::sim_server {

// The process's rank from the first of kRankVariables that is set;
// InvalidArgument naming the variable when its value is not a number, and
// when none is set.
absl::StatusOr<uint32_t> rank_from_environment();

class RemoteWorld {
 public:
  // Exit code of a process the server ended (a deadlock, the time limit).
  static constexpr int kEndedExitCode = 75;

  // Connects to the server listening at `socket_path` as `rank`.
  // Unavailable when nothing listens there; FailedPrecondition with the
  // server's words when it refuses the rank.
  static absl::StatusOr<std::unique_ptr<RemoteWorld>> connect(
      const std::string& socket_path, uint32_t rank,
      std::chrono::milliseconds wait_timeout);
  ~RemoteWorld();
  RemoteWorld(const RemoteWorld&) = delete;
  RemoteWorld& operator=(const RemoteWorld&) = delete;

  uint32_t rank() const { return rank_; }
  uint32_t ranks() const { return topology_.ranks(); }
  const Topology& topology() const { return topology_; }
  uint64_t seed() const { return seed_; }
  bool apple_limits() const { return apple_limits_; }
  // This rank's fabric.
  Fabric& fabric();
  // The server's virtual time as of its last answer.
  const Clock& clock() const { return clock_; }

  // Tells the server this rank waits in `what` (for deadlock reports) and
  // blocks until it answers: completions for this rank have arrived (the
  // endpoints' poll() returns them), `wake_at_ns` has come, or the server
  // stopped simulating. Aborted when this rank has crashed (the fault
  // plan), Unavailable when the server has gone, DeadlineExceeded after
  // the wall-time wait timeout. When the server ends this rank (a
  // deadlock), prints its words and exits with kEndedExitCode.
  absl::Status wait(std::string_view what, std::optional<TimeNs> wake_at_ns);

  absl::StatusOr<uint64_t> trace_hash();
  // Whether rank `rank` of the world has crashed (the fault plan).
  absl::StatusOr<bool> crashed(uint32_t rank);
  // The ranks that left the world before this rank's virtual time (their
  // process exited, crashed or was killed), in order of (time, rank). No
  // system call: the server sends each departure with its first answer
  // past it, so this is the same on every run (departures.h).
  std::span<const Departure> departed() const {
    return departures_.visible_at(clock_.now_ns());
  }
  // Completions that arrived and no endpoint's poll() has taken yet.
  size_t pending_completions() const;

  // Makes `region` (a frame of fabric()'s slabs mirroring the program's
  // memory at `address`) a memory region of this rank under `rkey`, open
  // to RDMA WRITEs when `remote_write`; and forgets it. Queued, in order
  // with the posts.
  absl::Status register_region(uint32_t rkey, const Frame& region,
                               uint64_t address, bool remote_write);
  absl::Status unregister_region(uint32_t rkey);
  // What RDMA WRITEs put into this rank's regions (their bytes are in the
  // regions' frames already) since the last call, in order.
  std::vector<sim::WrittenRange> take_writes();
  bool has_writes() const { return !writes_.empty(); }
  bool crashed() const { return crashed_; }
  // The server has stopped simulating (after a deadlock, --on_deadlock=
  // leave): waits return at once from now on.
  bool released() const { return released_; }

  // For the endpoints: a message over the socket (with a file descriptor
  // when `pass_fd` >= 0), a request and its answer, and a post (through
  // the shared ring when it has room).
  absl::Status send(MsgType type,
                    std::span<const std::span<const std::byte>> parts,
                    int pass_fd = -1);
  absl::StatusOr<Message> request(
      MsgType type, std::span<const std::span<const std::byte>> parts,
      MsgType answer, int pass_fd = -1);
  absl::Status post(MsgType type,
                    std::span<const std::span<const std::byte>> parts);
  // Names `frame` for the server. REQUIRES: it lies in a slab of fabric().
  absl::Status frame_ref(const Frame& frame, FrameRef* out) const;
  class RemoteEndpoint;
  void attach(uint32_t qp_num, RemoteEndpoint* endpoint);
  void detach(uint32_t qp_num);

 private:
  class RemoteFabric;
  RemoteWorld(int fd, uint32_t rank, Topology topology,
              std::chrono::milliseconds wait_timeout);
  absl::StatusOr<Message> read(MsgType want);
  void deliver(const Message& step);
  [[noreturn]] void ended(const Message& fatal);

  int fd_ = -1;
  MessageReader reader_;
  std::unique_ptr<Slab> channel_;  // the post ring's shared memory
  std::optional<MessageRing> ring_;
  uint32_t rank_ = 0;
  Topology topology_;
  uint64_t seed_ = 0;
  bool apple_limits_ = false;
  std::chrono::milliseconds wait_timeout_;
  ManualClock clock_;
  bool crashed_ = false;
  bool released_ = false;
  absl::Status broken_;  // set when an answer did not come in time
  std::vector<sim::WrittenRange> writes_;
  DepartureLog departures_;
  std::unique_ptr<RemoteFabric> fabric_;
  std::map<uint32_t, RemoteEndpoint*> endpoints_;
};

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_REMOTE_WORLD_H_
