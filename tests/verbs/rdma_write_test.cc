// RDMA WRITE and RDMA WRITE WITH IMMEDIATE on the simulated provider's UC
// queue pairs, called as rdma-core programs call them (two ranks in one
// process): the bytes reach the target's registered memory at the address
// the writer names; a write completes at the writer with IBV_WC_RDMA_WRITE;
// a plain write consumes no receive, one with an immediate completes the
// oldest receive with IBV_WC_RECV_RDMA_WITH_IMM, IBV_WC_WITH_IMM, the
// immediate and the write's length, leaving that receive's buffer alone;
// and, UC having no acknowledgements, a write the target refuses (a key it
// never registered, a range outside the region, a region without
// IBV_ACCESS_REMOTE_WRITE, or no receive for an immediate) still completes
// successfully at the writer while nothing changes at the target. Expected
// values are the verbs API's and docs/simulated-verbs.md's ("What the data
// path carries").
#include <endian.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/verbs/real_verbs.h"
#include "tests/verbs/sim_provider.h"

namespace weft::verbs {
namespace {

using testing::address_of;
using testing::kMaxPolls;
using testing::kQuietNs;
using testing::kUntouched;
using testing::next_completion;
using testing::pattern;
using testing::RealVerbs;
using testing::Side;
using testing::SimProvider;
using testing::slice;

constexpr size_t kTargetBytes = 4096;



// True when every byte of `bytes` outside [from, from + length) is
// kUntouched.
bool untouched_but(const std::vector<uint8_t>& bytes, size_t from,
                   size_t length) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i >= from && i < from + length) continue;
    if (bytes[i] != kUntouched) return false;
  }
  return true;
}



