// What the simulated provider's UC data path carries, called as rdma-core
// programs call it (two ranks in one process): SEND with and without an
// immediate, gathered sends and scattered receives, inline sends from
// unregistered memory up to max_inline_data, unsignaled sends and
// sq_sig_all, the requests UC refuses (RDMA READ, atomics, too many entries,
// a key that names no region) and the queue pair types not simulated, and
// UC's delivery rules: a message with no receive posted is dropped, a
// receive too small completes with IBV_WC_LOC_LEN_ERR and puts the queue
// pair in error (ibv_query_qp says IBV_QPS_ERR), where everything flushes.
// Expected values are verbs' and docs/simulated-verbs.md's ("What the data
// path carries").
#include <endian.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
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

// What the docs and every queue pair's max_inline_data promise.
constexpr uint32_t kMaxInline = 256;
// ibv_query_device's max_sge on the simulated devices.
constexpr uint32_t kDeviceMaxSge = 16;




ibv_sge sge_in(const std::vector<uint8_t>& bytes, size_t offset,
               uint32_t length, uint32_t lkey) {
  return ibv_sge{address_of(bytes.data() + offset), length, lkey};
}

ibv_send_wr send_wr(uint64_t wr_id, ibv_sge* sges, int num_sge,
                    ibv_wr_opcode opcode, unsigned int flags) {
  ibv_send_wr wr;
  std::memset(&wr, 0, sizeof(wr));
  wr.wr_id = wr_id;
  wr.sg_list = sges;
  wr.num_sge = num_sge;
  wr.opcode = opcode;
  wr.send_flags = flags;
  return wr;
}


// A registered region besides a side's own buffer.
struct Region {
  std::vector<uint8_t> bytes;
  ibv_mr* mr = nullptr;
};

class UcSemanticsTest : public ::testing::Test {
 protected:
  // Rank 0 (a) sends to rank 1 (b). Queue pairs are connected by connect(),
  // so a test can first give a side another one.
  void SetUp() override {
    provider_.configure({});
    a_.open(provider_, verbs_, 0, /*with_channel=*/false);
    b_.open(provider_, verbs_, 1, /*with_channel=*/false);
    std::fill(b_.buffer.begin(), b_.buffer.end(), kUntouched);
  }
  void TearDown() override {
    for (auto& region : regions_) {
      EXPECT_EQ(verbs_.dereg_mr(region->mr), 0);
    }
    regions_.clear();
    a_.close();
    b_.close();
  }

  void connect() {
    a_.connect(b_, 0, 0);
    b_.connect(a_, 0, 0);
  }

  // Replaces `side`'s queue pair (before connect()) by one with these
  // entries per request and signalling.
  void recreate_qp(Side& side, uint32_t send_sge, uint32_t recv_sge,
                   int sq_sig_all) {
    ASSERT_EQ(verbs_.destroy_qp(side.qp), 0);
    side.qp = nullptr;
    ibv_qp_init_attr init = init_attr(side, IBV_QPT_UC);
    init.cap.max_send_sge = send_sge;
    init.cap.max_recv_sge = recv_sge;
    init.sq_sig_all = sq_sig_all;
    side.qp = verbs_.create_qp(side.pd, &init);
    ASSERT_NE(side.qp, nullptr) << "errno " << errno;
  }

  static ibv_qp_init_attr init_attr(Side& side, ibv_qp_type type) {
    ibv_qp_init_attr init;
    std::memset(&init, 0, sizeof(init));
    init.send_cq = side.cq;
    init.recv_cq = side.cq;
    init.cap.max_send_wr = testing::kSideQueueDepth;
    init.cap.max_recv_wr = testing::kSideQueueDepth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.qp_type = type;
    return init;
  }

  // A second registered region of `bytes` in `side`'s protection domain,
  // filled with kUntouched.
  Region& add_region(Side& side, size_t bytes) {
    auto region = std::make_unique<Region>();
    region->bytes.assign(bytes, kUntouched);
    region->mr = verbs_.reg_mr(side.pd, region->bytes.data(), bytes,
                               testing::kSideAccess);
    EXPECT_NE(region->mr, nullptr);
    regions_.push_back(std::move(region));
    return *regions_.back();
  }

