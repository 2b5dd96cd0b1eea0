// The TCP fabric's shared secret over real loopback sockets: fabrics with
// the same secret connect and move data; a different secret, or a secret on
// one side only, is refused on both sides naming the peer and saying what
// to set; a proof recorded from one connection, replayed into another, or
// the listener's own proof sent back to it, is refused and never reaches
// the group.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
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
#include "net/secret_proof.h"
#include "tcp/internal/wire.h"
#include "tests/tcp/tcp_pair.h"

namespace weft::tcp::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kAdvice[] = "set the same WEFT_SECRET on every rank";

std::unique_ptr<Pair> make_pair(const std::string& secret0,
                                const std::string& secret1) {
  absl::StatusOr<std::unique_ptr<Pair>> p =
      Pair::create("127.0.0.1", uint64_t{1} << 20, {secret0, secret1});
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : nullptr;
}

TEST(TcpSecret, SameSecretConnectsAndMovesData) {
  std::unique_ptr<Pair> p = make_pair("s3cret-shared", "s3cret-shared");
  ASSERT_NE(p, nullptr);
  for (Side& s : p->side) {
    ASSERT_TRUE(
        s.endpoint->post_recv({WorkKind::kRecv, 0, 0}, s.frame(0, 256)).ok());
  }
  for (uint32_t r = 0; r < 2; ++r) {
    fill(p->side[r].frame(256, 200), r + 1);
    ASSERT_TRUE(p->side[r]
                    .endpoint
                    ->post_send({WorkKind::kSend, 0, 0},
                                p->side[r].frame(256, 200), 200, 40 + r)
                    .ok());
  }
  ASSERT_TRUE(p->poll_until([&] {
    return p->side[0].completions.size() == 2 &&
           p->side[1].completions.size() == 2;
  }));
  for (uint32_t r = 0; r < 2; ++r) {
    const Side& receiver = p->side[1 - r];
    for (const Completion& c : receiver.completions) {
      EXPECT_EQ(c.status, WcStatus::kSuccess) << c.to_string();
      if (c.id.kind != WorkKind::kRecv) continue;
      EXPECT_EQ(c.immediate, 40 + r);
      EXPECT_EQ(c.byte_len, 200u);
    }
    // The payload arrived intact: compare with what the sender filled.
    const Frame sent = p->side[r].frame(256, 200);
    const Frame got = receiver.frame(0, 200);
    EXPECT_EQ(std::memcmp(sent.data(), got.data(), 200), 0);
    EXPECT_EQ(p->side[r].fabric->refused_connections(), 0u);
  }
}

// Polls until the connector (rank 1) failed and the listener (rank 0)
// refused a connection; returns both messages.
struct Refusals {
  std::string connector;
  std::string listener;
};
Refusals refusals_of(Pair& p) {
  Side& listener = p.side[0];
  Side& connector = p.side[1];
  EXPECT_TRUE(connector.endpoint
                  ->post_recv({WorkKind::kRecv, 0, 0}, connector.frame(64, 64))
                  .ok());
  EXPECT_TRUE(
      connector.endpoint
          ->post_send({WorkKind::kSend, 0, 0}, connector.frame(0, 64), 8, 1)
          .ok());
  EXPECT_TRUE(p.poll_until([&] {
    return connector.count(WorkKind::kRecv) > 0 &&
           listener.fabric->refused_connections() > 0;
  })) << "no refusal on both sides";
  // The receive ends in error: nothing arrived from the refused peer.
  for (const Completion& c : connector.completions) {
    if (c.id.kind == WorkKind::kRecv) {
      EXPECT_NE(c.status, WcStatus::kSuccess) << c.to_string();
    }
  }
  // The listener's endpoint never got the stranger's connection.
  EXPECT_TRUE(listener.completions.empty());
  EXPECT_EQ(listener.fabric->last_refusal().code(),
            absl::StatusCode::kPermissionDenied);
  return {base::message_of(connector.fabric->last_failure()),
          base::message_of(listener.fabric->last_refusal())};
}

TEST(TcpSecret, DifferentSecretsAreRefusedOnBothSides) {
  std::unique_ptr<Pair> p = make_pair("first-secret-0123", "other-secret-456");
  ASSERT_NE(p, nullptr);
  const Refusals r = refusals_of(*p);
  EXPECT_THAT(r.connector, HasSubstr("peer 0 at 127.0.0.1:"));
  EXPECT_THAT(r.connector, HasSubstr("is wrong"));
  EXPECT_THAT(r.connector, HasSubstr(kAdvice));
  EXPECT_THAT(r.listener, HasSubstr("refused the connection from 127.0.0.1:"));
  EXPECT_THAT(r.listener, HasSubstr("before proving the shared secret"));
  EXPECT_THAT(r.listener, HasSubstr(kAdvice));
  for (const std::string& text : {r.connector, r.listener}) {
    EXPECT_THAT(text, ::testing::Not(HasSubstr("first-secret")));
    EXPECT_THAT(text, ::testing::Not(HasSubstr("other-secret")));
  }
}

