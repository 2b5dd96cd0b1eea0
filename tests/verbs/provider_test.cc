// The simulated verbs provider on its own, driven through raw verbs calls
// (the loader's table and the ABI mirror): it must validate like a real
// provider, since VerbsFabric's error handling is only as good as what the
// provider rejects.
#include <arpa/inet.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/verbs/sim_provider.h"
#include "verbs/abi.h"
#include "verbs/departure_check.h"
#include "verbs/loader.h"

namespace weft::verbs {
namespace {

using testing::SimProvider;

constexpr int kInitMask = abi::IBV_QP_STATE | abi::IBV_QP_PKEY_INDEX |
                          abi::IBV_QP_PORT | abi::IBV_QP_ACCESS_FLAGS;
constexpr int kRtrMask = abi::IBV_QP_STATE | abi::IBV_QP_AV |
                         abi::IBV_QP_PATH_MTU | abi::IBV_QP_DEST_QPN |
                         abi::IBV_QP_RQ_PSN;
constexpr int kRtsMask = abi::IBV_QP_STATE | abi::IBV_QP_SQ_PSN;
constexpr int kAccess =
    abi::IBV_ACCESS_LOCAL_WRITE | abi::IBV_ACCESS_REMOTE_WRITE;
constexpr size_t kBufferBytes = 4096;

// One rank's device opened by hand: context, PD, CQ, a registered buffer.
struct Side {
  const VerbsApi* api = nullptr;
  abi::ibv_device** list = nullptr;
  abi::ibv_context* context = nullptr;
  abi::ibv_pd* pd = nullptr;
  abi::ibv_cq* cq = nullptr;
  abi::ibv_mr* mr = nullptr;
  std::vector<uint8_t> buffer = std::vector<uint8_t>(kBufferBytes);

  void open(SimProvider& provider, const VerbsApi& a, uint32_t rank) {
    api = &a;
    ASSERT_EQ(provider.set_rank(rank), 0);
    int n = 0;
    list = api->get_device_list(&n);
    ASSERT_EQ(n, 1);
    context = api->open_device(list[0]);
    pd = api->alloc_pd(context);
    cq = api->create_cq(context, 64, nullptr, nullptr, 0);
    mr = api->reg_mr(pd, buffer.data(), buffer.size(), kAccess);
    ASSERT_TRUE(context && pd && cq && mr);
  }
  abi::ibv_qp* create_qp(abi::ibv_qp_type type = abi::IBV_QPT_UC) {
    abi::ibv_qp_init_attr init;
    std::memset(&init, 0, sizeof(init));
    init.send_cq = cq;
    init.recv_cq = cq;
    init.cap = {4, 4, 1, 1, 0};
    init.qp_type = type;
    return api->create_qp(pd, &init);
  }
  abi::ibv_gid gid(int index) {
    abi::ibv_gid g;
    EXPECT_EQ(api->query_gid(context, 1, index, &g), 0);
    return g;
  }
  void close() {
    if (mr) api->dereg_mr(mr);
    if (cq) api->destroy_cq(cq);
    if (pd) api->dealloc_pd(pd);
    if (context) api->close_device(context);
    if (list) api->free_device_list(list);
  }
};

// A receive request of one entry: `length` bytes at `at` in region `lkey`.
struct OneEntryRecv {
  OneEntryRecv(const void* at, uint32_t length, uint32_t lkey)
      : sge{reinterpret_cast<uint64_t>(at), length, lkey} {
    std::memset(&wr, 0, sizeof(wr));
    wr.sg_list = &sge;
    wr.num_sge = 1;
  }
  OneEntryRecv(const OneEntryRecv&) = delete;
  OneEntryRecv& operator=(const OneEntryRecv&) = delete;

  abi::ibv_sge sge;
  abi::ibv_recv_wr wr;
};

abi::ibv_qp_attr init_attr() {
  abi::ibv_qp_attr a;
  std::memset(&a, 0, sizeof(a));
  a.qp_state = abi::IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = kAccess;
  return a;
}

abi::ibv_qp_attr rtr_attr(uint32_t dest_qpn, const abi::ibv_gid& dgid,
                          uint8_t sgid_index) {
  abi::ibv_qp_attr a;
  std::memset(&a, 0, sizeof(a));
  a.qp_state = abi::IBV_QPS_RTR;
  a.path_mtu = abi::IBV_MTU_1024;
  a.dest_qp_num = dest_qpn;
  a.ah_attr.port_num = 1;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.grh.dgid = dgid;
  a.ah_attr.grh.sgid_index = sgid_index;
  return a;
}

class ProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto library = VerbsLibrary::load(SimProvider::path());
    ASSERT_TRUE(library.ok()) << library.status();
    api_ = &(*library)->api();
  }
  // Opens rank 0 and rank 1 (after configure()).
  void open_both() {
    a_.open(provider_, *api_, 0);
    b_.open(provider_, *api_, 1);
  }
  void TearDown() override {
    for (abi::ibv_qp* qp : qps_) api_->destroy_qp(qp);
    a_.close();
    b_.close();
  }
  abi::ibv_qp* track(abi::ibv_qp* qp) {
    if (qp != nullptr) qps_.push_back(qp);
    return qp;
  }