  // Posts a receive of `sges` on `side`.
  static int post_recv(Side& side, uint64_t wr_id, ibv_sge* sges, int num_sge) {
    ibv_recv_wr wr;
    std::memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = sges;
    wr.num_sge = num_sge;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(side.qp, &wr, &bad);
  }

  // Posts `wr` alone on `side`; on failure *bad_wr must point at it.
  static int post_send(Side& side, ibv_send_wr& wr) {
    ibv_send_wr* bad = nullptr;
    const int err = ibv_post_send(side.qp, &wr, &bad);
    if (err != 0) {
      EXPECT_EQ(bad, &wr);
    }
    return err;
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

  SimProvider provider_;
  RealVerbs verbs_{SimProvider::path()};
  Side a_, b_;
  std::vector<std::unique_ptr<Region>> regions_;
};

TEST_F(UcSemanticsTest, SendWithoutImmediateArrivesWithoutTheFlag) {
  connect();
  const std::vector<uint8_t> message = pattern(100, 3);
  std::copy(message.begin(), message.end(), a_.buffer.begin());
  ASSERT_EQ(b_.post_recv(21), 0);
  ibv_sge sge = sge_in(a_.buffer, 0, 100, a_.mr->lkey);
  ibv_send_wr wr = send_wr(11, &sge, 1, IBV_WR_SEND, IBV_SEND_SIGNALED);
  ASSERT_EQ(post_send(a_, wr), 0);

  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the SEND never arrived";
  EXPECT_EQ(wc.wr_id, 21u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_EQ(wc.byte_len, 100u);
  EXPECT_EQ(wc.wc_flags & IBV_WC_WITH_IMM, 0u);
  EXPECT_EQ(wc.qp_num, b_.qp->qp_num);
  EXPECT_EQ(slice(b_.buffer, 0, 100), message);
  EXPECT_EQ(b_.buffer[100], kUntouched);

  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the SEND never completed";
  EXPECT_EQ(wc.wr_id, 11u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  EXPECT_EQ(wc.qp_num, a_.qp->qp_num);
}

TEST_F(UcSemanticsTest, SendWithImmediateKeepsItInNetworkOrder) {
  connect();
  const std::vector<uint8_t> message = pattern(48, 5);
  std::copy(message.begin(), message.end(), a_.buffer.begin());
  ASSERT_EQ(b_.post_recv(22), 0);
  ibv_sge sge = sge_in(a_.buffer, 0, 48, a_.mr->lkey);
  ibv_send_wr wr =
      send_wr(12, &sge, 1, IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED);
  // Bytes that differ, so a swap on either side shows.
  wr.imm_data = htobe32(0xa1b2c3d4);
  ASSERT_EQ(post_send(a_, wr), 0);

  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the SEND never arrived";
  EXPECT_EQ(wc.wr_id, 22u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_EQ(wc.byte_len, 48u);
  EXPECT_NE(wc.wc_flags & IBV_WC_WITH_IMM, 0u);
  EXPECT_EQ(wc.imm_data, htobe32(0xa1b2c3d4));  // as posted, network order
  EXPECT_EQ(be32toh(wc.imm_data), 0xa1b2c3d4u);
  EXPECT_EQ(slice(b_.buffer, 0, 48), message);
}

// Three entries, out of address order and from two regions, arrive as one
// message: their concatenation in list order.
TEST_F(UcSemanticsTest, GatheredSendArrivesAsTheConcatenation) {
  ASSERT_NO_FATAL_FAILURE(recreate_qp(a_, 3, 1, 0));
  connect();
  Region& other = add_region(a_, 1024);
  const std::vector<uint8_t> first = pattern(30, 1);
  const std::vector<uint8_t> second = pattern(10, 2);
  const std::vector<uint8_t> third = pattern(20, 3);
  std::copy(first.begin(), first.end(), a_.buffer.begin() + 100);
  std::copy(second.begin(), second.end(), other.bytes.begin() + 500);
  std::copy(third.begin(), third.end(), a_.buffer.begin() + 7);
  ibv_sge sges[3] = {sge_in(a_.buffer, 100, 30, a_.mr->lkey),
                     sge_in(other.bytes, 500, 10, other.mr->lkey),
                     sge_in(a_.buffer, 7, 20, a_.mr->lkey)};
  ASSERT_EQ(b_.post_recv(23), 0);
  ibv_send_wr wr = send_wr(13, sges, 3, IBV_WR_SEND, IBV_SEND_SIGNALED);
  ASSERT_EQ(post_send(a_, wr), 0);

  std::vector<uint8_t> expected = first;
  expected.insert(expected.end(), second.begin(), second.end());
  expected.insert(expected.end(), third.begin(), third.end());
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the gathered SEND never arrived";
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, 60u);
  EXPECT_EQ(slice(b_.buffer, 0, 60), expected);
  EXPECT_EQ(b_.buffer[60], kUntouched);
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the SEND never completed";
  EXPECT_EQ(wc.wr_id, 13u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

// The device's max_sge (16) is the most a queue pair may ask for, and a
// request may use them all.
TEST_F(UcSemanticsTest, SixteenEntriesAreTheDevicesLimit) {
  ibv_device_attr device;
  ASSERT_EQ(verbs_.query_device(a_.context, &device), 0);
  EXPECT_EQ(device.max_sge, static_cast<int>(kDeviceMaxSge));
  ibv_qp_init_attr too_many = init_attr(a_, IBV_QPT_UC);
  too_many.cap.max_send_sge = kDeviceMaxSge + 1;
  errno = 0;
  EXPECT_EQ(verbs_.create_qp(a_.pd, &too_many), nullptr);
  EXPECT_EQ(errno, EINVAL);

  ASSERT_NO_FATAL_FAILURE(recreate_qp(a_, kDeviceMaxSge, 1, 0));
  connect();
  // Entry i: 4 bytes at offset 64 * (15 - i), so list order is not address
  // order.
  std::vector<ibv_sge> sges;
  std::vector<uint8_t> expected;
  for (uint32_t i = 0; i < kDeviceMaxSge; ++i) {
    const size_t offset = 64 * (kDeviceMaxSge - 1 - i);
    const std::vector<uint8_t> piece = pattern(4, static_cast<uint8_t>(i));
    std::copy(piece.begin(), piece.end(), a_.buffer.begin() + offset);
    expected.insert(expected.end(), piece.begin(), piece.end());
    sges.push_back(sge_in(a_.buffer, offset, 4, a_.mr->lkey));
  }
  ASSERT_EQ(b_.post_recv(24), 0);
  ibv_send_wr wr =
      send_wr(14, sges.data(), kDeviceMaxSge, IBV_WR_SEND, IBV_SEND_SIGNALED);
  ASSERT_EQ(post_send(a_, wr), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the SEND never arrived";
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, 4 * kDeviceMaxSge);
  EXPECT_EQ(slice(b_.buffer, 0, 4 * kDeviceMaxSge), expected);
}

// A receive of two entries (in two regions) is filled in list order; a
// message shorter than the receive fills only its first bytes.
TEST_F(UcSemanticsTest, ScatteredReceiveFillsEntriesInOrder) {
  ASSERT_NO_FATAL_FAILURE(recreate_qp(b_, 1, 2, 0));
  connect();
  Region& other = add_region(b_, 256);
  // Entry 0: 10 bytes of the other region; entry 1: 50 bytes of b's buffer.
  ibv_sge sges[2] = {sge_in(other.bytes, 100, 10, other.mr->lkey),
                     sge_in(b_.buffer, 200, 50, b_.mr->lkey)};
  ASSERT_EQ(post_recv(b_, 31, sges, 2), 0);
  const std::vector<uint8_t> message = pattern(40, 9);
  std::copy(message.begin(), message.end(), a_.buffer.begin());
  ASSERT_EQ(a_.post_send(41, 40, 1), 0);

  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the SEND never arrived";
  EXPECT_EQ(wc.wr_id, 31u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, 40u);
  EXPECT_EQ(slice(other.bytes, 100, 10), slice(message, 0, 10));
  EXPECT_EQ(slice(b_.buffer, 200, 30), slice(message, 10, 30));
  // The rest of entry 1, and what lies around both, is untouched.
  EXPECT_EQ(slice(b_.buffer, 230, 20), std::vector<uint8_t>(20, kUntouched));
  EXPECT_EQ(b_.buffer[199], kUntouched);
  EXPECT_EQ(other.bytes[99], kUntouched);
  EXPECT_EQ(other.bytes[110], kUntouched);

  // 5 bytes: only the first five of entry 0.
  std::fill(other.bytes.begin(), other.bytes.end(), kUntouched);
  std::fill(b_.buffer.begin(), b_.buffer.end(), kUntouched);
  ASSERT_EQ(post_recv(b_, 32, sges, 2), 0);
  const std::vector<uint8_t> short_message = pattern(5, 77);
  std::copy(short_message.begin(), short_message.end(), a_.buffer.begin());
  ASSERT_EQ(a_.post_send(42, 5, 2), 0);
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the short SEND never arrived";
  EXPECT_EQ(wc.wr_id, 32u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, 5u);
  EXPECT_EQ(slice(other.bytes, 100, 5), short_message);
  EXPECT_EQ(slice(other.bytes, 105, 5), std::vector<uint8_t>(5, kUntouched));
  EXPECT_EQ(slice(b_.buffer, 200, 50), std::vector<uint8_t>(50, kUntouched));
}

// IBV_SEND_INLINE copies the bytes when posted: the memory needs no
// registration (lkey 0) and may be reused as soon as ibv_post_send returns.
TEST_F(UcSemanticsTest, InlineSendFromUnregisteredMemory) {
  connect();
  std::vector<uint8_t> source = pattern(64, 11);
  const std::vector<uint8_t> original = source;
  ASSERT_EQ(b_.post_recv(25), 0);
  ibv_sge sge = sge_in(source, 0, 64, 0);
  ibv_send_wr wr = send_wr(15, &sge, 1, IBV_WR_SEND_WITH_IMM,
                           IBV_SEND_INLINE | IBV_SEND_SIGNALED);
  wr.imm_data = htobe32(64);
  ASSERT_EQ(post_send(a_, wr), 0);
  std::fill(source.begin(), source.end(), 0);

  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the inline SEND never arrived";
  EXPECT_EQ(wc.wr_id, 25u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, 64u);
  EXPECT_EQ(be32toh(wc.imm_data), 64u);
  EXPECT_EQ(slice(b_.buffer, 0, 64), original);
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the SEND never completed";
  EXPECT_EQ(wc.wr_id, 15u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);

  // Without IBV_SEND_INLINE the same request needs a region: lkey 0 names
  // none, so it fails with a local protection error.
  source = original;
  wr.send_flags = IBV_SEND_SIGNALED;
  ASSERT_EQ(post_send(a_, wr), 0);
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the failed SEND never completed";
  EXPECT_EQ(wc.wr_id, 15u);
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
}

// max_inline_data (256) bytes go inline; one more is refused, and in a
// chain the requests before the refused one are posted.
TEST_F(UcSemanticsTest, InlineSendsUpToMaxInlineData) {
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(verbs_.query_qp(a_.qp, &attr, IBV_QP_CAP, &init), 0);
  EXPECT_EQ(init.cap.max_inline_data, kMaxInline);
  connect();
  const std::vector<uint8_t> fits = pattern(kMaxInline, 13);
  const std::vector<uint8_t> too_long = pattern(kMaxInline + 1, 17);
  ibv_sge fits_sge = sge_in(fits, 0, kMaxInline, 0);
  ibv_sge too_long_sge = sge_in(too_long, 0, kMaxInline + 1, 0);
  ibv_send_wr first = send_wr(16, &fits_sge, 1, IBV_WR_SEND,
                              IBV_SEND_INLINE | IBV_SEND_SIGNALED);
  ibv_send_wr second = send_wr(17, &too_long_sge, 1, IBV_WR_SEND,
                               IBV_SEND_INLINE | IBV_SEND_SIGNALED);
  first.next = &second;
  ASSERT_EQ(b_.post_recv(26), 0);
  ASSERT_EQ(b_.post_recv(27), 0);
  ibv_send_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_send(a_.qp, &first, &bad), EINVAL);
  EXPECT_EQ(bad, &second);

  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the 256-byte SEND never arrived";
  EXPECT_EQ(wc.wr_id, 26u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, kMaxInline);
  EXPECT_EQ(slice(b_.buffer, 0, kMaxInline), fits);
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the SEND never completed";
  EXPECT_EQ(wc.wr_id, 16u);
  // The refused request was not sent: nothing more on either side.
  EXPECT_TRUE(watch(a_.cq).empty());
  EXPECT_TRUE(watch(b_.cq).empty());
}

// The limit is on the request's bytes, whatever its entries.
TEST_F(UcSemanticsTest, InlineLimitCountsEveryEntry) {
  ASSERT_NO_FATAL_FAILURE(recreate_qp(a_, 2, 1, 0));
  connect();
  const std::vector<uint8_t> head = pattern(200, 19);
  const std::vector<uint8_t> tail = pattern(57, 23);
  ibv_sge over[2] = {sge_in(head, 0, 200, 0), sge_in(tail, 0, 57, 0)};
  ibv_send_wr wr =
      send_wr(18, over, 2, IBV_WR_SEND, IBV_SEND_INLINE | IBV_SEND_SIGNALED);
  EXPECT_EQ(post_send(a_, wr), EINVAL);

  ibv_sge fits[2] = {sge_in(head, 0, 200, 0), sge_in(tail, 0, 56, 0)};
  wr.sg_list = fits;
  ASSERT_EQ(b_.post_recv(28), 0);
  ASSERT_EQ(post_send(a_, wr), 0);
  std::vector<uint8_t> expected = head;
  expected.insert(expected.end(), tail.begin(), tail.begin() + 56);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the inline SEND never arrived";
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, kMaxInline);
  EXPECT_EQ(slice(b_.buffer, 0, kMaxInline), expected);
}

// With sq_sig_all 0 a successful send completes only if it asked to.
TEST_F(UcSemanticsTest, UnsignaledSendGivesNoCompletion) {
  connect();
  ASSERT_EQ(b_.post_recv(29), 0);
  ibv_sge sge = sge_in(a_.buffer, 0, 32, a_.mr->lkey);
  ibv_send_wr unsignaled = send_wr(19, &sge, 1, IBV_WR_SEND, 0);
  ASSERT_EQ(post_send(a_, unsignaled), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the unsignaled SEND never "
                                              "arrived";
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  // It arrived, so it left a long ago: still no completion.
  EXPECT_TRUE(watch(a_.cq).empty());

  ASSERT_EQ(b_.post_recv(30), 0);
  ibv_send_wr signaled = send_wr(20, &sge, 1, IBV_WR_SEND, IBV_SEND_SIGNALED);
  ASSERT_EQ(post_send(a_, signaled), 0);
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the signaled SEND never "
                                              "completed";
  EXPECT_EQ(wc.wr_id, 20u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  EXPECT_TRUE(watch(a_.cq).empty());
  ASSERT_TRUE(next_completion(b_.cq, &wc));
  EXPECT_EQ(wc.wr_id, 30u);
}

// A queue pair created with sq_sig_all 1 completes every send, asked or
// not.
TEST_F(UcSemanticsTest, SqSigAllSignalsEverySend) {
  ASSERT_NO_FATAL_FAILURE(recreate_qp(a_, 1, 1, 1));
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(verbs_.query_qp(a_.qp, &attr, IBV_QP_CAP, &init), 0);
  EXPECT_EQ(init.sq_sig_all, 1);
  connect();
  ibv_sge sge = sge_in(a_.buffer, 0, 16, a_.mr->lkey);
  for (uint64_t id = 1; id <= 3; ++id) {
    ASSERT_EQ(b_.post_recv(100 + id), 0);
    ibv_send_wr wr = send_wr(id, &sge, 1, IBV_WR_SEND, 0);
    ASSERT_EQ(post_send(a_, wr), 0);
  }
  for (uint64_t id = 1; id <= 3; ++id) {
    ibv_wc wc;
    ASSERT_TRUE(next_completion(a_.cq, &wc))
        << "send " << id << " never completed";
    EXPECT_EQ(wc.wr_id, id);
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  }
  EXPECT_TRUE(watch(a_.cq).empty());
}

// UC has no RDMA READ and no atomics: refused when posted, nothing sent,
// and the queue pair keeps working.
TEST_F(UcSemanticsTest, ReadAndAtomicsAreRefused) {
  connect();
  ibv_sge sge = sge_in(a_.buffer, 0, 8, a_.mr->lkey);
  const uint64_t remote = address_of(b_.buffer.data());
  for (const ibv_wr_opcode opcode :
       {IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
        IBV_WR_ATOMIC_FETCH_AND_ADD}) {
    ibv_send_wr wr = send_wr(50 + opcode, &sge, 1, opcode, IBV_SEND_SIGNALED);
    if (opcode == IBV_WR_RDMA_READ) {
      wr.wr.rdma.remote_addr = remote;
      wr.wr.rdma.rkey = b_.mr->rkey;
    } else {
      wr.wr.atomic.remote_addr = remote;
      wr.wr.atomic.rkey = b_.mr->rkey;
      wr.wr.atomic.compare_add = 1;
      wr.wr.atomic.swap = 2;
    }
    EXPECT_EQ(post_send(a_, wr), EINVAL) << "opcode " << opcode;
  }
  EXPECT_TRUE(watch(a_.cq).empty());

  ASSERT_EQ(b_.post_recv(33), 0);
  ASSERT_EQ(a_.post_send(34, 8, 5), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the SEND never arrived";
  EXPECT_EQ(wc.wr_id, 33u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
}

// A request with more entries than the queue pair was created for.
TEST_F(UcSemanticsTest, MoreEntriesThanTheQueuePairTakesAreRefused) {
  connect();  // max_send_sge and max_recv_sge 1
  ibv_sge sges[2] = {sge_in(a_.buffer, 0, 8, a_.mr->lkey),
                     sge_in(a_.buffer, 8, 8, a_.mr->lkey)};
  ibv_send_wr wr = send_wr(70, sges, 2, IBV_WR_SEND, IBV_SEND_SIGNALED);
  EXPECT_EQ(post_send(a_, wr), EINVAL);

  ibv_sge recv_sges[2] = {sge_in(b_.buffer, 0, 8, b_.mr->lkey),
                          sge_in(b_.buffer, 8, 8, b_.mr->lkey)};
  ibv_recv_wr recv;
  std::memset(&recv, 0, sizeof(recv));
  recv.wr_id = 71;
  recv.sg_list = recv_sges;
  recv.num_sge = 2;
  ibv_recv_wr* bad = nullptr;
  EXPECT_EQ(ibv_post_recv(b_.qp, &recv, &bad), EINVAL);
  EXPECT_EQ(bad, &recv);
  EXPECT_TRUE(watch(a_.cq).empty());
  EXPECT_TRUE(watch(b_.cq).empty());
}

// An entry must lie in a region registered in the queue pair's protection
// domain under its lkey. One that does not (a key deregistered since, a
// range past the region's end, another domain's key) is taken by the post
// and fails with IBV_WC_LOC_PROT_ERR, which puts the queue pair in the
// error state, as rdma-core's software providers (rxe) do; later requests
// flush.
TEST_F(UcSemanticsTest, AnEntryOutsideAnyRegionFailsWithALocalProtectionError) {
  connect();
  std::vector<uint8_t> gone(64);
  ibv_mr* mr =
      verbs_.reg_mr(a_.pd, gone.data(), gone.size(), testing::kSideAccess);
  ASSERT_NE(mr, nullptr);
  const uint32_t stale_key = mr->lkey;
  ASSERT_EQ(verbs_.dereg_mr(mr), 0);

  ibv_sge stale = sge_in(gone, 0, 64, stale_key);
  ibv_send_wr wr = send_wr(80, &stale, 1, IBV_WR_SEND, IBV_SEND_SIGNALED);
  ASSERT_EQ(post_send(a_, wr), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the failed SEND never completed";
  EXPECT_EQ(wc.wr_id, 80u);
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(wc.opcode, IBV_WC_SEND);
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(verbs_.query_qp(a_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);

  // The right key, but past the region's end: the queue pair is in error
  // already, so the request flushes.
  ibv_sge past_end =
      sge_in(a_.buffer, testing::kSideBufferBytes - 8, 16, a_.mr->lkey);
  wr = send_wr(82, &past_end, 1, IBV_WR_SEND, IBV_SEND_SIGNALED);
  ASSERT_EQ(post_send(a_, wr), 0);
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the SEND never flushed";
  EXPECT_EQ(wc.wr_id, 82u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);

  // a's key on b's queue pair: another protection domain's region.
  ibv_sge foreign = sge_in(a_.buffer, 0, 16, a_.mr->lkey);
  ASSERT_EQ(post_recv(b_, 81, &foreign, 1), 0);
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the failed receive never "
                                              "completed";
  EXPECT_EQ(wc.wr_id, 81u);
  EXPECT_EQ(wc.status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(wc.opcode, IBV_WC_RECV);
  EXPECT_TRUE(watch(a_.cq).empty());
}

// ibv_modify_qp to IBV_QPS_ERR flushes every posted request, as a program
// tearing a queue pair down expects.
TEST_F(UcSemanticsTest, ModifyToErrorFlushesWhatIsPosted) {
  connect();
  ASSERT_EQ(b_.post_recv(90), 0);
  ASSERT_EQ(b_.post_recv(91), 0);
  ibv_qp_attr attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(verbs_.modify_qp(b_.qp, &attr, IBV_QP_STATE), 0);
  ibv_wc wc;
  for (uint64_t id : {90u, 91u}) {
    ASSERT_TRUE(next_completion(b_.cq, &wc)) << "receive " << id;
    EXPECT_EQ(wc.wr_id, id);
    EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
  }
  ibv_qp_init_attr init;
  ASSERT_EQ(verbs_.query_qp(b_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
}

// Only UC is simulated: RC and UD queue pairs are not created, with
// EOPNOTSUPP and a line on stderr saying so.
TEST_F(UcSemanticsTest, RcAndUdQueuePairsAreNotSupported) {
  for (const ibv_qp_type type : {IBV_QPT_RC, IBV_QPT_UD}) {
    ibv_qp_init_attr init = init_attr(a_, type);
    ::testing::internal::CaptureStderr();
    errno = 0;
    EXPECT_EQ(verbs_.create_qp(a_.pd, &init), nullptr) << "type " << type;
    EXPECT_EQ(errno, EOPNOTSUPP) << "type " << type;
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_NE(said.find("IBV_QPT_UC"), std::string::npos) << said;
  }
  EXPECT_EQ(provider_.live("qps", 0), 1);  // a's own UC queue pair only
}

// UC drops a message that finds no receive posted; it is not kept for a
// receive posted later.
TEST_F(UcSemanticsTest, MessageWithNoReceiveIsDropped) {
  connect();
  const std::vector<uint8_t> dropped = pattern(64, 29);
  std::copy(dropped.begin(), dropped.end(), a_.buffer.begin());
  ASSERT_EQ(a_.post_send(90, 64, 1), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the first SEND never left";
  EXPECT_EQ(wc.wr_id, 90u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);  // it left; UC says no more
  EXPECT_TRUE(watch(b_.cq).empty());     // time for it to arrive

  // Two receives, in the two halves of b's buffer.
  ibv_sge halves[2] = {sge_in(b_.buffer, 0, 2048, b_.mr->lkey),
                       sge_in(b_.buffer, 2048, 2048, b_.mr->lkey)};
  ASSERT_EQ(post_recv(b_, 91, &halves[0], 1), 0);
  ASSERT_EQ(post_recv(b_, 92, &halves[1], 1), 0);
  const std::vector<uint8_t> delivered = pattern(32, 31);
  std::copy(delivered.begin(), delivered.end(), a_.buffer.begin());
  ASSERT_EQ(a_.post_send(93, 32, 2), 0);
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the second SEND never arrived";
  EXPECT_EQ(wc.wr_id, 91u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, 32u);
  EXPECT_EQ(be32toh(wc.imm_data), 2u);
  EXPECT_EQ(slice(b_.buffer, 0, 32), delivered);
  // The second receive stays empty.
  EXPECT_TRUE(watch(b_.cq).empty());
  EXPECT_EQ(b_.buffer[2048], kUntouched);
}

// A message longer than its receive completes that receive with
// IBV_WC_LOC_LEN_ERR and puts the queue pair in error: what is posted
// afterwards, receives and sends, completes with IBV_WC_WR_FLUSH_ERR.
TEST_F(UcSemanticsTest, ReceiveTooSmallPutsTheQueuePairInError) {
  connect();
  ibv_sge small = sge_in(b_.buffer, 0, 16, b_.mr->lkey);
  ASSERT_EQ(post_recv(b_, 94, &small, 1), 0);
  ASSERT_EQ(a_.post_send(95, 64, 1), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the receive never completed";
  EXPECT_EQ(wc.wr_id, 94u);
  EXPECT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
  EXPECT_EQ(wc.qp_num, b_.qp->qp_num);
  ASSERT_TRUE(next_completion(a_.cq, &wc)) << "the SEND never completed";
  EXPECT_EQ(wc.wr_id, 95u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);  // it left the sender

  ASSERT_EQ(b_.post_recv(96), 0);
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the next receive never "
                                              "flushed";
  EXPECT_EQ(wc.wr_id, 96u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);

  // An unsignaled send completes too: errors are always reported. A
  // receive posted on a shows that nothing left b.
  ASSERT_EQ(a_.post_recv(98), 0);
  ibv_sge sge = sge_in(b_.buffer, 0, 8, b_.mr->lkey);
  ibv_send_wr wr = send_wr(97, &sge, 1, IBV_WR_SEND, 0);
  ASSERT_EQ(post_send(b_, wr), 0);
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the send never flushed";
  EXPECT_EQ(wc.wr_id, 97u);
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_TRUE(watch(a_.cq).empty());
}

// A SEND of no bytes (no entries) still carries its immediate.
TEST_F(UcSemanticsTest, ZeroByteSendCarriesItsImmediate) {
  connect();
  ASSERT_EQ(b_.post_recv(35), 0);
  ibv_send_wr wr =
      send_wr(36, nullptr, 0, IBV_WR_SEND_WITH_IMM, IBV_SEND_SIGNALED);
  wr.imm_data = htobe32(9);
  ASSERT_EQ(post_send(a_, wr), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the SEND never arrived";
  EXPECT_EQ(wc.wr_id, 35u);
  EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
  EXPECT_EQ(wc.byte_len, 0u);
  EXPECT_NE(wc.wc_flags & IBV_WC_WITH_IMM, 0u);
  EXPECT_EQ(be32toh(wc.imm_data), 9u);
  EXPECT_EQ(b_.buffer[0], kUntouched);
}

// After the error completion the queue pair is in the error state, and
// ibv_query_qp says so (verbs: a local length error moves a UC queue pair
// to IBV_QPS_ERR; ibv_query_qp reports the current state).
TEST_F(UcSemanticsTest, QueryQpReportsTheErrorState) {
  connect();
  ibv_sge small = sge_in(b_.buffer, 0, 16, b_.mr->lkey);
  ASSERT_EQ(post_recv(b_, 37, &small, 1), 0);
  ASSERT_EQ(a_.post_send(38, 64, 1), 0);
  ibv_wc wc;
  ASSERT_TRUE(next_completion(b_.cq, &wc)) << "the receive never completed";
  ASSERT_EQ(wc.status, IBV_WC_LOC_LEN_ERR);
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(verbs_.query_qp(b_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_ERR);
  // The sender's queue pair saw no error.
  ASSERT_EQ(verbs_.query_qp(a_.qp, &attr, IBV_QP_STATE, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
}

}  // namespace
}  // namespace weft::verbs
