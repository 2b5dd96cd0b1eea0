#include "rendezvous/internal/wire.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_format.h"
#include "fabric/topology.h"

namespace weft::rendezvous::internal {
namespace {

constexpr size_t kHelloBodyBytes = 8;
constexpr size_t kSecretHelloBodyBytes =
    kHelloBodyBytes + net::kSecretNonceBytes;
constexpr size_t kChallengeBodyBytes =
    net::kSecretNonceBytes + net::kSecretProofBytes;
constexpr size_t kRoundBytes = 8;
constexpr size_t kLengthBytes = 4;
constexpr size_t kAbortFixedBytes = 8;
constexpr uint32_t kLastStatusCode =
    static_cast<uint32_t>(absl::StatusCode::kUnauthenticated);

// Big-endian writer into a growing buffer.
class Writer {
 public:
  explicit Writer(MessageType type, size_t body_bytes) {
    bytes_.reserve(kWireHeaderBytes + body_bytes);
    u32(kWireMagic);
    u16(kWireVersion);
    u16(static_cast<uint16_t>(type));
    u32(static_cast<uint32_t>(body_bytes));
  }
  void u16(uint16_t v) { put(v, 2); }
  void u32(uint32_t v) { put(v, 4); }
  void u64(uint64_t v) { put(v, 8); }
  void raw(std::span<const uint8_t> b) {
    bytes_.insert(bytes_.end(), b.begin(), b.end());
  }
  std::vector<uint8_t> take() { return std::move(bytes_); }

 private:
  void put(uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) bytes_.push_back(uint8_t(v >> (8 * i)));
  }
  std::vector<uint8_t> bytes_;
};

// Big-endian reader over a span; callers check remaining() first.
class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : bytes_(b) {}
  size_t remaining() const { return bytes_.size() - at_; }
  uint16_t u16() { return uint16_t(get(2)); }
  uint32_t u32() { return uint32_t(get(4)); }
  uint64_t u64() { return get(8); }
  std::span<const uint8_t> raw(size_t n) {
    std::span<const uint8_t> out = bytes_.subspan(at_, n);
    at_ += n;
    return out;
  }

 private:
  uint64_t get(int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | bytes_[at_++];
    return v;
  }
  std::span<const uint8_t> bytes_;
  size_t at_ = 0;
};

absl::Status malformed(MessageType type, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrFormat("malformed %s message from the bootstrap peer: %s",
                      message_type_name(type), what));
}

// A body of a fixed length.
absl::Status check_length(MessageType type, std::span<const uint8_t> body,
                          size_t expected) {
  if (body.size() == expected) return absl::OkStatus();
  return malformed(type, absl::StrFormat("%u body bytes, expected %u",
                                         body.size(), expected));
}

// "47 45 54 20 ("GET ")": what a stranger sent, for the error message.
std::string describe_bytes(std::span<const uint8_t> b) {
  std::string hex, text;
  for (uint8_t c : b) {
    absl::StrAppendFormat(&hex, "%s%02x", hex.empty() ? "" : " ", c);
    text.push_back(c >= 0x20 && c < 0x7f ? char(c) : '.');
  }
  return absl::StrFormat("%s (\"%s\")", hex, text);
}

bool known_type(uint16_t type) {
  return type >= uint16_t(MessageType::kHello) &&
         type <= uint16_t(MessageType::kProof);
}

}  // namespace

std::string_view message_type_name(MessageType type) {
  switch (type) {
    case MessageType::kHello:
      return "hello";
    case MessageType::kWelcome:
      return "welcome";
    case MessageType::kContribute:
      return "contribute";
    case MessageType::kGathered:
      return "gathered";
    case MessageType::kAbort:
      return "abort";
    case MessageType::kSecretHello:
      return "secret hello";
    case MessageType::kChallenge:
      return "challenge";
    case MessageType::kProof:
      return "proof";
  }
  return "unknown";
}

uint32_t max_body_bytes(MessageType type) {
  switch (type) {
    case MessageType::kHello:
      return kHelloBodyBytes;
    case MessageType::kWelcome:
      return 0;
    case MessageType::kContribute:
      return kRoundBytes + Bootstrap::kMaxBlobBytes;
    case MessageType::kGathered:
      return kMaxGatheredBodyBytes;
    case MessageType::kAbort:
      return kAbortFixedBytes + kMaxAbortTextBytes;
    case MessageType::kSecretHello:
      return kSecretHelloBodyBytes;
    case MessageType::kChallenge:
      return kChallengeBodyBytes;
    case MessageType::kProof:
      return net::kSecretProofBytes;
  }
  return 0;
}

bool has_wire_magic(std::span<const uint8_t> bytes) {
  return bytes.size() >= sizeof(kWireMagic) &&
         Reader(bytes.first(sizeof(kWireMagic))).u32() == kWireMagic;
}

