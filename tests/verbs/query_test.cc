// What the simulated provider reports to programs written against
// rdma-core: ibv_query_device, ibv_query_port (a RoCE-like port),
// ibv_query_gid_type, ibv_query_qp after each state change, and the
// ibv_*_str names, compared with the system's rdma-core library.
#include <dlfcn.h>
#include <endian.h>
#include <infiniband/verbs.h>

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

using testing::kGidTypeIbRoceV1;
using testing::kGidTypeRoceV2;
using testing::RealVerbs;
using testing::Side;
using testing::SimProvider;

// The documented node GUID of rank r's device i (its index among the rank's
// devices): 02:00:5e:00:00:<r, 16 bits>:<i + 1, 16 bits>, host order.
uint64_t expected_guid(uint32_t rank, uint32_t index) {
  return (uint64_t{0x02005e} << 40) | (uint64_t{rank} << 16) | (index + 1);
}

class QueryTest : public ::testing::Test {
 protected:
  void open(const std::map<std::string, std::string>& variables = {}) {
    provider_.configure(variables);
    a_.open(provider_, verbs_, 0, /*with_channel=*/false);
    b_.open(provider_, verbs_, 1, /*with_channel=*/false);
  }
  void TearDown() override {
    a_.close();
    b_.close();
  }

  SimProvider provider_;
  RealVerbs verbs_{SimProvider::path()};
  Side a_, b_;
};

TEST_F(QueryTest, DeviceLooksLikeARealOne) {
  open();
  ibv_device_attr attr;
  ASSERT_EQ(verbs_.query_device(b_.context, &attr), 0);
  EXPECT_STREQ(attr.fw_ver, WEFT_PROJECT_VERSION);
  EXPECT_EQ(be64toh(attr.node_guid), expected_guid(1, 0));
  EXPECT_EQ(attr.sys_image_guid, attr.node_guid);
  EXPECT_EQ(attr.vendor_id, 0x02005eu);  // the GUIDs' company id
  EXPECT_EQ(attr.phys_port_cnt, 1);
  EXPECT_EQ(attr.max_sge, 16);  // as documented in docs/simulated-verbs.md
  EXPECT_EQ(attr.max_qp_wr, 1024);
  EXPECT_EQ(attr.max_cqe, 4096);
  EXPECT_EQ(attr.atomic_cap, IBV_ATOMIC_NONE);
  EXPECT_EQ(attr.max_srq, 0);
  EXPECT_EQ(verbs_.query_device(nullptr, &attr), EINVAL);
}

