#include "net/secret_proof.h"

#include <fcntl.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <sys/random.h>  // getentropy on macOS
#endif

#include <cassert>
#include <cerrno>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"

namespace weft::net {
namespace {

bool read_urandom(std::span<uint8_t> into) {
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t got = 0;
  while (got < into.size()) {
    const ssize_t n = ::read(fd, into.data() + got, into.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  return got == into.size();
}

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<uint8_t>(v >> shift));
  }
}

}  // namespace

absl::StatusOr<SecretNonce> fresh_nonce() {
  SecretNonce nonce;
  if (::getentropy(nonce.data(), nonce.size()) == 0) return nonce;
  const int getentropy_errno = errno;
  if (read_urandom(nonce)) return nonce;
  return absl::UnavailableError(absl::StrFormat(
      "no random bytes for the shared-secret handshake: getentropy failed "
      "(%s) and /dev/urandom could not be read",
      errno_text(getentropy_errno)));
}

SecretProof prove(std::string_view secret, const ProofTranscript& transcript,
                  Prover prover) {
  assert(!secret.empty() && transcript.context.size() <= 255);
  // context length, context, ranks, nonces, prover: fixed widths apart from
  // the length-prefixed context, so no two transcripts encode alike.
  std::vector<uint8_t> message;
  message.push_back(static_cast<uint8_t>(transcript.context.size()));
  message.insert(message.end(), transcript.context.begin(),
                 transcript.context.end());
  put32(message, transcript.initiator_rank);
  put32(message, transcript.responder_rank);
  message.insert(message.end(), transcript.initiator_nonce.begin(),
                 transcript.initiator_nonce.end());
  message.insert(message.end(), transcript.responder_nonce.begin(),
                 transcript.responder_nonce.end());
  message.push_back(static_cast<uint8_t>(prover));
  const auto* key = reinterpret_cast<const uint8_t*>(secret.data());
  return hmac_sha256({key, secret.size()}, message);
}

bool proof_holds(std::string_view secret, const ProofTranscript& transcript,
                 Prover prover, std::span<const uint8_t> proof) {
  return equal_in_constant_time(prove(secret, transcript, prover), proof);
}

std::string secret_mismatch_text(SecretMismatch mismatch,
                                 std::string_view peer) {
  switch (mismatch) {
    case SecretMismatch::kPeerHasNone:
      return absl::StrFormat(
          "%s proves no shared secret, but this rank requires one "
          "(WEFT_SECRET is set here); %s",
          peer, kSecretAdvice);
    case SecretMismatch::kOnlyPeerHasOne:
      return absl::StrFormat(
          "%s proves a shared secret, but this rank has none (WEFT_SECRET is "
          "unset here); %s",
          peer, kSecretAdvice);
    case SecretMismatch::kWrongProof:
      return absl::StrFormat(
          "the proof of the shared secret from %s is wrong (another "
          "WEFT_SECRET, or a replayed or forged handshake); %s",
          peer, kSecretAdvice);
    case SecretMismatch::kClosedBeforeProof:
      return absl::StrFormat(
          "%s closed the connection before proving the shared secret (it "
          "refused this rank's proof: another WEFT_SECRET?); %s",
          peer, kSecretAdvice);
  }
  return std::string(kSecretAdvice);
}

}  // namespace weft::net
