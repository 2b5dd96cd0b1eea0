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
// only when every rank waits). Thread-safe: a rank's process may have many
// threads, and while one of them waits (at most one at a time) the others
// post, poll and ask; whichever thread needs a message from the server
// reads the socket and hands each message to its owner (answers come in
// the order of the requests, a Step whenever the server steps).
#ifndef WEFT_SIM_SERVER_REMOTE_WORLD_H_
#define WEFT_SIM_SERVER_REMOTE_WORLD_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
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
  // REQUIRES: no other thread is in wait() (the rank waits once).
  absl::Status wait(std::string_view what, std::optional<TimeNs> wake_at_ns);

  absl::StatusOr<uint64_t> trace_hash();
  // Whether rank `rank` of the world has crashed (the fault plan).
  absl::StatusOr<bool> crashed(uint32_t rank);
  // The ranks that left the world before this rank's virtual time (their
  // process exited, crashed or was killed), in order of (time, rank). No
  // system call: the server sends each departure with its first answer
  // past it, so this is the same on every run (departures.h).
  std::vector<Departure> departed() const;
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
  bool has_writes() const;
  bool crashed() const;
  // The server has stopped simulating (after a deadlock, --on_deadlock=
  // leave): waits return at once from now on.
  bool released() const;

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
  // The server's time as of its last answer, read by any thread.
  class StepClock final : public Clock {
   public:
    TimeNs now_ns() const override {
      return now_ns_.load(std::memory_order_acquire);
    }
    // REQUIRES: t_ns >= now_ns() (time never runs backwards).
    void advance_to(TimeNs t_ns);

   private:
    std::atomic<TimeNs> now_ns_{0};
  };

  RemoteWorld(int fd, uint32_t rank, Topology topology,
              std::chrono::milliseconds wait_timeout);
  // Sends a request and returns its number (answers come in that order).
  // REQUIRES: send_mutex_ held.
  absl::StatusOr<uint64_t> send_request(
      MsgType type, std::span<const std::span<const std::byte>> parts,
      int pass_fd);
  // The answer to request `ticket`, which must be of type `want`.
  absl::StatusOr<Message> await_answer(uint64_t ticket, MsgType want);
  // Blocks until `arrived()` holds (checked under mutex_), reading the
  // socket when no other thread does, until `deadline`.
  template <typename Pred>
  absl::Status await(Pred arrived, WallDeadline deadline);
  // Hands one message read from the socket to its owner. REQUIRES: mutex_.
  void dispatch(Message m);
  void deliver(const Message& step);
  [[noreturn]] void ended(const Message& fatal);

  int fd_ = -1;
  std::unique_ptr<Slab> channel_;  // the post ring's shared memory
  uint32_t rank_ = 0;
  Topology topology_;
  uint64_t seed_ = 0;
  bool apple_limits_ = false;
  std::chrono::milliseconds wait_timeout_;
  StepClock clock_;
  std::unique_ptr<RemoteFabric> fabric_;

  // What goes to the server, in one order: socket writes, the post ring,
  // and the numbering of requests.
  std::mutex send_mutex_;
  std::optional<MessageRing> ring_;
  uint64_t requests_sent_ = 0;

  // What comes from it, and the state it changes.
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  MessageReader reader_;  // used by the thread reading, one at a time
  bool reading_ = false;  // a thread reads the socket
  uint64_t answers_read_ = 0;
  std::map<uint64_t, Message> answers_;  // by request number, not yet taken
  uint64_t steps_read_ = 0;
  bool waiting_ = false;  // a thread is in wait()
  bool crashed_ = false;
  bool released_ = false;
  absl::Status broken_;  // set when an answer did not come in time
  std::vector<sim::WrittenRange> writes_;
  DepartureLog departures_;
  std::map<uint32_t, RemoteEndpoint*> endpoints_;
};

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_REMOTE_WORLD_H_
