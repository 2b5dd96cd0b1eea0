// The scheduler's containers: the event queue (its runs of one time must
// give exactly the (time, sequence) order of a plain priority queue), the
// ready set, the wake-up queue, the payload pool's buffer reuse, and (where
// invariant checks are on) that breaking a container's contract aborts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tuple>
#include <vector>

#include "fabric/assert.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/internal/event_queue.h"
#include "sim/internal/fixed_ring.h"
#include "sim/internal/payload_pool.h"
#include "sim/internal/ready_set.h"
#include "sim/internal/wake_queue.h"
#include "sim/prng.h"

namespace weft::sim::internal {
namespace {

using ::testing::ElementsAre;

// The order the queue must reproduce, computed independently: every event
// pushed so far, minus those popped, smallest (time, push number) first.
struct ReferenceQueue {
  std::vector<std::tuple<TimeNs, uint64_t, uint32_t>> items;
  uint64_t pushed = 0;
  void push(TimeNs t, uint32_t index) {
    items.emplace_back(t, pushed++, index);
  }
  std::tuple<TimeNs, uint64_t, uint32_t> pop() {
    auto it = std::min_element(items.begin(), items.end());
    const auto e = *it;
    items.erase(it);
    return e;
  }
};

TEST(EventQueue, PopsInTimeThenSchedulingOrderWhateverThePath) {
  EventQueue q;
  ReferenceQueue ref;
  Prng prng(42);
  TimeNs now = 0;
  for (uint32_t i = 0; i < 5000; ++i) {
    // Many events at the instant being processed, the rest at 50 times in
    // the near future, so runs of one time are closed and opened again.
    const uint64_t pick = prng.below(4);
    const TimeNs t = pick < 2 ? now : now + static_cast<TimeNs>(prng.below(50));
    q.push(t, EventKind::kDepart, i);
    ref.push(t, i);
    const uint64_t pops = prng.below(3);
    for (uint64_t k = 0; k < pops && !q.empty(); ++k) {
      ASSERT_EQ(q.next_time_ns(), std::get<0>(*std::min_element(
                                      ref.items.begin(), ref.items.end())));
      const Event e = q.pop();
      const auto want = ref.pop();
      ASSERT_EQ(e.time_ns, std::get<0>(want));
      ASSERT_EQ(e.index, std::get<2>(want));
      now = e.time_ns;
    }
  }
  while (!q.empty()) {
    const auto want = ref.pop();
    ASSERT_EQ(q.pop().index, std::get<2>(want));
  }
  EXPECT_TRUE(ref.items.empty());
}

TEST(EventQueue, AnEarlierScheduledEventAtTheSameInstantComesFirst) {
  EventQueue q;
  q.push(10, EventKind::kDepart, 1);  // heap: scheduled before time 10
  q.push(5, EventKind::kDepart, 0);
  EXPECT_EQ(q.pop().index, 0u);  // now at 5
  q.push(10, EventKind::kArrive, 2);
  EXPECT_EQ(q.pop().index, 1u);       // now at 10
  q.push(10, EventKind::kArrive, 3);  // same instant: the FIFO
  q.push(10, EventKind::kArrive, 4);
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.pop().index, 2u);
  EXPECT_EQ(q.pop().index, 3u);
  EXPECT_EQ(q.pop().index, 4u);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, AnEventAfterItsTimesRunClosedStillComesInSchedulingOrder) {
  EventQueue q;
  q.push(100, EventKind::kDepart, 0);
  for (uint32_t i = 1; i <= 8; ++i) q.push(100 + i, EventKind::kDepart, i);
  q.push(100, EventKind::kArrive, 9);  // time 100's first run is closed
  q.push(101, EventKind::kArrive, 10);
  q.push(100, EventKind::kArrive, 11);
  std::vector<uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().index);
  EXPECT_THAT(order,
              ElementsAre(0u, 9u, 11u, 1u, 10u, 2u, 3u, 4u, 5u, 6u, 7u, 8u));
}

TEST(ReadySet, GivesEachMarkedRankOnceInRankOrder) {
  ReadySet ready(8);
  EXPECT_TRUE(ready.empty());
  for (uint32_t r : {5u, 1u, 5u, 7u, 1u, 0u}) ready.mark(r);
  EXPECT_FALSE(ready.empty());
  std::vector<uint32_t> out = {99};
  ready.take(&out);
  EXPECT_THAT(out, ElementsAre(0u, 1u, 5u, 7u));
  EXPECT_TRUE(ready.empty());
  ready.mark(5);  // taken ranks can be marked again
  ready.take(&out);
  EXPECT_THAT(out, ElementsAre(5u));
}

