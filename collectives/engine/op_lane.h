// OpLane: what an operation runner (op_runner.h) sees of a lane. Each
// decision the runner takes about a frame is one question, and what the
// frame needs is passed in: try_send() sends a DataFrame (its header's
// fields and its payload, registered or not) or says there is no room;
// arrival() shows the next header to check; consume_front() hands the
// oldest payload to the runner's copy or reduction and lets it go;
// drained() says whether the operation has anything left in flight on
// the lane. The rest is user memory (what the lane may still read or
// receive into) and what reports need. The engine's side of a lane
// (completions, timers, liveness, aborts) stays out of sight, and the
// lane's per-operation methods are private to this view. A view: cheap
// to copy, owns nothing.
#ifndef WEFT_COLLECTIVES_ENGINE_OP_LANE_H_
#define WEFT_COLLECTIVES_ENGINE_OP_LANE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/frame_header.h"
#include "collectives/engine/lane.h"
#include "fabric/errors.h"
#include "fabric/slab.h"

namespace weft::collectives::internal {

class OpLane {
 public:
  // REQUIRES: `lane` outlives the view.
  explicit OpLane(Lane* lane) : lane_(lane) {}

  // The lane's position in its engine's list (Lane::index()): how the
  // runner names a lane to the engine.
  uint32_t index() const { return lane_->index(); }

  // ---- Per frame.

  // Sends the frame `describe()` returns (a DataFrame), or (kNoRoom)
  // sends nothing for want of a send frame, a credit or room in the send
  // queue (Lane::try_send). describe() runs only when the frame goes: a
  // runner asks on every step while its peer is slow.
  template <typename Describe>
  absl::StatusOr<SendOutcome> try_send(Describe&& describe) {
    return lane_->try_send(std::forward<Describe>(describe));
  }
  // The header of arrival `i` not consumed yet, oldest first (data frames
  // in sequence order); nullptr when fewer have arrived.
  const FrameHeader* arrival(size_t i) const {
    return i < lane_->inbox_size() ? &lane_->inbox(i).header : nullptr;
  }
  // Hands the oldest arrival's payload to `use` (absl::Status(std::span<
  // const std::byte>)) and, when that succeeded, lets it go (its receive
  // is posted again). REQUIRES: arrival(0) != nullptr.
  template <typename Use>
  absl::Status consume_front(Use&& use) {
    return lane_->consume_front(std::forward<Use>(use));
  }
  // Nothing the operation sent is in flight, no acknowledgement is owed
  // to the peer and, with `until_consumed` (an operation that only
  // sends), the peer consumed every data frame.
  bool drained(bool until_consumed) const {
    return lane_->data_sends_in_flight() == 0 && !lane_->report_owed() &&
           (!until_consumed || lane_->all_data_consumed());
  }

  // ---- User memory (registered buffers; docs/architecture.md).

  // Stops reading [begin, end) of user memory (Lane::detach); false while
  // a send from there has not completed. {nullptr, nullptr}: all of it.
  bool detach(const std::byte* begin, const std::byte* end) {
    return lane_->detach(begin, end);
  }
  // Receives into user memory: frames[i] for data frame first_seq + i
  // (Lane::receive_into), more once a gate opens (receive_also_into);
  // stop_receiving_into() returns how many such receives are still
  // posted.
  void receive_into(uint32_t first_seq, std::vector<Frame> frames) {
    lane_->receive_into(first_seq, std::move(frames));
  }
  void receive_also_into(uint32_t first_seq, std::span<const Frame> frames) {
    lane_->receive_also_into(first_seq, frames);
  }
  uint32_t stop_receiving_into() { return lane_->stop_receiving_into(); }
  // The payload bytes a receive holds, and the number of the next data
  // frame to be consumed.
  uint32_t payload_room() const { return lane_->payload_room(); }
  uint32_t data_consumed() const { return lane_->data_consumed(); }

  // ---- For reports: whom the operation waits on, and why.

  uint32_t peer() const { return lane_->peer(); }
  ErrorPlace place(ErrorCause cause) const { return lane_->place(cause); }
  bool peer_departed() const { return lane_->peer_departed(); }
  bool can_send_data() const { return lane_->can_send_data(); }
  bool all_data_consumed() const { return lane_->all_data_consumed(); }
  std::string describe() const { return lane_->describe(); }

 private:
  Lane* lane_;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_OP_LANE_H_
