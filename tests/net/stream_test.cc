// net/stream.h over loopback only (nothing here sends a packet off this
// machine): listen, accept and connect on IPv4 and IPv6, bytes moved whole
// and in order, and the documented errors: a port in use, a refused
// connect, a connect that gets no answer (a listener whose backlog is
// full), deadlines on sends, receives and accepts, a closed peer, a socket
// option refused, and a signal interrupting a wait.
#include "net/stream.h"

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/address.h"
#include "net/socket.h"

#ifdef __linux__
#include <sys/syscall.h>
#endif

namespace weft::net {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr TimeNs kLongNs = 20 * kNsPerS;
constexpr TimeNs kShortNs = 200 * kNsPerMs;

std::string message(const absl::Status& s) { return std::string(s.message()); }

TimeNs after(const Clock& clock, TimeNs ns) {
  return deadline_after(clock.now_ns(), ns);
}

// A listener on `ip` at a port the system chooses, and where it is.
struct Listening {
  Socket socket;
  SocketAddress address;
};
absl::StatusOr<Listening> listen_any(const char* ip, int backlog = 8) {
  absl::StatusOr<SocketAddress> any = SocketAddress::numeric(ip, 0);
  if (!any.ok()) return any.status();
  absl::StatusOr<Socket> s = listen_on(*any, backlog);
  if (!s.ok()) return s.status();
  absl::StatusOr<SocketAddress> bound = SocketAddress::bound_to(s->fd());
  if (!bound.ok()) return bound.status();
  return Listening{*std::move(s), *bound};
}

// A connected pair over `ip`: [0] connected, [1] accepted.
struct Pair {
  Socket connected;
  Socket accepted;
  SocketAddress accepted_peer;
};
absl::StatusOr<Pair> connected_pair(const char* ip) {
  absl::StatusOr<Listening> l = listen_any(ip);
  if (!l.ok()) return l.status();
  WallClock clock;
  absl::StatusOr<Socket> c =
      connect_once(l->address, 0, after(clock, kLongNs), clock);
  if (!c.ok()) return c.status();
  absl::StatusOr<Accepted> a =
      accept_until(l->socket.fd(), after(clock, kLongNs), clock);
  if (!a.ok()) return a.status();
  if (absl::Status st = tune_connection(a->socket.fd(), a->peer, 0); !st.ok()) {
    return st;
  }
  return Pair{*std::move(c), std::move(a->socket), a->peer};
}

bool has_ipv6_loopback() { return listen_any("::1").ok(); }

std::vector<std::byte> pattern(size_t n) {
  std::vector<std::byte> b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>(i * 7 + i / 251);
  return b;
}

// Several MiB each way, so both sides wait for room and for bytes.
void moves_every_byte_in_order(const char* ip) {
  absl::StatusOr<Pair> p = connected_pair(ip);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->accepted_peer, *SocketAddress::peer_of(p->accepted.fd()));
  EXPECT_EQ(p->accepted_peer.family(), SocketAddress::numeric(ip, 0)->family());
  const std::vector<std::byte> sent = pattern(3 << 20);
  std::vector<std::byte> got(sent.size());
  absl::Status received;
  WallClock clock;
  std::thread receiver([&] {
    received = receive_all(p->accepted.fd(), got, after(clock, kLongNs), clock);
  });
  const absl::Status s =
      send_all(p->connected.fd(), sent, after(clock, kLongNs), clock);
  receiver.join();
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(received.ok()) << received;
  EXPECT_EQ(got, sent);
}

TEST(Stream, Ipv4MovesEveryByteInOrder) {
  moves_every_byte_in_order("127.0.0.1");
}

TEST(Stream, Ipv6MovesEveryByteInOrder) {
  if (!has_ipv6_loopback()) {
    GTEST_SKIP() << "this machine has no IPv6 loopback (binding [::1]:0 "
                    "failed)";
  }
  moves_every_byte_in_order("::1");
}

