// TcpBootstrap against raw sockets that speak bad input: garbage, another
// version, oversized lengths, messages cut short, impossible ranks, and
// answers out of turn, on either side of the handshake and in an exchange.
// Each side reports what was wrong and the other is told why.
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
#include "rendezvous/internal/wire.h"
#include "rendezvous/tcp_bootstrap.h"
#include "tcp_bootstrap_harness.h"
#include "tests/rendezvous/wire_bytes.h"

namespace weft::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

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
  std::vector<uint8_t> oversized = wire_header_bytes(2, 1, 1u << 30);
  std::vector<uint8_t> wrong_version = wire_header_bytes(1, 1, 8);
  wrong_version.resize(wrong_version.size() + 8);
  std::vector<uint8_t> hello_rank_5 =
      rendezvous::internal::encode_hello({5, 2});
  std::vector<uint8_t> hello_rank_0 =
      rendezvous::internal::encode_hello({0, 2});
  std::vector<uint8_t> half_hello = rendezvous::internal::encode_hello({1, 2});
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
       "peer speaks bootstrap version 1, we speak 2",
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
      absl::StatusOr<rendezvous::internal::Abort> told = received_abort(peer);
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
  std::vector<uint8_t> other_version = wire_header_bytes(9, 2, 0);
  std::vector<uint8_t> oversized_welcome = wire_header_bytes(2, 2, 5);
  const std::string garbage = "SSH-2.0-OpenSSH_9.2\r\n";
  const HostileCoordinator cases[] = {
      {"garbage",
       {garbage.begin(), garbage.end()},
       absl::StatusCode::kInvalidArgument,
       "not a weft bootstrap peer"},
      {"other version", other_version, absl::StatusCode::kFailedPrecondition,
       "peer speaks bootstrap version 9, we speak 2"},
      {"oversized", oversized_welcome, absl::StatusCode::kResourceExhausted,
       "more than its limit 0"},
      {"close",
       {},
       absl::StatusCode::kUnavailable,
       "closed its bootstrap channel"},
      {"gathered before welcome",
       *rendezvous::internal::encode_gathered(0, {{}, {}}),
       absl::StatusCode::kInvalidArgument,
       "expected a welcome, got a gathered"},
  };
  for (const HostileCoordinator& c : cases) {
    SCOPED_TRACE(c.name);
    uint16_t port = 0;
    RawSocket listener = RawSocket::bind_any(&port, /*listening=*/true);
    auto rank1 = start_rank(config_for(1, 2, port));
    RawSocket coordinator = listener.accept_one();
    absl::StatusOr<rendezvous::internal::WireMessage> hello_message =
        rendezvous::internal::decode_message(
            coordinator.receive(rendezvous::internal::kWireHeaderBytes + 8));
    ASSERT_TRUE(hello_message.ok()) << hello_message.status();
    absl::StatusOr<rendezvous::internal::Hello> hello =
        rendezvous::internal::decode_hello(hello_message->body);
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
      {"wrong round", *rendezvous::internal::encode_gathered(5, {{}, mine}),
       absl::StatusCode::kDataLoss, "is for exchange 5"},
      {"wrong count", *rendezvous::internal::encode_gathered(0, {{}, mine, {}}),
       absl::StatusCode::kDataLoss, "holds 3 blobs for a group of 2"},
      {"not our blob", *rendezvous::internal::encode_gathered(0, {{}, {4}}),
       absl::StatusCode::kDataLoss, "does not hold our own blob"},
      {"truncated gathered body", wire_header_bytes(2, 4, 100),
       absl::StatusCode::kUnavailable, "in the middle of a message"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    uint16_t port = 0;
    RawSocket listener = RawSocket::bind_any(&port, /*listening=*/true);
    auto rank1 = start_rank(config_for(1, 2, port));
    RawSocket coordinator = listener.accept_one();
    EXPECT_EQ(
        coordinator.receive(rendezvous::internal::kWireHeaderBytes + 8).size(),
        rendezvous::internal::kWireHeaderBytes + 8);
    coordinator.send_bytes(rendezvous::internal::encode_welcome());
    absl::StatusOr<BootstrapPtr> b1 = get_within_deadline(rank1);
    ASSERT_TRUE(b1.ok()) << b1.status();
    auto gathered = std::async(
        std::launch::async, [&] { return (*b1)->all_gather(mine, kLongNs); });
    absl::StatusOr<rendezvous::internal::WireMessage> contribution =
        rendezvous::internal::decode_message(coordinator.receive_message());
    ASSERT_TRUE(contribution.ok()) << contribution.status();
    EXPECT_EQ(
        rendezvous::internal::decode_contribution(contribution->body)->blob,
        mine);
    coordinator.send_bytes(c.answer);
    if (c.code == absl::StatusCode::kUnavailable) coordinator.close();
    absl::StatusOr<Blobs> got = get_within_deadline(gathered);
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), c.code) << got.status();
    EXPECT_THAT(message(got.status()), HasSubstr(c.says));
    EXPECT_EQ((*b1)->check_alive(), got.status());
  }
}

}  // namespace
}  // namespace weft::testing