  SimProvider provider_;
  const VerbsApi* api_ = nullptr;
  Side a_, b_;
  std::vector<abi::ibv_qp*> qps_;
};

// The provider's own device file (what weft-sim launch's ranks and a
// standalone world load) passes the one check every reader of a device
// file makes (fabric/topology_check.h): no device is listed, and the
// provider's error says the file's line.
TEST_F(ProviderTest, ADeviceFileWithAOneWayCableListsNoDeviceAndSaysWhy) {
  const std::string path = ::testing::TempDir() + "/weft_provider_" +
                           std::to_string(getpid()) + "_one_way.json";
  std::ofstream(path) << R"([[null, "a"], [null, null]])";
  provider_.configure({{"WEFT_SIM_VERBS_TOPOLOGY", path}});
  int n = -1;
  EXPECT_EQ(api_->get_device_list(&n), nullptr);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(provider_.last_error(),
            "weft simulated verbs provider: WEFT_SIM_VERBS_TOPOLOGY=" + path +
                ": " + path +
                ": rank 0 names device a toward rank 1 (cell [0][1]) but rank "
                "1 names none toward rank 0 (cell [1][0] is null); name rank "
                "1's device toward rank 0 in cell [1][0], or set cell [0][1] "
                "to null");
  std::remove(path.c_str());
}

TEST_F(ProviderTest, InitNeedsExactlyItsAttributeMask) {
  provider_.configure({});
  open_both();
  abi::ibv_qp* qp = track(a_.create_qp());
  ASSERT_NE(qp, nullptr);
  abi::ibv_qp_attr attr = init_attr();
  EXPECT_EQ(api_->modify_qp(qp, &attr, kInitMask & ~abi::IBV_QP_PORT), EINVAL);
  EXPECT_EQ(api_->modify_qp(qp, &attr, kInitMask | abi::IBV_QP_SQ_PSN), EINVAL);
  attr.port_num = 2;
  EXPECT_EQ(api_->modify_qp(qp, &attr, kInitMask), EINVAL);
  attr.port_num = 1;
  EXPECT_EQ(api_->modify_qp(qp, &attr, kInitMask), 0);
  EXPECT_EQ(qp->state, abi::IBV_QPS_INIT);
}

TEST_F(ProviderTest, StatesMoveOnlyInOrder) {
  provider_.configure({});
  open_both();
  abi::ibv_qp* qa = track(a_.create_qp());
  abi::ibv_qp* qb = track(b_.create_qp());
  abi::ibv_qp_attr rts;
  std::memset(&rts, 0, sizeof(rts));
  rts.qp_state = abi::IBV_QPS_RTS;
  EXPECT_EQ(api_->modify_qp(qa, &rts, kRtsMask), EINVAL);  // from RESET
  abi::ibv_qp_attr init = init_attr();
  ASSERT_EQ(api_->modify_qp(qa, &init, kInitMask), 0);
  EXPECT_EQ(api_->modify_qp(qa, &rts, kRtsMask), EINVAL);  // skips RTR
  abi::ibv_qp_attr rtr = rtr_attr(qb->qp_num, b_.gid(1), 1);
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask & ~abi::IBV_QP_RQ_PSN), EINVAL);
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask), 0);
  EXPECT_EQ(api_->modify_qp(qa, &rts, kRtsMask), 0);
  EXPECT_EQ(qa->state, abi::IBV_QPS_RTS);
}

