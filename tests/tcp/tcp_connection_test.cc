// Connections of the TCP fabric over real loopback sockets: a closed peer
// is an error completion naming it, strangers and other protocol versions
// are refused naming their address, a port in use and an unusable address
// are typed errors naming the address, an unreachable peer is an error
// completion, never a hang.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "fabric/errors.h"
#include "fabric/wc_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tcp/tcp_pair.h"

namespace weft::tcp::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A blocking IPv4 client socket connected to `port` on 127.0.0.1.
struct RawClient {
  explicit RawClient(uint16_t port) : fd(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len);
    address = absl::StrFormat("127.0.0.1:%u", ntohs(local.sin_port));
  }
  ~RawClient() { ::close(fd); }
  // True when the other end closed the connection within `timeout_ms`.
  bool closed_within(int timeout_ms) const {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char byte;
    return ::recv(fd, &byte, 1, 0) <= 0;
  }
  int fd;
  bool connected = false;
  std::string address;
};

uint16_t port_of(const std::string& address) {
  return static_cast<uint16_t>(
      std::stoi(address.substr(address.rfind(':') + 1)));
}

std::unique_ptr<TcpFabric> listening_fabric(uint32_t rank) {
  absl::StatusOr<std::unique_ptr<TcpFabric>> f =
      TcpFabric::open(rank, TcpOptions{.listen = {"127.0.0.1:0"}});
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *std::move(f) : nullptr;
}

// Idles and pumps `fabric` until it refused a connection (bounded).
bool wait_for_refusal(TcpFabric& fabric, Endpoint* pump) {
  WallClock clock;
  const TimeNs deadline_ns = deadline_after(clock.now_ns(), kWaitNs);
  while (fabric.refused_connections() == 0) {
    if (clock.now_ns() >= deadline_ns) return false;
    fabric.idle(deadline_after(clock.now_ns(), kNsPerMs));
    std::array<Completion, 4> c;
    if (pump != nullptr) (void)pump->poll(c);
  }
  return true;
}

// Polls `e` (idling `f` between polls) until a completion arrives;
// nullopt when none does within kWaitNs.
std::optional<Completion> first_completion(Endpoint& e, TcpFabric& f) {
  WallClock clock;
  const TimeNs deadline_ns = deadline_after(clock.now_ns(), kWaitNs);
  std::array<Completion, 1> c;
  while (clock.now_ns() < deadline_ns) {
    absl::StatusOr<size_t> n = e.poll(c);
    if (!n.ok()) return std::nullopt;
    if (*n == 1) return c[0];
    f.idle(deadline_after(clock.now_ns(), kNsPerMs));
  }
  return std::nullopt;
}

// An endpoint of `fabric` waiting to accept rank 1 (so it pumps accepts).
std::unique_ptr<Endpoint> accepting_endpoint(TcpFabric& fabric) {
  absl::StatusOr<std::unique_ptr<Endpoint>> e =
      fabric.open(fabric.listen_addresses()[0], 1);
  EXPECT_TRUE(e.ok()) << e.status();
  Destination peer;
  peer.gid[10] = peer.gid[11] = 0xff;
  peer.gid[12] = 127;
  peer.gid[15] = 1;
  peer.qp_num = 1;
  EXPECT_TRUE((*e)->connect(peer).ok());
  return *std::move(e);
}