absl::StatusOr<WireHeader> decode_header(std::span<const uint8_t> bytes) {
  if (bytes.size() < kWireHeaderBytes) {
    return absl::OutOfRangeError(absl::StrFormat(
        "truncated bootstrap message: %u bytes, a header needs %u",
        bytes.size(), kWireHeaderBytes));
  }
  Reader r(bytes.first(kWireHeaderBytes));
  const uint32_t magic = r.u32();
  if (magic != kWireMagic) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "not a weft bootstrap peer: it sent %s where the magic %08x (\"WEFT\") "
        "belongs; check that the coordinator address names a weft rank 0",
        describe_bytes(bytes.first(4)), kWireMagic));
  }
  const uint16_t version = r.u16();
  if (version != kWireVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "peer speaks bootstrap version %u, we speak %u; run the same weft "
        "version on every rank",
        version, kWireVersion));
  }
  const uint16_t type = r.u16();
  if (!known_type(type)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bootstrap message of unknown type %u", type));
  }
  WireHeader header{MessageType(type), r.u32()};
  if (header.body_bytes > max_body_bytes(header.type)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "bootstrap %s message announces %u body bytes, more than its limit %u",
        message_type_name(header.type), header.body_bytes,
        max_body_bytes(header.type)));
  }
  return header;
}

absl::StatusOr<WireMessage> decode_message(std::span<const uint8_t> bytes) {
  absl::StatusOr<WireHeader> header = decode_header(bytes);
  if (!header.ok()) return header.status();
  const size_t have = bytes.size() - kWireHeaderBytes;
  if (have < header->body_bytes) {
    return absl::OutOfRangeError(absl::StrFormat(
        "truncated bootstrap %s message: %u of %u body bytes",
        message_type_name(header->type), have, header->body_bytes));
  }
  if (have > header->body_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%u stray bytes after a bootstrap %s message",
        have - header->body_bytes, message_type_name(header->type)));
  }
  std::span<const uint8_t> body = bytes.subspan(kWireHeaderBytes);
  return WireMessage{*header, {body.begin(), body.end()}};
}

std::vector<uint8_t> encode_hello(const Hello& hello) {
  Writer w(MessageType::kHello, kHelloBodyBytes);
  w.u32(hello.rank);
  w.u32(hello.size);
  return w.take();
}

std::vector<uint8_t> encode_secret_hello(const SecretHello& hello) {
  Writer w(MessageType::kSecretHello, kSecretHelloBodyBytes);
  w.u32(hello.rank);
  w.u32(hello.size);
  w.raw(hello.nonce);
  return w.take();
}

std::vector<uint8_t> encode_challenge(const Challenge& challenge) {
  Writer w(MessageType::kChallenge, kChallengeBodyBytes);
  w.raw(challenge.nonce);
  w.raw(challenge.proof);
  return w.take();
}

std::vector<uint8_t> encode_proof(const net::SecretProof& proof) {
  Writer w(MessageType::kProof, net::kSecretProofBytes);
  w.raw(proof);
  return w.take();
}

std::vector<uint8_t> encode_welcome() {
  return Writer(MessageType::kWelcome, 0).take();
}

std::vector<uint8_t> encode_contribution(uint64_t round,
                                         std::span<const uint8_t> blob) {
  assert(blob.size() <= Bootstrap::kMaxBlobBytes);
  Writer w(MessageType::kContribute, kRoundBytes + blob.size());
  w.u64(round);
  w.raw(blob);
  return w.take();
}

absl::StatusOr<std::vector<uint8_t>> encode_gathered(
    uint64_t round, const std::vector<std::vector<uint8_t>>& blobs) {
  size_t body = kRoundBytes + kLengthBytes;
  for (const auto& b : blobs) body += kLengthBytes + b.size();
  if (body > kMaxGatheredBodyBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "the exchange's %u blobs total %u bytes with framing, more than the "
        "bootstrap's limit of %u; contribute less per rank",
        blobs.size(), body, kMaxGatheredBodyBytes));
  }
  Writer w(MessageType::kGathered, body);
  w.u64(round);
  w.u32(static_cast<uint32_t>(blobs.size()));
  for (const auto& b : blobs) {
    w.u32(static_cast<uint32_t>(b.size()));
    w.raw(b);
  }
  return w.take();
}

std::vector<uint8_t> encode_abort(const Abort& abort) {
  const size_t text = std::min<size_t>(abort.reason.size(), kMaxAbortTextBytes);
  Writer w(MessageType::kAbort, kAbortFixedBytes + text);
  w.u32(static_cast<uint32_t>(abort.code));
  w.u32(abort.culprit);
  w.raw(std::span(reinterpret_cast<const uint8_t*>(abort.reason.data()), text));
  return w.take();
}

