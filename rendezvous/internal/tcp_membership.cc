#include "rendezvous/internal/tcp_membership.h"

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"
#include "net/secret_proof.h"
#include "net/stream.h"
#include "rendezvous/internal/message_reader.h"
#include "rendezvous/internal/wire.h"

namespace weft::rendezvous::internal {

absl::Status prove_membership(uint32_t self, TcpChannel& ch,
                              const Config& config, TimeNs deadline_ns,
                              const Clock& clock) {
  absl::StatusOr<net::SecretNonce> nonce = net::fresh_nonce();
  if (!nonce.ok()) return channel_error(self, ch, "joining", nonce.status());
  absl::Status said = net::send_all(
      ch.socket.fd(), encode_secret_hello({self, config.size, *nonce}),
      deadline_ns, clock);
  if (!said.ok()) return channel_error(self, ch, "saying hello", said);
  absl::Status got =
      receive_message(ch.socket.fd(), ch.reader, deadline_ns, clock);
  if (!got.ok()) return channel_error(self, ch, "proving the secret", got);
  const MessageType type = ch.reader.header().type;
  if (type == MessageType::kAbort) return abort_from(self, ch, "joining");
  absl::StatusOr<Challenge> challenge =
      type == MessageType::kChallenge
          ? decode_challenge(ch.reader.body())
          : absl::InvalidArgumentError(absl::StrFormat(
                "expected a challenge, got a %s", message_type_name(type)));
  ch.reader.reset();
  if (!challenge.ok()) {
    return channel_error(self, ch, "proving the secret", challenge.status());
  }
  const net::ProofTranscript transcript{kSecretProofContext, self, 0, *nonce,
                                        challenge->nonce};
  if (!net::proof_holds(config.secret, transcript, net::Prover::kResponder,
                        challenge->proof)) {
    return make_error(absl::StatusCode::kPermissionDenied,
                      ErrorPlace{self, 0, "", ErrorCause::kMismatch},
                      net::secret_mismatch_text(
                          net::SecretMismatch::kWrongProof, describe(ch)));
  }
  said = net::send_all(ch.socket.fd(),
                       encode_proof(net::prove(config.secret, transcript,
                                               net::Prover::kInitiator)),
                       deadline_ns, clock);
  if (!said.ok()) return channel_error(self, ch, "proving the secret", said);
  return absl::OkStatus();
}

}  // namespace weft::rendezvous::internal
