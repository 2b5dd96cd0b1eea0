#include "tcp/internal/wire.h"

#include <algorithm>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace weft::tcp::internal {
namespace {

constexpr std::array<uint8_t, 4> kMagic = {'w', 'T', 'C', 'P'};

void put32(uint8_t* at, uint32_t v) {
  at[0] = static_cast<uint8_t>(v >> 24);
  at[1] = static_cast<uint8_t>(v >> 16);
  at[2] = static_cast<uint8_t>(v >> 8);
  at[3] = static_cast<uint8_t>(v);
}

uint32_t get32(const uint8_t* at) {
  return (uint32_t{at[0]} << 24) | (uint32_t{at[1]} << 16) |
         (uint32_t{at[2]} << 8) | uint32_t{at[3]};
}

}  // namespace

std::array<uint8_t, Hello::kBytes> Hello::encode() const {
  std::array<uint8_t, kBytes> b{};
  std::memcpy(b.data(), kMagic.data(), kMagic.size());
  const uint32_t fields[] = {version, from_rank, to_rank, from_qp,
                             to_qp,   cable,     to_psn,  flags};
  for (size_t i = 0; i < std::size(fields); ++i)
    put32(&b[4 + 4 * i], fields[i]);
  return b;
}

absl::StatusOr<Hello> Hello::decode(std::span<const uint8_t> bytes) {
  if (bytes.size() != kBytes ||
      std::memcmp(bytes.data(), kMagic.data(), kMagic.size()) != 0) {
    return absl::InvalidArgumentError(
        "the peer is not a weft TCP fabric endpoint (its first bytes are not "
        "weft's hello); check that the address belongs to a rank of this "
        "group");
  }
  Hello h;
  h.version = get32(&bytes[4]);
  if (h.version != kProtocolVersion) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the peer speaks weft TCP protocol version %u, this build speaks %u; "
        "run the same weft release on every rank",
        h.version, kProtocolVersion));
  }
  h.from_rank = get32(&bytes[8]);
  h.to_rank = get32(&bytes[12]);
  h.from_qp = get32(&bytes[16]);
  h.to_qp = get32(&bytes[20]);
  h.cable = get32(&bytes[24]);
  h.to_psn = get32(&bytes[28]);
  h.flags = get32(&bytes[32]);
  if ((h.flags & ~kProvesSecret) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the peer's hello carries unknown flags 0x%x; run the same weft "
        "release on every rank",
        h.flags));
  }
  return h;
}

net::ProofTranscript fabric_transcript(
    uint32_t connector_rank, uint32_t listener_rank,
    std::span<const uint8_t> connector_nonce,
    std::span<const uint8_t> listener_nonce) {
  net::ProofTranscript t;
  t.context = kSecretProofContext;
  t.initiator_rank = connector_rank;
  t.responder_rank = listener_rank;
  std::copy_n(connector_nonce.begin(), net::kSecretNonceBytes,
              t.initiator_nonce.begin());
  std::copy_n(listener_nonce.begin(), net::kSecretNonceBytes,
              t.responder_nonce.begin());
  return t;
}

absl::Status check_secret_flag(const Hello& hello, bool have_secret,
                               std::string_view peer) {
  if (hello.proves_secret() == have_secret) return absl::OkStatus();
  return absl::PermissionDeniedError(net::secret_mismatch_text(
      have_secret ? net::SecretMismatch::kPeerHasNone
                  : net::SecretMismatch::kOnlyPeerHasOne,
      peer));
}

std::array<uint8_t, MessageHeader::kBytes> MessageHeader::encode() const {
  std::array<uint8_t, kBytes> b{};
  put32(&b[0], length);
  put32(&b[4], immediate);
  put32(&b[8], (has_immediate ? kHasImmediate : 0) | (goodbye ? kGoodbye : 0));
  return b;
}

absl::StatusOr<MessageHeader> MessageHeader::decode(
    std::span<const uint8_t> bytes) {
  MessageHeader h;
  h.length = get32(&bytes[0]);
  h.immediate = get32(&bytes[4]);
  const uint32_t flags = get32(&bytes[8]);
  if ((flags & ~(kHasImmediate | kGoodbye)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a message header carries unknown flags 0x%x: the stream is corrupt "
        "or the peer is not weft",
        flags));
  }
  h.has_immediate = (flags & kHasImmediate) != 0;
  h.goodbye = (flags & kGoodbye) != 0;
  return h;
}

}  // namespace weft::tcp::internal
