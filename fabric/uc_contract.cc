#include "fabric/uc_contract.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "fabric/assert.h"
#include "fabric/errors.h"

namespace weft {
namespace {

ErrorPlace place_of(const EndpointInfo& info, ErrorCause cause) {
  return ErrorPlace{info.rank, info.peer, info.device, cause};
}

absl::Status bad_input(absl::StatusCode code, const EndpointInfo& info,
                       std::string_view message) {
  return make_error(code, place_of(info, ErrorCause::kBadInput), message);
}

const char* post_name(bool send) { return send ? "send" : "receive"; }

// "the send frame" or "send part 1", for messages about one frame.
std::string frame_name(bool send, int part) {
  if (part < 0) return absl::StrFormat("the %s frame", post_name(send));
  return absl::StrFormat("%s part %d", post_name(send), part);
}

const char* state_name(UcContract::State state) {
  switch (state) {
    case UcContract::State::kInit:
      return "INIT";
    case UcContract::State::kRts:
      return "RTS";
    case UcContract::State::kError:
      return "ERROR";
  }
  return "?";
}

}  // namespace

void UcContract::connected() {
  WEFT_ASSERT(state_ == State::kInit, "connected() outside INIT");
  state_ = State::kRts;
}

void UcContract::check_invariants() const {
  WEFT_ASSERT(sends_ <= Endpoint::kMaxSends && recvs_ <= Endpoint::kMaxRecvs,
              "more work requests outstanding than an endpoint allows");
}

absl::Status UcContract::refuse_shape(const EndpointInfo& info,
                                      size_t max_parts, size_t parts,
                                      size_t lengths, bool send) {
  if (parts >= 1 && parts <= Endpoint::kMaxParts &&
      (!send || lengths == parts)) {
    return make_error(
        absl::StatusCode::kUnimplemented, place_of(info, ErrorCause::kResource),
        absl::StrFormat("a %s of %u parts, but this endpoint takes %u per "
                        "message (max_parts(); on verbs the device's "
                        "max_sge); post one frame at a time here",
                        post_name(send), parts, max_parts));
  }
  if (!send) {
    return bad_input(absl::StatusCode::kInvalidArgument, info,
                     absl::StrFormat("a receive of %u parts; give 1 to %u "
                                     "parts",
                                     parts, Endpoint::kMaxParts));
  }
  return bad_input(absl::StatusCode::kInvalidArgument, info,
                   absl::StrFormat("a send of %u parts and %u lengths; give "
                                   "1 to %u parts, each with its length",
                                   parts, lengths, Endpoint::kMaxParts));
}

absl::Status UcContract::refuse_kind(const EndpointInfo& info, WorkId id,
                                     bool send) {
  return bad_input(
      absl::StatusCode::kInvalidArgument, info,
      absl::StrFormat("work id %s posted as a %s; post sends with send ids "
                      "(WorkKind::kSend) and receives with receive ids "
                      "(WorkKind::kRecv)",
                      id.to_string(), post_name(send)));
}

absl::Status UcContract::refuse_memory(const EndpointInfo& info, bool send,
                                       int part) {
  return bad_input(
      absl::StatusCode::kInvalidArgument, info,
      absl::StrFormat("%s does not lie in a slab of rank %u's fabric "
                      "(create_slab) or in memory registered with it "
                      "(register_memory); register the memory first",
                      frame_name(send, part), info.rank));
}

absl::Status UcContract::refuse_length(const EndpointInfo& info, int part,
                                       uint32_t length, uint32_t frame_bytes) {
  return bad_input(
      absl::StatusCode::kInvalidArgument, info,
      absl::StrFormat("%s: %u bytes from a %u-byte frame; send at most the "
                      "frame's bytes",
                      frame_name(true, part), length, frame_bytes));
}

absl::Status UcContract::refuse_total(const EndpointInfo& info,
                                      uint64_t total) {
  return bad_input(absl::StatusCode::kInvalidArgument, info,
                   absl::StrFormat("a send of %u bytes in parts; a message "
                                   "carries at most %u",
                                   total, kMaxMessageBytes));
}

absl::Status UcContract::refuse_not_connected(const EndpointInfo& info) {
  return bad_input(absl::StatusCode::kFailedPrecondition, info,
                   "a send before connect(): the queue pair is not ready to "
                   "send; connect() it first");
}

absl::Status UcContract::refuse_connect(const EndpointInfo& info) const {
  return bad_input(
      absl::StatusCode::kFailedPrecondition, info,
      absl::StrFormat("connect() on a queue pair in %s; an endpoint "
                      "connects once, right after open()",
                      state_name(state_)));
}

absl::Status UcContract::refuse_outstanding(const EndpointInfo& info,
                                            bool send) const {
  return make_error(
      absl::StatusCode::kResourceExhausted,
      place_of(info, ErrorCause::kResource),
      absl::StrFormat("%u %ss are outstanding, the most a queue pair allows "
                      "(Endpoint::%s); poll for completions before posting "
                      "more",
                      send ? sends_ : recvs_, post_name(send),
                      send ? "kMaxSends" : "kMaxRecvs"));
}

}  // namespace weft
