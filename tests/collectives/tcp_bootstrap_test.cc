// TcpBootstrap over real sockets on 127.0.0.1: one thread per rank, and raw
// POSIX sockets playing peers that misbehave.
#include "collectives/tcp_bootstrap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "collectives/wire.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using Blobs = std::vector<std::vector<uint8_t>>;
using BootstrapPtr = std::unique_ptr<TcpBootstrap>;

// Generous bounds for waits that succeed; the timeouts a test expects to
// expire are short (kShortNs) to keep the suite fast.
constexpr TimeNs kLongNs = 20 * kNsPerS;
constexpr TimeNs kShortNs = 200 * kNsPerMs;
constexpr auto kLongWait = std::chrono::seconds(20);
constexpr int kLongWaitMs = 20'000;

std::string message(const absl::Status& s) { return std::string(s.message()); }

template <typename T>
T get_within_deadline(std::future<T>& f) {
  EXPECT_EQ(f.wait_for(kLongWait), std::future_status::ready)
      << "a rank did not finish in time";
  return f.get();
}

Config config_for(uint32_t rank, uint32_t size, uint16_t port,
                  TimeNs connect_timeout_ns = kLongNs) {
  Config c;
  c.rank = rank;
  c.size = size;
  c.devices = *Topology::mesh(size);
  c.coordinator = absl::StrFormat("127.0.0.1:%u", port);
  c.connect_timeout_ns = connect_timeout_ns;
  return c;
}

std::future<absl::StatusOr<BootstrapPtr>> start_rank(const Config& c) {
  return std::async(std::launch::async,
                    [c] { return TcpBootstrap::connect(c); });
}

// Forms a group of `size` ranks on a port the system picks.
std::vector<BootstrapPtr> form_group(uint32_t size) {
  const Config c0 = config_for(0, size, 0);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  EXPECT_TRUE(listener.ok()) << listener.status();
  if (!listener.ok()) return {};
  std::vector<std::future<absl::StatusOr<BootstrapPtr>>> joins;
  for (uint32_t r = 1; r < size; ++r) {
    joins.push_back(start_rank(config_for(r, size, listener->port())));
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
std::vector<absl::StatusOr<Blobs>> gather_all(
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
std::vector<uint8_t> pattern(uint32_t rank, uint32_t round, size_t bytes) {
  std::vector<uint8_t> b(bytes);
  for (size_t i = 0; i < bytes; ++i) b[i] = uint8_t(rank * 31 + round * 7 + i);
  return b;
}

// Polls check_alive() until it reports a failure (the close travels through
// the kernel, so it may take a moment) or the deadline passes.
absl::Status wait_for_failure(Bootstrap& b) {
  const auto deadline = std::chrono::steady_clock::now() + kLongWait;
  while (std::chrono::steady_clock::now() < deadline) {
    absl::Status s = b.check_alive();
    if (!s.ok()) return s;
    std::this_thread::yield();
  }
  return absl::OkStatus();
}

// A blocking POSIX socket on 127.0.0.1 that knows nothing of weft's code.
class RawSocket {
 public:
  explicit RawSocket(int fd = -1) : fd_(fd) {}
  RawSocket(RawSocket&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  ~RawSocket() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

  static sockaddr_in loopback(uint16_t port) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
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
  RawSocket accept_one() {
    pollfd p{fd_, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, kLongWaitMs), 1) << "nobody connected";
    return RawSocket(::accept(fd_, nullptr, nullptr));
  }
  void send_bytes(const std::vector<uint8_t>& b) {
    EXPECT_EQ(::send(fd_, b.data(), b.size(), MSG_NOSIGNAL), ssize_t(b.size()));
  }
  void send_text(const std::string& t) { send_bytes({t.begin(), t.end()}); }
  // Reads until `bytes` have arrived or the peer closes.
  std::vector<uint8_t> receive(size_t bytes) {
    std::vector<uint8_t> out(bytes);
    size_t got = 0;
    while (got < bytes) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, kLongWaitMs) != 1) break;
      const ssize_t n = ::recv(fd_, out.data() + got, bytes - got, 0);
      if (n <= 0) break;
      got += size_t(n);
    }
    out.resize(got);
    return out;
  }
  // Reads one whole wire message (header, then its body).
  std::vector<uint8_t> receive_message() {
    std::vector<uint8_t> m = receive(kWireHeaderBytes);
    if (m.size() < kWireHeaderBytes) return m;
    const size_t body = size_t(m[8]) << 24 | size_t(m[9]) << 16 |
                        size_t(m[10]) << 8 | size_t(m[11]);
    std::vector<uint8_t> rest = receive(body);
    m.insert(m.end(), rest.begin(), rest.end());
    return m;
  }

 private:
  int fd_;
};

