// TcpBootstrap rendezvous over 127.0.0.1 and ::1: who may listen and
// connect, the group of one, a group over IPv6, a rank retrying until the
// coordinator starts, and handshakes that fail the whole group (a rank
// joining twice, another group size).
#include <cstdint>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "net/address.h"
#include "net/stream.h"
#include "rendezvous/tcp_bootstrap.h"
#include "tcp_bootstrap_harness.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

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

// The side channel over IPv6: rank 0 listens on [::1], the others connect
// there, and the group exchanges blobs and watches its members.
TEST(TcpBootstrap, FormsAGroupOverIpv6Loopback) {
  if (const std::string why = no_ipv6_loopback(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  Config c = config_for(0, 2, 0, kLongNs, kIpv6Loopback);
  EXPECT_EQ(c.coordinator, "[::1]:0");
  absl::StatusOr<TcpBootstrap::Listener> l = TcpBootstrap::listen(c);
  ASSERT_TRUE(l.ok()) << l.status();
  EXPECT_EQ(l->address(), absl::StrFormat("[::1]:%u", l->port()));

  std::vector<BootstrapPtr> group = form_group(3, kIpv6Loopback);
  ASSERT_EQ(group.size(), 3u);
  const Blobs mine = {pattern(0, 1, 10), pattern(1, 1, 0), pattern(2, 1, 5000)};
  for (const absl::StatusOr<Blobs>& got : gather_all(group, mine)) {
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, mine);
  }
  group[2].reset();  // rank 2 leaves; rank 0 sees it over IPv6 too
  const absl::Status gone = wait_for_failure(*group[0]);
  EXPECT_EQ(gone.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(message(gone), HasSubstr("rank 2 at [::1]:"));
}

// A rank whose IPv6 coordinator never answers names it, brackets and all.
TEST(TcpBootstrap, AnAbsentIpv6CoordinatorIsNamed) {
  if (const std::string why = no_ipv6_loopback(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  absl::StatusOr<std::vector<uint16_t>> free =
      net::free_ports(*net::SocketAddress::parse("[::1]:0"), 1);
  ASSERT_TRUE(free.ok()) << free.status();
  TcpConnectOptions options;
  options.first_backoff_ns = 1 * kNsPerMs;
  options.max_backoff_ns = 20 * kNsPerMs;
  absl::StatusOr<BootstrapPtr> b = TcpBootstrap::connect(
      config_for(1, 2, (*free)[0], kShortNs, kIpv6Loopback), options);
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(message(b.status()),
              HasSubstr(absl::StrFormat("could not reach the coordinator "
                                        "(rank 0) at [::1]:%u",
                                        (*free)[0])));
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

}  // namespace
}  // namespace weft::testing
