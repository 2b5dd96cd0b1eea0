// TcpFabric: weft's Fabric over TCP sockets, for every machine without RDMA
// (Macs on Thunderbolt 4 or Ethernet, Linux boxes without RDMA NICs). It
// keeps the fabric contract exactly (docs/architecture.md): an endpoint is
// one TCP connection to one peer over one cable, with verbs UC's semantics
// (tcp/internal/tcp_endpoint.h), so weft's sequence numbers, credits and
// recovery run over it unchanged.
//
// A cable is a pair of addresses: this rank's listening "ip:port" and the
// peer's. The fabric listens on the addresses it is given (never on all
// interfaces unless told to), and a device name passed to open() is one of
// them; a Topology for TCP names, for rank i towards rank j, rank i's
// listening address of each cable. The lower rank of a pair accepts, the
// higher rank connects, so both agree without a race.
//
// Progress: completions are produced when an endpoint is polled; idle()
// blocks in poll(2) or epoll(7) (TcpOptions::poller) until a socket is
// ready or the wake-up time. No thread runs in the background. Not thread-safe:
// one thread drives a fabric and its endpoints at a time.
//
// Its endpoints ask it for what they need through a narrow interface
// (tcp/internal/endpoint_host.h) and touch nothing else of it. Invariants
// (check_invariants()): each open endpoint is listed once, under its own
// queue pair number, below the next one to give, on a cable already
// counted towards its peer; at most kMaxSlabs slabs, and the
// registrations' own (fabric/registrations.h); at most kMaxPending
// connections wait for their hello.
#ifndef WEFT_TCP_TCP_FABRIC_H_
#define WEFT_TCP_TCP_FABRIC_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/fabric.h"
#include "fabric/registrations.h"
#include "net/socket.h"

namespace weft::tcp {

namespace internal {
class ClosingConnection;
class Poller;
class TcpEndpoint;
struct Listener;
struct PendingConnection;
}  // namespace internal

// How idle() waits for the fabric's sockets: poll(2), on every system, or
// epoll(7), on Linux only (its interest set stays in the kernel between
// waits). kDefault: kDefaultPoller.
enum class PollerKind : uint8_t { kDefault, kPoll, kEpoll };
inline constexpr PollerKind kDefaultPoller = PollerKind::kPoll;

// Outside the class so its member initializers can serve open()'s default.
struct TcpOptions {
  // This rank's listening addresses, one per cable: "ip:port" or
  // "[ipv6]:port", numeric. Port 0 lets the system choose
  // (listen_addresses() says which). REQUIRES: at least one.
  std::vector<std::string> listen;
  // The clock the fabric reports; nullptr: the wall clock. REQUIRES:
  // outlives the fabric.
  const Clock* clock = nullptr;
  // SO_SNDBUF and SO_RCVBUF of every connection; 0 keeps the kernel's
  // auto-tuning (which grows buffers further than a fixed size may).
  int socket_buffer_bytes = 0;
  // A shared secret every connection proves before it is trusted
  // (net/secret_proof.h; docs/tcp.md "Shared secret"); empty: none.
  // Both ends of a connection must agree: same secret, or none on both.
  std::string secret;
  // How idle() waits; kEpoll off Linux is refused by open().
  PollerKind poller = PollerKind::kDefault;
};

class TcpFabric final : public Fabric {
 public:
  // Most slabs one fabric maps.
  static constexpr size_t kMaxSlabs = 64;
  // Most accepted connections waiting for their hello at once; past this
  // the oldest is refused.
  static constexpr size_t kMaxPending = 64;

  // Binds and listens on every address in `options.listen`. Unavailable
  // naming the address when one is in use or not this machine's;
  // InvalidArgument for an address that is not "ip:port"; Unimplemented
  // for a poller this system lacks.
  static absl::StatusOr<std::unique_ptr<TcpFabric>> open(uint32_t rank,
                                                         TcpOptions options);

  TcpFabric(const TcpFabric&) = delete;
  TcpFabric& operator=(const TcpFabric&) = delete;
  // REQUIRES: every endpoint of this fabric is destroyed. Waits, for at
  // most ClosingConnection::kClosingNs, until each connection its
  // endpoints closed on purpose has ended gently (the peer read the
  // goodbye and closed its end; docs/tcp.md, "Closing").
  ~TcpFabric() override;