// The abort a raw peer received, decoded.
absl::StatusOr<Abort> received_abort(RawSocket& peer) {
  const std::vector<uint8_t> bytes = peer.receive_message();
  absl::StatusOr<WireMessage> m = decode_message(bytes);
  if (!m.ok()) return m.status();
  if (m->header.type != MessageType::kAbort) {
    return absl::InternalError("not an abort");
  }
  return decode_abort(m->body);
}

std::vector<uint8_t> header(uint16_t version, uint16_t type, uint32_t length) {
  return {0x57,
          0x45,
          0x46,
          0x54,
          uint8_t(version >> 8),
          uint8_t(version),
          uint8_t(type >> 8),
          uint8_t(type),
          uint8_t(length >> 24),
          uint8_t(length >> 16),
          uint8_t(length >> 8),
          uint8_t(length)};
}

TEST(TcpBootstrap, AllGatherOfFourRanksWithEmptyAndLargeBlobs) {
  std::vector<BootstrapPtr> group = form_group(4);
  ASSERT_EQ(group.size(), 4u);
  const size_t sizes[] = {0, 1, 1000, 70'000};
  Blobs mine;
  for (uint32_t r = 0; r < 4; ++r) mine.push_back(pattern(r, 0, sizes[r]));
  for (uint32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(group[r]->rank(), r);
    EXPECT_EQ(group[r]->size(), 4u);
  }
  std::vector<absl::StatusOr<Blobs>> got = gather_all(group, mine);
  for (uint32_t r = 0; r < 4; ++r) {
    ASSERT_TRUE(got[r].ok()) << "rank " << r << ": " << got[r].status();
    ASSERT_EQ(got[r]->size(), 4u);
    for (uint32_t from = 0; from < 4; ++from) {
      EXPECT_EQ((*got[r])[from], pattern(from, 0, sizes[from]))
          << "rank " << r << " from " << from;
    }
  }
  for (const BootstrapPtr& b : group) EXPECT_TRUE(b->check_alive().ok());
}

TEST(TcpBootstrap, RepeatedAllGathersUpToTheBlobLimit) {
  std::vector<BootstrapPtr> group = form_group(3);
  ASSERT_EQ(group.size(), 3u);
  for (uint32_t round = 0; round < 6; ++round) {
    Blobs mine;
    for (uint32_t r = 0; r < 3; ++r) {
      const size_t bytes = round == 5 && r == 2
                               ? Bootstrap::kMaxBlobBytes
                               : (r * 7919 + round * 104729) % 5000;
      mine.push_back(pattern(r, round, bytes));
    }
    std::vector<absl::StatusOr<Blobs>> got = gather_all(group, mine);
    for (uint32_t r = 0; r < 3; ++r) {
      ASSERT_TRUE(got[r].ok())
          << "round " << round << " rank " << r << ": " << got[r].status();
      EXPECT_EQ(*got[r], mine) << "round " << round << " rank " << r;
    }
  }
}

TEST(TcpBootstrap, OversizedBlobIsRefusedWithoutBreakingTheGroup) {
  std::vector<BootstrapPtr> group = form_group(2);
  ASSERT_EQ(group.size(), 2u);
  const std::vector<uint8_t> too_big(Bootstrap::kMaxBlobBytes + 1);
  absl::StatusOr<Blobs> refused = group[1]->all_gather(too_big, kLongNs);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(refused.status()), HasSubstr("limit"));
  const Blobs mine = {pattern(0, 0, 3), pattern(1, 0, 4)};
  for (const absl::StatusOr<Blobs>& got : gather_all(group, mine)) {
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, mine);
  }
}