TEST_F(ProviderTest, RtrChecksTheGidsAndQueuePairNumber) {
  provider_.configure({});  // link-local at index 0, IPv4 at 1
  open_both();
  abi::ibv_qp* qa = track(a_.create_qp());
  abi::ibv_qp* qb = track(b_.create_qp());
  abi::ibv_qp_attr init = init_attr();
  ASSERT_EQ(api_->modify_qp(qa, &init, kInitMask), 0);
  // MLX's hard-coded sgid_index 1 is right here only by luck; index 0 holds
  // the link-local GID, which cannot reach an IPv4 one.
  abi::ibv_qp_attr rtr = rtr_attr(qb->qp_num, b_.gid(1), 0);
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask), ETIMEDOUT);
  rtr = rtr_attr(qb->qp_num, b_.gid(1), 5);  // past the table
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask), EINVAL);
  rtr = rtr_attr(qb->qp_num, a_.gid(1), 1);  // our own GID
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask), ETIMEDOUT);
  rtr = rtr_attr(qb->qp_num + 1000, b_.gid(1), 1);
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask), EINVAL);
  rtr = rtr_attr(qb->qp_num, b_.gid(1), 1);
  rtr.ah_attr.is_global = 0;  // a GID-addressed port needs a GRH
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask), EINVAL);
  rtr = rtr_attr(qb->qp_num, b_.gid(1), 1);
  rtr.path_mtu = abi::IBV_MTU_4096;  // above the active MTU
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask), EINVAL);
  rtr = rtr_attr(qb->qp_num, b_.gid(0), 0);  // link-local to link-local
  EXPECT_EQ(api_->modify_qp(qa, &rtr, kRtrMask), 0);
  EXPECT_EQ(provider_.sgid_index(qa->qp_num), 0);
}

TEST_F(ProviderTest, OnlyUnreliableConnectedQueuePairs) {
  provider_.configure({});
  open_both();
  errno = 0;
  EXPECT_EQ(track(a_.create_qp(abi::IBV_QPT_RC)), nullptr);
  EXPECT_EQ(errno, EOPNOTSUPP);
}

TEST_F(ProviderTest, PostingPastTheQueueDepthFailsWithEnomem) {
  for (const char* apple : {"0", "1"}) {
    provider_.configure({{"WEFT_SIM_VERBS_APPLE_LIMITS", apple}});
    a_ = Side();
    b_ = Side();
    open_both();
    abi::ibv_qp* qp = a_.create_qp();  // 4 receives deep
    abi::ibv_qp_attr init = init_attr();
    ASSERT_EQ(api_->modify_qp(qp, &init, kInitMask), 0);
    OneEntryRecv recv(a_.buffer.data(), 64, a_.mr->lkey);
    abi::ibv_recv_wr& wr = recv.wr;
    abi::ibv_recv_wr* bad = nullptr;
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(a_.context->ops.post_recv(qp, &wr, &bad), 0);
    }
    // rdma-core returns the errno; Apple returns it negated.
    const int expected = apple[0] == '1' ? -ENOMEM : ENOMEM;
    EXPECT_EQ(a_.context->ops.post_recv(qp, &wr, &bad), expected) << apple;
    EXPECT_EQ(bad, &wr);
    api_->destroy_qp(qp);
    a_.close();
    b_.close();
    a_ = Side();
    b_ = Side();
  }
}

TEST_F(ProviderTest, AppleAllowsAHundredMemoryRegionsPerDevice) {
  provider_.configure({{"WEFT_SIM_VERBS_APPLE_LIMITS", "1"}});
  open_both();  // one region each already
  std::vector<abi::ibv_mr*> regions;
  for (int i = 1; i < 100; ++i) {
    abi::ibv_mr* mr =
        api_->reg_mr(a_.pd, a_.buffer.data(), a_.buffer.size(), kAccess);
    ASSERT_NE(mr, nullptr) << i;
    regions.push_back(mr);
  }
  errno = 0;
  EXPECT_EQ(api_->reg_mr(a_.pd, a_.buffer.data(), a_.buffer.size(), kAccess),
            nullptr);
  EXPECT_EQ(errno, ENOMEM);
  for (abi::ibv_mr* mr : regions) EXPECT_EQ(api_->dereg_mr(mr), 0);
}

TEST_F(ProviderTest, OutOfOrderTeardownIsRefusedWithEbusy) {
  provider_.configure({});
  open_both();
  EXPECT_EQ(api_->dealloc_pd(a_.pd), EBUSY);  // its region is registered
  EXPECT_EQ(api_->close_device(a_.context), EBUSY);
  EXPECT_EQ(provider_.live("teardown_errors", 0), 2);
}

