#include "fabric/checked_pair.h"

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace weft {

absl::Status completion_error(const Completion& completion, ErrorPlace place,
                              const absl::Status& reason) {
  place.cause = ErrorCause::kCompletionError;
  std::string message = absl::StrFormat(
      "%s completed with %s (status %d); the data was not used and the queue "
      "pair is now in the error state",
      completion.id.to_string(), completion.status_name,
      static_cast<int>(completion.status));
  if (reason.ok()) {
    return make_error(absl::StatusCode::kDataLoss, place, message);
  }
  // The reason names the same place: keep its words, not its prefix.
  std::string why(reason.message());
  if (std::optional<ErrorPlace> at = error_place(reason); at.has_value()) {
    const std::string prefix = error_prefix(*at);
    if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
  }
  return make_error(reason.code(), place, absl::StrCat(message, ": ", why));
}

CheckedPair::CheckedPair(Endpoint& endpoint) : endpoint_(endpoint) {}

ErrorPlace CheckedPair::place() const {
  const EndpointInfo& info = endpoint_.info();
  ErrorPlace place;
  place.rank = info.rank;
  place.peer = info.peer;
  place.device = info.device;
  return place;
}

absl::Status CheckedPair::post_recv(WorkId id, const Frame& frame) {
  return endpoint_.post_recv(id, frame);
}

absl::Status CheckedPair::post_send(WorkId id, const Frame& frame,
                                    uint32_t length) {
  const uint32_t sequence = send_.peek();
  absl::Status s = endpoint_.post_send(id, frame, length, sequence);
  if (s.ok()) send_.take();
  return s;
}

absl::Status CheckedPair::check(const Completion& c) {
  if (!c.ok()) return completion_error(c, place());
  if (c.id.kind != WorkKind::kRecv) return absl::OkStatus();
  if (!c.has_immediate) {
    ErrorPlace p = place();
    p.cause = ErrorCause::kSequence;
    return make_error(absl::StatusCode::kDataLoss, p,
                      absl::StrFormat("%s arrived without a sequence number "
                                      "(no immediate data); the peer is not "
                                      "speaking weft's protocol",
                                      c.id.to_string()));
  }
  const SequenceCheck seq = receive_.check(c.immediate);
  if (!seq.ok()) return sequence_error(seq, place());
  return absl::OkStatus();
}

absl::Status CheckedPair::poll(std::span<Completion> out, size_t* good) {
  *good = 0;
  absl::StatusOr<size_t> n = endpoint_.poll(out);
  if (!n.ok()) return n.status();
  for (size_t i = 0; i < *n; ++i) {
    absl::Status s = check(out[i]);
    if (!s.ok()) return s;
    ++*good;
  }
  return absl::OkStatus();
}

}  // namespace weft