// A peer that closes its endpoint says goodbye: no error at the survivor.
// What came before is delivered, a posted receive stays posted, and a
// send completes and is dropped, as UC drops what nobody receives.
void expect_peer_close_is_departure(uint32_t closing) {
  absl::StatusOr<std::unique_ptr<Pair>> made = Pair::create();
  ASSERT_TRUE(made.ok()) << made.status();
  Pair& p = **made;
  Side& survivor = p.side[1 - closing];
  Side& leaving = p.side[closing];
  // Connected both ways first: one message each way.
  for (Side& s : p.side) {
    ASSERT_TRUE(
        s.endpoint->post_recv({WorkKind::kRecv, 0, 0}, s.frame(0, 64)).ok());
  }
  for (Side& s : p.side) {
    ASSERT_TRUE(
        s.endpoint->post_send({WorkKind::kSend, 0, 0}, s.frame(64, 64), 8, 1)
            .ok());
  }
  ASSERT_TRUE(p.poll_until([&] {
    return p.side[0].completions.size() == 2 &&
           p.side[1].completions.size() == 2;
  }));
  // The last message and the goodbye go out together as the endpoint
  // closes; the survivor reads neither before.
  ASSERT_TRUE(survivor.endpoint
                  ->post_recv({WorkKind::kRecv, 0, 1}, survivor.frame(0, 64))
                  .ok());
  ASSERT_TRUE(survivor.endpoint
                  ->post_recv({WorkKind::kRecv, 0, 2}, survivor.frame(128, 64))
                  .ok());
  ASSERT_TRUE(
      leaving.endpoint
          ->post_send({WorkKind::kSend, 0, 1}, leaving.frame(64, 64), 16, 2)
          .ok());
  leaving.endpoint.reset();  // says goodbye and closes
  ASSERT_TRUE(p.poll_until([&] { return survivor.endpoint->peer_departed(); }))
      << "the survivor never heard the goodbye";
  ASSERT_EQ(survivor.completions.size(), 3u);
  const Completion& last = survivor.completions[2];
  EXPECT_TRUE(last.ok()) << last.to_string();
  EXPECT_EQ(last.byte_len, 16u);
  EXPECT_EQ(last.immediate, 2u);
  ASSERT_TRUE(
      survivor.endpoint
          ->post_send({WorkKind::kSend, 0, 1}, survivor.frame(64, 64), 8, 3)
          .ok());
  ASSERT_TRUE(p.poll_until([&] { return survivor.completions.size() == 4; }));
  EXPECT_EQ(survivor.completions[3].id.kind, WorkKind::kSend);
  EXPECT_TRUE(survivor.completions[3].ok())
      << survivor.completions[3].to_string();
  // The receive posted last stays posted: nothing more arrives, and no
  // error completes it.
  EXPECT_EQ(survivor.completions.size(), 4u);
  EXPECT_TRUE(survivor.fabric->last_failure().ok())
      << survivor.fabric->last_failure();
}

TEST(TcpConnection, AcceptedPeerCloseIsDepartureNotError) {
  expect_peer_close_is_departure(1);  // rank 0 accepted rank 1's connection
}

TEST(TcpConnection, ConnectedPeerCloseIsDepartureNotError) {
  expect_peer_close_is_departure(0);  // rank 1 connected to rank 0
}