TEST_F(QueryTest, PortIsAnActiveRocePort) {
  open();
  ibv_port_attr port;
  ASSERT_EQ(verbs_.port(a_.context, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.phys_state, 5);  // LINK_UP
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  EXPECT_NE(port.port_cap_flags & IBV_PORT_IP_BASED_GIDS, 0u);
  EXPECT_EQ(port.max_mtu, IBV_MTU_4096);
  EXPECT_EQ(port.active_mtu, IBV_MTU_1024);
  EXPECT_EQ(port.gid_tbl_len, 2);
  EXPECT_EQ(port.lid, 0);
  EXPECT_EQ(port.pkey_tbl_len, 1);
  EXPECT_EQ(verbs_.query_port(a_.context, 2,
                              reinterpret_cast<_compat_ibv_port_attr*>(&port)),
            EINVAL);
}

TEST_F(QueryTest, DownPortSaysSo) {
  provider_.configure({{"WEFT_SIM_VERBS_PORT", "down:sim_0_1_0"}});
  ASSERT_EQ(provider_.set_rank(0), 0);
  int n = 0;
  ibv_device** list = verbs_.get_device_list(&n);
  ASSERT_EQ(n, 1);
  ibv_context* context = verbs_.open_device(list[0]);
  ASSERT_NE(context, nullptr);
  ibv_port_attr port;
  EXPECT_EQ(verbs_.port(context, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_DOWN);
  EXPECT_EQ(port.phys_state, 3);  // DISABLED
  EXPECT_EQ(verbs_.close_device(context), 0);
  verbs_.free_device_list(list);
}

TEST_F(QueryTest, GidTypes) {
  // Link-local at 0, IPv4-mapped at 3, 1 and 2 unused.
  open({{"WEFT_SIM_VERBS_GID_MODE", "ipv4_at:3"}});
  int type = -1;
  for (unsigned int index : {0u, 3u}) {
    type = -1;
    EXPECT_EQ(verbs_.query_gid_type(a_.context, 1, index, &type), 0);
    EXPECT_EQ(type, kGidTypeRoceV2) << index;
  }
  // rdma-core answers IB/RoCE v1 for an unused entry.
  type = -1;
  EXPECT_EQ(verbs_.query_gid_type(a_.context, 1, 2, &type), 0);
  EXPECT_EQ(type, kGidTypeIbRoceV1);
  errno = 0;
  EXPECT_EQ(verbs_.query_gid_type(a_.context, 1, 4, &type), -1);
  EXPECT_EQ(errno, EINVAL);
  errno = 0;
  EXPECT_EQ(verbs_.query_gid_type(a_.context, 2, 0, &type), -1);
  EXPECT_EQ(errno, EINVAL);
}

TEST_F(QueryTest, QueryQpFollowsTheQueuePair) {
  open();
  ibv_qp_attr attr;
  ibv_qp_init_attr init;
  ASSERT_EQ(verbs_.query_qp(a_.qp, &attr, IBV_QP_CAP, &init), 0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RESET);
  EXPECT_EQ(init.qp_context, &a_);
  EXPECT_EQ(init.send_cq, a_.cq);
  EXPECT_EQ(init.recv_cq, a_.cq);
  EXPECT_EQ(init.srq, nullptr);
  EXPECT_EQ(init.qp_type, IBV_QPT_UC);
  EXPECT_EQ(init.sq_sig_all, 0);
  EXPECT_EQ(init.cap.max_send_wr, testing::kSideQueueDepth);
  EXPECT_EQ(init.cap.max_recv_wr, testing::kSideQueueDepth);
  EXPECT_EQ(init.cap.max_send_sge, 1u);
  EXPECT_EQ(init.cap.max_recv_sge, 1u);
  // Every queue pair takes inline sends of up to 256 bytes (uc_pingpong
  // then sends messages that small inline).
  EXPECT_EQ(init.cap.max_inline_data, 256u);
  EXPECT_EQ(attr.cap.max_inline_data, 256u);

  a_.connect(b_, 0x111, 0x222);
  std::memset(&attr, 0, sizeof(attr));
  ASSERT_EQ(
      verbs_.query_qp(a_.qp, &attr,
                      IBV_QP_STATE | IBV_QP_PORT | IBV_QP_AV | IBV_QP_DEST_QPN |
                          IBV_QP_RQ_PSN | IBV_QP_SQ_PSN | IBV_QP_PATH_MTU |
                          IBV_QP_ACCESS_FLAGS,
                      &init),
      0);
  EXPECT_EQ(attr.qp_state, IBV_QPS_RTS);
  EXPECT_EQ(attr.port_num, 1);
  EXPECT_EQ(attr.path_mtu, IBV_MTU_1024);
  EXPECT_EQ(attr.dest_qp_num, b_.qp->qp_num);
  EXPECT_EQ(attr.rq_psn, 0x111u);
  EXPECT_EQ(attr.sq_psn, 0x222u);
  EXPECT_EQ(attr.qp_access_flags, static_cast<unsigned>(testing::kSideAccess));
  EXPECT_EQ(attr.ah_attr.is_global, 1);
  EXPECT_EQ(attr.ah_attr.grh.sgid_index, testing::kIpv4GidIndex);
  const ibv_gid peer = b_.gid(testing::kIpv4GidIndex);
  EXPECT_EQ(std::memcmp(attr.ah_attr.grh.dgid.raw, peer.raw, sizeof(peer)), 0);

  ibv_qp stranger;
  std::memset(&stranger, 0, sizeof(stranger));
  EXPECT_EQ(verbs_.query_qp(&stranger, &attr, IBV_QP_STATE, &init), EINVAL);
  EXPECT_EQ(verbs_.query_qp(a_.qp, nullptr, IBV_QP_STATE, &init), EINVAL);
}

// rdma-core's own libibverbs.so.1, as the dynamic linker finds it (never
// weft's drop-in, should LD_LIBRARY_PATH point there: checked).
class SystemLibrary {
 public:
  SystemLibrary() {
    handle_ = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr && dlsym(handle_, "weft_sim_verbs_reset")) {
      dlclose(handle_);  // LD_LIBRARY_PATH points at weft's drop-in
      handle_ = nullptr;
    }
  }
  ~SystemLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  void* handle() const { return handle_; }

 private:
  void* handle_ = nullptr;
};

TEST(VerbsNamesTest, EqualRdmaCoresNames) {
  SystemLibrary system;
  if (system.handle() == nullptr) {
    GTEST_SKIP() << "rdma-core's libibverbs.so.1 is not installed";
  }
  void* ours = dlopen(SimProvider::path(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(ours, nullptr) << dlerror();
  // Declared with an int parameter (same ABI as the enums) so values
  // outside each enum can be passed.
  using NameFn = const char* (*)(int);
  for (const char* name : {"ibv_node_type_str", "ibv_port_state_str",
                           "ibv_event_type_str", "ibv_wc_status_str"}) {
    auto expected = reinterpret_cast<NameFn>(dlsym(system.handle(), name));
    auto actual = reinterpret_cast<NameFn>(dlsym(ours, name));
    ASSERT_NE(expected, nullptr) << name;
    ASSERT_NE(actual, nullptr) << name;
    // Every value of each enum, and a margin either side.
    for (int value = -4; value < 32; ++value) {
      EXPECT_STREQ(actual(value), expected(value))
          << name << "(" << value << ")";
    }
  }
  dlclose(ours);
}

}  // namespace
}  // namespace weft::verbs
