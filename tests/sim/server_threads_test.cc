// What lets a rank's process have threads on the simulation server: the
// census of the process's threads (ThreadCensus: every thread blocked on
// another thread of it, or not, and which one and why), and the order the
// server applies a rank's requests in (apply_order: each thread's and each
// queue pair's order kept, the rest independent of arrival).
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <future>
#include <span>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim_server/internal/apply_order.h"
#include "sim_server/thread_census.h"

namespace weft::sim_server {
namespace {

using internal::apply_order;
using internal::RequestKey;
using ::testing::ElementsAre;

constexpr auto kPatience = std::chrono::seconds(30);

// Takes the census (exempting this thread) until `done` holds for its
// result or kPatience passes; the last result.
template <typename Done>
CensusResult census_until(ThreadCensus& census, Done done) {
  const pid_t me = ThreadCensus::current_thread();
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  CensusResult r;
  do {
    r = census.take(std::span<const pid_t>(&me, 1));
  } while (!done(r) && std::chrono::steady_clock::now() < deadline);
  return r;
}

TEST(ThreadCensus, AThreadBlockedOnAFutureWaits) {
  std::promise<void> go;
  std::thread waiter([f = go.get_future()]() mutable { f.wait(); });
  ThreadCensus census;
  const CensusResult r =
      census_until(census, [](const CensusResult& c) { return c.all_wait; });
  EXPECT_TRUE(r.all_wait);
  EXPECT_GE(r.threads, 2u);
  EXPECT_GE(r.checked, 1u);
  go.set_value();
  waiter.join();
}

TEST(ThreadCensus, AThreadThatRunsHoldsTheRankBack) {
  std::atomic<bool> stop{false};
  std::atomic<pid_t> tid{0};
  std::thread spinner([&] {
    tid = ThreadCensus::current_thread();
    while (!stop.load()) {
    }
  });
  ThreadCensus census;
  const CensusResult r = census_until(
      census, [&](const CensusResult& c) { return c.thread == tid.load(); });
  EXPECT_FALSE(r.all_wait);
  EXPECT_EQ(r.thread, tid.load());
  EXPECT_EQ(r.activity, ThreadActivity::kRuns);
  // However often it looks.
  for (int i = 0; i < 20; ++i) {
    const pid_t me = ThreadCensus::current_thread();
    EXPECT_FALSE(census.take(std::span<const pid_t>(&me, 1)).all_wait);
  }
  stop = true;
  spinner.join();
}

TEST(ThreadCensus, AThreadBlockedOnAPipeIsNotWaitingOnAThread) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::atomic<pid_t> tid{0};
  std::thread reader([&] {
    tid = ThreadCensus::current_thread();
    char c = 0;
    (void)::read(fds[0], &c, 1);
  });
  ThreadCensus census;
  const CensusResult r = census_until(census, [&](const CensusResult& c) {
    return c.thread == tid.load() &&
           c.activity == ThreadActivity::kBlockedElsewhere;
  });
  EXPECT_FALSE(r.all_wait);
  EXPECT_EQ(r.activity, ThreadActivity::kBlockedElsewhere);
  EXPECT_EQ(r.syscall, SYS_read);
  EXPECT_THAT(ThreadCensus::describe(r.activity, r.syscall),
              ::testing::HasSubstr("system call"));
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  reader.join();
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST(ThreadCensus, ExemptThreadsAreNotLookedAt) {
  std::atomic<bool> stop{false};
  std::atomic<pid_t> tid{0};
  std::thread spinner([&] {
    tid = ThreadCensus::current_thread();
    while (!stop.load()) {
    }
  });
  while (tid.load() == 0) std::this_thread::yield();
  std::vector<pid_t> exempt = {ThreadCensus::current_thread(), tid.load()};
  std::sort(exempt.begin(), exempt.end());
  ThreadCensus census;
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  CensusResult r;
  do {
    r = census.take(exempt);
  } while (!r.all_wait && std::chrono::steady_clock::now() < deadline);
  // gtest's own threads, if any, wait on futexes too.
  EXPECT_TRUE(r.all_wait);
  stop = true;
  spinner.join();
}

TEST(ThreadCensus, NamesTheThread) {
  EXPECT_NE(ThreadCensus::thread_name(ThreadCensus::current_thread()), "?");
  EXPECT_EQ(ThreadCensus::thread_name(0), "?");
}

TEST(ApplyOrder, OneThreadIsAppliedAsItPosted) {
  const std::vector<RequestKey> keys = {{7, 9}, {7, 3}, {7, 0}, {7, 3}};
  EXPECT_THAT(apply_order(keys), ElementsAre(0, 1, 2, 3));
}

TEST(ApplyOrder, ThreadsOnTheirOwnQueuePairsGoLowestQueuePairFirst) {
  // Thread 1 posts on 20 and 21, thread 2 on 10 and 11, interleaved as
  // the host ran them; either interleaving gives one order.
  const std::vector<RequestKey> one = {{1, 20}, {2, 10}, {1, 21}, {2, 11}};
  const std::vector<RequestKey> other = {{2, 10}, {2, 11}, {1, 20}, {1, 21}};
  const std::vector<size_t> a = apply_order(one);
  const std::vector<size_t> b = apply_order(other);
  std::vector<RequestKey> applied_a;
  std::vector<RequestKey> applied_b;
  for (size_t i : a) applied_a.push_back(one[i]);
  for (size_t i : b) applied_b.push_back(other[i]);
  ASSERT_EQ(applied_a.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(applied_a[i].object, applied_b[i].object) << i;
  }
  EXPECT_EQ(applied_a[0].object, 10u);
  EXPECT_EQ(applied_a[3].object, 21u);
}

TEST(ApplyOrder, KeepsEachThreadsAndEachQueuePairsOrder) {
  // Thread 1: 30 then 10. Thread 2: 10 (after thread 1's), then 5.
  const std::vector<RequestKey> keys = {{1, 30}, {1, 10}, {2, 10}, {2, 5}};
  const std::vector<size_t> order = apply_order(keys);
  auto at = [&](size_t request) {
    return std::find(order.begin(), order.end(), request) - order.begin();
  };
  EXPECT_LT(at(0), at(1));  // thread 1's order
  EXPECT_LT(at(1), at(2));  // queue pair 10's order
  EXPECT_LT(at(2), at(3));  // thread 2's order
}

}  // namespace
}  // namespace weft::sim_server