// Rank 1 played by a raw socket: a valid hello to `endpoint` of `fabric`
// (opened by accepting_endpoint), then an abrupt end, as when a process
// dies: a plain close, or a reset (SO_LINGER 0).
void expect_abrupt_end_reported(bool reset, const std::string& says) {
  std::unique_ptr<TcpFabric> f = listening_fabric(0);
  ASSERT_NE(f, nullptr);
  std::unique_ptr<Endpoint> e = accepting_endpoint(*f);
  absl::StatusOr<Destination> d = e->destination();
  ASSERT_TRUE(d.ok());
  absl::StatusOr<Slab*> slab = f->create_slab(4096);
  ASSERT_TRUE(slab.ok());
  ASSERT_TRUE(
      e->post_recv({WorkKind::kRecv, 1, 0}, *(*slab)->frame(0, 64)).ok());
  std::string address;
  {
    RawClient peer(port_of(f->listen_addresses()[0]));
    ASSERT_TRUE(peer.connected);
    address = peer.address;
    // Version 2, from rank 1 endpoint 1, to rank 0, the endpoint's number
    // and incarnation (big-endian), no flags.
    std::array<uint8_t, 36> hello{'w', 'T', 'C', 'P', 0, 0, 0, 2, 0, 0,
                                  0,   1,   0,   0,   0, 0, 0, 0, 0, 1};
    for (int i = 0; i < 4; ++i) {
      hello[20 + i] = static_cast<uint8_t>(d->qp_num >> (24 - 8 * i));
      hello[28 + i] = static_cast<uint8_t>(d->psn >> (24 - 8 * i));
    }
    ASSERT_EQ(::send(peer.fd, hello.data(), hello.size(), 0), 36);
    // The endpoint answers with its own hello once it adopted the socket.
    std::array<Completion, 4> c;
    WallClock clock;
    const TimeNs deadline_ns = deadline_after(clock.now_ns(), kWaitNs);
    std::array<uint8_t, 36> reply{};
    size_t got = 0;
    while (got < reply.size() && clock.now_ns() < deadline_ns) {
      ASSERT_TRUE(e->poll(c).ok());
      const ssize_t n =
          ::recv(peer.fd, reply.data() + got, reply.size() - got, MSG_DONTWAIT);
      if (n > 0) got += static_cast<size_t>(n);
      if (n <= 0) f->idle(deadline_after(clock.now_ns(), kNsPerMs));
    }
    ASSERT_EQ(got, reply.size()) << "no hello came back";
    EXPECT_EQ(reply[0], 'w');
    if (reset) {
      const linger now{1, 0};
      ::setsockopt(peer.fd, SOL_SOCKET, SO_LINGER, &now, sizeof(now));
    }
  }  // closes the socket
  const std::optional<Completion> c = first_completion(*e, *f);
  ASSERT_TRUE(c.has_value()) << "the abrupt end went unnoticed";
  EXPECT_EQ(c->status, WcStatus::kRemAbortErr) << c->to_string();
  EXPECT_THAT(base::message_of(f->last_failure()),
              HasSubstr("(connected from " + address + ")"));
  EXPECT_THAT(base::message_of(f->last_failure()), HasSubstr(says));
}

TEST(TcpConnection, PeerThatVanishesIsErrorCompletionNamingIt) {
  expect_abrupt_end_reported(false, "closed the connection");
}

TEST(TcpConnection, ConnectionResetIsErrorCompletionNamingThePeer) {
  expect_abrupt_end_reported(true, "reset the connection");
}