// An IPv6 listener is IPv6 only: its port on 127.0.0.1 stays free.
TEST(Stream, AnIpv6ListenerIsIpv6Only) {
  absl::StatusOr<Listening> v6 = listen_any("::1");
  if (!v6.ok()) GTEST_SKIP() << "no IPv6 loopback: " << v6.status();
  absl::StatusOr<SocketAddress> v4 =
      SocketAddress::numeric("127.0.0.1", v6->address.port());
  absl::StatusOr<Socket> also = listen_on(*v4, 1);
  EXPECT_TRUE(also.ok()) << also.status();
}

TEST(Stream, APortInUseSaysWhatToDo) {
  absl::StatusOr<Listening> l = listen_any("127.0.0.1");
  ASSERT_TRUE(l.ok()) << l.status();
  absl::StatusOr<Socket> again = listen_on(l->address, 1);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(message(again.status()),
              AllOf(HasSubstr("cannot listen on " + l->address.to_string()),
                    HasSubstr(absl::StrFormat("(errno %d)", EADDRINUSE)),
                    HasSubstr("another socket holds the port: configure a "
                              "free port (or port 0")));
}

// 192.0.2.1 (TEST-NET-1) is no address of this machine; binding sends
// nothing.
TEST(Stream, AnAddressNotOfThisMachineSaysSo) {
  absl::StatusOr<Socket> s = listen_on(*SocketAddress::parse("192.0.2.1:0"), 1);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(message(s.status()),
              AllOf(HasSubstr("cannot listen on 192.0.2.1:0"),
                    HasSubstr("use an address of one of this machine's "
                              "interfaces")));
  absl::StatusOr<std::vector<uint16_t>> ports =
      free_ports(*SocketAddress::parse("192.0.2.1:0"), 1);
  ASSERT_FALSE(ports.ok());
  EXPECT_EQ(ports.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message(ports.status()),
              HasSubstr("cannot bind a TCP port on 192.0.2.1"));
}

TEST(Stream, FreePortsAreDistinctAndBindable) {
  absl::StatusOr<std::vector<uint16_t>> ports =
      free_ports(*SocketAddress::parse("127.0.0.1:0"), 4);
  ASSERT_TRUE(ports.ok()) << ports.status();
  ASSERT_EQ(ports->size(), 4u);
  std::vector<Socket> held;
  for (uint16_t port : *ports) {
    EXPECT_NE(port, 0);
    absl::StatusOr<Socket> s =
        listen_on(*SocketAddress::numeric("127.0.0.1", port), 1);
    ASSERT_TRUE(s.ok()) << s.status();  // also: no two alike
    held.push_back(*std::move(s));
  }
}

// A port whose listener has closed refuses (or, if the system joins the
// connect to itself, connect_once says nothing listens there).
TEST(Stream, ARefusedConnectIsUnavailableNamingTheAddress) {
  SocketAddress closed;
  {
    absl::StatusOr<Listening> l = listen_any("127.0.0.1");
    ASSERT_TRUE(l.ok()) << l.status();
    closed = l->address;
  }
  WallClock clock;
  absl::StatusOr<Socket> s =
      connect_once(closed, 0, after(clock, kLongNs), clock);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(message(s.status()),
              HasSubstr("connecting to " + closed.to_string()));
}

// A listener never accepting, with backlog 0, holds one or two
// connections; the system then drops further handshakes, so a connect
// gets no answer and ends at its deadline.
TEST(Stream, AConnectWithNoAnswerEndsAtItsDeadline) {
  absl::StatusOr<Listening> l = listen_any("127.0.0.1", 0);
  ASSERT_TRUE(l.ok()) << l.status();
  WallClock clock;
  std::vector<Socket> queued;
  std::optional<absl::Status> timed_out;
  for (int i = 0; i < 16 && !timed_out.has_value(); ++i) {
    const TimeNs start_ns = clock.now_ns();
    absl::StatusOr<Socket> s =
        connect_once(l->address, 0, after(clock, kShortNs), clock);
    if (s.ok()) {
      queued.push_back(*std::move(s));
      continue;
    }
    timed_out = s.status();
    EXPECT_GE(clock.now_ns() - start_ns, kShortNs);
  }
  ASSERT_TRUE(timed_out.has_value()) << "the backlog never filled";
  EXPECT_EQ(timed_out->code(), absl::StatusCode::kDeadlineExceeded)
      << *timed_out;
  EXPECT_THAT(message(*timed_out),
              HasSubstr("connecting to " + l->address.to_string() +
                        ": no answer before the deadline"));
}

