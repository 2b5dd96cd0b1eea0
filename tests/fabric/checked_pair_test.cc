// How CheckedPair, the sequence-checking consumer of completions, reacts to
// what an endpoint reports; the endpoint is a gMock MockEndpoint.
#include "fabric/checked_pair.h"

#include <cstdint>

#include "absl/status/status.h"
#include "fabric/testing/mock_fabric.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::_;
using ::testing::HasSubstr;
using testing::MockEndpoint;
using ::testing::Return;
using testing::ReturnCompletions;
using ::testing::ReturnRef;

Completion recv(uint32_t slot, uint32_t sequence) {
  Completion c;
  c.id = WorkId{WorkKind::kRecv, 1, slot};
  c.byte_len = 64;
  c.has_immediate = true;
  c.immediate = sequence;
  return c;
}

class CheckedPairTest : public ::testing::Test {
 protected:
  CheckedPairTest() {
    info_ = EndpointInfo{.rank = 0, .peer = 1, .device = "sim_0_1_0"};
    ON_CALL(ep_, info()).WillByDefault(ReturnRef(info_));
  }
  EndpointInfo info_;
  ::testing::NiceMock<MockEndpoint> ep_;
};

TEST_F(CheckedPairTest, SendsCarryConsecutiveSequenceNumbers) {
  CheckedPair pair(ep_);
  Frame frame;
  EXPECT_CALL(ep_, post_send(_, _, 8, 0u)).WillOnce(Return(absl::OkStatus()));
  EXPECT_CALL(ep_, post_send(_, _, 8, 1u)).WillOnce(Return(absl::OkStatus()));
  ASSERT_TRUE(pair.post_send(WorkId{}, frame, 8).ok());
  ASSERT_TRUE(pair.post_send(WorkId{}, frame, 8).ok());
}

TEST_F(CheckedPairTest, FailedPostDoesNotConsumeANumber) {
  CheckedPair pair(ep_);
  Frame frame;
  EXPECT_CALL(ep_, post_send(_, _, 8, 0u))
      .WillOnce(Return(absl::ResourceExhaustedError("full")))
      .WillOnce(Return(absl::OkStatus()));
  EXPECT_FALSE(pair.post_send(WorkId{}, frame, 8).ok());
  EXPECT_TRUE(pair.post_send(WorkId{}, frame, 8).ok());
  EXPECT_EQ(pair.send_sequence().peek(), 1u);
}

TEST_F(CheckedPairTest, InOrderReceivesPass) {
  CheckedPair pair(ep_);
  EXPECT_CALL(ep_, poll(_))
      .WillOnce(ReturnCompletions({recv(0, 0), recv(1, 1)}));
  Completion out[4];
  size_t good = 0;
  EXPECT_TRUE(pair.poll(out, &good).ok());
  EXPECT_EQ(good, 2u);
}

TEST_F(CheckedPairTest, GapBecomesTypedErrorAndStopsTheBatch) {
  CheckedPair pair(ep_);
  EXPECT_CALL(ep_, poll(_))
      .WillOnce(ReturnCompletions({recv(0, 0), recv(1, 2), recv(2, 3)}));
  Completion out[4];
  size_t good = 0;
  absl::Status s = pair.poll(out, &good);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(good, 1u);  // only frame 0 may be used
  EXPECT_THAT(s.message(), HasSubstr("rank 0, peer 1, device sim_0_1_0"));
  EXPECT_THAT(s.message(), HasSubstr("expected frame 1, received 2"));
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kSequence);
}

TEST_F(CheckedPairTest, ErrorCompletionIsNeverData) {
  CheckedPair pair(ep_);
  Completion bad = recv(0, 0);
  bad.status = WcStatus::kLocLenErr;
  bad.status_name = wc_status_name(WcStatus::kLocLenErr);
  EXPECT_CALL(ep_, poll(_)).WillOnce(ReturnCompletions({bad}));
  Completion out[4];
  size_t good = 0;
  absl::Status s = pair.poll(out, &good);
  EXPECT_EQ(good, 0u);
  EXPECT_THAT(s.message(), HasSubstr("local length error"));
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kCompletionError);
}

// The mock's completions carry the verbs name of the status a test set,
// as a fabric's do, not the default "success".
TEST_F(CheckedPairTest, TheMocksStatusNameFollowsTheStatus) {
  Completion bad = recv(0, 0);
  bad.status = WcStatus::kRemAccessErr;
  EXPECT_CALL(ep_, poll(_)).WillOnce(ReturnCompletions({bad}));
  Completion out[1];
  ASSERT_EQ(*ep_.poll(out), 1u);
  EXPECT_EQ(out[0].status, WcStatus::kRemAccessErr);
  EXPECT_EQ(out[0].status_name, wc_status_name(WcStatus::kRemAccessErr));
  EXPECT_NE(out[0].status_name, "success");
}

TEST_F(CheckedPairTest, ReceiveWithoutImmediateIsRejected) {
  CheckedPair pair(ep_);
  Completion c = recv(0, 0);
  c.has_immediate = false;
  EXPECT_CALL(ep_, poll(_)).WillOnce(ReturnCompletions({c}));
  Completion out[1];
  size_t good = 0;
  EXPECT_THAT(pair.poll(out, &good).message(), HasSubstr("no immediate"));
}

TEST_F(CheckedPairTest, EndpointFailurePassesThrough) {
  CheckedPair pair(ep_);
  EXPECT_CALL(ep_, poll(_))
      .WillOnce(Return(absl::UnavailableError("device gone")));
  Completion out[1];
  size_t good = 0;
  EXPECT_EQ(pair.poll(out, &good).code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace weft