TEST(TcpBootstrap, GroupOfOneNeedsNoSockets) {
  Config c;
  absl::StatusOr<BootstrapPtr> b = TcpBootstrap::connect(c);
  ASSERT_TRUE(b.ok()) << b.status();
  const std::vector<uint8_t> mine = {1, 2, 3};
  absl::StatusOr<Blobs> got = (*b)->all_gather(mine, kShortNs);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, Blobs{mine});
  EXPECT_TRUE((*b)->check_alive().ok());
}

TEST(TcpBootstrap, ClientRetriesUntilTheCoordinatorStarts) {
  uint16_t port = 0;
  RawSocket::bind_any(&port, /*listening=*/false).close();  // a free port
  std::promise<absl::Status> first_failure;
  TcpConnectOptions options;
  options.first_backoff_ns = 1 * kNsPerMs;
  options.max_backoff_ns = 20 * kNsPerMs;
  options.on_retry = [&first_failure](uint32_t attempt,
                                      const absl::Status& why) {
    if (attempt == 1) first_failure.set_value(why);
  };
  std::future<absl::Status> refused = first_failure.get_future();
  auto client = std::async(std::launch::async, [&] {
    return TcpBootstrap::connect(config_for(1, 2, port), options);
  });
  // The client has been turned away once before the coordinator exists.
  const absl::Status why = get_within_deadline(refused);
  EXPECT_EQ(why.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(message(why), HasSubstr("Connection refused"));

  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::connect(config_for(0, 2, port));
  ASSERT_TRUE(b0.ok()) << b0.status();
  absl::StatusOr<BootstrapPtr> b1 = get_within_deadline(client);
  ASSERT_TRUE(b1.ok()) << b1.status();
  std::vector<BootstrapPtr> group;
  group.push_back(*std::move(b0));
  group.push_back(*std::move(b1));
  const Blobs mine = {{7}, {8, 9}};
  for (const absl::StatusOr<Blobs>& got : gather_all(group, mine)) {
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, mine);
  }
}

TEST(TcpBootstrap, CoordinatorThatNeverStartsIsADeadline) {
  uint16_t port = 0;
  RawSocket::bind_any(&port, /*listening=*/false).close();
  absl::StatusOr<BootstrapPtr> b =
      TcpBootstrap::connect(config_for(2, 3, port, kShortNs));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(message(b.status()),
              AllOf(HasSubstr("rank 2"),
                    HasSubstr(absl::StrFormat(
                        "coordinator (rank 0) at 127.0.0.1:%u", port)),
                    HasSubstr("Connection refused")));
  EXPECT_EQ(error_place(b.status())->peer, 0u);
}

TEST(TcpBootstrap, RankThatNeverJoinsIsNamedOnEveryRank) {
  const Config c0 = config_for(0, 4, 0, kShortNs);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok()) << listener.status();
  auto r1 = start_rank(config_for(1, 4, listener->port()));
  auto r2 = start_rank(config_for(2, 4, listener->port()));
  // Rank 3 never starts.
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  ASSERT_FALSE(b0.ok());
  EXPECT_EQ(b0.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(message(b0.status()), HasSubstr("3 did not join"));
  // Ranks 1 and 2 hear it from rank 0 rather than waiting out their own
  // (longer) timeouts.
  for (auto* r : {&r1, &r2}) {
    absl::StatusOr<BootstrapPtr> b = get_within_deadline(*r);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.status().code(), absl::StatusCode::kDeadlineExceeded);
    EXPECT_THAT(message(b.status()), AllOf(HasSubstr("coordinator (rank 0)"),
                                           HasSubstr("3 did not join")));
  }
}

