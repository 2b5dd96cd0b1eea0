// CheckedPair: an endpoint with sequence numbering and checking attached
// (level 1, "detect"). Sends carry the pair's next sequence number; every
// completion is checked for status and, for receives, sequence, and any
// failure becomes a typed error naming rank, peer and device. Nothing that
// fails a check is handed back as data.
#ifndef WEFT_FABRIC_CHECKED_PAIR_H_
#define WEFT_FABRIC_CHECKED_PAIR_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/errors.h"
#include "fabric/sequence.h"

namespace weft {

// The error for a completion whose status is not success. When the
// endpoint knows why it failed (`reason`, Endpoint::failure()), the error
// has the reason's code and ends with its message: a peer that reset its
// connection is Unavailable naming the peer's address, not a bare status.
absl::Status completion_error(const Completion& completion, ErrorPlace place,
                              const absl::Status& reason = absl::OkStatus());

class CheckedPair {
 public:
  // REQUIRES: `endpoint` outlives this object.
  explicit CheckedPair(Endpoint& endpoint);

  Endpoint& endpoint() { return endpoint_; }
  ErrorPlace place() const;

  absl::Status post_recv(WorkId id, const Frame& frame);
  // Sends with the next sequence number as immediate.
  absl::Status post_send(WorkId id, const Frame& frame, uint32_t length);

  // Polls the endpoint. Returns the completions that passed every check, in
  // order; the first that fails ends the batch with its error (completions
  // before it are still returned through `out`, counted in `*good`).
  absl::Status poll(std::span<Completion> out, size_t* good);

  const SendSequence& send_sequence() const { return send_; }
  const ReceiveChecker& receive_checker() const { return receive_; }

 private:
  absl::Status check(const Completion& c);

  Endpoint& endpoint_;
  SendSequence send_;
  ReceiveChecker receive_;
};

}  // namespace weft

#endif  // WEFT_FABRIC_CHECKED_PAIR_H_
