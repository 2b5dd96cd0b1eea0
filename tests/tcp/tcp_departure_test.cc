// A group's end over TCP: a rank that finishes its last collective and
// destroys its group at once says goodbye; a peer still reading what it
// sent must finish that collective correctly, and a peer whose operation
// still needs it must end with Unavailable naming it, not wait for its
// deadline. Ranks are threads over loopback sockets; latches order them,
// never sleeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <latch>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/absl_compat.h"
#include "collectives/group.h"
#include "collectives/operation.h"
#include "fabric/errors.h"
#include "tcp/tcp_fabric.h"
#include "tests/tcp/tcp_two_ranks.h"

namespace weft::tcp::testing {
namespace {

using ::testing::HasSubstr;

constexpr size_t kElements = 256;  // one frame: sent without a credit

std::vector<float> filled(float value) {
  return std::vector<float>(kElements, value);
}

// Rank 0 posts its part and stops reading; rank 1 runs the whole all-sum
// and destroys its group at once; only then does rank 0 read: rank 1's
// last frames and its goodbye arrive together.
TEST(TcpDeparture, PeerThatFinishedAndLeftLetsTheSlowerRankFinish) {
  absl::StatusOr<TwoRanks> made = two_ranks(TcpOptions{});
  ASSERT_TRUE(made.ok()) << made.status();
  TwoRanks& w = *made;
  std::vector<float> in0 = filled(1.0f), out0 = filled(0.0f);
  std::vector<float> in1 = filled(2.0f), out1 = filled(0.0f);
  std::latch rank0_paused(1);
  std::latch rank1_destroyed(1);
  absl::Status rank1_said;
  std::thread rank1([&] {
    rank0_paused.wait();
    rank1_said = w.groups[1]->all_sum(const_bytes_of(in1), bytes_of(out1),
                                      DType::kFloat32);
    w.groups[1].reset();
    rank1_destroyed.count_down();
  });
  Operation op = w.groups[0]->all_reduce_async(
      const_bytes_of(in0), bytes_of(out0), DType::kFloat32, ReduceOp::kSum);
  // Its data frame leaves on the first step (the peer's posted receive is
  // its credit); what rank 1 sends arrives only after rank 0 paused.
  const uint64_t sent_before = w.fabrics[0]->messages_sent();
  (void)op.progress();
  EXPECT_GT(w.fabrics[0]->messages_sent(), sent_before);
  ASSERT_FALSE(op.done()) << "rank 0 finished before rank 1 ran";
  rank0_paused.count_down();
  rank1_destroyed.wait();
  const absl::Status said = op.wait();
  rank1.join();
  ASSERT_TRUE(rank1_said.ok()) << rank1_said;
  EXPECT_TRUE(said.ok()) << said;
  EXPECT_EQ(out0, filled(3.0f));
  EXPECT_EQ(out1, filled(3.0f));
  EXPECT_TRUE(w.fabrics[0]->last_failure().ok())
      << "a goodbye is no transport error: " << w.fabrics[0]->last_failure();
}

// Rank 1 leaves without taking part: rank 0's all-sum still needs its
// frames, and ends with Unavailable naming it, long before its deadline.
TEST(TcpDeparture, OperationThatStillNeedsTheDepartedPeerEndsNamingIt) {
  absl::StatusOr<TwoRanks> made = two_ranks(TcpOptions{});
  ASSERT_TRUE(made.ok()) << made.status();
  TwoRanks& w = *made;
  std::thread rank1([&] { w.groups[1].reset(); });
  rank1.join();
  std::vector<float> in0 = filled(1.0f), out0 = filled(0.0f);
  const absl::Status said =
      w.groups[0]->all_sum(const_bytes_of(in0), bytes_of(out0), DType::kFloat32,
                           CallOptions{.timeout_ns = 600 * kNsPerS});
  EXPECT_EQ(said.code(), absl::StatusCode::kUnavailable) << said;
  EXPECT_THAT(base::message_of(said), HasSubstr("peer 1 closed its end"));
  ASSERT_TRUE(error_place(said).has_value()) << said;
  EXPECT_EQ(error_place(said)->peer, 1u);
  EXPECT_EQ(error_place(said)->cause, ErrorCause::kPeerUnavailable);
}

}  // namespace
}  // namespace weft::tcp::testing