TEST(Stream, AnAcceptWithNoConnectionEndsAtItsDeadline) {
  absl::StatusOr<Listening> l = listen_any("127.0.0.1");
  ASSERT_TRUE(l.ok()) << l.status();
  absl::StatusOr<Accepted> none = accept_one(l->socket.fd());
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_FALSE(none->socket.valid());
  WallClock clock;
  absl::StatusOr<Accepted> a =
      accept_until(l->socket.fd(), after(clock, kShortNs), clock);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(message(a.status()), HasSubstr("no connection arrived"));
}

// A connected pair over 127.0.0.1 for each test.
class Connected : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Pair> p = connected_pair("127.0.0.1");
    ASSERT_TRUE(p.ok()) << p.status();
    pair_ = *std::move(p);
  }
  TimeNs in(TimeNs ns) const { return after(clock_, ns); }

  Pair pair_;
  WallClock clock_;
};

// With small buffers and a peer that never reads, a large send fills them
// and ends at its deadline, saying how far it got.
TEST_F(Connected, APeerThatDoesNotReadEndsASendAtItsDeadline) {
  constexpr int kSmallBuffer = 64 << 10;
  for (const Socket* s : {&pair_.connected, &pair_.accepted}) {
    ASSERT_TRUE(
        tune_connection(s->fd(), pair_.accepted_peer, kSmallBuffer).ok());
  }
  const std::vector<std::byte> big = pattern(16 << 20);
  const absl::Status st =
      send_all(pair_.connected.fd(), big, in(kShortNs), clock_);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_THAT(message(st), AllOf(HasSubstr("the peer took "),
                                 HasSubstr(" of 16777216 bytes before the "
                                           "deadline")));
}

// A silent peer ends a receive at its deadline; one that closes ends it
// at once, and is seen closed.
TEST_F(Connected, ASilentPeerTimesOutAClosedOneIsUnavailable) {
  std::vector<std::byte> buffer(16);
  absl::Status st =
      receive_all(pair_.connected.fd(), buffer, in(kShortNs), clock_);
  EXPECT_EQ(st.code(), absl::StatusCode::kDeadlineExceeded) << st;
  EXPECT_THAT(message(st),
              HasSubstr("the peer sent 0 of 16 bytes before the deadline"));
  EXPECT_FALSE(peer_closed(pair_.connected.fd()));
  const std::vector<std::byte> two = pattern(2);
  ASSERT_TRUE(send_all(pair_.accepted.fd(), two, in(kLongNs), clock_).ok());
  pair_.accepted.close();
  st = receive_all(pair_.connected.fd(), buffer, in(kLongNs), clock_);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_THAT(message(st),
              HasSubstr("the peer closed the connection after 2 of 16 bytes"));
  EXPECT_TRUE(peer_closed(pair_.connected.fd()));
  // Writing to it raises no SIGPIPE (the test would die): an error.
  const std::vector<std::byte> more = pattern(1 << 20);
  absl::Status sent = absl::OkStatus();
  for (int i = 0; i < 8 && sent.ok(); ++i) {
    sent = send_all(pair_.connected.fd(), more, in(kLongNs), clock_);
  }
  EXPECT_EQ(sent.code(), absl::StatusCode::kUnavailable) << sent;
}

