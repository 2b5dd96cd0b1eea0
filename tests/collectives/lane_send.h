// How the Lane tests send and consume data frames: as an OpRunner does,
// through the lane's runner view (collectives/engine/op_lane.h).
#ifndef WEFT_TESTS_COLLECTIVES_LANE_SEND_H_
#define WEFT_TESTS_COLLECTIVES_LANE_SEND_H_

#include <cstddef>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/lane.h"
#include "collectives/engine/op_lane.h"
#include "fabric/slab.h"

namespace weft::collectives::internal::lane_test {

// Offers `frame` to `lane` (OpLane::try_send).
inline absl::StatusOr<SendOutcome> try_send(Lane& lane,
                                            const DataFrame& frame) {
  return OpLane(&lane).try_send([&] { return frame; });
}

// Sends one data frame of `payload` (lying in the registration
// `registered`, or nullptr) on `lane`: OK once sent, Unavailable when the
// lane had no room (nothing sent), the lane's error otherwise.
inline absl::Status send_data(Lane& lane, std::span<const std::byte> payload,
                              const Slab* registered = nullptr) {
  const absl::StatusOr<SendOutcome> sent =
      try_send(lane, DataFrame{.payload = payload, .registered = registered});
  if (!sent.ok()) return sent.status();
  if (*sent == SendOutcome::kNoRoom) {
    return absl::UnavailableError("the lane had no room to send");
  }
  return absl::OkStatus();
}

// Consumes the lane's oldest arrival without using its payload.
inline absl::Status consume_front(Lane& lane) {
  return OpLane(&lane).consume_front(
      [](std::span<const std::byte>) { return absl::OkStatus(); });
}

}  // namespace weft::collectives::internal::lane_test

#endif  // WEFT_TESTS_COLLECTIVES_LANE_SEND_H_
