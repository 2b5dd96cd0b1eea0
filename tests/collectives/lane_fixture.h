// The Lane fixture of the engine_*_test.cc files: a Lane over a gMock
// endpoint and a clock moved by hand (StepClock), with helpers that make
// frames arrive, complete sends and read back what was posted.
#ifndef WEFT_TESTS_COLLECTIVES_LANE_FIXTURE_H_
#define WEFT_TESTS_COLLECTIVES_LANE_FIXTURE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/engine/lane.h"
#include "fabric/testing/mock_fabric.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives/lane_send.h"

namespace weft::collectives::internal::lane_test {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::NiceMock;
using ::testing::Return;
using ::testing::ReturnRef;
using weft::testing::MockEndpoint;

constexpr uint32_t kDepth = 6;  // a window of 4 data frames
constexpr TimeNs kRtoNs = 100 * kNsPerUs;

// A manual clock that can also move by `tick_ns` at every reading, as a
// wall clock does.
class StepClock final : public Clock {
 public:
  TimeNs now_ns() const override {
    const TimeNs now = now_ns_;
    now_ns_ += tick_ns;
    return now;
  }
  void advance_to(TimeNs t_ns) { now_ns_ = std::max(now_ns_, t_ns); }
  TimeNs tick_ns = 0;

 private:
  mutable TimeNs now_ns_ = 0;
};

class LaneTest : public ::testing::Test {
 protected:
  LaneConfig config() const {
    LaneConfig c{kDepth, frame_bytes_};
    c.send_queue_bytes = send_queue_bytes_;
    c.recovery.enabled = recovery_;
    c.reliable = reliable_;
    c.recovery.initial_rto_ns = kRtoNs;
    c.recovery.max_rto_ns = 4 * kRtoNs;
    c.recovery.max_retries = 3;
    return c;
  }
  void SetUp() override {
    slab_ = *Slab::create(config().region_bytes());
    auto ep = std::make_unique<NiceMock<MockEndpoint>>();
    ep_ = ep.get();
    ON_CALL(*ep_, info()).WillByDefault(ReturnRef(info_));
    ON_CALL(*ep_, connect(_)).WillByDefault(Return(absl::OkStatus()));
    ON_CALL(*ep_, post_recv(_, _))
        .WillByDefault([this](WorkId id, const Frame& f) {
          recv_frames_[id.slot] = f;
          ++recvs_posted_;
          return absl::OkStatus();
        });
    ON_CALL(*ep_, post_send(_, _, _, _))
        .WillByDefault(
            [this](WorkId id, const Frame& f, uint32_t len, uint32_t imm) {
              sent_.push_back({id, f, len, imm});
              if (auto_complete_) {
                Completion c;
                c.id = id;
                pending_.push_back(c);
                completed_ = sent_.size();
              }
              return absl::OkStatus();
            });
    ON_CALL(*ep_, poll(_)).WillByDefault([this](std::span<Completion> out) {
      const size_t n = std::min(out.size(), pending_.size());
      std::copy_n(pending_.begin(), n, out.begin());
      pending_.erase(pending_.begin(), pending_.begin() + static_cast<long>(n));
      return absl::StatusOr<size_t>(n);
    });
    // The control frames first, then the abort frame, the data frames
    // after them (a group puts the data frames first; a lane takes
    // whatever it is given).
    const uint64_t control_bytes = config().control_bytes(false);
    lane_ = std::make_unique<Lane>(std::move(ep), 1, 0, config(), *slab_,
                                   control_bytes + kAbortFrameBytes, 0,
                                   control_bytes, clock_);
    ASSERT_TRUE(lane_->connect(Destination{}).ok());
    ASSERT_EQ(recvs_posted_, kDepth);
  }