TEST(WakeQueue, FindsTheEarliestCurrentWakeUp) {
  WakeQueue wakes(4);
  EXPECT_EQ(wakes.next_ns(), kNeverNs);
  wakes.set(0, 300);
  wakes.set(1, 100);
  wakes.set(2, 200);
  wakes.set(1, 400);  // replaces 100, which must not come back
  EXPECT_EQ(wakes.next_ns(), 200);
  EXPECT_EQ(wakes.pop(), 2u);
  wakes.clear(0);
  EXPECT_EQ(wakes.next_ns(), 400);
  EXPECT_EQ(wakes.next_rank(), 1u);
  EXPECT_EQ(wakes.pop(), 1u);
  EXPECT_EQ(wakes.next_ns(), kNeverNs);
}

TEST(WakeQueue, TiesGoToTheLowerRank) {
  WakeQueue wakes(3);
  wakes.set(2, 50);
  wakes.set(0, 50);
  wakes.set(1, 50);
  EXPECT_EQ(wakes.pop(), 0u);
  EXPECT_EQ(wakes.pop(), 1u);
  EXPECT_EQ(wakes.pop(), 2u);
}

TEST(WakeQueue, ManyChangesStayCorrectAcrossRebuilds) {
  constexpr uint32_t kRanks = 16;
  WakeQueue wakes(kRanks);
  std::vector<TimeNs> want(kRanks, kNeverNs);
  Prng prng(7);
  for (int i = 0; i < 20000; ++i) {
    const auto r = static_cast<uint32_t>(prng.below(kRanks));
    const TimeNs t =
        prng.below(10) == 0 ? kNeverNs : static_cast<TimeNs>(prng.below(1000));
    wakes.set(r, t);
    want[r] = t;
    ASSERT_EQ(wakes.next_ns(), *std::min_element(want.begin(), want.end()));
  }
}

TEST(PayloadPool, ReusedBuffersHoldExactlyTheNewBytes) {
  PayloadPool pool;
  std::vector<std::byte> big(5000), small(3);
  for (size_t i = 0; i < big.size(); ++i) big[i] = std::byte(i % 251);
  for (size_t i = 0; i < small.size(); ++i) small[i] = std::byte(200 + i);
  const uint32_t a = pool.acquire(big);
  EXPECT_TRUE(std::ranges::equal(pool.bytes(a), big));
  EXPECT_EQ(pool.in_use(), 1u);
  pool.release(a);
  EXPECT_EQ(pool.in_use(), 0u);
  const uint32_t b = pool.acquire(small);  // the same buffer, shorter
  EXPECT_EQ(b, a);
  EXPECT_TRUE(std::ranges::equal(pool.bytes(b), small));
  const uint32_t c = pool.acquire(big);  // b is in use: a new buffer
  EXPECT_NE(c, b);
  pool.release(b);
  const uint32_t d = pool.acquire(std::span<const std::byte>());
  EXPECT_EQ(d, b);
  EXPECT_TRUE(pool.bytes(d).empty());
  EXPECT_TRUE(std::ranges::equal(pool.bytes(c), big));
  EXPECT_EQ(pool.in_use(), 2u);
}

TEST(ContainerDeathTest, PoppingAnEmptyFixedRingAborts) {
  if (!weft::kChecksInvariants) {
    GTEST_SKIP() << "invariant checks are compiled out of this build";
  }
  FixedRing<int, 4> ring;
  ring.push_back(1);
  ring.pop_front();
  EXPECT_DEATH(ring.pop_front(), "pop_front\\(\\) of an empty FixedRing");
}

TEST(ContainerDeathTest, ReleasingAPayloadBufferTwiceAborts) {
  if (!weft::kChecksInvariants) {
    GTEST_SKIP() << "invariant checks are compiled out of this build";
  }
  PayloadPool pool;
  const std::byte bytes[4] = {};
  const uint32_t id = pool.acquire(bytes);
  pool.release(id);
  EXPECT_DEATH(pool.release(id), "released that is not in use");
}

}  // namespace
}  // namespace weft::sim::internal
