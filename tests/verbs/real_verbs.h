// Test helpers that drive the simulated verbs provider the way a program
// written against rdma-core does: through rdma-core's own declarations
// (<infiniband/verbs.h>), with the entry points found by dlsym in the
// provider and the header's inline calls (ibv_post_send, ibv_poll_cq,
// ibv_req_notify_cq) going through the context's operation table. Also two
// ranks' devices opened and a UC queue pair connected between them.
#ifndef WEFT_TESTS_VERBS_REAL_VERBS_H_
#define WEFT_TESTS_VERBS_REAL_VERBS_H_

#include <dlfcn.h>
#include <endian.h>
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/verbs/sim_provider.h"

namespace weft::verbs::testing {

// rdma-core 44's ibv_query_gid_type (infiniband/driver.h, not installed by
// libibverbs-dev), with the type as an int: the enum's values are 0 for
// "IB/RoCE v1" and 1 for "RoCE v2".
using QueryGidTypeFn = int (*)(ibv_context*, uint8_t, unsigned int, int*);
inline constexpr int kGidTypeIbRoceV1 = 0;
inline constexpr int kGidTypeRoceV2 = 1;

// The provider's ibv_* functions with rdma-core's signatures.
struct RealVerbs {
  explicit RealVerbs(const char* path) {
    // Never unloaded, as weft's loader never unloads a verbs library: the
    // provider keeps its state for the life of the process.
    handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    EXPECT_NE(handle, nullptr) << dlerror();
    resolve("ibv_get_device_list", &get_device_list);
    resolve("ibv_free_device_list", &free_device_list);
    resolve("ibv_open_device", &open_device);
    resolve("ibv_close_device", &close_device);
    resolve("ibv_query_device", &query_device);
    resolve("ibv_query_port", &query_port);
    resolve("ibv_query_gid", &query_gid);
    resolve("ibv_query_gid_type", &query_gid_type);
    resolve("ibv_alloc_pd", &alloc_pd);
    resolve("ibv_dealloc_pd", &dealloc_pd);
    resolve("ibv_reg_mr", &reg_mr);
    resolve("ibv_dereg_mr", &dereg_mr);
    resolve("ibv_create_comp_channel", &create_comp_channel);
    resolve("ibv_destroy_comp_channel", &destroy_comp_channel);
    resolve("ibv_create_cq", &create_cq);
    resolve("ibv_destroy_cq", &destroy_cq);
    resolve("ibv_get_cq_event", &get_cq_event);
    resolve("ibv_ack_cq_events", &ack_cq_events);
    resolve("ibv_create_qp", &create_qp);
    resolve("ibv_query_qp", &query_qp);
    resolve("ibv_modify_qp", &modify_qp);
    resolve("ibv_destroy_qp", &destroy_qp);
  }
  ~RealVerbs() = default;
  RealVerbs(const RealVerbs&) = delete;
  RealVerbs& operator=(const RealVerbs&) = delete;

  // ibv_query_port takes rdma-core's compat structure, a prefix of
  // ibv_port_attr.
  int port(ibv_context* context, ibv_port_attr* attr) const {
    std::memset(attr, 0, sizeof(*attr));
    return query_port(context, 1,
                      reinterpret_cast<_compat_ibv_port_attr*>(attr));
  }

