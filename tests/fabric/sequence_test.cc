#include "fabric/sequence.h"

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

TEST(SendSequence, CountsUpAndWraps) {
  SendSequence s(0xffff'fffeu);
  EXPECT_EQ(s.take(), 0xffff'fffeu);
  EXPECT_EQ(s.take(), 0xffff'ffffu);
  EXPECT_EQ(s.take(), 0u);
  EXPECT_EQ(s.peek(), 1u);
}

TEST(ReceiveChecker, InOrderIsExpected) {
  ReceiveChecker c;
  for (uint32_t i = 0; i < 100; ++i) {
    SequenceCheck r = c.check(i);
    EXPECT_EQ(r.kind, SequenceClass::kExpected) << i;
    EXPECT_EQ(r.expected, i);
  }
  EXPECT_EQ(c.expected(), 100u);
}

TEST(ReceiveChecker, GapCountsLostFrames) {
  ReceiveChecker c;
  c.check(0);
  SequenceCheck r = c.check(4);  // 1, 2, 3 missing
  EXPECT_EQ(r.kind, SequenceClass::kGap);
  EXPECT_EQ(r.lost, 3u);
  EXPECT_EQ(r.expected, 1u);
  EXPECT_EQ(r.received, 4u);
  EXPECT_EQ(c.expected(), 5u);
}

TEST(ReceiveChecker, LateFrameInsideGapIsReorderedOnceThenOld) {
  ReceiveChecker c;
  c.check(0);
  c.check(3);
  EXPECT_EQ(c.check(1).kind, SequenceClass::kReordered);
  EXPECT_EQ(c.check(2).kind, SequenceClass::kReordered);
  EXPECT_EQ(c.check(1).kind, SequenceClass::kOld);  // now a duplicate
  EXPECT_EQ(c.check(4).kind, SequenceClass::kExpected);
}

TEST(ReceiveChecker, DuplicateOfLastIsOld) {
  ReceiveChecker c;
  c.check(0);
  c.check(1);
  EXPECT_EQ(c.check(1).kind, SequenceClass::kOld);
  EXPECT_EQ(c.check(0).kind, SequenceClass::kOld);
  EXPECT_EQ(c.expected(), 2u);
}

TEST(ReceiveChecker, FarBehindWindowIsOld) {
  ReceiveChecker c;
  c.check(0);
  c.check(1000);  // gap of 999: beyond the window, nothing remembered
  EXPECT_EQ(c.check(10).kind, SequenceClass::kOld);
  EXPECT_EQ(c.check(1000 - ReceiveChecker::kWindow + 1).kind,
            SequenceClass::kReordered);
}

TEST(ReceiveChecker, WrapAroundIsNormal) {
  ReceiveChecker c(0xffff'fffdu);
  EXPECT_EQ(c.check(0xffff'fffdu).kind, SequenceClass::kExpected);
  EXPECT_EQ(c.check(0xffff'fffeu).kind, SequenceClass::kExpected);
  EXPECT_EQ(c.check(0xffff'ffffu).kind, SequenceClass::kExpected);
  EXPECT_EQ(c.check(0u).kind, SequenceClass::kExpected);
  EXPECT_EQ(c.check(1u).kind, SequenceClass::kExpected);
}

TEST(ReceiveChecker, GapAcrossWrap) {
  ReceiveChecker c(0xffff'fffeu);
  SequenceCheck r = c.check(1u);  // 0xfffffffe, 0xffffffff, 0 lost
  EXPECT_EQ(r.kind, SequenceClass::kGap);
  EXPECT_EQ(r.lost, 3u);
  EXPECT_EQ(c.check(0xffff'ffffu).kind, SequenceClass::kReordered);
  EXPECT_EQ(c.check(0u).kind, SequenceClass::kReordered);
  EXPECT_EQ(c.check(0u).kind, SequenceClass::kOld);
  EXPECT_EQ(c.check(2u).kind, SequenceClass::kExpected);
}

TEST(ReceiveChecker, DuplicateAcrossWrap) {
  ReceiveChecker c(0xffff'ffffu);
  c.check(0xffff'ffffu);
  c.check(0u);
  EXPECT_EQ(c.check(0xffff'ffffu).kind, SequenceClass::kOld);
}

TEST(SequenceError, NamesPlaceAndNumbers) {
  ReceiveChecker c;
  c.check(0);
  SequenceCheck r = c.check(7);
  ErrorPlace place{.rank = 2, .peer = 5, .device = "rdma_en3"};
  absl::Status s = sequence_error(r, place);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(s.message(), HasSubstr("rank 2"));
  EXPECT_THAT(s.message(), HasSubstr("peer 5"));
  EXPECT_THAT(s.message(), HasSubstr("device rdma_en3"));
  EXPECT_THAT(s.message(), HasSubstr("expected frame 1, received 7"));
  EXPECT_THAT(s.message(), HasSubstr("6 frame(s) lost"));
  std::optional<ErrorPlace> back = error_place(s);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rank, 2u);
  EXPECT_EQ(back->peer, 5u);
  EXPECT_EQ(back->device, "rdma_en3");
  EXPECT_EQ(back->cause, ErrorCause::kSequence);
}

}  // namespace
}  // namespace weft
