// Over TCP nothing moves a posted send while the rank does not call into
// weft: a blocking collective returns only once every send it posted has
// left this rank (its last byte is in the kernel), so a rank that then
// computes for long holds back no peer. Socket buffers far smaller than
// the message make bytes wait in the process unless the call finishes
// writing them.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group.h"
#include "tcp/tcp_fabric.h"
#include "tests/tcp/tcp_two_ranks.h"

namespace weft::tcp::testing {
namespace {

constexpr size_t kElements = size_t{1} << 20;  // 4 MiB of float32
constexpr int kSocketBufferBytes = 64 * 1024;
constexpr int kCalls = 4;

TEST(TcpSendFlush, BlockingCallReturnsWithNothingLeftToWrite) {
  absl::StatusOr<TwoRanks> made =
      two_ranks(TcpOptions{.socket_buffer_bytes = kSocketBufferBytes});
  ASSERT_TRUE(made.ok()) << made.status();
  TwoRanks& w = *made;
  // Per rank and call: the status, and the bytes left unwritten when the
  // call returned (read on the rank's own thread, before it calls again).
  std::vector<std::vector<absl::Status>> said(2);
  std::vector<std::vector<uint64_t>> unsent(2);
  std::vector<std::vector<float>> out(2, std::vector<float>(kElements));
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      const std::vector<float> in(kElements, static_cast<float>(r + 1));
      for (int call = 0; call < kCalls; ++call) {
        said[r].push_back(w.groups[r]->all_sum(
            const_bytes_of(in), bytes_of(out[r]), DType::kFloat32));
        unsent[r].push_back(w.fabrics[r]->bytes_unsent());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (uint32_t r = 0; r < 2; ++r) {
    for (int call = 0; call < kCalls; ++call) {
      EXPECT_TRUE(said[r][call].ok()) << "rank " << r << ": " << said[r][call];
      EXPECT_EQ(unsent[r][call], 0u)
          << "rank " << r << " call " << call
          << " returned with bytes of its sends still in the process";
    }
    EXPECT_EQ(out[r], std::vector<float>(kElements, 3.0f)) << "rank " << r;
  }
}

}  // namespace
}  // namespace weft::tcp::testing