  void* handle = nullptr;
  ibv_device** (*get_device_list)(int*) = nullptr;
  void (*free_device_list)(ibv_device**) = nullptr;
  ibv_context* (*open_device)(ibv_device*) = nullptr;
  int (*close_device)(ibv_context*) = nullptr;
  int (*query_device)(ibv_context*, ibv_device_attr*) = nullptr;
  int (*query_port)(ibv_context*, uint8_t, _compat_ibv_port_attr*) = nullptr;
  int (*query_gid)(ibv_context*, uint8_t, int, ibv_gid*) = nullptr;
  QueryGidTypeFn query_gid_type = nullptr;
  ibv_pd* (*alloc_pd)(ibv_context*) = nullptr;
  int (*dealloc_pd)(ibv_pd*) = nullptr;
  ibv_mr* (*reg_mr)(ibv_pd*, void*, size_t, int) = nullptr;
  int (*dereg_mr)(ibv_mr*) = nullptr;
  ibv_comp_channel* (*create_comp_channel)(ibv_context*) = nullptr;
  int (*destroy_comp_channel)(ibv_comp_channel*) = nullptr;
  ibv_cq* (*create_cq)(ibv_context*, int, void*, ibv_comp_channel*,
                       int) = nullptr;
  int (*destroy_cq)(ibv_cq*) = nullptr;
  int (*get_cq_event)(ibv_comp_channel*, ibv_cq**, void**) = nullptr;
  void (*ack_cq_events)(ibv_cq*, unsigned int) = nullptr;
  ibv_qp* (*create_qp)(ibv_pd*, ibv_qp_init_attr*) = nullptr;
  int (*query_qp)(ibv_qp*, ibv_qp_attr*, int, ibv_qp_init_attr*) = nullptr;
  int (*modify_qp)(ibv_qp*, ibv_qp_attr*, int) = nullptr;
  int (*destroy_qp)(ibv_qp*) = nullptr;

 private:
  template <typename Fn>
  void resolve(const char* name, Fn* out) {
    void* p = handle == nullptr ? nullptr : dlsym(handle, name);
    EXPECT_NE(p, nullptr) << name;
    *out = reinterpret_cast<Fn>(p);
  }
};

// What the data-path tests share.
// Every wait polls at most this often; each poll moves the world one poll
// step (1 us by default), so 10 ms of virtual time, where the tb5 link
// takes microseconds per message.
inline constexpr int kMaxPolls = 10'000;
// How long a queue that must stay empty is watched, in virtual time.
inline constexpr int64_t kQuietNs = 1'000'000;
// Buffers start out holding this, to see which bytes were written.
inline constexpr uint8_t kUntouched = 0xee;

// Bytes that vary with (seed, index), never kUntouched.
inline std::vector<uint8_t> pattern(size_t bytes, uint8_t seed) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i) {
    const auto b = static_cast<uint8_t>(seed + 7 * i);
    out[i] = b == kUntouched ? 0 : b;
  }
  return out;
}

inline std::vector<uint8_t> slice(const std::vector<uint8_t>& bytes,
                                  size_t offset, size_t length) {
  return std::vector<uint8_t>(bytes.begin() + offset,
                              bytes.begin() + offset + length);
}

inline uint64_t address_of(const uint8_t* p) {
  return reinterpret_cast<uint64_t>(p);
}

// Polls `cq` until it yields one completion; false if none came within
// kMaxPolls polls.
inline bool next_completion(ibv_cq* cq, ibv_wc* wc) {
  for (int i = 0; i < kMaxPolls; ++i) {
    const int n = ibv_poll_cq(cq, 1, wc);
    if (n < 0) {
      ADD_FAILURE() << "ibv_poll_cq returned " << n;
      return false;
    }
    if (n == 1) return true;
  }
  return false;
}

inline constexpr size_t kSideBufferBytes = 4096;
inline constexpr int kSideCqEntries = 16;
inline constexpr uint32_t kSideQueueDepth = 8;
inline constexpr uint8_t kIpv4GidIndex = 1;  // the provider's default table
inline constexpr int kSideAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

// One rank's first device, opened as uc_pingpong opens it: a context, an
// optional completion channel, a PD, a registered buffer, one CQ (on the
// channel) for both queues, a UC queue pair.
struct Side {
  const RealVerbs* verbs = nullptr;
  ibv_device** list = nullptr;
  ibv_context* context = nullptr;
  ibv_comp_channel* channel = nullptr;
  ibv_pd* pd = nullptr;
  ibv_mr* mr = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  int cq_tag = 0;  // the CQ's cq_context points here
  std::vector<uint8_t> buffer = std::vector<uint8_t>(kSideBufferBytes);

