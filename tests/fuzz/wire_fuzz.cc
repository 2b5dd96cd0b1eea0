// Fuzzes the TCP bootstrap's wire format (rendezvous/internal/wire.h). Any
// bytes must give a message or exactly the typed error wire.h documents (the
// expected code is computed here from the layout alone), and every body a
// decoder accepts must encode back to the same bytes. Abort is the one
// lossy message (unknown codes become Unknown, unprintable reason bytes
// '?'): there encode(decode(x)) must decode to the same value.
//
// Each input is tried as a whole message and, from byte kWireHeaderBytes
// on, as the body of every message type, so the body decoders are reached
// without the fuzzer first having to forge a matching header.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "rendezvous/internal/wire.h"
#include "tests/fuzz/fuzz_check.h"

namespace weft {
namespace {

using Bytes = std::span<const uint8_t>;

constexpr size_t kRoundBytes = 8;
constexpr size_t kAbortFixedBytes = 8;  // code u32, culprit u32
constexpr rendezvous::internal::MessageType kAllTypes[] = {
    rendezvous::internal::MessageType::kHello,
    rendezvous::internal::MessageType::kWelcome,
    rendezvous::internal::MessageType::kContribute,
    rendezvous::internal::MessageType::kGathered,
    rendezvous::internal::MessageType::kAbort,
    rendezvous::internal::MessageType::kSecretHello,
    rendezvous::internal::MessageType::kChallenge,
    rendezvous::internal::MessageType::kProof};

uint64_t big_endian(Bytes b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | b[at + i];
  return v;
}

bool same(Bytes a, Bytes b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// The body limits wire.h states, per type (0 for unknown types).
uint64_t documented_limit(uint16_t type) {
  switch (type) {
    case 1:
      return 8;  // hello: rank, size
    case 2:
      return 0;  // welcome
    case 3:
      return kRoundBytes + Bootstrap::kMaxBlobBytes;
    case 4:
      return rendezvous::internal::kMaxGatheredBodyBytes;
    case 5:
      return kAbortFixedBytes + rendezvous::internal::kMaxAbortTextBytes;
    case 6:
      return 40;  // secret hello: rank, size, nonce
    case 7:
      return 64;  // challenge: nonce, proof
    case 8:
      return 32;  // proof
  }
  return 0;
}

// decode_header's documented outcome, in its documented order.
absl::StatusCode expected_header_code(Bytes b) {
  if (b.size() < rendezvous::internal::kWireHeaderBytes)
    return absl::StatusCode::kOutOfRange;
  if (big_endian(b, 0, 4) != 0x57454654) {
    return absl::StatusCode::kInvalidArgument;
  }
  if (big_endian(b, 4, 2) != 2) return absl::StatusCode::kFailedPrecondition;
  const uint16_t type = uint16_t(big_endian(b, 6, 2));
  if (type < 1 || type > 8) return absl::StatusCode::kInvalidArgument;
  if (big_endian(b, 8, 4) > documented_limit(type)) {
    return absl::StatusCode::kResourceExhausted;
  }
  return absl::StatusCode::kOk;
}

void check_header(Bytes b) {
  absl::StatusOr<rendezvous::internal::WireHeader> h =
      rendezvous::internal::decode_header(b);
  WEFT_FUZZ_CHECK(h.status().code() == expected_header_code(b));
  WEFT_FUZZ_CHECK(rendezvous::internal::has_wire_magic(b) ==
                  (b.size() >= 4 &&
                   big_endian(b, 0, 4) == rendezvous::internal::kWireMagic));
  if (!h.ok()) {
    WEFT_FUZZ_CHECK(!h.status().message().empty());
    return;
  }
  WEFT_FUZZ_CHECK(uint16_t(h->type) == big_endian(b, 6, 2));
  WEFT_FUZZ_CHECK(h->body_bytes == big_endian(b, 8, 4));
  WEFT_FUZZ_CHECK(rendezvous::internal::max_body_bytes(h->type) ==
                  documented_limit(uint16_t(h->type)));
  WEFT_FUZZ_CHECK(rendezvous::internal::message_type_name(h->type) !=
                  "unknown");
}

// Every body decoder rejects with InvalidArgument about the bootstrap.
void check_rejection(const absl::Status& s) {
  fuzz::check_error(s, absl::StatusCode::kInvalidArgument, "bootstrap");
}

// An encoded whole message: a valid header announcing `body`'s length,
// then exactly `body`'s bytes when `exact`.
void check_encoded(const std::vector<uint8_t>& wire,
                   rendezvous::internal::MessageType type, Bytes body,
                   bool exact) {
  absl::StatusOr<rendezvous::internal::WireMessage> back =
      rendezvous::internal::decode_message(wire);
  WEFT_FUZZ_CHECK(back.ok());
  WEFT_FUZZ_CHECK(back->header.type == type);
  WEFT_FUZZ_CHECK(back->body.size() == body.size());
  if (exact) WEFT_FUZZ_CHECK(same(back->body, body));
}

std::optional<std::vector<uint8_t>> reencode_abort(Bytes body) {
  absl::StatusOr<rendezvous::internal::Abort> a =
      rendezvous::internal::decode_abort(body);
  const bool fits = body.size() >= kAbortFixedBytes &&
                    body.size() <= kAbortFixedBytes +
                                       rendezvous::internal::kMaxAbortTextBytes;
  WEFT_FUZZ_CHECK(a.ok() == fits);
  if (!a.ok()) {
    check_rejection(a.status());
    return std::nullopt;
  }
  const uint64_t code = big_endian(body, 0, 4);
  const bool known =
      code >= 1 && code <= uint32_t(absl::StatusCode::kUnauthenticated);
  WEFT_FUZZ_CHECK(uint32_t(a->code) ==
                  (known ? code : uint32_t(absl::StatusCode::kUnknown)));
  WEFT_FUZZ_CHECK(a->culprit == big_endian(body, 4, 4));
  WEFT_FUZZ_CHECK(a->reason.size() == body.size() - kAbortFixedBytes);
  for (size_t i = 0; i < a->reason.size(); ++i) {
    const uint8_t c = body[kAbortFixedBytes + i];
    WEFT_FUZZ_CHECK(a->reason[i] == (c >= 0x20 && c < 0x7f ? char(c) : '?'));
  }
  std::vector<uint8_t> wire = rendezvous::internal::encode_abort(*a);
  check_encoded(wire, rendezvous::internal::MessageType::kAbort, body,
                /*exact=*/false);
  absl::StatusOr<rendezvous::internal::Abort> again =
      rendezvous::internal::decode_abort(Bytes(wire).subspan(12));
  WEFT_FUZZ_CHECK(again.ok() && again->code == a->code &&
                  again->culprit == a->culprit && again->reason == a->reason);
  return wire;
}

std::optional<std::vector<uint8_t>> reencode_gathered(Bytes body) {
  absl::StatusOr<rendezvous::internal::Gathered> g =
      rendezvous::internal::decode_gathered(body);
  if (!g.ok()) {
    check_rejection(g.status());
    return std::nullopt;
  }
  WEFT_FUZZ_CHECK(!g->blobs.empty() && g->blobs.size() <= Topology::kMaxRanks);
  WEFT_FUZZ_CHECK(g->round == big_endian(body, 0, 8));
  absl::StatusOr<std::vector<uint8_t>> wire =
      rendezvous::internal::encode_gathered(g->round, g->blobs);
  WEFT_FUZZ_CHECK(wire.ok());
  check_encoded(*wire, rendezvous::internal::MessageType::kGathered, body,
                /*exact=*/true);
  return *wire;
}

// Decodes `body` as a `type` message; when accepted, checks the value
// against the bytes and returns the whole message encoded from it.
std::optional<std::vector<uint8_t>> reencode(
    rendezvous::internal::MessageType type, Bytes body) {
  switch (type) {
    case rendezvous::internal::MessageType::kHello: {
      absl::StatusOr<rendezvous::internal::Hello> h =
          rendezvous::internal::decode_hello(body);
      WEFT_FUZZ_CHECK(h.ok() == (body.size() == 8));
      if (!h.ok()) {
        check_rejection(h.status());
        return std::nullopt;
      }
      WEFT_FUZZ_CHECK(h->rank == big_endian(body, 0, 4));
      WEFT_FUZZ_CHECK(h->size == big_endian(body, 4, 4));
      std::vector<uint8_t> wire = rendezvous::internal::encode_hello(*h);
      check_encoded(wire, type, body, /*exact=*/true);
      return wire;
    }
    case rendezvous::internal::MessageType::kWelcome: {
      absl::Status s = rendezvous::internal::decode_welcome(body);
      WEFT_FUZZ_CHECK(s.ok() == body.empty());
      if (!s.ok()) {
        check_rejection(s);
        return std::nullopt;
      }
      return rendezvous::internal::encode_welcome();
    }
    case rendezvous::internal::MessageType::kContribute: {
      absl::StatusOr<rendezvous::internal::Contribution> c =
          rendezvous::internal::decode_contribution(body);
      WEFT_FUZZ_CHECK(c.ok() == (body.size() >= kRoundBytes &&
                                 body.size() <= documented_limit(3)));
      if (!c.ok()) {
        check_rejection(c.status());
        return std::nullopt;
      }
      WEFT_FUZZ_CHECK(c->round == big_endian(body, 0, 8));
      std::vector<uint8_t> wire =
          rendezvous::internal::encode_contribution(c->round, c->blob);
      check_encoded(wire, type, body, /*exact=*/true);
      return wire;
    }
    case rendezvous::internal::MessageType::kSecretHello: {
      absl::StatusOr<rendezvous::internal::SecretHello> h =
          rendezvous::internal::decode_secret_hello(body);
      WEFT_FUZZ_CHECK(h.ok() == (body.size() == documented_limit(6)));
      if (!h.ok()) {
        check_rejection(h.status());
        return std::nullopt;
      }
      WEFT_FUZZ_CHECK(h->rank == big_endian(body, 0, 4));
      WEFT_FUZZ_CHECK(h->size == big_endian(body, 4, 4));
      WEFT_FUZZ_CHECK(same(h->nonce, body.subspan(8)));
      std::vector<uint8_t> wire = rendezvous::internal::encode_secret_hello(*h);
      check_encoded(wire, type, body, /*exact=*/true);
      return wire;
    }
    case rendezvous::internal::MessageType::kChallenge: {
      absl::StatusOr<rendezvous::internal::Challenge> c =
          rendezvous::internal::decode_challenge(body);
      WEFT_FUZZ_CHECK(c.ok() == (body.size() == documented_limit(7)));
      if (!c.ok()) {
        check_rejection(c.status());
        return std::nullopt;
      }
      WEFT_FUZZ_CHECK(same(c->nonce, body.first(32)));
      WEFT_FUZZ_CHECK(same(c->proof, body.subspan(32)));
      std::vector<uint8_t> wire = rendezvous::internal::encode_challenge(*c);
      check_encoded(wire, type, body, /*exact=*/true);
      return wire;
    }
    case rendezvous::internal::MessageType::kProof: {
      absl::StatusOr<net::SecretProof> p = rendezvous::internal::decode_proof(body);
      WEFT_FUZZ_CHECK(p.ok() == (body.size() == documented_limit(8)));
      if (!p.ok()) {
        check_rejection(p.status());
        return std::nullopt;
      }
      WEFT_FUZZ_CHECK(same(*p, body));
      std::vector<uint8_t> wire = rendezvous::internal::encode_proof(*p);
      check_encoded(wire, type, body, /*exact=*/true);
      return wire;
    }
    case rendezvous::internal::MessageType::kGathered:
      return reencode_gathered(body);
    case rendezvous::internal::MessageType::kAbort:
      return reencode_abort(body);
  }
  fuzz::fail("unknown message type", __FILE__, __LINE__);
}

void check_message(Bytes b) {
  absl::StatusOr<rendezvous::internal::WireMessage> m =
      rendezvous::internal::decode_message(b);
  absl::StatusCode expected = expected_header_code(b);
  if (expected == absl::StatusCode::kOk) {
    const uint64_t announced = big_endian(b, 8, 4);
    const uint64_t have = b.size() - rendezvous::internal::kWireHeaderBytes;
    if (have < announced) expected = absl::StatusCode::kOutOfRange;
    if (have > announced) expected = absl::StatusCode::kInvalidArgument;
  }
  WEFT_FUZZ_CHECK(m.status().code() == expected);
  if (!m.ok()) return;
  WEFT_FUZZ_CHECK(
      same(m->body, b.subspan(rendezvous::internal::kWireHeaderBytes)));
  std::optional<std::vector<uint8_t>> wire = reencode(m->header.type, m->body);
  // Exact for every type but abort, whose code and text are normalised.
  if (wire.has_value() &&
      m->header.type != rendezvous::internal::MessageType::kAbort) {
    WEFT_FUZZ_CHECK(same(*wire, b));
  }
}

}  // namespace
}  // namespace weft

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const weft::Bytes bytes(data, size);
  weft::check_header(bytes);
  weft::check_message(bytes);
  const weft::Bytes body = size >= weft::rendezvous::internal::kWireHeaderBytes
                               ? bytes.subspan(weft::rendezvous::internal::kWireHeaderBytes)
                               : bytes;
  for (weft::rendezvous::internal::MessageType type : weft::kAllTypes) weft::reencode(type, body);
  return 0;
}