TEST(TcpSecret, SecretOnTheListenerOnlyIsRefusedOnBothSides) {
  std::unique_ptr<Pair> p = make_pair("only-rank-0-has-it", "");
  ASSERT_NE(p, nullptr);
  const Refusals r = refusals_of(*p);
  EXPECT_THAT(r.connector, HasSubstr("peer 0 at 127.0.0.1:"));
  EXPECT_THAT(r.connector, HasSubstr("this rank has none"));
  EXPECT_THAT(r.connector, HasSubstr(kAdvice));
  EXPECT_THAT(r.listener, HasSubstr("refused the connection from 127.0.0.1:"));
  EXPECT_THAT(r.listener, HasSubstr("rank 1 proves no shared secret"));
  EXPECT_THAT(r.listener, HasSubstr(kAdvice));
}

TEST(TcpSecret, SecretOnTheConnectorOnlyIsRefusedOnBothSides) {
  std::unique_ptr<Pair> p = make_pair("", "only-rank-1-has-it");
  ASSERT_NE(p, nullptr);
  const Refusals r = refusals_of(*p);
  EXPECT_THAT(r.connector, HasSubstr("peer 0 at 127.0.0.1:"));
  EXPECT_THAT(r.connector, HasSubstr("this rank requires one"));
  EXPECT_THAT(r.connector, HasSubstr(kAdvice));
  EXPECT_THAT(r.listener, HasSubstr("rank 1 proves a shared secret"));
  EXPECT_THAT(r.listener, HasSubstr(kAdvice));
}

// A non-blocking loopback socket the test drives by hand, pumping the
// fabrics under test between reads so one thread plays every part.
class RawSocket {
 public:
  explicit RawSocket(int fd) : fd_(fd) {}
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  ~RawSocket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

  // Exactly `bytes` bytes, pumping between tries; fewer on the deadline or
  // when the peer closed.
  std::vector<uint8_t> read(size_t bytes, const std::function<void()>& pump) {
    std::vector<uint8_t> got;
    WallClock clock;
    const TimeNs deadline_ns = deadline_after(clock.now_ns(), kWaitNs);
    while (got.size() < bytes && clock.now_ns() < deadline_ns) {
      std::array<uint8_t, 256> chunk;
      const ssize_t n =
          ::recv(fd_, chunk.data(), std::min(chunk.size(), bytes - got.size()),
                 MSG_DONTWAIT);
      if (n == 0) break;
      if (n > 0) got.insert(got.end(), chunk.begin(), chunk.begin() + n);
      if (n < 0) pump();
    }
    return got;
  }
  bool write(std::span<const uint8_t> bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), 0) ==
           static_cast<ssize_t>(bytes.size());
  }

 private:
  int fd_;
};

