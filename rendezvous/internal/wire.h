// The TCP bootstrap's wire format: versioned, length-prefixed, bounded
// messages. Every function here is pure (bytes in, bytes or a typed error
// out) so the decoders can be fuzzed without sockets.
//
// A message is a 12-byte header followed by a body, all big-endian:
//
//   magic   u32  "WEFT" (0x57454654): rejects peers that are not weft
//   version u16  kWireVersion: checked right after the magic, before anything
//                else, so a later version may change everything after it
//   type    u16  MessageType
//   length  u32  body bytes; at most max_body_bytes(type)
//
// Bodies:
//   kHello       rank u32, size u32                      (peer -> rank 0)
//   kWelcome     empty: the whole group has joined       (rank 0 -> peer)
//   kContribute  round u64, blob bytes                   (peer -> rank 0)
//   kGathered    round u64, count u32, count x {len u32, bytes}
//                                                        (rank 0 -> peer)
//   kAbort       status code u32, culprit rank u32, reason text
//                (rank 0 -> peer: the group has failed, and why)
//
// With a shared secret (net/secret_proof.h) a rank says kSecretHello
// instead of kHello, and proves the secret before rank 0 admits it:
//   kSecretHello rank u32, size u32, nonce[32]               (peer -> rank 0)
//   kChallenge   nonce[32], rank 0's proof[32]               (rank 0 -> peer)
//   kProof       the peer's proof[32], once rank 0's held    (peer -> rank 0)
// The peer initiates: its proofs are Prover::kInitiator's, rank 0's
// Prover::kResponder's, over kSecretProofContext, both ranks and nonces.
#ifndef WEFT_RENDEZVOUS_INTERNAL_WIRE_H_
#define WEFT_RENDEZVOUS_INTERNAL_WIRE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/bootstrap.h"
#include "net/secret_proof.h"

namespace weft::rendezvous::internal {

inline constexpr uint32_t kWireMagic = 0x5745'4654;  // "WEFT"
// 2: the shared-secret messages.
inline constexpr uint16_t kWireVersion = 2;
// Context of the bootstrap's shared-secret proofs.
inline constexpr std::string_view kSecretProofContext = "weft bootstrap 2";
inline constexpr size_t kWireHeaderBytes = 12;

// Hard limit on one gathered message's body: the sum of every rank's blob
// plus framing. 64 ranks at Bootstrap::kMaxBlobBytes each fit; a group whose
// contributions add up to more gets ResourceExhausted before anything is
// sent. Bounds what a peer can make us allocate.
inline constexpr uint32_t kMaxGatheredBodyBytes = 64u << 20;
// Longest reason text an abort carries (longer ones are cut).
inline constexpr uint32_t kMaxAbortTextBytes = 4096;

enum class MessageType : uint16_t {
  kHello = 1,
  kWelcome = 2,
  kContribute = 3,
  kGathered = 4,
  kAbort = 5,
  kSecretHello = 6,
  kChallenge = 7,
  kProof = 8,
};

// "hello", "welcome", ...; "unknown" for values outside the enum.
std::string_view message_type_name(MessageType type);

// Largest body a message of `type` may carry; 0 for unknown types.
uint32_t max_body_bytes(MessageType type);

struct WireHeader {
  MessageType type = MessageType::kHello;
  uint32_t body_bytes = 0;
};

// True when the first four of `bytes` are kWireMagic (false when fewer
// than four have arrived).
bool has_wire_magic(std::span<const uint8_t> bytes);

// Decodes the first kWireHeaderBytes of `bytes`. Errors, checked in this
// order: OutOfRange (fewer than kWireHeaderBytes bytes: truncated),
// InvalidArgument "not a weft bootstrap peer" (bad magic),
// FailedPrecondition (another version), InvalidArgument (unknown type),
// ResourceExhausted (body longer than max_body_bytes(type)).
absl::StatusOr<WireHeader> decode_header(std::span<const uint8_t> bytes);

struct WireMessage {
  WireHeader header;
  std::vector<uint8_t> body;  // a copy: outlives the decoded bytes
};

// Decodes exactly one whole message: the header, then a body of the
// announced length. OutOfRange if the body is cut short, InvalidArgument if
// bytes follow it.
absl::StatusOr<WireMessage> decode_message(std::span<const uint8_t> bytes);

struct Hello {
  uint32_t rank = 0;
  uint32_t size = 0;
};

struct SecretHello {
  uint32_t rank = 0;
  uint32_t size = 0;
  net::SecretNonce nonce{};
};

struct Challenge {
  net::SecretNonce nonce{};
  net::SecretProof proof{};
};

struct Contribution {
  uint64_t round = 0;
  std::vector<uint8_t> blob;
};

struct Gathered {
  uint64_t round = 0;
  std::vector<std::vector<uint8_t>> blobs;  // indexed by rank
};

struct Abort {
  absl::StatusCode code = absl::StatusCode::kUnknown;
  uint32_t culprit = 0xffff'ffffu;  // the rank at fault, or all ones
  std::string reason;
};

// Whole messages (header and body), ready to send.
std::vector<uint8_t> encode_hello(const Hello& hello);
std::vector<uint8_t> encode_secret_hello(const SecretHello& hello);
std::vector<uint8_t> encode_challenge(const Challenge& challenge);
std::vector<uint8_t> encode_proof(const net::SecretProof& proof);
std::vector<uint8_t> encode_welcome();
// REQUIRES: blob.size() <= Bootstrap::kMaxBlobBytes.
std::vector<uint8_t> encode_contribution(uint64_t round,
                                         std::span<const uint8_t> blob);
// ResourceExhausted when the blobs and their framing exceed
// kMaxGatheredBodyBytes.
absl::StatusOr<std::vector<uint8_t>> encode_gathered(
    uint64_t round, const std::vector<std::vector<uint8_t>>& blobs);
// Reasons longer than kMaxAbortTextBytes are cut.
std::vector<uint8_t> encode_abort(const Abort& abort);

// Body decoders: InvalidArgument naming the message and what is wrong when
// the body's length or contents are inconsistent.
absl::StatusOr<Hello> decode_hello(std::span<const uint8_t> body);
absl::StatusOr<SecretHello> decode_secret_hello(std::span<const uint8_t> body);
absl::StatusOr<Challenge> decode_challenge(std::span<const uint8_t> body);
absl::StatusOr<net::SecretProof> decode_proof(std::span<const uint8_t> body);
absl::Status decode_welcome(std::span<const uint8_t> body);
absl::StatusOr<Contribution> decode_contribution(std::span<const uint8_t> body);
absl::StatusOr<Gathered> decode_gathered(std::span<const uint8_t> body);
absl::StatusOr<Abort> decode_abort(std::span<const uint8_t> body);

}  // namespace weft::rendezvous::internal

#endif  // WEFT_RENDEZVOUS_INTERNAL_WIRE_H_
