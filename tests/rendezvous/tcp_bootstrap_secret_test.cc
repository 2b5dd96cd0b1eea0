// TcpBootstrap with a shared secret (Config::secret, WEFT_SECRET), over
// real sockets on 127.0.0.1: ranks with the same secret form the group and
// exchange; a different secret, or a secret on one side only, is refused on
// both sides naming the address and saying what to set, never printing the
// secret; a peer without the proof never joins, and cannot fail the group.
#include <cstdint>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rendezvous/internal/wire.h"
#include "tests/rendezvous/tcp_bootstrap_harness.h"
#include "tests/rendezvous/wire_bytes.h"

namespace weft::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kAdvice[] = "set the same WEFT_SECRET on every rank";
// Rank 0's wait when a test expects it to time out: long enough for the
// refused rank's connection to arrive and be turned away first.
constexpr TimeNs kRefusalWaitNs = 2 * kNsPerS;

Config with_secret(Config c, const std::string& secret) {
  c.secret = secret;
  return c;
}

struct Outcome {
  absl::Status rank0;
  absl::Status rank1;
};

// Rank 0 with `secret0` and rank 1 with `secret1` try to form a group of 2.
Outcome form_pair(const std::string& secret0, const std::string& secret1,
                  TimeNs rank0_timeout_ns) {
  const Config c0 = with_secret(config_for(0, 2, 0, rank0_timeout_ns), secret0);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  EXPECT_TRUE(listener.ok()) << listener.status();
  if (!listener.ok()) return {listener.status(), listener.status()};
  auto rank1 =
      start_rank(with_secret(config_for(1, 2, listener->port()), secret1));
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  absl::StatusOr<BootstrapPtr> b1 = get_within_deadline(rank1);
  return {b0.status(), b1.status()};
}

TEST(TcpBootstrapSecret, SameSecretFormsTheGroupAndExchanges) {
  const std::string secret = "0123456789abcdef0123456789abcdef";
  const Config c0 = with_secret(config_for(0, 3, 0), secret);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok()) << listener.status();
  std::vector<std::future<absl::StatusOr<BootstrapPtr>>> joins;
  for (uint32_t r = 1; r < 3; ++r) {
    joins.push_back(
        start_rank(with_secret(config_for(r, 3, listener->port()), secret)));
  }
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  ASSERT_TRUE(b0.ok()) << b0.status();
  std::vector<BootstrapPtr> group;
  group.push_back(*std::move(b0));
  for (auto& j : joins) {
    absl::StatusOr<BootstrapPtr> b = get_within_deadline(j);
    ASSERT_TRUE(b.ok()) << b.status();
    group.push_back(*std::move(b));
  }
  const Blobs mine = {pattern(0, 0, 5), pattern(1, 0, 7), pattern(2, 0, 3)};
  for (const absl::StatusOr<Blobs>& got : gather_all(group, mine)) {
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, mine);
  }
}

TEST(TcpBootstrapSecret, DifferentSecretsAreRefusedOnBothSides) {
  const Outcome o =
      form_pair("rank-zero-secret", "rank-one-secret", kRefusalWaitNs);
  EXPECT_EQ(o.rank1.code(), absl::StatusCode::kPermissionDenied) << o.rank1;
  EXPECT_THAT(message(o.rank1),
              AllOf(HasSubstr("the coordinator (rank 0) at 127.0.0.1:"),
                    HasSubstr("is wrong"), HasSubstr(kAdvice)));
  EXPECT_EQ(o.rank0.code(), absl::StatusCode::kDeadlineExceeded) << o.rank0;
  EXPECT_THAT(message(o.rank0),
              AllOf(HasSubstr("turned away 1 connection(s): 127.0.0.1:"),
                    HasSubstr("closed the connection before proving"),
                    HasSubstr(kAdvice)));
  for (const absl::Status& s : {o.rank0, o.rank1}) {
    EXPECT_THAT(message(s), AllOf(Not(HasSubstr("rank-zero-secret")),
                                  Not(HasSubstr("rank-one-secret"))));
  }
}