absl::StatusOr<Hello> decode_hello(std::span<const uint8_t> body) {
  if (absl::Status s = check_length(MessageType::kHello, body, kHelloBodyBytes);
      !s.ok()) {
    return s;
  }
  Reader r(body);
  Hello hello;
  hello.rank = r.u32();
  hello.size = r.u32();
  return hello;
}

absl::StatusOr<SecretHello> decode_secret_hello(std::span<const uint8_t> body) {
  if (absl::Status s =
          check_length(MessageType::kSecretHello, body, kSecretHelloBodyBytes);
      !s.ok()) {
    return s;
  }
  Reader r(body);
  SecretHello hello;
  hello.rank = r.u32();
  hello.size = r.u32();
  std::ranges::copy(r.raw(net::kSecretNonceBytes), hello.nonce.begin());
  return hello;
}

absl::StatusOr<Challenge> decode_challenge(std::span<const uint8_t> body) {
  if (absl::Status s =
          check_length(MessageType::kChallenge, body, kChallengeBodyBytes);
      !s.ok()) {
    return s;
  }
  Reader r(body);
  Challenge c;
  std::ranges::copy(r.raw(net::kSecretNonceBytes), c.nonce.begin());
  std::ranges::copy(r.raw(net::kSecretProofBytes), c.proof.begin());
  return c;
}

absl::StatusOr<net::SecretProof> decode_proof(std::span<const uint8_t> body) {
  if (absl::Status s =
          check_length(MessageType::kProof, body, net::kSecretProofBytes);
      !s.ok()) {
    return s;
  }
  net::SecretProof proof;
  std::ranges::copy(body, proof.begin());
  return proof;
}

absl::Status decode_welcome(std::span<const uint8_t> body) {
  if (!body.empty()) {
    return malformed(MessageType::kWelcome,
                     absl::StrFormat("%u body bytes, expected 0", body.size()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Contribution> decode_contribution(
    std::span<const uint8_t> body) {
  if (body.size() < kRoundBytes ||
      body.size() - kRoundBytes > Bootstrap::kMaxBlobBytes) {
    return malformed(
        MessageType::kContribute,
        absl::StrFormat("%u body bytes, expected %u to %u", body.size(),
                        kRoundBytes, kRoundBytes + Bootstrap::kMaxBlobBytes));
  }
  Reader r(body);
  Contribution c;
  c.round = r.u64();
  std::span<const uint8_t> blob = r.raw(r.remaining());
  c.blob.assign(blob.begin(), blob.end());
  return c;
}

absl::StatusOr<Gathered> decode_gathered(std::span<const uint8_t> body) {
  if (body.size() < kRoundBytes + kLengthBytes) {
    return malformed(MessageType::kGathered, "shorter than its fixed part");
  }
  Reader r(body);
  Gathered g;
  g.round = r.u64();
  const uint32_t count = r.u32();
  if (count == 0 || count > Topology::kMaxRanks) {
    return malformed(MessageType::kGathered,
                     absl::StrFormat("%u blobs, expected 1 to %u", count,
                                     Topology::kMaxRanks));
  }
  g.blobs.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (r.remaining() < kLengthBytes) {
      return malformed(MessageType::kGathered,
                       absl::StrFormat("blob %u's length is cut off", i));
    }
    const uint32_t len = r.u32();
    if (len > Bootstrap::kMaxBlobBytes || len > r.remaining()) {
      return malformed(MessageType::kGathered,
                       absl::StrFormat("blob %u claims %u bytes, %u remain", i,
                                       len, r.remaining()));
    }
    std::span<const uint8_t> blob = r.raw(len);
    g.blobs.emplace_back(blob.begin(), blob.end());
  }
  if (r.remaining() != 0) {
    return malformed(
        MessageType::kGathered,
        absl::StrFormat("%u stray bytes after the last blob", r.remaining()));
  }
  return g;
}

absl::StatusOr<Abort> decode_abort(std::span<const uint8_t> body) {
  if (body.size() < kAbortFixedBytes ||
      body.size() > kAbortFixedBytes + kMaxAbortTextBytes) {
    return malformed(MessageType::kAbort,
                     absl::StrFormat("%u body bytes", body.size()));
  }
  Reader r(body);
  Abort a;
  const uint32_t code = r.u32();
  // OK or a code we do not know cannot describe a failure: call it Unknown.
  a.code = (code == 0 || code > kLastStatusCode) ? absl::StatusCode::kUnknown
                                                 : absl::StatusCode(code);
  a.culprit = r.u32();
  for (uint8_t c : r.raw(r.remaining())) {
    a.reason.push_back(c >= 0x20 && c < 0x7f ? char(c) : '?');
  }
  return a;
}

}  // namespace weft::rendezvous::internal
