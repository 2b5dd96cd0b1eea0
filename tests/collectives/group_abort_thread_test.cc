// abort() and revoke() are the thread-safe calls: from another thread each
// ends the pending operation that a progress loop drives (run under TSan by
// the tsan preset), and the group then refuses new work.
#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

using ::testing::HasSubstr;

// Starts an all-sum on rank 0 of two (rank 1 never calls, so without
// `end` it waits for its deadline), drives it with progress() while
// another thread calls `end` on the group, and returns how it ended
// (Unavailable when it never did).
absl::Status end_from_another_thread(SimCluster& cluster,
                                     const std::function<void(Group&)>& end) {
  Group& group = cluster.group(0);
  std::vector<float> in(1000, 1.0f);
  std::vector<float> out(1000);
  Operation op =
      group.all_reduce_async(as_bytes(std::span<const float>(in)),
                             as_writable_bytes(std::span<float>(out)),
                             DType::kFloat32, ReduceOp::kSum);
  std::atomic<bool> driving{false};
  std::thread other([&] {
    while (!driving.load()) {
    }
    end(group);
  });
  constexpr uint64_t kMaxSteps = uint64_t{1} << 32;  // a bound, not a timer
  for (uint64_t steps = 0; steps < kMaxSteps && !op.done(); ++steps) {
    (void)op.progress();
    driving.store(true);
  }
  other.join();
  return op.done() ? op.status()
                   : absl::UnavailableError("the operation did not end");
}

absl::StatusOr<SimCluster> two_ranks() {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(2);
  GroupOptions o;
  o.timeout_ns = GroupOptions::kMaxTimeoutNs;
  return SimCluster::create(w, o);
}

TEST(GroupAbortThread, AbortFromAnotherThreadEndsThePendingOperation) {
  absl::StatusOr<SimCluster> cluster = two_ranks();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const absl::Status s =
      end_from_another_thread(*cluster, [](Group& g) { g.abort(); });
  EXPECT_EQ(s.code(), absl::StatusCode::kCancelled) << s;
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kCancelled);
  Operation later = cluster->group(0).barrier_async();
  ASSERT_TRUE(later.done());
  EXPECT_EQ(error_place(later.status())->cause, ErrorCause::kGroupFailed);
}

// revoke() too: the operation ends revoked, naming this rank and the
// reason, and so does the next call.
TEST(GroupAbortThread, RevokeFromAnotherThreadEndsThePendingOperation) {
  absl::StatusOr<SimCluster> cluster = two_ranks();
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const absl::Status s = end_from_another_thread(
      *cluster, [](Group& g) { g.revoke("from the watchdog thread"); });
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted) << s;
  EXPECT_EQ(error_place(s)->cause, ErrorCause::kRevoked);
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("rank 0 revoked the group: from the watchdog thread"));
  Operation later = cluster->group(0).barrier_async();
  ASSERT_TRUE(later.done());
  EXPECT_EQ(error_place(later.status())->cause, ErrorCause::kRevoked);
}

}  // namespace
}  // namespace weft::testing