// Every option is checked: on a descriptor that is no socket, setting
// TCP_NODELAY fails with an error naming the option and the address.
TEST(Stream, ARefusedOptionNamesItAndTheAddress) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  Socket read_end(fds[0]), write_end(fds[1]);
  const absl::Status st =
      tune_connection(read_end.fd(), *SocketAddress::parse("10.0.0.7:5000"), 0);
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(message(st),
              AllOf(HasSubstr("setting TCP_NODELAY to 1 on the socket for "
                              "10.0.0.7:5000 failed"),
                    HasSubstr(absl::StrFormat("(errno %d)", ENOTSOCK)),
                    HasSubstr("the socket is not used")));
}

TEST(Stream, APassedDeadlinePollsOnceAndSaysSo) {
  ManualClock clock(1000);
  EXPECT_EQ(poll_until({}, 1000, clock).code(),
            absl::StatusCode::kDeadlineExceeded);
  absl::StatusOr<Listening> l = listen_any("127.0.0.1");
  ASSERT_TRUE(l.ok()) << l.status();
  pollfd p{l->socket.fd(), POLLIN, 0};
  EXPECT_EQ(poll_until({&p, 1}, 0, clock).code(),
            absl::StatusCode::kDeadlineExceeded);
}

#ifdef __linux__
std::atomic<int> signals_seen{0};
void count_signal(int) { signals_seen.fetch_add(1); }

// Whether thread `tid` of this process sleeps in the kernel (state S).
bool sleeping(pid_t tid) {
  std::ifstream stat(absl::StrFormat("/proc/self/task/%d/stat", tid));
  std::string text((std::istreambuf_iterator<char>(stat)),
                   std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() &&
         text[paren + 2] == 'S';
}

// Waits (bounded) until `done()`; false at the deadline.
template <typename Done>
bool wait_until(Done done) {
  WallClock clock;
  const TimeNs deadline_ns = after(clock, kLongNs);
  while (!done()) {
    if (clock.now_ns() >= deadline_ns) return false;
    std::this_thread::yield();
  }
  return true;
}

// A signal whose handler does not restart calls interrupts the wait of a
// receive (poll(2) fails with EINTR); the receive waits on and gets its
// bytes. The signalling thread waits until the receiver sleeps in the
// kernel before each signal and after the last, so the interrupted wait
// has resumed when the bytes are sent.
TEST(Stream, ASignalDoesNotEndAWait) {
  struct sigaction action {};
  action.sa_handler = count_signal;  // no SA_RESTART
  struct sigaction old {};
  ASSERT_EQ(sigaction(SIGUSR1, &action, &old), 0);
  absl::StatusOr<Pair> p = connected_pair("127.0.0.1");
  ASSERT_TRUE(p.ok()) << p.status();
  const pid_t receiver_tid = static_cast<pid_t>(::syscall(SYS_gettid));
  const pthread_t receiver = pthread_self();
  const std::vector<std::byte> sent = pattern(64);
  bool sender_ok = true;
  std::thread sender([&] {
    constexpr int kSignals = 3;
    for (int i = 0; i < kSignals && sender_ok; ++i) {
      sender_ok = wait_until([&] { return sleeping(receiver_tid); });
      pthread_kill(receiver, SIGUSR1);
      sender_ok =
          sender_ok && wait_until([&] { return signals_seen.load() > i; });
    }
    sender_ok = sender_ok && wait_until([&] { return sleeping(receiver_tid); });
    WallClock clock;
    sender_ok =
        sender_ok &&
        send_all(p->accepted.fd(), sent, after(clock, kLongNs), clock).ok();
  });
  std::vector<std::byte> got(sent.size());
  WallClock clock;
  const absl::Status st =
      receive_all(p->connected.fd(), got, after(clock, kLongNs), clock);
  sender.join();
  sigaction(SIGUSR1, &old, nullptr);
  EXPECT_TRUE(sender_ok);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(got, sent);
  EXPECT_EQ(signals_seen.load(), 3);
}
#endif  // __linux__

}  // namespace
}  // namespace weft::net
