#include "rendezvous/internal/wire.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/rendezvous/wire_bytes.h"

namespace weft::rendezvous::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string message(const absl::Status& s) { return std::string(s.message()); }

using ::weft::testing::wire_header_bytes;

TEST(Wire, HelloIsBigEndianOnTheWire) {
  const std::vector<uint8_t> bytes = encode_hello({0x01020304, 0x0a0b0c0d});
  EXPECT_THAT(bytes, ElementsAre(0x57, 0x45, 0x46, 0x54,    // "WEFT"
                                 0x00, 0x02,                // version 2
                                 0x00, 0x01,                // hello
                                 0x00, 0x00, 0x00, 0x08,    // 8 body bytes
                                 0x01, 0x02, 0x03, 0x04,    // rank
                                 0x0a, 0x0b, 0x0c, 0x0d));  // size
  absl::StatusOr<WireMessage> m = decode_message(bytes);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->header.type, MessageType::kHello);
  absl::StatusOr<Hello> hello = decode_hello(m->body);
  ASSERT_TRUE(hello.ok());
  EXPECT_EQ(hello->rank, 0x01020304u);
  EXPECT_EQ(hello->size, 0x0a0b0c0du);
}

TEST(Wire, ContributionRoundTrip) {
  const std::vector<uint8_t> blob = {9, 8, 7};
  const std::vector<uint8_t> bytes =
      encode_contribution(0x1122334455667788, blob);
  ASSERT_EQ(bytes.size(), kWireHeaderBytes + 8 + blob.size());
  absl::StatusOr<WireMessage> m = decode_message(bytes);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Contribution> c = decode_contribution(m->body);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->round, 0x1122334455667788u);
  EXPECT_EQ(c->blob, blob);
}

TEST(Wire, GatheredRoundTripWithEmptyBlobs) {
  const std::vector<std::vector<uint8_t>> blobs = {{}, {1}, {}, {2, 3, 4}};
  absl::StatusOr<std::vector<uint8_t>> bytes = encode_gathered(7, blobs);
  ASSERT_TRUE(bytes.ok());
  // round 8 + count 4 + four lengths 16 + 4 payload bytes.
  EXPECT_EQ(bytes->size(), kWireHeaderBytes + 8 + 4 + 16 + 4);
  absl::StatusOr<WireMessage> m = decode_message(*bytes);
  ASSERT_TRUE(m.ok()) << m.status();
  absl::StatusOr<Gathered> g = decode_gathered(m->body);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->round, 7u);
  EXPECT_EQ(g->blobs, blobs);
}

TEST(Wire, WelcomeAndAbortRoundTrip) {
  absl::StatusOr<WireMessage> m = decode_message(encode_welcome());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->header.type, MessageType::kWelcome);
  EXPECT_TRUE(decode_welcome(m->body).ok());

  const Abort sent{absl::StatusCode::kUnavailable, 3, "rank 3 left"};
  m = decode_message(encode_abort(sent));
  ASSERT_TRUE(m.ok());
  absl::StatusOr<Abort> got = decode_abort(m->body);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->code, absl::StatusCode::kUnavailable);
  EXPECT_EQ(got->culprit, 3u);
  EXPECT_EQ(got->reason, "rank 3 left");
}

TEST(Wire, AbortIsSanitisedAndBounded) {
  const Abort long_one{absl::StatusCode::kInternal, 0,
                       std::string(kMaxAbortTextBytes + 100, 'x')};
  absl::StatusOr<WireMessage> m = decode_message(encode_abort(long_one));
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(decode_abort(m->body)->reason.size(), kMaxAbortTextBytes);

  // Code 99 is no status code; a control byte is no text.
  const std::vector<uint8_t> body = {0, 0, 0, 99, 0, 0, 0, 1, 'o', 0x07, 'k'};
  absl::StatusOr<Abort> odd = decode_abort(body);
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->code, absl::StatusCode::kUnknown);
  EXPECT_EQ(odd->reason, "o?k");
}

TEST(Wire, BadMagicIsNotAWeftPeer) {
  const std::string http = "GET / HTTP/1.0\r\n";
  absl::StatusOr<WireHeader> h = decode_header(
      std::span(reinterpret_cast<const uint8_t*>(http.data()), http.size()));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(h.status()), HasSubstr("not a weft bootstrap peer"));
  EXPECT_THAT(message(h.status()), HasSubstr("47 45 54 20"));
}

TEST(Wire, OtherVersionSaysBoth) {
  absl::StatusOr<WireHeader> h = decode_header(wire_header_bytes(1, 1, 8));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(message(h.status()),
              HasSubstr("peer speaks bootstrap version 1, we speak 2; run the "
                        "same weft version on every rank"));
}

