// Unit-testing your own code against weft's gMock mocks (weft::testing):
// no simulator, no hardware, every fabric behaviour scripted. The code under
// test, count_received_bytes(), is the kind of thing a user writes over an
// Endpoint: poll until N receives completed, adding up their bytes, and turn
// an error completion into an error that says which one.
//
//   $ ./mock_endpoint_test
//   [==========] 3 tests from 1 test suite ran. ...
//   [  PASSED  ] 3 tests.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/testing/mock_fabric.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// --- the user's code ---

// Polls `endpoint` until `receives` receive completions arrived (send
// completions are skipped) and returns their bytes. Gives up after
// `max_polls` polls: silence is the only symptom of a dead peer.
absl::StatusOr<uint64_t> count_received_bytes(weft::Endpoint& endpoint,
                                              uint32_t receives,
                                              uint32_t max_polls) {
  uint64_t bytes = 0;
  weft::Completion batch[16];
  for (uint32_t poll = 0; poll < max_polls && receives > 0; ++poll) {
    absl::StatusOr<size_t> n = endpoint.poll(batch);
    if (!n.ok()) return n.status();
    for (const weft::Completion& c : std::span(batch, *n)) {
      if (!c.ok()) {
        return absl::DataLossError(absl::StrCat(
            c.id.to_string(), " completed with ", std::string(c.status_name)));
      }
      if (c.id.kind != weft::WorkKind::kRecv || receives == 0) continue;
      bytes += c.byte_len;
      --receives;
    }
  }
  if (receives > 0) {
    return absl::DeadlineExceededError(
        absl::StrCat(receives, " receives still missing"));
  }
  return bytes;
}

// --- its tests ---

namespace {

using ::testing::HasSubstr;
using ::testing::Return;
using weft::testing::MockEndpoint;
using weft::testing::ReturnCompletions;

weft::Completion receive(uint32_t slot, uint32_t bytes) {
  weft::Completion c;
  c.id = {weft::WorkKind::kRecv, /*peer=*/1, slot};
  c.byte_len = bytes;
  return c;
}

TEST(CountReceivedBytes, AddsReceivesAndSkipsSends) {
  MockEndpoint endpoint;
  weft::Completion send;
  send.id = {weft::WorkKind::kSend, 1, 0};
  send.byte_len = 999;
  EXPECT_CALL(endpoint, poll)
      .WillOnce(ReturnCompletions({receive(0, 100), send}))
      .WillOnce(Return(size_t{0}))  // nothing yet: poll again
      .WillOnce(ReturnCompletions({receive(1, 28)}));
  absl::StatusOr<uint64_t> bytes = count_received_bytes(endpoint, 2, 10);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  EXPECT_EQ(*bytes, 128u);
}

TEST(CountReceivedBytes, ErrorCompletionNamesTheWorkRequest) {
  MockEndpoint endpoint;
  weft::Completion flushed = receive(3, 0);
  flushed.status = weft::WcStatus::kWrFlushErr;
  flushed.status_name = "IBV_WC_WR_FLUSH_ERR";
  EXPECT_CALL(endpoint, poll).WillOnce(ReturnCompletions({flushed}));
  absl::StatusOr<uint64_t> bytes = count_received_bytes(endpoint, 1, 10);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(
      std::string(bytes.status().message()),
      HasSubstr("recv peer 1 slot 3 completed with IBV_WC_WR_FLUSH_ERR"));
}

TEST(CountReceivedBytes, SilentPeerEndsAfterMaxPolls) {
  MockEndpoint endpoint;
  EXPECT_CALL(endpoint, poll).Times(5).WillRepeatedly(Return(size_t{0}));
  absl::StatusOr<uint64_t> bytes = count_received_bytes(endpoint, 2, 5);
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
