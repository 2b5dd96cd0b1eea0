// FabricServer: one simulated world (sim::World) served to the processes
// that play its ranks, over a local stream socket (protocol.h). It is what
// `weft-sim serve` and `weft-sim launch` run, and what the simulated verbs
// provider talks to when WEFT_SIM_SERVER names its socket.
//
// Each client says which rank it is and gets that rank's part of the world
// only. Its requests that change the world (open, connect, post, close) are
// queued and applied when every expected rank waits on the fabric (or has
// gone), in rank order; only then does virtual time move, to the next
// event or the earliest wake-up a waiting rank asked for. So the world's
// trace depends on what the programs do, never on how the host schedules
// them. A rank whose process disconnects (it exited, crashed or was killed)
// has left the world at the virtual time of that moment, which the others
// learn with their next answer past it (departures.h). When every rank waits
// and nothing is in flight, no program can ever progress: the server reports
// the deadlock (each rank's call, queue pairs, last frames, the faults so far)
// and ends the clients or leaves them.
//
// Linux and macOS both have what it needs (poll, Unix sockets); weft builds
// it on Linux, where the provider that talks to it is built.
#ifndef WEFT_SIM_SERVER_FABRIC_SERVER_H_
#define WEFT_SIM_SERVER_FABRIC_SERVER_H_

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/world.h"
#include "sim_server/departures.h"
#include "sim_server/wire.h"

namespace weft::sim_server {

struct ServerOptions {
  sim::WorldOptions world;
  // Where to listen. Its directory must exist and be the caller's alone
  // (mode 0700): any process that can open the socket can play a rank.
  std::string socket_path;
  // Ranks the run waits for (default: every rank of the world). A world
  // rank left out never holds time back.
  std::vector<uint32_t> expected_ranks;
  enum class OnDeadlock { kEnd, kLeave };
  // kEnd: every client is told and exits; kLeave: the server stops
  // simulating and answers every wait at once, so programs with their own
  // timeouts can take them.
  OnDeadlock on_deadlock = OnDeadlock::kEnd;
  enum class OnCrash { kError, kKill };
  // A rank the fault plan crashes: its verbs calls fail from then on
  // (kError) or its process is killed (kKill).
  OnCrash on_crash = OnCrash::kError;
  // How long the expected ranks have to connect, counted from the first
  // connection (from the start while none has come); a rank that has not
  // come by then counts as gone, and the run ends as kMissingRanks.
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(60)};
  // Called about every 100 ms of wall time while serving (the launcher
  // reaps its children there), and at once when `wake_fd` is readable.
  // Returning false stops serving.
  std::function<bool()> tick;
  // Polled with the clients when >= 0 (never read): a caller's self-pipe,
  // so that a signal reaches tick() without waiting for the period.
  int wake_fd = -1;
  // When some ranks have waited on the fabric this long (wall time) while
  // another rank, neither waiting nor gone, holds virtual time back (it
  // computes, sleeps, waits on something else, or has not connected), one
  // line on stderr names that rank and the last call the server saw from
  // it, once per run; nothing else changes. Zero: never.
  std::chrono::milliseconds hold_report{std::chrono::seconds(5)};
};

struct ServeResult {
  enum class Outcome {
    kFinished,      // every expected rank came and went
    kMissingRanks,  // an expected rank never connected (connect_timeout)
    kDeadlock,      // every rank waited with nothing in flight
    kTimeLimit,     // the world's time limit passed
    kStopped,       // tick() returned false
  };
  Outcome outcome = Outcome::kFinished;
  TimeNs end_ns = 0;
  std::string report;  // deadlock or time limit: the report printed
  // kMissingRanks: the expected ranks that never connected, in rank order.
  std::vector<uint32_t> never_connected;
};

class FabricServer {
 public:
  // InvalidArgument for bad world options or a socket path that is too
  // long; FailedPrecondition when the socket's directory is not the
  // caller's alone (mode 0700) or the socket cannot be bound.
  static absl::StatusOr<std::unique_ptr<FabricServer>> create(
      ServerOptions options);
  ~FabricServer();
  FabricServer(const FabricServer&) = delete;
  FabricServer& operator=(const FabricServer&) = delete;

  // Serves until the run ends (ServeResult::Outcome). Reports go to stderr.
  ServeResult serve();
  // The launcher's word that `rank`'s process has ended.
  void rank_gone(uint32_t rank);
  // The pid each rank's client gave, once it has connected.
  std::optional<pid_t> pid_of(uint32_t rank) const;

  const sim::World& world() const { return *world_; }
  const std::string& socket_path() const { return options_.socket_path; }

 private:
  struct Client;
  struct Rank;
  struct Qp;
  struct Action;

  FabricServer(ServerOptions options, std::unique_ptr<sim::World> world,
               int fd);

  void accept_client();
  // false: the client broke the protocol or left; it has been dropped.
  bool read_client(Client& client);
  bool handle(Client& client, const Message& m);
  bool handle_hello(Client& client, const Message& m);
  bool handle_open(Client& client, const Message& m);
  bool handle_wait(Client& client, const Message& m);
  bool handle_query(Client& client, const Message& m);
  bool handle_register_slab(Client& client, const Message& m);
  // Queues what the client's post ring holds; false: it broke the
  // protocol and was dropped.
  bool drain_ring(Client& client);
  // The frame `ref` names in one of the client's slabs; false when there
  // is no such frame.
  bool resolve(const Client& client, const FrameRef& ref, Frame* out) const;
  bool queue_action(Client& client, const Message& m);
  void drop(Client& client, const std::string& why);
  // Writes a message to the client; false when it could not (the client
  // has been dropped).
  bool send_to(Client& client, MsgType type,
               std::span<const std::span<const std::byte>> parts);
  void leave(uint32_t rank);

  // The barrier: when every expected rank waits or has gone, applies the
  // queued actions, moves time and answers the waits it can.
  void try_step();
  bool all_waiting() const;
  void apply_actions();
  void apply(uint32_t rank, Action& action);
  void post_to_sim(Qp& qp);
  void harvest();
  bool answer_waiters();
  // Sends the rank its Step; false when that failed and the client has
  // been dropped.
  bool answer(Rank& rank, uint32_t flags);
  void notice_crashes();
  void deadlock(const std::string& why, ServeResult::Outcome outcome);
  // The hold_report line, when its time has come.
  void report_holders();
  std::string report(const std::string& why,
                     ServeResult::Outcome outcome) const;

  ServerOptions options_;
  std::unique_ptr<sim::World> world_;
  int listen_fd_ = -1;
  std::vector<std::unique_ptr<Client>> clients_;
  std::vector<std::unique_ptr<Rank>> ranks_;
  std::map<uint32_t, std::unique_ptr<Qp>> qps_;  // by the qp_num handed out
  // The ranks whose process has left, stamped with the virtual time it
  // left at; sent to the others as it becomes visible (departures.h).
  DepartureLog departures_;
  std::optional<std::chrono::steady_clock::time_point> first_connect_;
  bool holders_reported_ = false;
  bool released_ = false;
  std::optional<ServeResult> released_result_;  // kLeave: the report
  std::optional<ServeResult> result_;
};

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_FABRIC_SERVER_H_
