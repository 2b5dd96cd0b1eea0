// Proving a shared secret (WEFT_SECRET) when two weft processes connect, so
// a process that does not hold it never becomes part of a group. Both
// handshakes that use it (the TCP fabric's and the TCP bootstrap's) run the
// same mutual challenge-response:
//
//   initiator -> responder   its fresh nonce
//   responder -> initiator   its fresh nonce, prove(kResponder)
//   initiator -> responder   prove(kInitiator), once the responder's checked
//
// A proof is HMAC-SHA-256 under the secret of the handshake's context, both
// ranks, both nonces and who proves, so a proof recorded from one
// connection fails on any other (fresh nonces), and one side's proof cannot
// be sent back as the other's (the prover is in it). The secret never
// crosses the wire. Nothing is encrypted: this proves membership only.
#ifndef WEFT_NET_SECRET_PROOF_H_
#define WEFT_NET_SECRET_PROOF_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "net/hmac_sha256.h"

namespace weft::net {

inline constexpr size_t kSecretNonceBytes = 32;
inline constexpr size_t kSecretProofBytes = kSha256Bytes;
using SecretNonce = std::array<uint8_t, kSecretNonceBytes>;
using SecretProof = Sha256Digest;

// What the operator is told on every refusal over the secret.
inline constexpr std::string_view kSecretAdvice =
    "set the same WEFT_SECRET on every rank";

// Fresh random bytes from the operating system (getentropy, falling back to
// /dev/urandom). Unavailable when neither gives any.
absl::StatusOr<SecretNonce> fresh_nonce();

enum class Prover : uint8_t { kInitiator = 1, kResponder = 2 };

// Everything a proof covers besides the secret and the prover.
struct ProofTranscript {
  std::string_view context;  // which handshake, e.g. "weft tcp fabric 2"
  uint32_t initiator_rank = 0;
  uint32_t responder_rank = 0;
  SecretNonce initiator_nonce{};
  SecretNonce responder_nonce{};
};

// REQUIRES: !secret.empty(); transcript.context is at most 255 bytes.
SecretProof prove(std::string_view secret, const ProofTranscript& transcript,
                  Prover prover);
// Whether `proof` is prove(secret, transcript, prover), compared in constant
// time.
bool proof_holds(std::string_view secret, const ProofTranscript& transcript,
                 Prover prover, std::span<const uint8_t> proof);

// Why a connection was refused over the secret; `peer` names it ("rank 1 at
// 127.0.0.1:5000", "the peer at 10.0.0.2:41234").
enum class SecretMismatch {
  kPeerHasNone,        // we hold a secret, the peer proves none
  kOnlyPeerHasOne,     // the peer proves a secret, we hold none
  kWrongProof,         // its proof does not hold under our secret
  kClosedBeforeProof,  // it left before proving (it refused ours)
};
// One sentence naming `peer`, what was wrong and kSecretAdvice; never the
// secret.
std::string secret_mismatch_text(SecretMismatch mismatch,
                                 std::string_view peer);

}  // namespace weft::net

#endif  // WEFT_NET_SECRET_PROOF_H_
