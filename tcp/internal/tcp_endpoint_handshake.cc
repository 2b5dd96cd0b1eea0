// TcpEndpoint's side of the handshake when it connects: the listener's
// hello and, with a shared secret, its nonce and proof (the listener's
// side is TcpFabric's: tcp_fabric.cc).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/wc_status.h"
#include "net/secret_proof.h"
#include "tcp/internal/tcp_endpoint.h"

namespace weft::tcp::internal {

bool TcpEndpoint::read_hello() {
  const int64_t n = net::read_some(
      socket_.fd(),
      std::as_writable_bytes(std::span(hello_in_)
                                 .subspan(hello_in_filled_)
                                 .first(hello_in_wanted_ - hello_in_filled_)));
  if (n <= 0) {
    if (n != -EAGAIN) {
      fail(WcStatus::kRemAbortErr,
           refuse(absl::StatusCode::kUnavailable, ErrorCause::kPeerUnavailable,
                  absl::StrFormat("%s closed the connection before its hello "
                                  "(%s): it refused this rank; see its log",
                                  peer_text(),
                                  n == 0 ? "end of stream"
                                         : errno_text(static_cast<int>(-n)))));
    }
    return false;
  }
  hello_in_filled_ += static_cast<size_t>(n);
  if (hello_in_filled_ < hello_in_wanted_) return true;
  return hello_in_wanted_ == Hello::kBytes ? check_hello()
                                           : check_listener_proof();
}

bool TcpEndpoint::check_hello() {
  absl::StatusOr<Hello> hello =
      Hello::decode(std::span(hello_in_).first(Hello::kBytes));
  std::string why;
  if (!hello.ok()) {
    why = std::string(hello.status().message());
  } else if (absl::Status s =
                 check_secret_flag(*hello, !setup_.secret.empty(), "it");
             !s.ok()) {
    why = std::string(s.message());
  } else if (hello->from_rank != setup_.info.peer ||
             hello->to_rank != setup_.info.rank ||
             hello->from_qp != peer_.qp_num || hello->to_qp != setup_.qp_num ||
             hello->to_psn != setup_.psn) {
    why = absl::StrFormat(
        "its hello is from rank %u endpoint %u for rank %u endpoint %u, not "
        "the endpoint this one connected to",
        hello->from_rank, hello->from_qp, hello->to_rank, hello->to_qp);
  }
  if (!why.empty()) {
    fail(WcStatus::kRemInvReqErr,
         refuse(absl::StatusCode::kPermissionDenied, ErrorCause::kFabric,
                absl::StrFormat("refused %s: %s", peer_text(), why)));
    return false;
  }
  if (hello->proves_secret()) {  // its nonce and proof follow
    hello_in_wanted_ = Hello::kMaxHandshakeBytes;
    return true;
  }
  hello_in_expected_ = false;
  return true;
}

bool TcpEndpoint::check_listener_proof() {
  const std::span<const uint8_t> rest =
      std::span(hello_in_).subspan(Hello::kBytes);
  const net::ProofTranscript transcript =
      fabric_transcript(setup_.info.rank, setup_.info.peer, nonce_,
                        rest.first(net::kSecretNonceBytes));
  if (!net::proof_holds(setup_.secret, transcript, net::Prover::kResponder,
                        rest.subspan(net::kSecretNonceBytes))) {
    fail(WcStatus::kRemInvReqErr,
         refuse(absl::StatusCode::kPermissionDenied, ErrorCause::kFabric,
                absl::StrFormat("refused %s: %s", peer_text(),
                                net::secret_mismatch_text(
                                    net::SecretMismatch::kWrongProof, "it"))));
    return false;
  }
  const net::SecretProof ours =
      net::prove(setup_.secret, transcript, net::Prover::kInitiator);
  std::copy(ours.begin(), ours.end(), hello_out_.begin());
  hello_out_bytes_ = hello_out_left_ = ours.size();
  hello_in_expected_ = false;  // releases the sends held meanwhile
  write_pending();
  return state_ == State::kOpen;
}

}  // namespace weft::tcp::internal
