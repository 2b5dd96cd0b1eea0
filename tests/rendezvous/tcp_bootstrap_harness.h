// Test harness for TcpBootstrap over real sockets on 127.0.0.1 (or ::1):
// ranks on their own threads (start_rank, form_group, gather_all), and
// RawSocket, a plain POSIX socket that plays a peer knowing nothing of weft's
// code. Every wait here has a deadline (kLongWait); none sleeps.
#ifndef WEFT_TESTS_COLLECTIVES_TCP_BOOTSTRAP_HARNESS_H_
#define WEFT_TESTS_COLLECTIVES_TCP_BOOTSTRAP_HARNESS_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "net/address.h"
#include "net/stream.h"
#include "rendezvous/internal/wire.h"
#include "rendezvous/tcp_bootstrap.h"

namespace weft::testing {

using Blobs = std::vector<std::vector<uint8_t>>;
using BootstrapPtr = std::unique_ptr<TcpBootstrap>;

// Generous bounds for waits that succeed; the timeouts a test expects to
// expire are short (kShortNs) to keep the suite fast.
inline constexpr TimeNs kLongNs = 20 * kNsPerS;
inline constexpr TimeNs kShortNs = 200 * kNsPerMs;
inline constexpr std::chrono::seconds kLongWait(20);

inline std::string message(const absl::Status& s) {
  return std::string(s.message());
}

// Milliseconds from now to `deadline`, for poll(); 0 once it has passed.
inline int ms_until(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(left.count()) : 0;
}

// The future's value once ready. A rank's thread cannot be stopped and the
// future would wait for it on destruction, so a rank still running at the
// deadline fails the test and ends the binary rather than hang it.
template <typename T>
T get_within_deadline(std::future<T>& f) {
  if (f.wait_for(kLongWait) != std::future_status::ready) {
    ADD_FAILURE() << "a rank did not finish within " << kLongWait.count()
                  << " s";
    std::abort();
  }
  return f.get();
}

// The loopback address groups form on.
inline constexpr char kIpv4Loopback[] = "127.0.0.1";
inline constexpr char kIpv6Loopback[] = "::1";

// Why a test over ::1 cannot run here, or "" when it can: binding [::1]:0
// tells whether this machine has an IPv6 loopback.
inline std::string no_ipv6_loopback() {
  absl::StatusOr<net::Socket> s =
      net::listen_on(*net::SocketAddress::numeric(kIpv6Loopback, 0), 1);
  if (s.ok()) return "";
  return "this machine has no IPv6 loopback (" +
         std::string(s.status().message()) + ")";
}

inline Config config_for(uint32_t rank, uint32_t size, uint16_t port,
                         TimeNs connect_timeout_ns = kLongNs,
                         const char* host = kIpv4Loopback) {
  Config c;
  c.rank = rank;
  c.size = size;
  c.devices = *Topology::mesh(size);
  c.coordinator = net::HostPort{host, port}.to_string();
  c.connect_timeout_ns = connect_timeout_ns;
  return c;
}

inline std::future<absl::StatusOr<BootstrapPtr>> start_rank(const Config& c) {
  return std::async(std::launch::async,
                    [c] { return TcpBootstrap::connect(c); });
}

// Forms a group of `size` ranks on a port of `host` the system picks.
inline std::vector<BootstrapPtr> form_group(uint32_t size,
                                            const char* host = kIpv4Loopback) {
  const Config c0 = config_for(0, size, 0, kLongNs, host);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  EXPECT_TRUE(listener.ok()) << listener.status();
  if (!listener.ok()) return {};
  std::vector<std::future<absl::StatusOr<BootstrapPtr>>> joins;
  for (uint32_t r = 1; r < size; ++r) {
    joins.push_back(
        start_rank(config_for(r, size, listener->port(), kLongNs, host)));
  }
  std::vector<BootstrapPtr> group;
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  EXPECT_TRUE(b0.ok()) << b0.status();
  group.push_back(b0.ok() ? *std::move(b0) : nullptr);
  for (auto& j : joins) {
    absl::StatusOr<BootstrapPtr> b = get_within_deadline(j);
    EXPECT_TRUE(b.ok()) << b.status();
    group.push_back(b.ok() ? *std::move(b) : nullptr);
  }
  for (const BootstrapPtr& b : group) {
    if (b == nullptr) return {};
  }
  return group;
}

// Every rank's all_gather at once, each on its own thread.
inline std::vector<absl::StatusOr<Blobs>> gather_all(
    const std::vector<BootstrapPtr>& group, const Blobs& mine,
    TimeNs timeout_ns = kLongNs) {
  std::vector<std::future<absl::StatusOr<Blobs>>> runs;
  for (size_t r = 0; r < group.size(); ++r) {
    runs.push_back(std::async(std::launch::async, [&, r] {
      return group[r]->all_gather(mine[r], timeout_ns);
    }));
  }
  std::vector<absl::StatusOr<Blobs>> out;
  for (auto& run : runs) out.push_back(get_within_deadline(run));
  return out;
}

// A blob whose bytes depend on rank and round, of the given size.
inline std::vector<uint8_t> pattern(uint32_t rank, uint32_t round,
                                    size_t bytes) {
  std::vector<uint8_t> b(bytes);
  for (size_t i = 0; i < bytes; ++i) b[i] = uint8_t(rank * 31 + round * 7 + i);
  return b;
}

// Polls check_alive() until it reports a failure (the close travels through
// the kernel, so it may take a moment) or the deadline passes.
inline absl::Status wait_for_failure(Bootstrap& b) {
  const auto deadline = std::chrono::steady_clock::now() + kLongWait;
  while (std::chrono::steady_clock::now() < deadline) {
    absl::Status s = b.check_alive();
    if (!s.ok()) return s;
    std::this_thread::yield();
  }
  return absl::OkStatus();
}

// A blocking POSIX socket on 127.0.0.1 that knows nothing of weft's code.
// Every blocking call on it (connect, accept, send, receive) gives up after
// kLongWait.
class RawSocket {
 public:
  explicit RawSocket(int fd = -1) : fd_(fd) {
    if (fd_ < 0) return;
    const timeval limit{kLongWait.count(), 0};
    EXPECT_EQ(setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)),
              0);
    EXPECT_EQ(setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit)),
              0);
  }
  RawSocket(RawSocket&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  ~RawSocket() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  static RawSocket connect_to(uint16_t port) {
    RawSocket s(::socket(AF_INET, SOCK_STREAM, 0));
    const sockaddr_in a = loopback(port);
    EXPECT_EQ(
        ::connect(s.fd_, reinterpret_cast<const sockaddr*>(&a), sizeof(a)), 0);
    return s;
  }
  // Listens on a port the system picks (or binds without listening).
  static RawSocket bind_any(uint16_t* port, bool listening) {
    RawSocket s(::socket(AF_INET, SOCK_STREAM, 0));
    sockaddr_in a = loopback(0);
    socklen_t len = sizeof(a);
    EXPECT_EQ(::bind(s.fd_, reinterpret_cast<const sockaddr*>(&a), sizeof(a)),
              0);
    if (listening) {
      EXPECT_EQ(::listen(s.fd_, 8), 0);
    }
    EXPECT_EQ(getsockname(s.fd_, reinterpret_cast<sockaddr*>(&a), &len), 0);
    *port = ntohs(a.sin_port);
    return s;
  }
  // The next connection, or a closed socket if none came in time.
  RawSocket accept_one() {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, ms_until(deadline()));
    EXPECT_EQ(ready, 1) << "nobody connected";
    if (ready != 1) return RawSocket();
    return RawSocket(::accept(fd_, nullptr, nullptr));
  }
  // A peer that closed must not kill the test with SIGPIPE: Linux has
  // MSG_NOSIGNAL per send, macOS SO_NOSIGPIPE per socket.
  void send_bytes(const std::vector<uint8_t>& b) {
#ifdef MSG_NOSIGNAL
    constexpr int kFlags = MSG_NOSIGNAL;
#else
    constexpr int kFlags = 0;
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof(one));
#endif
    EXPECT_EQ(::send(fd_, b.data(), b.size(), kFlags), ssize_t(b.size()));
  }
  // Reads until `bytes` have arrived, the peer closes or the deadline passes.
  std::vector<uint8_t> receive(size_t bytes) {
    const auto until = deadline();
    std::vector<uint8_t> out(bytes);
    size_t got = 0;
    while (got < bytes && fd_ >= 0) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, ms_until(until)) != 1) break;
      const ssize_t n = ::recv(fd_, out.data() + got, bytes - got, 0);
      if (n <= 0) break;
      got += size_t(n);
    }
    out.resize(got);
    return out;
  }
  // Reads one whole wire message (header, then its body).
  std::vector<uint8_t> receive_message() {
    std::vector<uint8_t> m = receive(rendezvous::internal::kWireHeaderBytes);
    if (m.size() < rendezvous::internal::kWireHeaderBytes) return m;
    const size_t body = size_t(m[8]) << 24 | size_t(m[9]) << 16 |
                        size_t(m[10]) << 8 | size_t(m[11]);
    std::vector<uint8_t> rest = receive(body);
    m.insert(m.end(), rest.begin(), rest.end());
    return m;
  }

 private:
  static sockaddr_in loopback(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
  }
  static std::chrono::steady_clock::time_point deadline() {
    return std::chrono::steady_clock::now() + kLongWait;
  }

  int fd_;
};

// The abort a raw peer received, decoded.
inline absl::StatusOr<rendezvous::internal::Abort> received_abort(
    RawSocket& peer) {
  const std::vector<uint8_t> bytes = peer.receive_message();
  absl::StatusOr<rendezvous::internal::WireMessage> m =
      rendezvous::internal::decode_message(bytes);
  if (!m.ok()) return m.status();
  if (m->header.type != rendezvous::internal::MessageType::kAbort) {
    return absl::InternalError("not an abort");
  }
  return rendezvous::internal::decode_abort(m->body);
}

}  // namespace weft::testing

#endif  // WEFT_TESTS_COLLECTIVES_TCP_BOOTSTRAP_HARNESS_H_
