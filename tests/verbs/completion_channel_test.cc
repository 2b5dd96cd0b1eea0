// Completion channels on the simulated provider, called as rdma-core
// programs call them (ibv_create_comp_channel, ibv_create_cq with the
// channel, ibv_req_notify_cq through the operation table, ibv_get_cq_event,
// ibv_ack_cq_events): which completions raise an event, that a wait always
// ends (an event, or ETIMEDOUT at the world's time limit, or EAGAIN on a
// non-blocking fd), the channel's fd, and the teardown rules.
#include <endian.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "tests/verbs/real_verbs.h"
#include "tests/verbs/sim_provider.h"

namespace weft::verbs {
namespace {

using testing::RealVerbs;
using testing::Side;
using testing::SimProvider;

// sim::WorldOptions' time limit, which the provider's world keeps: the
// longest ibv_get_cq_event waits, in virtual time.
constexpr int64_t kWaitLimitNs = int64_t{60} * 1'000'000'000;
constexpr uint64_t kRecvId = 7;
constexpr uint64_t kSendId = 9;
constexpr uint32_t kBytes = 64;
constexpr uint32_t kImmediate = 0x1234;
constexpr int kMaxRounds = 10'000;  // deadline of the poll loops below

// Readable now (a zero timeout: never waits).
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

class CompletionChannelTest : public ::testing::Test {
 protected:
  // Rank 0 sends to rank 1, whose CQ is on a completion channel.
  void open(const std::map<std::string, std::string>& variables = {}) {
    provider_.configure(variables);
    a_.open(provider_, verbs_, 0, /*with_channel=*/false);
    b_.open(provider_, verbs_, 1, /*with_channel=*/true);
    a_.connect(b_, 0, 0);
    b_.connect(a_, 0, 0);
  }
  void TearDown() override {
    a_.close();
    b_.close();
  }

  // Polls b's CQ for the receive, failing the test if it is not the one
  // sent.
  void expect_received() {
    ibv_wc wc;
    ASSERT_EQ(ibv_poll_cq(b_.cq, 1, &wc), 1);
    EXPECT_EQ(wc.wr_id, kRecvId);
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_EQ(wc.opcode, IBV_WC_RECV);
    EXPECT_EQ(be32toh(wc.imm_data), kImmediate);
  }