class RdmaWriteTest : public ::testing::Test {
 protected:
  // Rank 0 (a) writes to rank 1 (b), whose target buffer is registered
  // with remote write access, and whose `closed` buffer is registered
  // without it.
  void SetUp() override {
    provider_.configure({});
    a_.open(provider_, verbs_, 0, /*with_channel=*/false);
    b_.open(provider_, verbs_, 1, /*with_channel=*/true);
    std::fill(b_.buffer.begin(), b_.buffer.end(), kUntouched);
    target_mr_ =
        verbs_.reg_mr(b_.pd, target_.data(), target_.size(),
                      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    closed_mr_ = verbs_.reg_mr(b_.pd, closed_.data(), closed_.size(),
                               IBV_ACCESS_LOCAL_WRITE);
    ASSERT_NE(target_mr_, nullptr);
    ASSERT_NE(closed_mr_, nullptr);
    a_.connect(b_, 0, 0);
    b_.connect(a_, 0, 0);
  }
  void TearDown() override {
    if (target_mr_ != nullptr) {
      EXPECT_EQ(verbs_.dereg_mr(target_mr_), 0);
    }
    if (closed_mr_ != nullptr) {
      EXPECT_EQ(verbs_.dereg_mr(closed_mr_), 0);
    }
    a_.close();
    b_.close();
  }

  // Posts on a: `message` (copied into a's buffer from offset `from`) as
  // an RDMA WRITE (with `imm` when `opcode` is the one with an immediate)
  // to `remote_addr` under `rkey`, signalled.
  int post_write(uint64_t wr_id, ibv_wr_opcode opcode,
                 const std::vector<uint8_t>& message, size_t from,
                 uint64_t remote_addr, uint32_t rkey, uint32_t imm = 0) {
    std::copy(message.begin(), message.end(), a_.buffer.begin() + from);
    ibv_sge sge{address_of(a_.buffer.data() + from),
                static_cast<uint32_t>(message.size()), a_.mr->lkey};
    ibv_send_wr wr;
    std::memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = opcode;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htobe32(imm);
    wr.wr.rdma.remote_addr = remote_addr;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(a_.qp, &wr, &bad);
  }

  // A receive on b with no scatter entries (all a write with an immediate
  // needs).
  int post_empty_recv(uint64_t wr_id) {
    ibv_recv_wr wr;
    std::memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(b_.qp, &wr, &bad);
  }

  // Polls `cq` for kQuietNs of virtual time; the completions it gave.
  std::vector<ibv_wc> watch(ibv_cq* cq) {
    std::vector<ibv_wc> seen;
    const int64_t until_ns = provider_.now_ns() + kQuietNs;
    for (int i = 0; i < kMaxPolls && provider_.now_ns() < until_ns; ++i) {
      ibv_wc wc;
      const int n = ibv_poll_cq(cq, 1, &wc);
      EXPECT_GE(n, 0);
      if (n == 1) seen.push_back(wc);
    }
    EXPECT_GE(provider_.now_ns(), until_ns) << "the watch ran out of polls";
    return seen;
  }

  // a's completion of `wr_id`: an RDMA WRITE that succeeded.
  void expect_write_completed(uint64_t wr_id) {
    ibv_wc wc;
    ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the write never completed";
    EXPECT_EQ(wc.wr_id, wr_id);
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_EQ(wc.opcode, IBV_WC_RDMA_WRITE);
    EXPECT_EQ(wc.qp_num, a_.qp->qp_num);
  }

  SimProvider provider_;
  RealVerbs verbs_{SimProvider::path()};
  Side a_, b_;
  std::vector<uint8_t> target_ = std::vector<uint8_t>(kTargetBytes, kUntouched);
  std::vector<uint8_t> closed_ = std::vector<uint8_t>(kTargetBytes, kUntouched);
  ibv_mr* target_mr_ = nullptr;
  ibv_mr* closed_mr_ = nullptr;
};

// The usual pattern of a program that writes: RDMA WRITE the data, then a
// SEND to say it is there. Messages of one queue pair arrive in order, so
// once the SEND's receive completes the written bytes are in b's memory.
TEST_F(RdmaWriteTest, AfterTheSendThatFollowsAWriteItsBytesAreInMemory) {
  const std::vector<uint8_t> data = pattern(200, 1);
  ASSERT_EQ(b_.post_recv(30), 0);
  ASSERT_EQ(post_write(10, IBV_WR_RDMA_WRITE, data, 1024,
                       address_of(target_.data() + 100), target_mr_->rkey),
            0);
  ASSERT_EQ(a_.post_send(11, 8, 5), 0);

  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the SEND never arrived";
  EXPECT_EQ(wc.wr_id, 30u);  // the write took no receive
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_EQ(wc.byte_len, 8u);
  EXPECT_EQ(slice(target_, 100, 200), data);
  EXPECT_TRUE(untouched_but(target_, 100, 200));

  expect_write_completed(10);
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the SEND never completed";
  EXPECT_EQ(wc.wr_id, 11u);
  EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  EXPECT_TRUE(watch(b_.cq).empty());
}

TEST_F(RdmaWriteTest, WithImmediateCompletesAReceiveAndLeavesItsBuffer) {
  const std::vector<uint8_t> data = pattern(64, 9);
  ASSERT_EQ(b_.post_recv(31), 0);  // b's whole buffer, kUntouched
  ASSERT_EQ(
      post_write(12, IBV_WR_RDMA_WRITE_WITH_IMM, data, 0,
                 address_of(target_.data() + 8), target_mr_->rkey, 0xa1b2c3d4),
      0);

  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the write never arrived";
  EXPECT_EQ(wc.wr_id, 31u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_NE(wc.wc_flags & IBV_WC_WITH_IMM, 0u);
  EXPECT_EQ(wc.imm_data, htobe32(0xa1b2c3d4));  // network order, as posted
  EXPECT_EQ(wc.byte_len, 64u);
  EXPECT_EQ(wc.qp_num, b_.qp->qp_num);
  // In memory when the completion is seen; the receive's buffer untouched.
  EXPECT_EQ(slice(target_, 8, 64), data);
  EXPECT_TRUE(untouched_but(target_, 8, 64));
  EXPECT_TRUE(untouched_but(b_.buffer, 0, 0));
  expect_write_completed(12);
}

TEST_F(RdmaWriteTest, WithImmediateTakesAReceiveWithNoEntries) {
  const std::vector<uint8_t> data = pattern(300, 4);
  ASSERT_EQ(post_empty_recv(32), 0);
  ASSERT_EQ(post_write(13, IBV_WR_RDMA_WRITE_WITH_IMM, data, 0,
                       address_of(target_.data()), target_mr_->rkey, 77),
            0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the write never arrived";
  EXPECT_EQ(wc.wr_id, 32u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
  EXPECT_EQ(be32toh(wc.imm_data), 77u);
  EXPECT_EQ(wc.byte_len, 300u);
  EXPECT_EQ(slice(target_, 0, 300), data);
}

// A completion event for a write with an immediate: once ibv_get_cq_event
// returns it, the bytes are in memory, as they are for a poll.
TEST_F(RdmaWriteTest, AnEventForAWriteWithImmediateFindsItsBytesInMemory) {
  const std::vector<uint8_t> data = pattern(128, 6);
  ASSERT_EQ(post_empty_recv(33), 0);
  ASSERT_EQ(ibv_req_notify_cq(b_.cq, 0), 0);
  ASSERT_EQ(post_write(14, IBV_WR_RDMA_WRITE_WITH_IMM, data, 0,
                       address_of(target_.data() + 512), target_mr_->rkey, 1),
            0);
  ibv_cq* cq = nullptr;
  void* context = nullptr;
  ASSERT_EQ(verbs_.get_cq_event(b_.channel, &cq, &context), 0);
  EXPECT_EQ(cq, b_.cq);
  EXPECT_EQ(slice(target_, 512, 128), data);
  verbs_.ack_cq_events(b_.cq, 1);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc));
  EXPECT_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
}

// docs/simulated-verbs.md: a plain write reaches the target's memory at the
// target's next poll_cq, even one that finds nothing.
TEST_F(RdmaWriteTest, APlainWriteIsInMemoryAfterTheTargetPolls) {
  const std::vector<uint8_t> data = pattern(16, 2);
  ASSERT_EQ(post_write(15, IBV_WR_RDMA_WRITE, data, 0,
                       address_of(target_.data() + 4000), target_mr_->rkey),
            0);
  expect_write_completed(15);
  bool landed = false;
  for (int i = 0; i < kMaxPolls && !landed; ++i) {
    ibv_wc wc;
    ASSERT_EQ(ibv_poll_cq(b_.cq, 1, &wc), 0);  // no receive is completed
    landed = slice(target_, 4000, 16) == data;
  }
  EXPECT_TRUE(landed) << "the write never reached b's memory";
  EXPECT_TRUE(untouched_but(target_, 4000, 16));
}

// What lands in a region is in its memory by the time it is deregistered.
TEST_F(RdmaWriteTest, AWriteThatLandedIsInMemoryWhenTheRegionGoes) {
  const std::vector<uint8_t> data = pattern(32, 8);
  ASSERT_EQ(post_write(16, IBV_WR_RDMA_WRITE, data, 0,
                       address_of(target_.data() + 64), target_mr_->rkey),
            0);
  expect_write_completed(16);
  EXPECT_TRUE(watch(a_.cq).empty());  // time passes; b never polls
  ASSERT_EQ(verbs_.dereg_mr(target_mr_), 0);
  target_mr_ = nullptr;
  EXPECT_EQ(slice(target_, 64, 32), data);
}

// UC has no acknowledgements: the writer's request completes successfully
// whatever the target makes of it, and a write the target refuses changes
// nothing there (rxe's responder drops it: class E for an R_Key violation,
// class D for a missing receive).
TEST_F(RdmaWriteTest, RefusedWritesCompleteAtTheWriterAndChangeNothing) {
  const std::vector<uint8_t> data = pattern(16, 3);
  const uint64_t start = address_of(target_.data());
  uint32_t unknown_key = 1;  // a key b never handed out
  while (unknown_key == target_mr_->rkey || unknown_key == closed_mr_->rkey ||
         unknown_key == a_.mr->rkey || unknown_key == b_.mr->rkey) {
    ++unknown_key;
  }
  // With no receive posted, a write with an immediate has nothing to
  // complete: dropped whole.
  ASSERT_EQ(post_write(40, IBV_WR_RDMA_WRITE_WITH_IMM, data, 0, start,
                       target_mr_->rkey, 5),
            0);
  expect_write_completed(40);
  EXPECT_TRUE(watch(b_.cq).empty());
  EXPECT_TRUE(untouched_but(target_, 0, 0));

  // With one posted, the rest are refused for their target and leave it
  // for the SEND that follows them.
  ASSERT_EQ(b_.post_recv(50), 0);
  struct Case {
    const char* what;
    ibv_wr_opcode opcode;
    uint64_t remote_addr;
    uint32_t rkey;
  };
  const Case cases[] = {
      {"a key b never registered", IBV_WR_RDMA_WRITE, start, unknown_key},
      {"a range past the region's end", IBV_WR_RDMA_WRITE,
       start + kTargetBytes - 8, target_mr_->rkey},
      {"an address before the region", IBV_WR_RDMA_WRITE, start - 16,
       target_mr_->rkey},
      {"a region without remote write access", IBV_WR_RDMA_WRITE,
       address_of(closed_.data()), closed_mr_->rkey},
      {"a bad key, with an immediate", IBV_WR_RDMA_WRITE_WITH_IMM, start,
       unknown_key},
      {"a region without remote write access, with an immediate",
       IBV_WR_RDMA_WRITE_WITH_IMM, address_of(closed_.data()),
       closed_mr_->rkey},
  };
  uint64_t wr_id = 41;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ASSERT_EQ(post_write(wr_id, c.opcode, data, 0, c.remote_addr, c.rkey, 5),
              0);
    expect_write_completed(wr_id);
    ++wr_id;
  }
  // b learns of none of them, and the next SEND lands in the receive.
  EXPECT_TRUE(watch(b_.cq).empty());
  ASSERT_EQ(a_.post_send(51, 8, 6), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the SEND never arrived";
  EXPECT_EQ(wc.wr_id, 50u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_EQ(be32toh(wc.imm_data), 6u);
  EXPECT_TRUE(untouched_but(target_, 0, 0));
  EXPECT_TRUE(untouched_but(closed_, 0, 0));
}

TEST_F(RdmaWriteTest, AnUnsignaledWriteReportsNothingAtTheWriter) {
  const std::vector<uint8_t> data = pattern(24, 5);
  std::copy(data.begin(), data.end(), a_.buffer.begin());
  ibv_sge sge{address_of(a_.buffer.data()), 24, a_.mr->lkey};
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = 60;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.wr.rdma.remote_addr = address_of(target_.data() + 200);
  wr.wr.rdma.rkey = target_mr_->rkey;
  ibv_send_wr* bad = nullptr;
  ASSERT_EQ(ibv_post_send(a_.qp, &wr, &bad), 0);
  ASSERT_EQ(b_.post_recv(61), 0);
  ASSERT_EQ(a_.post_send(62, 4, 1), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(a_.cq, &wc));
  EXPECT_EQ(wc.wr_id, 62u);  // only the signalled SEND
  EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  ASSERT_TRUE(next_completion(b_.cq, &wc));
  EXPECT_EQ(wc.wr_id, 61u);
  EXPECT_EQ(slice(target_, 200, 24), data);
}

}  // namespace
}  // namespace weft::verbs
