// abort() is the one thread-safe call: from another thread it ends the
// pending operation that a progress loop drives (run under TSan by the tsan
// preset), and the group then refuses new work.
#include <atomic>
#include <cstdint>
#include <span>
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

TEST(GroupAbortThread, AbortFromAnotherThreadEndsThePendingOperation) {
  sim::WorldOptions w;
  w.topology = *Topology::mesh(2);
  GroupOptions o;
  o.timeout_ns = GroupOptions::kMaxTimeoutNs;
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Group& group = cluster->group(0);
  std::vector<float> in(1000, 1.0f);
  std::vector<float> out(1000);
  // Rank 1 never calls: without abort() this waits for its deadline.
  Operation op =
      group.all_reduce_async(as_bytes(std::span<const float>(in)),
                             as_writable_bytes(std::span<float>(out)),
                             DType::kFloat32, ReduceOp::kSum);
  std::atomic<bool> driving{false};
  std::thread aborter([&] {
    while (!driving.load()) {
    }
    group.abort();
  });
  constexpr uint64_t kMaxSteps = uint64_t{1} << 32;  // a bound, not a timer
  uint64_t steps = 0;
  for (; steps < kMaxSteps && !op.done(); ++steps) {
    (void)op.progress();
    driving.store(true);
  }
  aborter.join();
  ASSERT_TRUE(op.done()) << "abort() did not end the operation";
  EXPECT_EQ(op.status().code(), absl::StatusCode::kCancelled) << op.status();
  EXPECT_EQ(error_place(op.status())->cause, ErrorCause::kCancelled);
  Operation later = group.barrier_async();
  ASSERT_TRUE(later.done());
  EXPECT_EQ(error_place(later.status())->cause, ErrorCause::kGroupFailed);
}

}  // namespace
}  // namespace weft::testing