TEST(Wire, UnknownTypeAndOversizedLength) {
  absl::StatusOr<WireHeader> h = decode_header(wire_header_bytes(2, 0, 0));
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  h = decode_header(wire_header_bytes(2, 9, 0));
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(h.status()), HasSubstr("unknown type 9"));

  h = decode_header(wire_header_bytes(2, 1, 9));  // a hello is 8 bytes
  EXPECT_EQ(h.status().code(), absl::StatusCode::kResourceExhausted);
  h = decode_header(wire_header_bytes(2, 4, kMaxGatheredBodyBytes + 1));
  EXPECT_EQ(h.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(message(h.status()), HasSubstr("more than its limit"));
  h = decode_header(wire_header_bytes(2, 4, kMaxGatheredBodyBytes));
  EXPECT_TRUE(h.ok());
  h = decode_header(wire_header_bytes(2, 3, 8 + Bootstrap::kMaxBlobBytes + 1));
  EXPECT_EQ(h.status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(Wire, EveryTruncationIsOutOfRange) {
  const std::vector<uint8_t> whole = encode_contribution(1, {{1, 2, 3}});
  for (size_t n = 0; n < whole.size(); ++n) {
    absl::StatusOr<WireMessage> m = decode_message(std::span(whole).first(n));
    ASSERT_FALSE(m.ok()) << n;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kOutOfRange) << n;
    EXPECT_THAT(message(m.status()), HasSubstr("truncated")) << n;
  }
  std::vector<uint8_t> longer = whole;
  longer.push_back(0);
  EXPECT_EQ(decode_message(longer).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Wire, MalformedBodies) {
  EXPECT_FALSE(decode_hello(std::vector<uint8_t>(7)).ok());
  EXPECT_FALSE(decode_welcome(std::vector<uint8_t>(1)).ok());
  EXPECT_FALSE(decode_contribution(std::vector<uint8_t>(7)).ok());
  EXPECT_FALSE(decode_abort(std::vector<uint8_t>(7)).ok());
  // round, count 0.
  std::vector<uint8_t> g(12, 0);
  EXPECT_THAT(message(decode_gathered(g).status()), HasSubstr("0 blobs"));
  // count 2, one blob of length 5 with 1 byte present.
  g = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 5, 42};
  EXPECT_THAT(message(decode_gathered(g).status()), HasSubstr("claims 5"));
  // count 1, blob of 1, then a stray byte.
  g = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 42, 43};
  EXPECT_THAT(message(decode_gathered(g).status()), HasSubstr("stray"));
  // count 2 and only one blob.
  g = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0};
  EXPECT_THAT(message(decode_gathered(g).status()), HasSubstr("cut off"));
  // count beyond any group.
  g = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff};
  EXPECT_FALSE(decode_gathered(g).ok());
}

TEST(Wire, GatheredOverTheHardLimitIsRefused) {
  const size_t ranks = kMaxGatheredBodyBytes / Bootstrap::kMaxBlobBytes;
  std::vector<std::vector<uint8_t>> blobs(
      ranks, std::vector<uint8_t>(Bootstrap::kMaxBlobBytes));
  absl::StatusOr<std::vector<uint8_t>> bytes = encode_gathered(0, blobs);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kResourceExhausted);
  blobs.pop_back();
  EXPECT_TRUE(encode_gathered(0, blobs).ok());
}

// Arbitrary bytes, and valid messages with single bytes changed, decode to
// a message or an error: never a crash (a smoke test; the fuzz target goes
// further).
TEST(Wire, ArbitraryBytesNeverCrash) {
  uint64_t state = 0x9e3779b97f4a7c15;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  absl::StatusOr<std::vector<uint8_t>> gathered =
      encode_gathered(3, {{1, 2}, {}, {3}});
  ASSERT_TRUE(gathered.ok());
  const std::vector<std::vector<uint8_t>> seeds = {
      encode_hello({1, 2}), encode_contribution(1, {{5, 6}}), *gathered,
      encode_abort({absl::StatusCode::kInternal, 1, "x"})};
  size_t decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes = seeds[next() % seeds.size()];
    const uint64_t r = next();
    if (r % 4 == 0) {
      bytes.resize(next() % 64);
      for (uint8_t& b : bytes) b = uint8_t(next());
    } else {
      bytes[kWireHeaderBytes - 1 +
            next() % (bytes.size() - kWireHeaderBytes + 1)] = uint8_t(next());
    }
    absl::StatusOr<WireMessage> m = decode_message(bytes);
    if (!m.ok()) continue;
    ++decoded;
    (void)decode_hello(m->body);
    (void)decode_contribution(m->body);
    (void)decode_gathered(m->body);
    (void)decode_abort(m->body);
  }
  EXPECT_GT(decoded, 0u);
}

}  // namespace
}  // namespace weft::rendezvous::internal
