// Lane: the engine's channel to one peer over one cable. It owns the
// endpoint, the pair's sequence numbers, the receive and send frames carved
// from the group's slab, and flow control:
//
//  - Receives: `depth` frames stay posted. Every completion is checked for
//    status, then sequence number, then header, before a byte is used.
//    Data frames wait in the inbox until the running operation consumes
//    them; only then is the receive posted again.
//  - Credits: a sender may only send into a receive the peer has posted
//    (UC drops anything else). Each side starts with `depth` credits and
//    learns of re-posted receives from the `reposts` count every frame
//    carries. Data needs two credits, so the last one is kept for a credit
//    report: a report is sent once `depth / 2` re-posts are unreported, when
//    the peer asked for one (kFlagReportNow: acknowledge my last frame), or
//    when this rank waits for the peer's acknowledgement; never with
//    nothing new to report. A sender short of credits never prompts: its
//    peer has then at least depth - 1 unreported re-posts, over the
//    threshold, and a prompt would spend the credit kept for reports.
//  - Acknowledgement: every frame also carries how many data frames this
//    side has consumed, so a sender knows when its frames were checked.
//  - Abort: a best-effort frame telling the peer this group failed, with
//    the cause, the rank where it started, and the message.
#ifndef WEFT_COLLECTIVES_INTERNAL_LANE_H_
#define WEFT_COLLECTIVES_INTERNAL_LANE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "collectives/internal/frame_header.h"
#include "fabric/endpoint.h"
#include "fabric/errors.h"
#include "fabric/sequence.h"
#include "fabric/slab.h"

namespace weft::internal {

struct LaneConfig {
  uint32_t depth = 8;
  uint32_t max_frame_bytes = 512 << 10;

  uint32_t report_threshold() const { return depth / 2; }
  // Bytes of slab one lane needs.
  uint64_t region_bytes() const;
};

inline constexpr uint32_t kMaxAbortText = 448;

class Lane {
 public:
  struct Arrival {
    uint32_t slot = 0;
    FrameHeader header;
  };

  // REQUIRES: [offset, offset + config.region_bytes()) lies in `slab`.
  Lane(std::unique_ptr<Endpoint> endpoint, uint32_t peer, uint32_t cable,
       LaneConfig config, const Slab& slab, uint64_t offset);

  uint32_t peer() const { return peer_; }
  uint32_t cable() const { return cable_; }
  const std::string& device() const { return endpoint_->info().device; }
  ErrorPlace place(ErrorCause cause) const;

  absl::StatusOr<Destination> destination() const;
  // Connects and posts every receive.
  absl::Status connect(const Destination& peer);

  // Handles up to batch.size() completions of the endpoint (`batch` is
  // scratch space, reused across lanes). *advanced is set when any arrived.
  // Errors: a bad completion, sequence, header or credit count, or an abort
  // from the peer (cause as the peer sent it).
  absl::Status poll(std::span<Completion> batch, bool* advanced);
  // Set once the peer's abort arrived: the rank where that failure began.
  std::optional<uint32_t> abort_origin() const { return abort_origin_; }

  // Data frames that arrived and were not consumed yet, oldest first.
  size_t inbox_size() const { return inbox_.size(); }
  const Arrival& inbox(size_t i) const { return inbox_[i]; }
  std::span<const std::byte> payload(const Arrival& a) const;
  // Consumes the oldest arrival and posts its receive again.
  absl::Status consume_front();

  // A free send frame and two credits.
  bool can_send_data() const;
  // Sends `header` (type, counters and payload length filled in here) and
  // `bytes` of payload. REQUIRES: can_send_data().
  absl::Status send_data(FrameHeader header, const std::byte* payload,
                         uint32_t bytes);
  uint32_t data_sends_in_flight() const { return data_in_flight_; }
  bool all_data_acked() const { return peer_consumed_ == data_sent_; }

  // True while an acknowledgement the peer asked for is not sent yet.
  bool report_owed() const {
    return report_requested_ && reposts_ != reported_;
  }
  // Sends a credit report if one is due; `waiting` says this rank waits for
  // the peer's acknowledgement.
  absl::Status maybe_report(bool waiting, bool* advanced);
  // Best effort; errors are ignored (the group has failed already).
  void send_abort(ErrorCause cause, uint32_t origin, std::string_view message);

  // "peer 3 cable 0 (dev): 5/8 credits, 2 in inbox, ..." for reports.
  std::string describe() const;

 private:
  uint32_t credits() const {
    return config_.depth + peer_reposts_ - sent_total_;
  }
  absl::Status handle(const Completion& c);
  absl::Status handle_recv(const Completion& c);
  absl::Status absorb_counters(const FrameHeader& h);
  absl::Status repost(uint32_t slot);
  absl::Status post(uint32_t slot, const Frame& frame, FrameHeader header,
                    uint32_t payload_bytes);
  absl::Status abort_error(const FrameHeader& h,
                           std::span<const std::byte> text);
  absl::Status protocol_error(std::string_view what) const;

  std::unique_ptr<Endpoint> endpoint_;
  uint32_t peer_;
  uint32_t cable_;
  LaneConfig config_;
  std::vector<Frame> recv_frames_;
  std::vector<Frame> send_frames_;  // data slots, then credit, then abort
  std::vector<uint32_t> free_data_slots_;
  bool credit_busy_ = false;
  bool abort_busy_ = false;
  std::deque<Arrival> inbox_;
  SendSequence send_sequence_;
  ReceiveChecker receive_checker_;

  uint32_t sent_total_ = 0;  // frames posted, every type
  uint32_t data_sent_ = 0;   // data frames posted
  uint32_t data_in_flight_ = 0;
  uint32_t peer_reposts_ = 0;  // the peer's latest report
  uint32_t peer_consumed_ = 0;
  uint32_t reposts_ = 0;   // receives this side re-posted
  uint32_t reported_ = 0;  // reposts_ as last sent to the peer
  uint32_t consumed_ = 0;  // data frames this side consumed
  bool report_requested_ = false;
  std::optional<uint32_t> abort_origin_;
};

}  // namespace weft::internal

#endif  // WEFT_COLLECTIVES_INTERNAL_LANE_H_
