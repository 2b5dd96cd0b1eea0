// Internal to weft::tcp: what goes over a fabric connection. Each side
// first sends a hello (who it is, whom it wants, the protocol version,
// whether it proves a shared secret); then every message is a fixed header
// followed by its payload. All integers are big-endian.
//
// With a shared secret (net/secret_proof.h) both hellos say so, and the
// handshake before any message is, connector (initiator) and listener
// (responder):
//   connector -> listener   hello, nonce                     (68 bytes)
//   listener -> connector   hello, nonce, listener's proof  (100 bytes)
//   connector -> listener   connector's proof                 (32 bytes)
// Without one, each side sends its 36-byte hello and nothing more.
#ifndef WEFT_TCP_INTERNAL_WIRE_H_
#define WEFT_TCP_INTERNAL_WIRE_H_

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "net/secret_proof.h"

namespace weft::tcp::internal {

// 2: the hello carries flags; the shared-secret handshake.
inline constexpr uint32_t kProtocolVersion = 2;
// Context of the fabric's shared-secret proofs.
inline constexpr std::string_view kSecretProofContext = "weft tcp fabric 2";

// The connector's hello names the listener's endpoint (to_qp, to_psn from
// its Destination); the listener's reply names the connector's.
struct Hello {
  static constexpr size_t kBytes = 36;
  // Flags: the sender holds a shared secret and follows with a nonce.
  static constexpr uint32_t kProvesSecret = 1;
  // The most a hello and what follows it in the handshake take.
  static constexpr size_t kMaxHandshakeBytes =
      kBytes + net::kSecretNonceBytes + net::kSecretProofBytes;

  uint32_t version = kProtocolVersion;
  uint32_t from_rank = 0;
  uint32_t to_rank = 0;
  uint32_t from_qp = 0;
  uint32_t to_qp = 0;
  uint32_t cable = 0;
  uint32_t to_psn = 0;
  uint32_t flags = 0;

  bool proves_secret() const { return (flags & kProvesSecret) != 0; }
  std::array<uint8_t, kBytes> encode() const;
  // InvalidArgument: not weft's magic (a stranger, or garbage), or another
  // protocol version, or flags this version does not know; the message
  // says which.
  static absl::StatusOr<Hello> decode(std::span<const uint8_t> bytes);
};

// What the fabric's shared-secret proofs cover: the connector initiates.
// REQUIRES: each nonce holds kSecretNonceBytes.
net::ProofTranscript fabric_transcript(uint32_t connector_rank,
                                       uint32_t listener_rank,
                                       std::span<const uint8_t> connector_nonce,
                                       std::span<const uint8_t> listener_nonce);

// OK when `hello`'s flags agree with whether this rank holds a secret;
// otherwise PermissionDenied naming `peer` and saying what to set.
absl::Status check_secret_flag(const Hello& hello, bool have_secret,
                               std::string_view peer);

// One SEND: `length` payload bytes follow.
struct MessageHeader {
  static constexpr size_t kBytes = 12;
  // Flags: the SEND carries an immediate (verbs' SEND_WITH_IMM).
  static constexpr uint32_t kHasImmediate = 1;
  // Flags: no payload; the sender destroyed its endpoint on purpose.
  static constexpr uint32_t kGoodbye = 2;

  uint32_t length = 0;
  uint32_t immediate = 0;
  bool has_immediate = true;
  bool goodbye = false;

  std::array<uint8_t, kBytes> encode() const;
  // InvalidArgument on flags this version does not know.
  static absl::StatusOr<MessageHeader> decode(std::span<const uint8_t> bytes);
};

}  // namespace weft::tcp::internal

#endif  // WEFT_TCP_INTERNAL_WIRE_H_
