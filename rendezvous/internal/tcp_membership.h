// Internal to the TCP bootstrap: a joining rank's side of the shared-secret
// handshake with rank 0 (rendezvous/internal/wire.h has the messages,
// net/secret_proof.h the proof). Rank 0's side is part of forming the
// group (tcp_rendezvous.cc).
#ifndef WEFT_RENDEZVOUS_INTERNAL_TCP_MEMBERSHIP_H_
#define WEFT_RENDEZVOUS_INTERNAL_TCP_MEMBERSHIP_H_

#include <cstdint>

#include "absl/status/status.h"
#include "fabric/clock.h"
#include "rendezvous/config.h"
#include "rendezvous/internal/tcp_rendezvous.h"

namespace weft::rendezvous::internal {

// Says a secret hello on `ch` (fresh to rank 0), checks rank 0's proof in
// its challenge and sends ours, all before `deadline_ns`. PermissionDenied
// naming rank 0's address when its proof is wrong; rank 0's abort (it has
// no secret, or refused ours) as abort_from() words it.
// REQUIRES: !config.secret.empty().
absl::Status prove_membership(uint32_t self, TcpChannel& ch,
                              const Config& config, TimeNs deadline_ns,
                              const Clock& clock);

}  // namespace weft::rendezvous::internal

#endif  // WEFT_RENDEZVOUS_INTERNAL_TCP_MEMBERSHIP_H_
