// The side channel over a user's AllGatherFn: threads as ranks, with an
// all-gather in memory.
#include "jaccl/internal/all_gather_bootstrap.h"

#include <barrier>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace jaccl::internal {
namespace {

using ::testing::HasSubstr;

// An all-gather among `ranks` threads: each writes its bytes into its
// slot, all wait, each copies every slot, all wait again (so no slot is
// overwritten while another rank still reads it).
class InMemoryAllGather {
 public:
  explicit InMemoryAllGather(int ranks)
      : ranks_(ranks), slots_(ranks), sync_(ranks) {}

  AllGatherFn for_rank(int rank) {
    return [this, rank](const char* src, char* dst, size_t n_bytes) {
      slots_[rank].assign(src, src + n_bytes);
      sync_.arrive_and_wait();
      for (int r = 0; r < ranks_; ++r) {
        std::memcpy(dst + r * n_bytes, slots_[r].data(), n_bytes);
      }
      sync_.arrive_and_wait();
    };
  }

 private:
  int ranks_;
  std::vector<std::vector<char>> slots_;
  std::barrier<> sync_;
};

// Rank r's blob: 3r + 1 bytes of value 10 + r; rank 2's is empty.
std::vector<uint8_t> blob_of(uint32_t rank) {
  if (rank == 2) return {};
  return std::vector<uint8_t>(3 * rank + 1, static_cast<uint8_t>(10 + rank));
}

TEST(AllGatherBootstrap, EveryRankGetsEveryBlobAtItsLength) {
  constexpr uint32_t kRanks = 4;
  InMemoryAllGather gather(kRanks);
  std::vector<absl::StatusOr<std::vector<std::vector<uint8_t>>>> got(
      kRanks, absl::UnknownError("not run"));
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      AllGatherBootstrap bootstrap(r, kRanks, gather.for_rank(r));
      // Two exchanges in a row, as group formation makes them.
      got[r] = bootstrap.all_gather(blob_of(r), 0);
      if (got[r].ok())
        got[r] = bootstrap.all_gather(blob_of(kRanks - 1 - r), 0);
    });
  }
  for (std::thread& t : threads) t.join();
  for (uint32_t r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(got[r].ok()) << got[r].status();
    ASSERT_EQ(got[r]->size(), kRanks);
    for (uint32_t from = 0; from < kRanks; ++from) {
      EXPECT_EQ((*got[r])[from], blob_of(kRanks - 1 - from))
          << "rank " << r << " from " << from;
    }
  }
}

TEST(AllGatherBootstrap, AThrowingFunctionIsUnavailable) {
  AllGatherBootstrap bootstrap(0, 2, [](const char*, char*, size_t) {
    throw std::runtime_error("mpi went away");
  });
  const auto got = bootstrap.all_gather(std::vector<uint8_t>{1, 2}, 0);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("mpi went away"));
  EXPECT_TRUE(bootstrap.check_alive().ok());
}

// An oversized blob is refused once the lengths are known, so every rank
// (each sees the same lengths) refuses it in the same call instead of some
// waiting in the function for the others.
TEST(AllGatherBootstrap, AnOversizedBlobIsRefusedAfterTheLengths) {
  int calls = 0;
  AllGatherBootstrap bootstrap(0, 2, [&](const char* src, char* dst, size_t n) {
    ++calls;
    std::memcpy(dst, src, n);
    std::memcpy(dst + n, src, n);  // rank 1 sends what rank 0 does
  });
  const std::vector<uint8_t> big(weft::Bootstrap::kMaxBlobBytes + 1);
  EXPECT_EQ(bootstrap.all_gather(big, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(calls, 1);
}

// A peer that answers with a length no weft rank sends (its calls are out
// of step with ours) is refused before anything that large is allocated.
TEST(AllGatherBootstrap, AnImpossibleLengthIsDataLoss) {
  AllGatherBootstrap bootstrap(0, 2, [](const char* src, char* dst, size_t n) {
    std::memcpy(dst, src, n);
    const uint64_t huge = uint64_t{1} << 40;
    std::memcpy(dst + n, &huge, sizeof(huge));
  });
  const auto got = bootstrap.all_gather(std::vector<uint8_t>{7}, 0);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("rank 1"));
}

}  // namespace
}  // namespace jaccl::internal