TEST(TcpBootstrapSecret, RankWithoutTheSecretIsRefusedAndTold) {
  const Outcome o = form_pair("only-rank-0-has-it", "", kRefusalWaitNs);
  EXPECT_EQ(o.rank1.code(), absl::StatusCode::kPermissionDenied) << o.rank1;
  EXPECT_THAT(message(o.rank1),
              AllOf(HasSubstr("rank 0) at 127.0.0.1:"),
                    HasSubstr("proves no shared secret"), HasSubstr(kAdvice)));
  EXPECT_EQ(o.rank0.code(), absl::StatusCode::kDeadlineExceeded) << o.rank0;
  EXPECT_THAT(message(o.rank0),
              AllOf(HasSubstr("turned away 1 connection(s): 127.0.0.1:"),
                    HasSubstr("proves no shared secret"), HasSubstr(kAdvice)));
}

TEST(TcpBootstrapSecret, CoordinatorWithoutTheSecretRefusesAProvingRank) {
  const Outcome o = form_pair("", "only-rank-1-has-it", kLongNs);
  EXPECT_EQ(o.rank0.code(), absl::StatusCode::kPermissionDenied) << o.rank0;
  EXPECT_THAT(message(o.rank0),
              AllOf(HasSubstr("the peer at 127.0.0.1:"),
                    HasSubstr("proves a shared secret, but this rank has none"),
                    HasSubstr(kAdvice)));
  EXPECT_EQ(o.rank1.code(), absl::StatusCode::kPermissionDenied) << o.rank1;
  EXPECT_THAT(message(o.rank1),
              AllOf(HasSubstr("rank 0) at 127.0.0.1:"),
                    HasSubstr("proves a shared secret"), HasSubstr(kAdvice)));
}

TEST(TcpBootstrapSecret, UnprovenPeerNeitherJoinsNorFailsTheGroup) {
  const std::string secret = "the-group-s-secret";
  const Config c0 = with_secret(config_for(0, 2, 0), secret);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok()) << listener.status();
  const uint16_t listener_port = listener->port();
  auto rank0 = std::async(std::launch::async, [&] {
    return TcpBootstrap::accept(*std::move(listener), c0);
  });
  // A stranger claiming rank 1 without a proof is told why and turned
  // away; one speaking another version is turned away. Without a secret
  // either would fail the group.
  RawSocket stranger = RawSocket::connect_to(listener_port);
  stranger.send_bytes(rendezvous::internal::encode_hello({1, 2}));
  absl::StatusOr<rendezvous::internal::Abort> told = received_abort(stranger);
  ASSERT_TRUE(told.ok()) << told.status();
  EXPECT_THAT(told->reason,
              AllOf(HasSubstr("proves no shared secret"), HasSubstr(kAdvice)));
  RawSocket other_version = RawSocket::connect_to(listener_port);
  other_version.send_bytes(wire_header_bytes(1, 1, 8));
  // The real rank 1 still joins.
  auto rank1 = start_rank(with_secret(config_for(1, 2, listener_port), secret));
  absl::StatusOr<BootstrapPtr> b0 = get_within_deadline(rank0);
  ASSERT_TRUE(b0.ok()) << b0.status();
  absl::StatusOr<BootstrapPtr> b1 = get_within_deadline(rank1);
  ASSERT_TRUE(b1.ok()) << b1.status();
  const Blobs mine = {pattern(0, 0, 4), pattern(1, 0, 4)};
  std::vector<BootstrapPtr> group;
  group.push_back(*std::move(b0));
  group.push_back(*std::move(b1));
  for (const absl::StatusOr<Blobs>& got : gather_all(group, mine)) {
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, mine);
  }
}

}  // namespace
}  // namespace weft::testing