  void open(SimProvider& provider, const RealVerbs& v, uint32_t rank,
            bool with_channel) {
    verbs = &v;
    ASSERT_EQ(provider.set_rank(rank), 0);
    int n = 0;
    list = v.get_device_list(&n);
    ASSERT_GE(n, 1);
    context = v.open_device(list[0]);
    ASSERT_NE(context, nullptr);
    if (with_channel) {
      channel = v.create_comp_channel(context);
      ASSERT_NE(channel, nullptr);
    }
    pd = v.alloc_pd(context);
    mr = v.reg_mr(pd, buffer.data(), buffer.size(), kSideAccess);
    cq = v.create_cq(context, kSideCqEntries, &cq_tag, channel, 0);
    ASSERT_TRUE(pd && mr && cq);
    ibv_qp_init_attr init;
    std::memset(&init, 0, sizeof(init));
    init.qp_context = this;
    init.send_cq = cq;
    init.recv_cq = cq;
    init.cap.max_send_wr = kSideQueueDepth;
    init.cap.max_recv_wr = kSideQueueDepth;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    init.qp_type = IBV_QPT_UC;
    qp = v.create_qp(pd, &init);
    ASSERT_NE(qp, nullptr);
  }

  ibv_gid gid(int index) const {
    ibv_gid g;
    EXPECT_EQ(verbs->query_gid(context, 1, index, &g), 0);
    return g;
  }

  // INIT, then RTR towards `peer`'s queue pair (its IPv4-mapped GID), then
  // RTS, with the attribute masks uc_pingpong uses.
  void connect(const Side& peer, uint32_t rq_psn, uint32_t sq_psn) {
    ibv_qp_attr attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_INIT;
    attr.port_num = 1;
    attr.qp_access_flags = kSideAccess;
    ASSERT_EQ(verbs->modify_qp(qp, &attr,
                               IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                                   IBV_QP_ACCESS_FLAGS),
              0);
    std::memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = IBV_MTU_1024;
    attr.dest_qp_num = peer.qp->qp_num;
    attr.rq_psn = rq_psn;
    attr.ah_attr.is_global = 1;
    attr.ah_attr.port_num = 1;
    attr.ah_attr.grh.hop_limit = 1;
    attr.ah_attr.grh.dgid = peer.gid(kIpv4GidIndex);
    attr.ah_attr.grh.sgid_index = kIpv4GidIndex;
    ASSERT_EQ(verbs->modify_qp(qp, &attr,
                               IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                                   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN),
              0);
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = sq_psn;
    ASSERT_EQ(verbs->modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
  }

  // A receive of the whole buffer.
  int post_recv(uint64_t wr_id) {
    ibv_sge sge{reinterpret_cast<uint64_t>(buffer.data()),
                static_cast<uint32_t>(buffer.size()), mr->lkey};
    ibv_recv_wr wr;
    std::memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp, &wr, &bad);
  }

  // A signalled SEND_WITH_IMM of the buffer's first `bytes`.
  int post_send(uint64_t wr_id, uint32_t bytes, uint32_t imm_host) {
    ibv_sge sge{reinterpret_cast<uint64_t>(buffer.data()), bytes, mr->lkey};
    ibv_send_wr wr;
    std::memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.imm_data = htobe32(imm_host);
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp, &wr, &bad);
  }

  // Tears down what open() built, in order; a step that fails is reported.
  void close() {
    if (verbs == nullptr) return;
    if (qp != nullptr) {
      EXPECT_EQ(verbs->destroy_qp(qp), 0);
    }
    if (cq != nullptr) {
      EXPECT_EQ(verbs->destroy_cq(cq), 0);
    }
    if (mr != nullptr) {
      EXPECT_EQ(verbs->dereg_mr(mr), 0);
    }
    if (pd != nullptr) {
      EXPECT_EQ(verbs->dealloc_pd(pd), 0);
    }
    if (channel != nullptr) {
      EXPECT_EQ(verbs->destroy_comp_channel(channel), 0);
    }
    if (context != nullptr) {
      EXPECT_EQ(verbs->close_device(context), 0);
    }
    if (list != nullptr) verbs->free_device_list(list);
    *this = Side();
  }
};

}  // namespace weft::verbs::testing

#endif  // WEFT_TESTS_VERBS_REAL_VERBS_H_
