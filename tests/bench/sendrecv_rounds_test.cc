// tcp_sendrecv's parts that need no group: the median it reports and the
// plain stream it measures weft against (bench/tcp_compare).
#include "bench/tcp_compare/sendrecv_rounds.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/tcp_compare/plain_stream.h"
#include "gtest/gtest.h"

namespace weft::bench {
namespace {

TEST(SendRecvRounds, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(median_ns({30, 10, 20}), 20.0);
  EXPECT_EQ(median_ns({40, 10, 30, 20}), 25.0);
  EXPECT_EQ(median_ns({5}), 5.0);
}

TEST(PlainStream, MovesEveryByteInOrder) {
  const StreamOptions options{.deadline_ns = 10 * kNsPerS};
  uint16_t port = 0;
  absl::StatusOr<net::Socket> listener = listen_stream("127.0.0.1", &port);
  ASSERT_TRUE(listener.ok()) << listener.status();
  std::vector<std::byte> sent(3 << 20);
  for (size_t i = 0; i < sent.size(); ++i) {
    sent[i] = static_cast<std::byte>(i * 7 + i / 256);
  }
  std::vector<std::byte> got(sent.size());
  absl::Status received;
  std::thread receiver([&] {
    absl::StatusOr<net::Socket> s = accept_stream(*listener, options);
    received = s.ok() ? recv_all(*s, got) : s.status();
  });
  absl::StatusOr<net::Socket> s = connect_stream("127.0.0.1", port, options);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(send_all(*s, sent).ok());
  receiver.join();
  EXPECT_TRUE(received.ok()) << received;
  EXPECT_EQ(got, sent);
}

TEST(PlainStream, ASilentPeerIsAnErrorAtTheDeadline) {
  const StreamOptions options{.deadline_ns = 100 * kNsPerMs};
  uint16_t port = 0;
  absl::StatusOr<net::Socket> listener = listen_stream("127.0.0.1", &port);
  ASSERT_TRUE(listener.ok()) << listener.status();
  absl::StatusOr<net::Socket> s = connect_stream("127.0.0.1", port, options);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<net::Socket> peer = accept_stream(*listener, options);
  ASSERT_TRUE(peer.ok()) << peer.status();
  std::vector<std::byte> buffer(16);
  const absl::Status st = recv_all(*s, buffer);
  EXPECT_EQ(st.code(), absl::StatusCode::kUnavailable) << st;
  EXPECT_NE(st.message().find("deadline"), std::string::npos) << st;
}

TEST(PlainStream, AClosedPeerIsAnErrorNamingIt) {
  const StreamOptions options{.deadline_ns = 10 * kNsPerS};
  uint16_t port = 0;
  absl::StatusOr<net::Socket> listener = listen_stream("127.0.0.1", &port);
  ASSERT_TRUE(listener.ok()) << listener.status();
  absl::StatusOr<net::Socket> s = connect_stream("127.0.0.1", port, options);
  ASSERT_TRUE(s.ok()) << s.status();
  absl::StatusOr<net::Socket> peer = accept_stream(*listener, options);
  ASSERT_TRUE(peer.ok()) << peer.status();
  peer->close();
  std::vector<std::byte> buffer(16);
  const absl::Status st = recv_all(*s, buffer);
  EXPECT_NE(st.message().find("closed"), std::string::npos) << st;
}

TEST(PlainStream, AnAddressThatIsNotIpv4IsInvalid) {
  uint16_t port = 0;
  EXPECT_EQ(listen_stream("localhost:1", &port).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace weft::bench
