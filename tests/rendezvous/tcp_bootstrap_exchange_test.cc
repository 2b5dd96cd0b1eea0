// TcpBootstrap all_gather end to end over 127.0.0.1: blobs from empty to
// the limit, repeated exchanges, an oversized blob refused without harm, and
// ranks in separate processes.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rendezvous/tcp_bootstrap.h"
#include "tcp_bootstrap_harness.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

TEST(TcpBootstrap, AllGatherOfFourRanksWithEmptyAndLargeBlobs) {
  std::vector<BootstrapPtr> group = form_group(4);
  ASSERT_EQ(group.size(), 4u);
  const size_t sizes[] = {0, 1, 1000, 70'000};
  Blobs mine;
  for (uint32_t r = 0; r < 4; ++r) mine.push_back(pattern(r, 0, sizes[r]));
  for (uint32_t r = 0; r < 4; ++r) {
    EXPECT_EQ(group[r]->rank(), r);
    EXPECT_EQ(group[r]->size(), 4u);
  }
  std::vector<absl::StatusOr<Blobs>> got = gather_all(group, mine);
  for (uint32_t r = 0; r < 4; ++r) {
    ASSERT_TRUE(got[r].ok()) << "rank " << r << ": " << got[r].status();
    ASSERT_EQ(got[r]->size(), 4u);
    for (uint32_t from = 0; from < 4; ++from) {
      EXPECT_EQ((*got[r])[from], pattern(from, 0, sizes[from]))
          << "rank " << r << " from " << from;
    }
  }
  for (const BootstrapPtr& b : group) EXPECT_TRUE(b->check_alive().ok());
}

TEST(TcpBootstrap, RepeatedAllGathersUpToTheBlobLimit) {
  std::vector<BootstrapPtr> group = form_group(3);
  ASSERT_EQ(group.size(), 3u);
  for (uint32_t round = 0; round < 6; ++round) {
    Blobs mine;
    for (uint32_t r = 0; r < 3; ++r) {
      const size_t bytes = round == 5 && r == 2
                               ? Bootstrap::kMaxBlobBytes
                               : (r * 7919 + round * 104729) % 5000;
      mine.push_back(pattern(r, round, bytes));
    }
    std::vector<absl::StatusOr<Blobs>> got = gather_all(group, mine);
    for (uint32_t r = 0; r < 3; ++r) {
      ASSERT_TRUE(got[r].ok())
          << "round " << round << " rank " << r << ": " << got[r].status();
      EXPECT_EQ(*got[r], mine) << "round " << round << " rank " << r;
    }
  }
}

TEST(TcpBootstrap, OversizedBlobIsRefusedWithoutBreakingTheGroup) {
  std::vector<BootstrapPtr> group = form_group(2);
  ASSERT_EQ(group.size(), 2u);
  const std::vector<uint8_t> too_big(Bootstrap::kMaxBlobBytes + 1);
  absl::StatusOr<Blobs> refused = group[1]->all_gather(too_big, kLongNs);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(message(refused.status()), HasSubstr("limit"));
  const Blobs mine = {pattern(0, 0, 3), pattern(1, 0, 4)};
  for (const absl::StatusOr<Blobs>& got : gather_all(group, mine)) {
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, mine);
  }
}

// A child process's whole life as `rank`: join, one exchange, check it.
// The exit code says what went wrong (0: nothing).
int run_child_rank(uint32_t rank, uint32_t size, uint16_t port) {
  absl::StatusOr<BootstrapPtr> b =
      TcpBootstrap::connect(config_for(rank, size, port));
  if (!b.ok()) return 2;
  Blobs expected;
  for (uint32_t r = 0; r < size; ++r) {
    expected.push_back(pattern(r, 0, 100 + r));
  }
  absl::StatusOr<Blobs> got = (*b)->all_gather(expected[rank], kLongNs);
  if (!got.ok()) return 3;
  return *got == expected ? 0 : 4;
}

// Waits for `pid` to exit, killing it at the deadline: its exit code, or -1.
int exit_code_within_deadline(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + kLongWait;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::yield();
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(TcpBootstrap, RanksInSeparateProcesses) {
  constexpr uint32_t kSize = 3;
  const Config c0 = config_for(0, kSize, 0);
  absl::StatusOr<TcpBootstrap::Listener> listener = TcpBootstrap::listen(c0);
  ASSERT_TRUE(listener.ok());
  const uint16_t port = listener->port();
  // Fork before this process starts any thread.
  std::vector<pid_t> children;
  for (uint32_t r = 1; r < kSize; ++r) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(run_child_rank(r, kSize, port));
    children.push_back(pid);
  }
  absl::StatusOr<BootstrapPtr> b0 =
      TcpBootstrap::accept(*std::move(listener), c0);
  ASSERT_TRUE(b0.ok()) << b0.status();
  Blobs expected;
  for (uint32_t r = 0; r < kSize; ++r) {
    expected.push_back(pattern(r, 0, 100 + r));
  }
  absl::StatusOr<Blobs> got = (*b0)->all_gather(expected[0], kLongNs);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, expected);
  for (pid_t pid : children) EXPECT_EQ(exit_code_within_deadline(pid), 0);
  // The children have exited: their channels are closed.
  absl::Status gone = wait_for_failure(**b0);
  EXPECT_EQ(gone.code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace weft::testing