// What a fabric waiting for rank 1 says when a raw client connects and
// sends `first_bytes`: the refusal, after checking that the client's
// connection was closed. `client_address` gets the client's address.
std::string refusal_of(std::span<const uint8_t> first_bytes,
                       std::string* client_address) {
  std::unique_ptr<TcpFabric> f = listening_fabric(0);
  if (f == nullptr) return "no fabric";
  std::unique_ptr<Endpoint> e = accepting_endpoint(*f);
  RawClient client(port_of(f->listen_addresses()[0]));
  EXPECT_TRUE(client.connected);
  *client_address = client.address;
  EXPECT_EQ(::send(client.fd, first_bytes.data(), first_bytes.size(), 0),
            static_cast<ssize_t>(first_bytes.size()));
  if (!wait_for_refusal(*f, e.get())) return "not refused";
  EXPECT_EQ(f->last_refusal().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(client.closed_within(static_cast<int>(kWaitNs / kNsPerMs)));
  return base::message_of(f->last_refusal());
}

TEST(TcpConnection, GarbageIsRefusedNamingTheAddress) {
  // A whole hello's worth of bytes that are not a hello.
  std::string garbage = "GET / HTTP/1.1\r\nHost: x\r\n\r\n.....";
  garbage.resize(36, '.');
  std::string client;
  const std::string why = refusal_of(
      {reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size()},
      &client);
  EXPECT_THAT(why, HasSubstr("refused the connection from " + client));
  EXPECT_THAT(why, HasSubstr("not a weft TCP fabric endpoint"));
}

TEST(TcpConnection, OtherProtocolVersionIsRefused) {
  // weft's hello magic, then version 3 (big-endian), then zeros.
  const std::array<uint8_t, 36> hello{'w', 'T', 'C', 'P', 0, 0, 0, 3};
  std::string client;
  const std::string why = refusal_of(hello, &client);
  EXPECT_THAT(why, HasSubstr(client));
  EXPECT_THAT(why, HasSubstr("protocol version 3, this build speaks 2"));
}

TEST(TcpConnection, HelloForAnEndpointNeverOpenedIsRefused) {
  // Version 2, from rank 1 to rank 0, endpoint 77 (never opened).
  std::array<uint8_t, 36> hello{'w', 'T', 'C', 'P', 0, 0, 0, 2, 0, 0, 0, 1};
  hello[23] = 77;
  std::string client;
  const std::string why = refusal_of(hello, &client);
  EXPECT_THAT(why, HasSubstr(client));
  EXPECT_THAT(why, HasSubstr("endpoint 77"));
}

TEST(TcpConnection, PortInUseIsTypedErrorNamingTheAddress) {
  std::unique_ptr<TcpFabric> first = listening_fabric(0);
  ASSERT_NE(first, nullptr);
  const std::string taken = first->listen_addresses()[0];
  absl::StatusOr<std::unique_ptr<TcpFabric>> second =
      TcpFabric::open(1, TcpOptions{.listen = {taken}});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(base::message_of(second.status()),
              HasSubstr("cannot listen on " + taken));
  EXPECT_THAT(base::message_of(second.status()),
              HasSubstr("another socket holds the port"));
  ASSERT_TRUE(error_place(second.status()).has_value());
  EXPECT_EQ(error_place(second.status())->device, taken);
}

TEST(TcpConnection, MalformedAddressesAreRefusedSayingTheForm) {
  for (const char* bad : {"127.0.0.1", "127.0.0.1:99999", "::1:5000",
                          "localhost:5000", "[::1:5000", "1.2.3:80"}) {
    absl::StatusOr<std::unique_ptr<TcpFabric>> f =
        TcpFabric::open(0, TcpOptions{.listen = {bad}});
    ASSERT_FALSE(f.ok()) << bad;
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(base::message_of(f.status()),
                AllOf(HasSubstr(absl::StrFormat(
                          "'%s' is not a numeric TCP address", bad)),
                      HasSubstr("write \"ip:port\"")));
  }
  absl::StatusOr<std::unique_ptr<TcpFabric>> none =
      TcpFabric::open(0, TcpOptions{});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TcpConnection, DeviceThatIsNotAListeningAddressIsRefused) {
  std::unique_ptr<TcpFabric> f = listening_fabric(0);
  ASSERT_NE(f, nullptr);
  absl::StatusOr<std::unique_ptr<Endpoint>> e = f->open("rdma_en5", 1);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      base::message_of(e.status()),
      HasSubstr("\"rdma_en5\" is not an address this rank listens on (" +
                f->listen_addresses()[0] + ")"));
}

TEST(TcpConnection, UnreachablePeerIsErrorCompletionNotAHang) {
  // A port nobody listens on: bound, learnt, closed.
  std::unique_ptr<TcpFabric> gone = listening_fabric(0);
  ASSERT_NE(gone, nullptr);
  const std::string address = gone->listen_addresses()[0];
  Destination dead;
  dead.gid[10] = dead.gid[11] = 0xff;
  dead.gid[12] = 127;
  dead.gid[15] = 1;
  dead.lid = port_of(address);
  dead.qp_num = 1;
  gone.reset();
  std::unique_ptr<TcpFabric> f = listening_fabric(1);
  ASSERT_NE(f, nullptr);
  absl::StatusOr<std::unique_ptr<Endpoint>> e =
      f->open(f->listen_addresses()[0], 0);  // rank 1 connects to rank 0
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_TRUE((*e)->connect(dead).ok());
  absl::StatusOr<Slab*> slab = f->create_slab(4096);
  ASSERT_TRUE(slab.ok());
  ASSERT_TRUE(
      (*e)->post_recv({WorkKind::kRecv, 0, 0}, *(*slab)->frame(0, 64)).ok());
  const std::optional<Completion> c = first_completion(**e, *f);
  ASSERT_TRUE(c.has_value()) << "no completion for an unreachable peer";
  EXPECT_EQ(c->status, WcStatus::kRetryExcErr) << c->to_string();
  EXPECT_THAT(base::message_of(f->last_failure()),
              HasSubstr("cannot connect to peer 0 at " + address));
}

}  // namespace
}  // namespace weft::tcp::testing