  SimProvider provider_;
  RealVerbs verbs_{SimProvider::path()};
  Side a_, b_;
};

TEST_F(CompletionChannelTest, ACompletionAfterArmingRaisesOneEvent) {
  open();
  ASSERT_EQ(b_.post_recv(kRecvId), 0);
  ASSERT_EQ(ibv_req_notify_cq(b_.cq, 0), 0);
  EXPECT_FALSE(readable(b_.channel->fd));
  const int64_t before_ns = provider_.now_ns();
  ASSERT_EQ(a_.post_send(kSendId, kBytes, kImmediate), 0);

  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  ASSERT_EQ(verbs_.get_cq_event(b_.channel, &cq, &cq_context), 0);
  EXPECT_EQ(cq, b_.cq);
  EXPECT_EQ(cq_context, &b_.cq_tag);
  EXPECT_GT(provider_.now_ns(), before_ns);  // it waited for the message
  EXPECT_FALSE(readable(b_.channel->fd));    // the one event was taken
  expect_received();

  // The CQ was disarmed by its event: with nothing armed the next wait can
  // never end with an event, and returns at the time limit.
  const int64_t wait_from_ns = provider_.now_ns();
  errno = 0;
  EXPECT_EQ(verbs_.get_cq_event(b_.channel, &cq, &cq_context), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_EQ(provider_.now_ns() - wait_from_ns, kWaitLimitNs);

  // The CQ cannot go while its event is not acknowledged (rdma-core would
  // wait for the acknowledgement forever).
  ASSERT_EQ(verbs_.destroy_qp(b_.qp), 0);
  b_.qp = nullptr;
  EXPECT_EQ(verbs_.destroy_cq(b_.cq), EBUSY);
  verbs_.ack_cq_events(b_.cq, 1);
  EXPECT_EQ(b_.cq->comp_events_completed, 1u);
  EXPECT_EQ(b_.channel->refcnt, 1);
  EXPECT_EQ(verbs_.destroy_cq(b_.cq), 0);
  b_.cq = nullptr;
  EXPECT_EQ(b_.channel->refcnt, 0);
}

TEST_F(CompletionChannelTest, CompletionsFromBeforeArmingRaiseNoEvent) {
  open();
  ASSERT_EQ(b_.post_recv(kRecvId), 0);
  ASSERT_EQ(a_.post_send(kSendId, kBytes, kImmediate), 0);
  // Let the message land (1 ms of virtual time; the tb5 link takes
  // microseconds) while polling only the sender's CQ.
  const int64_t start_ns = provider_.now_ns();
  ibv_wc wc;
  for (int round = 0;
       round < kMaxRounds && provider_.now_ns() < start_ns + 1'000'000;
       ++round) {
    ASSERT_GE(ibv_poll_cq(a_.cq, 1, &wc), 0);
  }
  ASSERT_EQ(ibv_req_notify_cq(b_.cq, 0), 0);
  const int64_t wait_from_ns = provider_.now_ns();
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  errno = 0;
  EXPECT_EQ(verbs_.get_cq_event(b_.channel, &cq, &cq_context), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_EQ(provider_.now_ns() - wait_from_ns, kWaitLimitNs);
  // The completion was there all along, and is still there.
  expect_received();
}

// A message the fabric loses never completes: the wait ends at the time
// limit instead of spinning (or blocking) forever.
TEST_F(CompletionChannelTest, WaitForALostMessageEndsAtTheTimeLimit) {
  open({{"WEFT_SIM_VERBS_FAULTS", "drop from=0 to=1 frame=1"}});
  ASSERT_EQ(b_.post_recv(kRecvId), 0);
  ASSERT_EQ(ibv_req_notify_cq(b_.cq, 0), 0);
  ASSERT_EQ(a_.post_send(kSendId, kBytes, kImmediate), 0);
  const int64_t wait_from_ns = provider_.now_ns();
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  errno = 0;
  EXPECT_EQ(verbs_.get_cq_event(b_.channel, &cq, &cq_context), -1);
  EXPECT_EQ(errno, ETIMEDOUT);
  EXPECT_EQ(provider_.now_ns() - wait_from_ns, kWaitLimitNs);
  ibv_wc wc;
  EXPECT_EQ(ibv_poll_cq(b_.cq, 1, &wc), 0);  // nothing arrived
  // The send itself completed (it left the sender).
  ASSERT_EQ(ibv_poll_cq(a_.cq, 1, &wc), 1);
  EXPECT_EQ(wc.wr_id, kSendId);
}

TEST_F(CompletionChannelTest, PollingRaisesTheEventAndTheFdShowsIt) {
  open();
  ASSERT_EQ(b_.post_recv(kRecvId), 0);
  ASSERT_EQ(ibv_req_notify_cq(b_.cq, 0), 0);
  ASSERT_EQ(a_.post_send(kSendId, kBytes, kImmediate), 0);
  // Only the sender's CQ is polled; each poll moves the world, and the
  // receive's completion raises b's event on the way.
  ibv_wc wc;
  for (int round = 0; round < kMaxRounds && !readable(b_.channel->fd);
       ++round) {
    ASSERT_GE(ibv_poll_cq(a_.cq, 1, &wc), 0);
  }
  ASSERT_TRUE(readable(b_.channel->fd));
  // The event is pending: taking it does not move the world.
  const int64_t now_ns = provider_.now_ns();
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  ASSERT_EQ(verbs_.get_cq_event(b_.channel, &cq, &cq_context), 0);
  EXPECT_EQ(cq, b_.cq);
  EXPECT_EQ(provider_.now_ns(), now_ns);
  EXPECT_FALSE(readable(b_.channel->fd));
  verbs_.ack_cq_events(cq, 1);
  expect_received();
}

// A program that sleeps on events sees its completion at the same virtual
// time as one that polls (the wait moves the world one poll step at a time).
TEST_F(CompletionChannelTest, WaitingSeesCompletionsWhenPollingWould) {
  open();
  ASSERT_EQ(b_.post_recv(kRecvId), 0);
  ASSERT_EQ(a_.post_send(kSendId, kBytes, kImmediate), 0);
  ibv_wc wc;
  int found = 0;
  for (int round = 0; round < kMaxRounds && found == 0; ++round) {
    found = ibv_poll_cq(b_.cq, 1, &wc);
  }
  ASSERT_EQ(found, 1);
  const int64_t polled_at_ns = provider_.now_ns();
  TearDown();

  open();
  ASSERT_EQ(b_.post_recv(kRecvId), 0);
  ASSERT_EQ(ibv_req_notify_cq(b_.cq, 0), 0);
  ASSERT_EQ(a_.post_send(kSendId, kBytes, kImmediate), 0);
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  ASSERT_EQ(verbs_.get_cq_event(b_.channel, &cq, &cq_context), 0);
  EXPECT_EQ(provider_.now_ns(), polled_at_ns);
  verbs_.ack_cq_events(cq, 1);
}

TEST_F(CompletionChannelTest, NonBlockingFdGivesEagainWithoutWaiting) {
  open();
  const int flags = fcntl(b_.channel->fd, F_GETFL);
  ASSERT_EQ(fcntl(b_.channel->fd, F_SETFL, flags | O_NONBLOCK), 0);
  ASSERT_EQ(b_.post_recv(kRecvId), 0);
  ASSERT_EQ(ibv_req_notify_cq(b_.cq, 0), 0);
  const int64_t now_ns = provider_.now_ns();
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  errno = 0;
  EXPECT_EQ(verbs_.get_cq_event(b_.channel, &cq, &cq_context), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_EQ(provider_.now_ns(), now_ns);
}

TEST_F(CompletionChannelTest, BadArgumentsAreEinval) {
  open();
  ibv_cq stranger;
  std::memset(&stranger, 0, sizeof(stranger));
  stranger.context = b_.context;  // the inline call goes through its table
  EXPECT_EQ(ibv_req_notify_cq(&stranger, 0), EINVAL);
  ibv_comp_channel unknown{b_.context, -1, 0};
  ibv_cq* cq = nullptr;
  void* cq_context = nullptr;
  errno = 0;
  EXPECT_EQ(verbs_.get_cq_event(&unknown, &cq, &cq_context), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(verbs_.destroy_comp_channel(&unknown), EINVAL);
  // A channel of another context, and a completion vector the device lacks
  // (it has one), as the kernel refuses them.
  errno = 0;
  EXPECT_EQ(verbs_.create_cq(a_.context, 4, nullptr, b_.channel, 0), nullptr);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(verbs_.create_cq(b_.context, 4, nullptr, b_.channel, 1), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(b_.channel->refcnt, 1);  // b's own CQ only
}

TEST_F(CompletionChannelTest, TeardownInOrderOnly) {
  open();
  EXPECT_EQ(provider_.live("channels", 1), 1);
  EXPECT_EQ(verbs_.destroy_comp_channel(b_.channel), EBUSY);  // b's CQ
  // A context with nothing but a channel cannot close before it.
  ibv_context* context = verbs_.open_device(b_.list[0]);
  ASSERT_NE(context, nullptr);
  ibv_comp_channel* channel = verbs_.create_comp_channel(context);
  ASSERT_NE(channel, nullptr);
  EXPECT_GE(channel->fd, 0);
  EXPECT_EQ(channel->context, context);
  EXPECT_EQ(provider_.live("channels", 1), 2);
  EXPECT_EQ(verbs_.close_device(context), EBUSY);
  EXPECT_EQ(verbs_.destroy_comp_channel(channel), 0);
  EXPECT_EQ(verbs_.close_device(context), 0);
  EXPECT_EQ(provider_.live("channels", 1), 1);
  EXPECT_EQ(provider_.live("teardown_errors", 0), 2);
}

}  // namespace
}  // namespace weft::verbs