TEST_F(ProviderTest, DeregisteringARegionWithWorkPostedIsRefusedWithEbusy) {
  provider_.configure({});
  open_both();
  abi::ibv_qp* qp = a_.create_qp();
  abi::ibv_qp_attr init = init_attr();
  ASSERT_EQ(api_->modify_qp(qp, &init, kInitMask), 0);
  OneEntryRecv recv(a_.buffer.data() + 3, 64, a_.mr->lkey);
  abi::ibv_recv_wr* bad = nullptr;
  ASSERT_EQ(a_.context->ops.post_recv(qp, &recv.wr, &bad), 0);
  // The receive would copy into the buffer at its completion.
  EXPECT_EQ(api_->dereg_mr(a_.mr), EBUSY);
  EXPECT_EQ(provider_.live("mrs", 0), 1);
  EXPECT_EQ(provider_.live("teardown_errors", 0), 1);
  // With the queue pair gone, nothing is posted on it any more.
  EXPECT_EQ(api_->destroy_qp(qp), 0);
  EXPECT_EQ(api_->dereg_mr(a_.mr), 0);
  a_.mr = nullptr;
}

TEST_F(ProviderTest, ShadowsOfDeregisteredMemoryAreReused) {
  provider_.configure({});
  open_both();
  EXPECT_EQ(provider_.live("shadows", 0), 1);  // a_'s buffer
  std::vector<std::vector<uint8_t>> buffers(10, std::vector<uint8_t>(1000));
  for (std::vector<uint8_t>& buffer : buffers) {
    abi::ibv_mr* mr =
        api_->reg_mr(a_.pd, buffer.data(), buffer.size(), kAccess);
    ASSERT_NE(mr, nullptr);
    ASSERT_EQ(api_->dereg_mr(mr), 0);
  }
  // One more: the first buffer's shadow, spare once it was deregistered,
  // served the other nine.
  EXPECT_EQ(provider_.live("shadows", 0), 2);
  // A larger one needs a slab of its own; two regions at once need two.
  std::vector<uint8_t> large(8000);
  abi::ibv_mr* one = api_->reg_mr(a_.pd, large.data(), large.size(), kAccess);
  abi::ibv_mr* two =
      api_->reg_mr(a_.pd, buffers[0].data(), buffers[0].size(), kAccess);
  ASSERT_TRUE(one != nullptr && two != nullptr);
  EXPECT_EQ(provider_.live("shadows", 0), 3);
  EXPECT_EQ(api_->dereg_mr(one), 0);
  EXPECT_EQ(api_->dereg_mr(two), 0);
}

TEST_F(ProviderTest, GidTableAndPortAsConfigured) {
  provider_.configure({{"WEFT_SIM_VERBS_GID_MODE", "ipv4_at:2"}});
  open_both();
  abi::ibv_port_attr port;
  std::memset(&port, 0, sizeof(port));
  ASSERT_EQ(api_->query_port(a_.context, 1, &port), 0);
  EXPECT_EQ(port.state, abi::IBV_PORT_ACTIVE);
  EXPECT_EQ(port.gid_tbl_len, 3);
  EXPECT_EQ(port.active_mtu, abi::IBV_MTU_1024);
  EXPECT_EQ(port.link_layer, abi::IBV_LINK_LAYER_ETHERNET);
  const abi::ibv_gid ipv4 = a_.gid(2);
  EXPECT_EQ(ipv4.raw[10], 0xff);
  EXPECT_EQ(ipv4.raw[12], 169);
  EXPECT_EQ(a_.gid(0).raw[0], 0xfe);
  abi::ibv_gid past;
  errno = 0;
  EXPECT_EQ(api_->query_gid(a_.context, 1, 3, &past), -1);
  EXPECT_EQ(errno, EINVAL);
  EXPECT_EQ(std::string(api_->wc_status_str(abi::IBV_WC_WR_FLUSH_ERR)),
            "Work Request Flushed Error");
}

// Departures are the simulation server's to report: in one process no
// rank ever leaves the world, so the provider says it cannot tell, and a
// group there keeps watching its side channel.
TEST_F(ProviderTest, InOneProcessDeparturesAreLeftToTheSideChannel) {
  provider_.configure({});
  ASSERT_NE(api_->sim_departed, nullptr);
  uint32_t rank = 0;
  int64_t left_at_ns = 0;
  EXPECT_EQ(api_->sim_departed(&rank, &left_at_ns, 1), -1);
  auto library = VerbsLibrary::load(SimProvider::path());
  ASSERT_TRUE(library.ok()) << library.status();
  EXPECT_FALSE(departure_check(**library, 0));
}

}  // namespace
}  // namespace weft::verbs
