// RelayEndpoint: the endpoint of a lane whose only cable stopped answering
// (lane.h, "Relaying"). It keeps the fabric contract (fabric/endpoint.h)
// the lane relies on, so the lane's own protocol (numbering, windows,
// acknowledgements, retransmission) runs over it unchanged; only the wire
// path differs: a send goes to a relay, another rank that forwards it over
// its own lane to the peer (RelayPath, the Engine), and a frame relayed
// to this side is handed in by the Engine (deliver()).
//
// As a UC queue pair: a send completes once handed to a relay (it may
// still be lost on the way, as on a cable); while no relay has room it
// waits here, in posting order (flush()), so the lane's own pacing holds
// it back as a busy cable would; a frame that finds no receive posted is
// dropped, one longer than the receive completes it with
// IBV_WC_LOC_LEN_ERR; receives are consumed in posting order. Unlike one,
// the path keeps no order (frames take different relays), and the
// completion's immediate is always 0: the lane, which knows it is relayed,
// reads neither.
#ifndef WEFT_COLLECTIVES_ENGINE_RELAY_ENDPOINT_H_
#define WEFT_COLLECTIVES_ENGINE_RELAY_ENDPOINT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/completion.h"
#include "fabric/destination.h"
#include "fabric/endpoint.h"
#include "fabric/slab.h"
#include "fabric/work_id.h"

namespace weft::collectives::internal {

// Where a relayed lane's frames go (the Engine, engine_relays.cc).
class RelayPath {
 public:
  virtual ~RelayPath() = default;
  // Hands `frame` (its header first) for world rank `to` to a relay.
  // False when no relay has room for it now: ask again later.
  virtual bool relay(uint32_t to, std::span<const std::byte> frame) = 0;
};

class RelayEndpoint final : public Endpoint {
 public:
  // REQUIRES: `path` outlives the endpoint; 1 <= max_parts <= kMaxParts.
  RelayEndpoint(EndpointInfo info, size_t max_parts, RelayPath& path);

  const EndpointInfo& info() const override { return info_; }
  // Nothing to trade: the relays are the group's own lanes.
  absl::StatusOr<Destination> destination() const override;
  absl::Status connect(const Destination& peer) override;
  size_t max_parts() const override { return max_parts_; }
  absl::Status post_recv(WorkId id, const Frame& frame) override;
  absl::Status post_recv_parts(WorkId id,
                               std::span<const Frame> parts) override;
  absl::Status post_send(WorkId id, const Frame& frame, uint32_t length,
                         uint32_t immediate) override;
  absl::Status post_send_parts(WorkId id, std::span<const Frame> parts,
                               std::span<const uint32_t> lengths,
                               uint32_t immediate) override;
  absl::Status move_to_error() override;
  absl::StatusOr<size_t> poll(std::span<Completion> out) override;

  // Hands the sends waiting for a relay on, oldest first, while relays
  // take them (the Engine, once per step). Whether any went.
  bool flush();
  // A frame relayed to this side arrived (the Engine): into the oldest
  // posted receive, or dropped when none is posted. False when dropped.
  bool deliver(std::span<const std::byte> frame);
  // Frames handed to relays and delivered through them so far, and those
  // lost here (no receive posted, or one too short).
  uint64_t frames_sent() const { return frames_sent_; }
  uint64_t frames_delivered() const { return frames_delivered_; }
  uint64_t frames_lost() const { return frames_lost_; }

 private:
  struct Receive {
    WorkId id;
    std::array<Frame, kMaxParts> parts;
    size_t count = 0;
  };
  // A send's parts stay the lane's until it completes.
  struct Send {
    WorkId id;
    std::array<Frame, kMaxParts> parts;
    std::array<uint32_t, kMaxParts> lengths{};
    size_t count = 0;
  };
  absl::Status refuse_if_failed() const;

  EndpointInfo info_;
  size_t max_parts_;
  RelayPath& path_;
  bool failed_ = false;
  std::deque<Receive> receives_;
  std::deque<Send> sends_;
  std::deque<Completion> done_;
  std::vector<std::byte> scratch_;  // a send gathered into one frame
  uint64_t frames_sent_ = 0;
  uint64_t frames_delivered_ = 0;
  uint64_t frames_lost_ = 0;
};

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_ENGINE_RELAY_ENDPOINT_H_