  std::string_view kind() const override { return "tcp"; }
  uint32_t rank() const override { return rank_; }
  const Clock& clock() const override { return *clock_; }
  // Blocks in poll(2) or epoll_wait(2) until a connection of this fabric
  // can move, or
  // `wake_at_ns`, for at most 100 ms; at once when completions wait.
  void idle(TimeNs wake_at_ns) override;
  // True: a send's bytes the socket buffer cannot take wait in this
  // process until an endpoint is polled.
  bool host_moves_sends() const override { return true; }
  // False: see Fabric::lanes_may_move().
  bool lanes_may_move() const override { return false; }
  // True: TCP retransmits and orders; a connection that fails is an error
  // completion.
  bool delivers_reliably() const override { return true; }
  absl::StatusOr<Slab*> create_slab(uint64_t bytes) override;
  // Registered user memory: sends are written from it and receives read
  // into it directly (no budget: a socket reads and writes any memory).
  absl::StatusOr<Slab*> register_memory(std::span<std::byte> memory) override;
  absl::Status release_memory(Slab* slab) override;
  void hold_memory(const Slab* slab) override { registered_.hold(slab); }
  void unhold_memory(const Slab* slab) override { registered_.unhold(slab); }
  // `device`: one of this fabric's listening addresses, as configured or as
  // bound (listen_addresses()). The endpoint's cable is the count of
  // endpoints opened towards `peer` before it.
  absl::StatusOr<std::unique_ptr<Endpoint>> open(std::string_view device,
                                                 uint32_t peer) override;

  // The addresses listened on, ports resolved: "127.0.0.1:40123".
  std::vector<std::string> listen_addresses() const;
  // SENDs whose last byte left, over all endpoints so far.
  uint64_t messages_sent() const { return messages_sent_; }
  // Bytes of posted sends (headers included) not yet written to a socket,
  // over all endpoints: what waits for this rank to call in. O(endpoints).
  uint64_t bytes_unsent() const;
  // Messages that arrived when no receive was posted, read and dropped.
  uint64_t messages_dropped() const { return messages_dropped_; }
  // Why an endpoint of this fabric last entered the error state (naming
  // rank, peer and the peer's address); OK while none has.
  const absl::Status& last_failure() const { return last_failure_; }
  // Connections refused (a stranger, garbage, another protocol version,
  // an endpoint that does not exist, a missing or wrong proof of the shared
  // secret), and why the last one was.
  uint64_t refused_connections() const { return refused_; }
  // True when every connection must prove TcpOptions::secret.
  bool requires_secret() const { return !options_.secret.empty(); }
  const absl::Status& last_refusal() const { return last_refusal_; }

  // WEFT_ASSERTs the invariants above. O(endpoints + slabs +
  // registrations^2).
  void check_invariants() const;

 private:
  // The fabric's side of internal::EndpointHost, what its endpoints may
  // ask of it (defined in tcp_fabric.cc).
  class Host;

  TcpFabric(uint32_t rank, TcpOptions options);
  absl::Status listen_all();
  bool owns(const Frame& frame) const;
  // Accepts waiting connections, reads their hellos and hands each to the
  // endpoint it names (or refuses it).
  void pump_accepts();
  // true when the pending connection was settled (handed over or refused).
  bool settle(internal::PendingConnection& pending);
  // Shared secret: sends the reply with this rank's proof, then checks the
  // connector's; both true when the connection was settled.
  bool start_proof(internal::PendingConnection& pending,
                   internal::TcpEndpoint& endpoint);
  bool settle_proof(internal::PendingConnection& pending);
  void refuse(internal::PendingConnection& pending, const absl::Status& why);
  void forget(const internal::TcpEndpoint& endpoint);
  // Takes the socket of an endpoint that closed on purpose: writes `out`
  // (the rest of a message, the goodbye), then ends the connection
  // without a reset (internal/closing.h).
  void close_gently(net::Socket socket, std::vector<uint8_t> out);
  // Moves the closing connections; drops those that ended or timed out.
  void pump_closing();

  const uint32_t rank_;
  TcpOptions options_;
  WallClock wall_clock_;
  const Clock* clock_;
  const uint32_t psn_;  // this fabric's incarnation, in its destinations
  std::unique_ptr<Host> host_;  // handed to each endpoint
  std::unique_ptr<internal::Poller> poller_;
  std::vector<int> accepting_fds_;  // idle(): listeners and pending ones
  std::vector<std::unique_ptr<internal::Listener>> listeners_;
  std::vector<std::unique_ptr<internal::PendingConnection>> pending_;
  std::vector<std::unique_ptr<internal::ClosingConnection>> closing_;
  std::vector<std::unique_ptr<Slab>> slabs_;
  Registrations registered_;  // user memory (register_memory)
  std::map<uint32_t, internal::TcpEndpoint*> endpoints_;  // by qp_num
  std::map<uint32_t, uint32_t> cables_opened_;            // by peer
  uint32_t next_qp_num_ = 1;
  uint64_t messages_sent_ = 0;
  uint64_t messages_dropped_ = 0;
  absl::Status last_failure_;
  uint64_t refused_ = 0;
  absl::Status last_refusal_;
};

}  // namespace weft::tcp

#endif  // WEFT_TCP_TCP_FABRIC_H_
