// TcpBootstrap when a rank is silent or gone: deadlines that name the rank
// that never joined or contributed, and a rank or coordinator that closes
// its channel (during setup or after) named by every survivor.
#include <cstdint>
#include <future>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rendezvous/internal/wire.h"
#include "rendezvous/tcp_bootstrap.h"
#include "tcp_bootstrap_harness.h"

namespace weft::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

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

TEST(TcpBootstrap, RankThatLeavesDuringSetupFailsTheGroup) {
  const Config c0 = config_for(0, 3, 0);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok());
  RawSocket leaver = RawSocket::connect_to(listener->port());
  leaver.send_bytes(rendezvous::internal::encode_hello({1, 3}));
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
  absl::StatusOr<rendezvous::internal::Abort> told = received_abort(waiting);
  ASSERT_TRUE(told.ok()) << told.status();
  EXPECT_EQ(told->code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(told->culprit, 1u);
}

}  // namespace
}  // namespace weft::testing
