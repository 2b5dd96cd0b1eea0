// The TCP fabric over real loopback sockets where it shows more than the
// contract's shared cases (tests/conformance): messages larger than a
// socket buffer, bursts of messages read across header boundaries with
// both pollers, IPv6, and the failure a LOC_LEN_ERR leaves naming the
// peer.
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/completion.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/tcp/tcp_pair.h"

namespace weft::tcp::testing {
namespace {

WorkId recv_id(uint32_t slot) { return {WorkKind::kRecv, 0, slot}; }
WorkId send_id(uint32_t slot) { return {WorkKind::kSend, 1, slot}; }

std::unique_ptr<Pair> make_pair(const std::string& host = "127.0.0.1",
                                uint64_t slab_bytes = uint64_t{1} << 20,
                                PollerKind poller = PollerKind::kDefault) {
  absl::StatusOr<std::unique_ptr<Pair>> p =
      Pair::create(host, slab_bytes, {}, poller);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *std::move(p) : nullptr;
}

// Rank 1 sends `lengths` with immediates 1000 + i into rank 0's receives
// of `recv_bytes` each; every byte and immediate arrives in order.
void expect_in_order(Pair& p, const std::vector<uint32_t>& lengths,
                     uint32_t recv_bytes) {
  Side& rx = p.side[0];
  Side& tx = p.side[1];
  const uint32_t n = static_cast<uint32_t>(lengths.size());
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_TRUE(
        rx.endpoint->post_recv(recv_id(i), rx.frame(i * recv_bytes, recv_bytes))
            .ok());
  }
  for (uint32_t i = 0; i < n; ++i) {
    const Frame f = tx.frame(uint64_t{i} * recv_bytes, recv_bytes);
    fill(f, i + 1);
    ASSERT_TRUE(
        tx.endpoint->post_send(send_id(i), f, lengths[i], 1000 + i).ok());
  }
  ASSERT_TRUE(p.poll_until([&] {
    return rx.count(WorkKind::kRecv) == n && tx.count(WorkKind::kSend) == n;
  })) << "received "
      << rx.completions.size() << " sent " << tx.completions.size();
  for (uint32_t i = 0; i < n; ++i) {
    const Completion& r = rx.completions[i];
    EXPECT_TRUE(r.ok()) << r.to_string();
    EXPECT_EQ(r.id, recv_id(i));
    EXPECT_EQ(r.byte_len, lengths[i]);
    EXPECT_TRUE(r.has_immediate);
    EXPECT_EQ(r.immediate, 1000 + i);
    EXPECT_EQ(std::memcmp(rx.frame(uint64_t{i} * recv_bytes, recv_bytes).data(),
                          tx.frame(uint64_t{i} * recv_bytes, recv_bytes).data(),
                          lengths[i]),
              0)
        << "message " << i;
    const Completion& s = tx.completions[i];
    EXPECT_TRUE(s.ok()) << s.to_string();
    EXPECT_EQ(s.id, send_id(i));
    EXPECT_EQ(s.byte_len, lengths[i]);
  }
  EXPECT_EQ(tx.fabric->messages_sent(), n);
}

TEST(TcpEndpoint, LargeMessagesArriveWhole) {
  // Larger than a socket buffer: sends and receives go in many pieces.
  constexpr uint32_t kBytes = 8 << 20;
  std::unique_ptr<Pair> p = make_pair("127.0.0.1", 3 * uint64_t{kBytes});
  ASSERT_NE(p, nullptr);
  expect_in_order(*p, {kBytes, kBytes - 3, 17}, kBytes);
}

// Both progress loops: poll(2) everywhere, epoll(7) where it exists.
class TcpEndpointPollers : public ::testing::TestWithParam<PollerKind> {};

TEST_P(TcpEndpointPollers, BurstOfMessagesArrivesInOrder) {
  // Posted back to back before the receiver reads: one read takes a
  // payload and the next header together, headers land split, zero-length
  // messages sit between others.
  std::unique_ptr<Pair> p =
      make_pair("127.0.0.1", uint64_t{1} << 20, GetParam());
  ASSERT_NE(p, nullptr);
  expect_in_order(*p, {0, 1, 12, 13, 0, 0, 4096, 11, 65536, 3, 0, 65535},
                  65536);
}

TEST_P(TcpEndpointPollers, LargeMessagesArriveWhole) {
  constexpr uint32_t kBytes = 4 << 20;
  std::unique_ptr<Pair> p =
      make_pair("127.0.0.1", 3 * uint64_t{kBytes}, GetParam());
  ASSERT_NE(p, nullptr);
  expect_in_order(*p, {kBytes, 5, kBytes - 1}, kBytes);
}

#if defined(__linux__)
INSTANTIATE_TEST_SUITE_P(Tcp, TcpEndpointPollers,
                         ::testing::Values(PollerKind::kPoll,
                                           PollerKind::kEpoll));
#else
INSTANTIATE_TEST_SUITE_P(Tcp, TcpEndpointPollers,
                         ::testing::Values(PollerKind::kPoll));

TEST(TcpEndpoint, EpollOffLinuxIsRefusedNamingPoll) {
  absl::StatusOr<std::unique_ptr<TcpFabric>> f = TcpFabric::open(
      0, TcpOptions{.listen = {"127.0.0.1:0"}, .poller = PollerKind::kEpoll});
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(f.status().message(), ::testing::HasSubstr("poll"));
}
#endif

TEST(TcpEndpoint, OverIpv6Loopback) {
  const int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
  absl::StatusOr<std::unique_ptr<Pair>> p = Pair::create("[::1]");
  if (probe >= 0) ::close(probe);
  if (!p.ok() &&
      (probe < 0 || p.status().code() == absl::StatusCode::kUnavailable)) {
    GTEST_SKIP() << "no IPv6 loopback here: " << p.status();
  }
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT((*p)->side[0].fabric->listen_addresses()[0],
              ::testing::StartsWith("[::1]:"));
  expect_in_order(**p, {10, 2000}, 4096);
}

TEST(TcpEndpoint, ALocLenErrNamesThePeerAndTheSizes) {
  std::unique_ptr<Pair> p = make_pair();
  ASSERT_NE(p, nullptr);
  Side& rx = p->side[0];
  ASSERT_TRUE(rx.endpoint->post_recv(recv_id(0), rx.frame(0, 16)).ok());
  ASSERT_TRUE(rx.endpoint->post_recv(recv_id(1), rx.frame(4096, 4096)).ok());
  ASSERT_TRUE(
      p->side[1]
          .endpoint->post_send(send_id(0), p->side[1].frame(0, 100), 100, 5)
          .ok());
  ASSERT_TRUE(p->poll_until([&] { return rx.count(WorkKind::kRecv) == 2; }));
  EXPECT_EQ(rx.completions[0].status, WcStatus::kLocLenErr);
  EXPECT_THAT(std::string(rx.fabric->last_failure().message()),
              ::testing::HasSubstr("a message of 100 bytes from peer 1 at "
                                   "127.0.0.1:"));
  EXPECT_THAT(std::string(rx.fabric->last_failure().message()),
              ::testing::HasSubstr("arrived for a receive of 16 bytes"));
  EXPECT_EQ(rx.endpoint->failure(), rx.fabric->last_failure());
}

}  // namespace
}  // namespace weft::tcp::testing