  // A frame from the peer lands in receive slot `slot` with immediate
  // `imm`; data frames carry data sequence number h.seq.
  void arrive(uint32_t slot, uint32_t imm, FrameHeader h,
              std::vector<std::byte> payload = {}) {
    h.payload_bytes = static_cast<uint32_t>(payload.size());
    const Frame& f = recv_frames_[slot];
    h.encode(f.span().first<kHeaderBytes>());
    if (!payload.empty())
      std::memcpy(f.data() + kHeaderBytes, payload.data(), payload.size());
    Completion c;
    c.id = WorkId{WorkKind::kRecv, 1, slot};
    c.byte_len = kHeaderBytes + h.payload_bytes;
    c.has_immediate = true;
    c.immediate = imm;
    pending_.push_back(c);
  }
  FrameHeader data(uint32_t seq, uint8_t flags = 0) const {
    FrameHeader h;
    h.seq = seq;
    h.flags = flags;
    return h;
  }
  FrameHeader ack(uint32_t received, uint32_t consumed) const {
    FrameHeader h;
    h.type = FrameType::kAck;
    h.received = received;
    h.consumed = consumed;
    return h;
  }
  absl::Status service(bool waiting = false) {
    bool advanced = false;
    return lane_->service(Lane::Watch{waiting, kRtoNs}, kNoPeer, &advanced);
  }
  // Send completions for every send posted so far.
  void complete_sends() {
    for (size_t i = completed_; i < sent_.size(); ++i) {
      Completion c;
      c.id = sent_[i].id;
      pending_.push_back(c);
    }
    completed_ = sent_.size();
  }
  // With what was sent so far completed and polled, no timer runs, and
  // after 100 timeouts' time serviced, nothing more was sent.
  void expect_no_timer_and_nothing_resent() {
    const size_t sent = sent_.size();
    complete_sends();
    ASSERT_TRUE(poll().ok());
    EXPECT_EQ(lane_->next_timer_ns(Lane::Watch{}), kNeverNs);
    clock_.advance_to(100 * kRtoNs);
    ASSERT_TRUE(service().ok());
    EXPECT_EQ(sent_.size(), sent);
  }
  absl::Status send(uint8_t fill) {
    const std::byte bytes[8] = {std::byte{fill}};
    return send_data(*lane_, bytes);
  }
  absl::Status poll() {
    bool advanced = false;
    std::array<Completion, Endpoint::kMaxPollBatch> batch;
    return lane_->poll(batch, &advanced);
  }
  FrameHeader sent_header(size_t i) const {
    return *FrameHeader::decode(sent_[i].frame.span().first(sent_[i].length));
  }

  struct Sent {
    WorkId id;
    Frame frame;
    uint32_t length;
    uint32_t immediate;
  };
  bool recovery_ = true;
  bool reliable_ = false;       // LaneConfig::reliable
  bool auto_complete_ = false;  // every send completes at once
  uint32_t frame_bytes_ = 4096;
  uint64_t send_queue_bytes_ = uint64_t{1} << 20;
  StepClock clock_;
  size_t completed_ = 0;
  EndpointInfo info_{0, 1, "dev0"};
  std::unique_ptr<Slab> slab_;
  NiceMock<MockEndpoint>* ep_ = nullptr;
  std::unique_ptr<Lane> lane_;
  std::array<Frame, kDepth> recv_frames_;
  uint32_t recvs_posted_ = 0;
  std::vector<Sent> sent_;
  std::vector<Completion> pending_;
};

// The fixture without recovery: strict sequence checking.
class StrictLaneTest : public LaneTest {
 protected:
  void SetUp() override {
    recovery_ = false;
    LaneTest::SetUp();
  }
};

// Recovery on, over a fabric that delivers reliably: nothing is resent.
class ReliableLaneTest : public LaneTest {
 protected:
  void SetUp() override {
    reliable_ = true;
    LaneTest::SetUp();
  }
};

}  // namespace weft::collectives::internal::lane_test

#endif  // WEFT_TESTS_COLLECTIVES_LANE_FIXTURE_H_