TEST(TcpBootstrap, ExchangeTimeoutNamesTheSilentRank) {
  std::vector<BootstrapPtr> group = form_group(3);
  ASSERT_EQ(group.size(), 3u);
  auto at_1 = std::async(std::launch::async, [&] {
    return group[1]->all_gather(pattern(1, 0, 5), kLongNs);
  });
  // Rank 2 does not take part.
  absl::StatusOr<Blobs> at_0 = group[0]->all_gather(pattern(0, 0, 5), kShortNs);
  ASSERT_FALSE(at_0.ok());
  EXPECT_EQ(at_0.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(message(at_0.status()), HasSubstr("2 did not contribute"));
  absl::StatusOr<Blobs> got_1 = get_within_deadline(at_1);
  ASSERT_FALSE(got_1.ok());
  EXPECT_EQ(got_1.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(message(got_1.status()), HasSubstr("2 did not contribute"));
  // Rank 2 learns it too, and the failure sticks everywhere.
  absl::Status at_2 = wait_for_failure(*group[2]);
  EXPECT_EQ(at_2.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(message(at_2), HasSubstr("2 did not contribute"));
  EXPECT_EQ(group[2]->all_gather({}, kLongNs).status(), at_2);
  EXPECT_EQ(group[0]->check_alive(), at_0.status());
}

TEST(TcpBootstrap, ClosedRankIsNamedByEverySurvivor) {
  std::vector<BootstrapPtr> group = form_group(4);
  ASSERT_EQ(group.size(), 4u);
  for (const BootstrapPtr& b : group) ASSERT_TRUE(b->check_alive().ok());
  group[2].reset();
  absl::Status at_0 = wait_for_failure(*group[0]);
  EXPECT_EQ(at_0.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(message(at_0), AllOf(HasSubstr("rank 2 at 127.0.0.1:"),
                                   HasSubstr("closed its bootstrap channel")));
  ASSERT_TRUE(error_place(at_0).has_value());
  EXPECT_EQ(error_place(at_0)->peer, 2u);
  for (uint32_t r : {1u, 3u}) {
    absl::Status s = wait_for_failure(*group[r]);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable) << r;
    EXPECT_THAT(message(s), HasSubstr("rank 2 at 127.0.0.1:")) << r;
    ASSERT_TRUE(error_place(s).has_value());
    EXPECT_EQ(error_place(s)->rank, r);
    EXPECT_EQ(error_place(s)->peer, 2u);
  }
}

TEST(TcpBootstrap, ClosedCoordinatorIsNamedByEveryRank) {
  std::vector<BootstrapPtr> group = form_group(3);
  ASSERT_EQ(group.size(), 3u);
  group[0].reset();
  for (uint32_t r : {1u, 2u}) {
    absl::Status s = wait_for_failure(*group[r]);
    EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(message(s),
                AllOf(HasSubstr("the coordinator (rank 0) at 127.0.0.1:"),
                      HasSubstr("closed its bootstrap channel")));
    EXPECT_EQ(error_place(s)->peer, 0u);
    absl::StatusOr<Blobs> after = group[r]->all_gather({}, kLongNs);
    EXPECT_EQ(after.status(), s);
  }
}

TEST(TcpBootstrap, DuplicateRankFailsTheGroupOnAllSides) {
  const Config c0 = config_for(0, 3, 0);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok());
  auto first = start_rank(config_for(1, 3, listener->port()));
  auto second = start_rank(config_for(1, 3, listener->port()));
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  ASSERT_FALSE(b0.ok());
  EXPECT_EQ(b0.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(b0.status()), HasSubstr("rank 1 joined twice"));
  for (auto* f : {&first, &second}) {
    absl::StatusOr<BootstrapPtr> b = get_within_deadline(*f);
    ASSERT_FALSE(b.ok());
    EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(message(b.status()), HasSubstr("rank 1 joined twice"));
  }
}

TEST(TcpBootstrap, RankThatLeavesDuringSetupFailsTheGroup) {
  const Config c0 = config_for(0, 3, 0);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok());
  RawSocket leaver = RawSocket::connect_to(listener->port());
  leaver.send_bytes(encode_hello({1, 3}));
  leaver.close();
  RawSocket waiting = RawSocket::connect_to(listener->port());
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  ASSERT_FALSE(b0.ok());
  EXPECT_EQ(b0.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(message(b0.status()),
              AllOf(HasSubstr("rank 1 at 127.0.0.1:"),
                    HasSubstr("closed its bootstrap channel while we were "
                              "forming the group")));
  EXPECT_EQ(error_place(b0.status())->peer, 1u);
  // A connection still to say hello is told why the group failed.
  absl::StatusOr<Abort> told = received_abort(waiting);
  ASSERT_TRUE(told.ok()) << told.status();
  EXPECT_EQ(told->code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(told->culprit, 1u);
}

TEST(TcpBootstrap, DifferentGroupSizesFailOnBothSides) {
  const Config c0 = config_for(0, 3, 0);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok());
  auto other = start_rank(config_for(1, 4, listener->port()));
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  ASSERT_FALSE(b0.ok());
  EXPECT_EQ(b0.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message(b0.status()), HasSubstr("same device JSON"));
  absl::StatusOr<BootstrapPtr> b1 = get_within_deadline(other);
  EXPECT_EQ(b1.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message(b1.status()), HasSubstr("same device JSON"));
}

// A raw peer says something to a listening rank 0 (size 2, short timeout)
// before it accepts; what rank 0 and the peer then report.
struct HostileClient {
  const char* name;
  std::vector<uint8_t> says;
  bool then_close;
  absl::StatusCode rank0_code;
  const char* rank0_says;
  absl::StatusCode told_code;  // the abort the peer receives; kOk: none
};

TEST(TcpBootstrap, CoordinatorFacingHostileClients) {
  std::vector<uint8_t> oversized = header(1, 1, 1u << 30);
  std::vector<uint8_t> wrong_version = header(2, 1, 8);
  wrong_version.resize(wrong_version.size() + 8);
  std::vector<uint8_t> hello_rank_5 = encode_hello({5, 2});
  std::vector<uint8_t> hello_rank_0 = encode_hello({0, 2});
  std::vector<uint8_t> half_hello = encode_hello({1, 2});
  half_hello.resize(5);
  const std::string http = "GET / HTTP/1.0\r\n\r\n";
  const HostileClient cases[] = {
      {"garbage",
       {http.begin(), http.end()},
       false,
       absl::StatusCode::kDeadlineExceeded,
       "not a weft bootstrap peer",
       absl::StatusCode::kOk},
      {"close early", half_hello, true, absl::StatusCode::kDeadlineExceeded,
       "in the middle of a message, after 5 of its 12 bytes",
       absl::StatusCode::kOk},
      {"close at once",
       {},
       true,
       absl::StatusCode::kDeadlineExceeded,
       "closed the connection",
       absl::StatusCode::kOk},
      {"wrong version", wrong_version, false,
       absl::StatusCode::kFailedPrecondition,
       "peer speaks bootstrap version 2, we speak 1",
       absl::StatusCode::kFailedPrecondition},
      {"oversized length", oversized, false,
       absl::StatusCode::kResourceExhausted, "more than its limit",
       absl::StatusCode::kResourceExhausted},
      {"rank out of range", hello_rank_5, false,
       absl::StatusCode::kInvalidArgument, "says it is rank 5",
       absl::StatusCode::kInvalidArgument},
      {"claims rank 0", hello_rank_0, false, absl::StatusCode::kInvalidArgument,
       "says it is rank 0", absl::StatusCode::kInvalidArgument},
  };
  for (const HostileClient& c : cases) {
    SCOPED_TRACE(c.name);
    const Config c0 = config_for(0, 2, 0, kShortNs);
    absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
    ASSERT_TRUE(listener.ok());
    RawSocket peer = RawSocket::connect_to(listener->port());
    if (!c.says.empty()) peer.send_bytes(c.says);
    if (c.then_close) peer.close();
    absl::StatusOr<BootstrapPtr> b0 =
        TcpBootstrap::accept(*std::move(listener), c0);
    ASSERT_FALSE(b0.ok());
    EXPECT_EQ(b0.status().code(), c.rank0_code) << b0.status();
    EXPECT_THAT(message(b0.status()), HasSubstr(c.rank0_says));
    if (c.rank0_code == absl::StatusCode::kDeadlineExceeded) {
      EXPECT_THAT(message(b0.status()),
                  AllOf(HasSubstr("rank 1 did not join"),
                        HasSubstr("turned away 1 connection")));
    }
    if (c.told_code != absl::StatusCode::kOk) {
      absl::StatusOr<Abort> told = received_abort(peer);
      ASSERT_TRUE(told.ok()) << told.status();
      EXPECT_EQ(told->code, c.told_code);
      EXPECT_THAT(told->reason, HasSubstr(c.rank0_says));
    }
  }
}

// A raw listener plays rank 0 for a real rank 1: after the hello it sends
// `says` (or closes); what rank 1 reports.
struct HostileCoordinator {
  const char* name;
  std::vector<uint8_t> says;
  absl::StatusCode code;
  const char* rank1_says;
};

TEST(TcpBootstrap, RankFacingHostileCoordinator) {
  std::vector<uint8_t> other_version = header(9, 2, 0);
  std::vector<uint8_t> oversized_welcome = header(1, 2, 5);
  const std::string garbage = "SSH-2.0-OpenSSH_9.2\r\n";
  const HostileCoordinator cases[] = {
      {"garbage",
       {garbage.begin(), garbage.end()},
       absl::StatusCode::kInvalidArgument,
       "not a weft bootstrap peer"},
      {"other version", other_version, absl::StatusCode::kFailedPrecondition,
       "peer speaks bootstrap version 9, we speak 1"},
      {"oversized", oversized_welcome, absl::StatusCode::kResourceExhausted,
       "more than its limit 0"},
      {"close",
       {},
       absl::StatusCode::kUnavailable,
       "closed its bootstrap channel"},
      {"gathered before welcome", *encode_gathered(0, {{}, {}}),
       absl::StatusCode::kInvalidArgument,
       "expected a welcome, got a gathered"},
  };
  for (const HostileCoordinator& c : cases) {
    SCOPED_TRACE(c.name);
    uint16_t port = 0;
    RawSocket listener = RawSocket::bind_any(&port, /*listening=*/true);
    auto rank1 = start_rank(config_for(1, 2, port));
    RawSocket coordinator = listener.accept_one();
    absl::StatusOr<WireMessage> hello_message =
        decode_message(coordinator.receive(kWireHeaderBytes + 8));
    ASSERT_TRUE(hello_message.ok()) << hello_message.status();
    absl::StatusOr<Hello> hello = decode_hello(hello_message->body);
    ASSERT_TRUE(hello.ok());
    EXPECT_EQ(hello->rank, 1u);
    EXPECT_EQ(hello->size, 2u);
    if (c.says.empty()) {
      coordinator.close();
    } else {
      coordinator.send_bytes(c.says);
    }
    absl::StatusOr<BootstrapPtr> b1 = get_within_deadline(rank1);
    ASSERT_FALSE(b1.ok());
    EXPECT_EQ(b1.status().code(), c.code) << b1.status();
    EXPECT_THAT(message(b1.status()),
                AllOf(HasSubstr(c.rank1_says),
                      HasSubstr(absl::StrFormat(
                          "the coordinator (rank 0) at 127.0.0.1:%u", port))));
  }
}

// As above, but the raw rank 0 welcomes rank 1 and misbehaves in the first
// exchange.
TEST(TcpBootstrap, RankFacingHostileAnswerToAnExchange) {
  const std::vector<uint8_t> mine = {1, 2, 3};
  struct Case {
    const char* name;
    std::vector<uint8_t> answer;
    absl::StatusCode code;
    const char* says;
  };
  const Case cases[] = {
      {"wrong round", *encode_gathered(5, {{}, mine}),
       absl::StatusCode::kDataLoss, "is for exchange 5"},
      {"wrong count", *encode_gathered(0, {{}, mine, {}}),
       absl::StatusCode::kDataLoss, "holds 3 blobs for a group of 2"},
      {"not our blob", *encode_gathered(0, {{}, {4}}),
       absl::StatusCode::kDataLoss, "does not hold our own blob"},
      {"truncated gathered body", header(1, 4, 100),
       absl::StatusCode::kUnavailable, "in the middle of a message"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    uint16_t port = 0;
    RawSocket listener = RawSocket::bind_any(&port, /*listening=*/true);
    auto rank1 = start_rank(config_for(1, 2, port));
    RawSocket coordinator = listener.accept_one();
    EXPECT_EQ(coordinator.receive(kWireHeaderBytes + 8).size(),
              kWireHeaderBytes + 8);
    coordinator.send_bytes(encode_welcome());
    absl::StatusOr<BootstrapPtr> b1 = get_within_deadline(rank1);
    ASSERT_TRUE(b1.ok()) << b1.status();
    auto gathered = std::async(
        std::launch::async, [&] { return (*b1)->all_gather(mine, kLongNs); });
    absl::StatusOr<WireMessage> contribution =
        decode_message(coordinator.receive_message());
    ASSERT_TRUE(contribution.ok()) << contribution.status();
    EXPECT_EQ(decode_contribution(contribution->body)->blob, mine);
    coordinator.send_bytes(c.answer);
    if (c.code == absl::StatusCode::kUnavailable) coordinator.close();
    absl::StatusOr<Blobs> got = get_within_deadline(gathered);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.code) << got.status();
    EXPECT_THAT(message(got.status()), HasSubstr(c.says));
    EXPECT_EQ((*b1)->check_alive(), got.status());
  }
}

// A child process's whole life as `rank`: join, one exchange, check it.
// The exit code says what went wrong (0: nothing).
int run_child_rank(uint32_t rank, uint32_t size, uint16_t port) {
  absl::StatusOr<BootstrapPtr> b =
      TcpBootstrap::connect(config_for(rank, size, port));
  if (!b.ok()) return 2;
  Blobs expected;
  for (uint32_t r = 0; r < size; ++r) {
    expected.push_back(pattern(r, 0, 100 + r));
  }
  absl::StatusOr<Blobs> got = (*b)->all_gather(expected[rank], kLongNs);
  if (!got.ok()) return 3;
  return *got == expected ? 0 : 4;
}

// Waits for `pid` to exit, killing it at the deadline: its exit code, or -1.
int exit_code_within_deadline(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + kLongWait;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::yield();
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(TcpBootstrap, RanksInSeparateProcesses) {
  constexpr uint32_t kSize = 3;
  const Config c0 = config_for(0, kSize, 0);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok());
  const uint16_t port = listener->port();
  // Fork before this process starts any thread.
  std::vector<pid_t> children;
  for (uint32_t r = 1; r < kSize; ++r) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(run_child_rank(r, kSize, port));
    children.push_back(pid);
  }
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  ASSERT_TRUE(b0.ok()) << b0.status();
  Blobs expected;
  for (uint32_t r = 0; r < kSize; ++r) {
    expected.push_back(pattern(r, 0, 100 + r));
  }
  absl::StatusOr<Blobs> got = (*b0)->all_gather(expected[0], kLongNs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, expected);
  for (pid_t pid : children) EXPECT_EQ(exit_code_within_deadline(pid), 0);
  // The children have exited: their channels are closed.
  absl::Status gone = wait_for_failure(**b0);
  EXPECT_EQ(gone.code(), absl::StatusCode::kUnavailable);
}

TEST(TcpBootstrap, ListenIsForRankZero) {
  absl::StatusOr<TcpBootstrap::Listener> l =
      TcpBootstrap::listen(config_for(1, 2, 0));
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TcpBootstrap, ConnectAsRankZeroNeedsAFixedPort) {
  absl::StatusOr<BootstrapPtr> b = TcpBootstrap::connect(config_for(0, 2, 0));
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(b.status()), HasSubstr("port 0"));
}

TEST(TcpBootstrap, ListenOnLocalhostReportsTheBoundPort) {
  Config c = config_for(0, 2, 0);
  c.coordinator = "localhost:0";
  absl::StatusOr<TcpBootstrap::Listener> l = TcpBootstrap::listen(c);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_NE(l->port(), 0);
  EXPECT_EQ(l->address(), absl::StrFormat("127.0.0.1:%u", l->port()));
}

}  // namespace
}  // namespace weft