uint16_t port_of(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

uint16_t port_of_text(const std::string& address) {
  return static_cast<uint16_t>(
      std::stoi(address.substr(address.rfind(':') + 1)));
}

sockaddr_in loopback(uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return a;
}

std::unique_ptr<RawSocket> connect_to(uint16_t port) {
  auto s = std::make_unique<RawSocket>(::socket(AF_INET, SOCK_STREAM, 0));
  const sockaddr_in a = loopback(port);
  EXPECT_EQ(
      ::connect(s->fd(), reinterpret_cast<const sockaddr*>(&a), sizeof(a)), 0);
  return s;
}

struct Rank {
  std::unique_ptr<TcpFabric> fabric;
  std::unique_ptr<Endpoint> endpoint;
  void pump() {
    std::array<Completion, 4> c;
    (void)endpoint->poll(c);
    fabric->idle(deadline_after(fabric->clock().now_ns(), kNsPerMs));
  }
};

Rank open_fabric(uint32_t rank, const std::string& secret) {
  Rank f;
  absl::StatusOr<std::unique_ptr<TcpFabric>> opened = TcpFabric::open(
      rank, TcpOptions{.listen = {"127.0.0.1:0"}, .secret = secret});
  EXPECT_TRUE(opened.ok()) << opened.status();
  f.fabric = *std::move(opened);
  f.endpoint = *f.fabric->open(f.fabric->listen_addresses()[0], 1 - rank);
  return f;
}

// What a listener between rank 1 and rank 0 records: rank 1's hello and
// nonce, and its proof, from a genuine handshake with the secret.
struct Recording {
  std::vector<uint8_t> hello_and_nonce;
  std::vector<uint8_t> proof;
};

// Rank 1 (a real fabric) connects to a test listener posing as rank 0's
// endpoint `rank0_destination`, which completes the handshake with `secret`.
Recording record_handshake(const std::string& secret,
                           const Destination& rank0_destination,
                           uint32_t rank0_qp) {
  Recording rec;
  RawSocket listener(::socket(AF_INET, SOCK_STREAM, 0));
  const sockaddr_in any_port = loopback(0);
  EXPECT_EQ(::bind(listener.fd(), reinterpret_cast<const sockaddr*>(&any_port),
                   sizeof(any_port)),
            0);
  EXPECT_EQ(::listen(listener.fd(), 1), 0);
  Rank rank1 = open_fabric(1, secret);
  Destination fake = rank0_destination;
  fake.lid = port_of(listener.fd());
  const Destination rank1_destination = *rank1.endpoint->destination();
  EXPECT_TRUE(rank1.endpoint->connect(fake).ok());
  pollfd p{listener.fd(), POLLIN, 0};
  for (int i = 0; i < 1000 && ::poll(&p, 1, 0) == 0; ++i) rank1.pump();
  RawSocket conn(::accept(listener.fd(), nullptr, nullptr));
  auto pump = [&] { rank1.pump(); };
  rec.hello_and_nonce =
      conn.read(internal::Hello::kBytes + net::kSecretNonceBytes, pump);
  EXPECT_EQ(rec.hello_and_nonce.size(),
            internal::Hello::kBytes + net::kSecretNonceBytes);
  if (rec.hello_and_nonce.size() != 68) return rec;
  // The reply rank 0 would send: its hello, a nonce, its proof.
  const internal::Hello hello{.from_rank = 0,
                              .to_rank = 1,
                              .from_qp = rank0_qp,
                              .to_qp = rank1_destination.qp_num,
                              .to_psn = rank1_destination.psn,
                              .flags = internal::Hello::kProvesSecret};
  net::SecretNonce nonce{};
  nonce[0] = 42;
  const net::SecretProof proof = net::prove(
      secret,
      internal::fabric_transcript(
          1, 0, std::span(rec.hello_and_nonce).subspan(internal::Hello::kBytes),
          nonce),
      net::Prover::kResponder);
  const std::array<uint8_t, internal::Hello::kBytes> hello_bytes =
      hello.encode();
  std::vector<uint8_t> reply;
  for (auto part :
       {std::span<const uint8_t>(hello_bytes), std::span<const uint8_t>(nonce),
        std::span<const uint8_t>(proof)}) {
    reply.insert(reply.end(), part.begin(), part.end());
  }
  EXPECT_TRUE(conn.write(reply));
  rec.proof = conn.read(net::kSecretProofBytes, pump);
  EXPECT_EQ(rec.proof.size(), net::kSecretProofBytes) << "rank 1 sent no proof";
  return rec;
}

// Rank 0 (with `secret`, an endpoint awaiting rank 1), a recording of rank
// 1's handshake towards it, and a raw connection to it.
struct ReplaySetup {
  Rank rank0;
  Recording recorded;
  std::unique_ptr<RawSocket> raw;
  std::vector<uint8_t> reply;  // rank 0's hello, nonce, proof
};

void start_replay(const std::string& secret, ReplaySetup& r) {
  r.rank0 = open_fabric(0, secret);
  const Destination d0 = *r.rank0.endpoint->destination();
  // Rank 0's endpoint awaits rank 1's endpoint 1 (a fresh fabric's first).
  Destination d1 = d0;
  d1.qp_num = 1;
  ASSERT_TRUE(r.rank0.endpoint->connect(d1).ok());
  r.recorded = record_handshake(secret, d0, d0.qp_num);
  ASSERT_EQ(r.recorded.proof.size(), net::kSecretProofBytes);
  r.raw = connect_to(port_of_text(r.rank0.fabric->listen_addresses()[0]));
  ASSERT_TRUE(r.raw->write(r.recorded.hello_and_nonce));
  r.reply =
      r.raw->read(internal::Hello::kMaxHandshakeBytes, [&] { r.rank0.pump(); });
  ASSERT_EQ(r.reply.size(), internal::Hello::kMaxHandshakeBytes);
}

void expect_refused(ReplaySetup& r) {
  WallClock clock;
  const TimeNs deadline_ns = deadline_after(clock.now_ns(), kWaitNs);
  while (r.rank0.fabric->refused_connections() == 0 &&
         clock.now_ns() < deadline_ns) {
    r.rank0.pump();
  }
  ASSERT_EQ(r.rank0.fabric->refused_connections(), 1u);
  EXPECT_THAT(base::message_of(r.rank0.fabric->last_refusal()),
              HasSubstr("proof of the shared secret from rank 1 is wrong"));
  EXPECT_THAT(base::message_of(r.rank0.fabric->last_refusal()),
              HasSubstr(kAdvice));
  // Closed: the stranger never reached the group.
  EXPECT_TRUE(r.raw->read(1, [&] { r.rank0.pump(); }).empty());
}

TEST(TcpSecret, ReplayedProofIsRefused) {
  ReplaySetup r;
  ASSERT_NO_FATAL_FAILURE(start_replay("replay-me-if-you-can", r));
  ASSERT_TRUE(r.raw->write(r.recorded.proof));
  expect_refused(r);
}

TEST(TcpSecret, ReflectedProofIsRefused) {
  ReplaySetup r;
  ASSERT_NO_FATAL_FAILURE(start_replay("reflect-me-if-you-can", r));
  // Rank 0's own proof, over this very connection's nonces, sent back.
  ASSERT_TRUE(r.raw->write(std::span(r.reply).subspan(internal::Hello::kBytes +
                                                      net::kSecretNonceBytes)));
  expect_refused(r);
}

}  // namespace
}  // namespace weft::tcp::testing
