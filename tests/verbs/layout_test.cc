// Checks weft's ABI mirror (verbs/abi.h) against the real
// <infiniband/verbs.h>: every size, alignment, field offset and constant the
// mirror declares, at compile time (static_assert) and again at run time,
// where the test prints the whole table. Expected values always come from the
// real header (sizeof/offsetof/the enumerator), never from typed-in numbers.
// Also checks that fabric/wc_status.h agrees with the real header and with
// the real library's ibv_wc_status_str().
#include <dlfcn.h>
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "fabric/wc_status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verbs/abi.h"
#include "verbs/loader.h"

namespace {

namespace abi = weft::verbs::abi;

// The lists below are X-macros, kept one table for the compile-time and
// run-time checks alike.
// clang-format off
// Types whose size and alignment must match.
#define WEFT_LAYOUT_TYPES(X)                                               \
  X(ibv_gid) X(ibv_device_attr) X(ibv_port_attr) X(ibv_wc) X(ibv_pd)       \
  X(ibv_mr) X(ibv_mw_bind_info) X(ibv_global_route) X(ibv_ah_attr)         \
  X(ibv_qp_cap) X(ibv_qp_init_attr) X(ibv_qp_attr) X(ibv_sge)              \
  X(ibv_send_wr) X(ibv_recv_wr) X(ibv_context_ops) X(ibv_device)           \
  X(ibv_context) X(ibv_cq) X(ibv_qp) X(ibv_node_type)                      \
  X(ibv_transport_type) X(ibv_mtu) X(ibv_port_state) X(ibv_wc_status)      \
  X(ibv_wc_opcode) X(ibv_wc_flags) X(ibv_access_flags) X(ibv_qp_type)      \
  X(ibv_qp_attr_mask) X(ibv_qp_state) X(ibv_mig_state) X(ibv_wr_opcode)    \
  X(ibv_send_flags) X(ibv_atomic_cap) X(ibv_mw_type)

// Fields named alike in both: (type, field path).
#define WEFT_LAYOUT_FIELDS(X)                                                 \
  X(ibv_gid, raw) X(ibv_gid, global.subnet_prefix)                            \
  X(ibv_gid, global.interface_id) X(ibv_device_attr, fw_ver)                  \
  X(ibv_device_attr, node_guid) X(ibv_device_attr, sys_image_guid)            \
  X(ibv_device_attr, max_mr_size) X(ibv_device_attr, page_size_cap)           \
  X(ibv_device_attr, vendor_id) X(ibv_device_attr, vendor_part_id)            \
  X(ibv_device_attr, hw_ver) X(ibv_device_attr, max_qp)                       \
  X(ibv_device_attr, max_qp_wr) X(ibv_device_attr, device_cap_flags)          \
  X(ibv_device_attr, max_sge) X(ibv_device_attr, max_sge_rd)                  \
  X(ibv_device_attr, max_cq) X(ibv_device_attr, max_cqe)                      \
  X(ibv_device_attr, max_mr) X(ibv_device_attr, max_pd)                       \
  X(ibv_device_attr, max_qp_rd_atom) X(ibv_device_attr, max_ee_rd_atom)       \
  X(ibv_device_attr, max_res_rd_atom)                                         \
  X(ibv_device_attr, max_qp_init_rd_atom)                                     \
  X(ibv_device_attr, max_ee_init_rd_atom) X(ibv_device_attr, atomic_cap)      \
  X(ibv_device_attr, max_ee) X(ibv_device_attr, max_rdd)                      \
  X(ibv_device_attr, max_mw) X(ibv_device_attr, max_raw_ipv6_qp)              \
  X(ibv_device_attr, max_raw_ethy_qp) X(ibv_device_attr, max_mcast_grp)       \
  X(ibv_device_attr, max_mcast_qp_attach)                                     \
  X(ibv_device_attr, max_total_mcast_qp_attach) X(ibv_device_attr, max_ah)    \
  X(ibv_device_attr, max_fmr) X(ibv_device_attr, max_map_per_fmr)             \
  X(ibv_device_attr, max_srq) X(ibv_device_attr, max_srq_wr)                  \
  X(ibv_device_attr, max_srq_sge) X(ibv_device_attr, max_pkeys)               \
  X(ibv_device_attr, local_ca_ack_delay) X(ibv_device_attr, phys_port_cnt)    \
  X(ibv_port_attr, state) X(ibv_port_attr, max_mtu)                           \
  X(ibv_port_attr, active_mtu) X(ibv_port_attr, gid_tbl_len)                  \
  X(ibv_port_attr, port_cap_flags) X(ibv_port_attr, max_msg_sz)               \
  X(ibv_port_attr, bad_pkey_cntr) X(ibv_port_attr, qkey_viol_cntr)            \
  X(ibv_port_attr, pkey_tbl_len) X(ibv_port_attr, lid)                        \
  X(ibv_port_attr, sm_lid) X(ibv_port_attr, lmc)                              \
  X(ibv_port_attr, max_vl_num) X(ibv_port_attr, sm_sl)                        \
  X(ibv_port_attr, subnet_timeout) X(ibv_port_attr, init_type_reply)          \
  X(ibv_port_attr, active_width) X(ibv_port_attr, active_speed)               \
  X(ibv_port_attr, phys_state) X(ibv_port_attr, link_layer)                   \
  X(ibv_port_attr, flags) X(ibv_port_attr, port_cap_flags2)                   \
  X(ibv_wc, wr_id) X(ibv_wc, status) X(ibv_wc, opcode)                        \
  X(ibv_wc, vendor_err) X(ibv_wc, byte_len) X(ibv_wc, imm_data)               \
  X(ibv_wc, invalidated_rkey) X(ibv_wc, qp_num) X(ibv_wc, src_qp)             \
  X(ibv_wc, wc_flags) X(ibv_wc, pkey_index) X(ibv_wc, slid) X(ibv_wc, sl)     \
  X(ibv_wc, dlid_path_bits) X(ibv_pd, context) X(ibv_pd, handle)              \
  X(ibv_mr, context) X(ibv_mr, pd) X(ibv_mr, addr) X(ibv_mr, length)          \
  X(ibv_mr, handle) X(ibv_mr, lkey) X(ibv_mr, rkey)                           \
  X(ibv_mw_bind_info, mr) X(ibv_mw_bind_info, addr)                           \
  X(ibv_mw_bind_info, length) X(ibv_mw_bind_info, mw_access_flags)            \
  X(ibv_global_route, dgid) X(ibv_global_route, flow_label)                   \
  X(ibv_global_route, sgid_index) X(ibv_global_route, hop_limit)              \
  X(ibv_global_route, traffic_class) X(ibv_ah_attr, grh)                      \
  X(ibv_ah_attr, dlid) X(ibv_ah_attr, sl) X(ibv_ah_attr, src_path_bits)       \
  X(ibv_ah_attr, static_rate) X(ibv_ah_attr, is_global)                       \
  X(ibv_ah_attr, port_num) X(ibv_qp_cap, max_send_wr)                         \
  X(ibv_qp_cap, max_recv_wr) X(ibv_qp_cap, max_send_sge)                      \
  X(ibv_qp_cap, max_recv_sge) X(ibv_qp_cap, max_inline_data)                  \
  X(ibv_qp_init_attr, qp_context) X(ibv_qp_init_attr, send_cq)                \
  X(ibv_qp_init_attr, recv_cq) X(ibv_qp_init_attr, srq)                       \
  X(ibv_qp_init_attr, cap) X(ibv_qp_init_attr, qp_type)                       \
  X(ibv_qp_init_attr, sq_sig_all) X(ibv_qp_attr, qp_state)                    \
  X(ibv_qp_attr, cur_qp_state) X(ibv_qp_attr, path_mtu)                       \
  X(ibv_qp_attr, path_mig_state) X(ibv_qp_attr, qkey)                         \
  X(ibv_qp_attr, rq_psn) X(ibv_qp_attr, sq_psn)                               \
  X(ibv_qp_attr, dest_qp_num) X(ibv_qp_attr, qp_access_flags)                 \
  X(ibv_qp_attr, cap) X(ibv_qp_attr, ah_attr) X(ibv_qp_attr, alt_ah_attr)     \
  X(ibv_qp_attr, pkey_index) X(ibv_qp_attr, alt_pkey_index)                   \
  X(ibv_qp_attr, en_sqd_async_notify) X(ibv_qp_attr, sq_draining)             \
  X(ibv_qp_attr, max_rd_atomic) X(ibv_qp_attr, max_dest_rd_atomic)            \
  X(ibv_qp_attr, min_rnr_timer) X(ibv_qp_attr, port_num)                      \
  X(ibv_qp_attr, timeout) X(ibv_qp_attr, retry_cnt)                           \
  X(ibv_qp_attr, rnr_retry) X(ibv_qp_attr, alt_port_num)                      \
  X(ibv_qp_attr, alt_timeout) X(ibv_qp_attr, rate_limit) X(ibv_sge, addr)     \
  X(ibv_sge, length) X(ibv_sge, lkey) X(ibv_send_wr, wr_id)                   \
  X(ibv_send_wr, next) X(ibv_send_wr, sg_list) X(ibv_send_wr, num_sge)        \
  X(ibv_send_wr, opcode) X(ibv_send_wr, send_flags)                           \
  X(ibv_send_wr, imm_data) X(ibv_send_wr, invalidate_rkey)                    \
  X(ibv_send_wr, wr.rdma.remote_addr) X(ibv_send_wr, wr.rdma.rkey)            \
  X(ibv_send_wr, wr.atomic.remote_addr)                                       \
  X(ibv_send_wr, wr.atomic.compare_add) X(ibv_send_wr, wr.atomic.swap)        \
  X(ibv_send_wr, wr.atomic.rkey) X(ibv_send_wr, wr.ud.ah)                     \
  X(ibv_send_wr, wr.ud.remote_qpn) X(ibv_send_wr, wr.ud.remote_qkey)          \
  X(ibv_send_wr, qp_type.xrc.remote_srqn) X(ibv_send_wr, bind_mw.mw)          \
  X(ibv_send_wr, bind_mw.rkey) X(ibv_send_wr, bind_mw.bind_info)              \
  X(ibv_send_wr, tso.hdr) X(ibv_send_wr, tso.hdr_sz)                          \
  X(ibv_send_wr, tso.mss) X(ibv_recv_wr, wr_id) X(ibv_recv_wr, next)          \
  X(ibv_recv_wr, sg_list) X(ibv_recv_wr, num_sge)                             \
  X(ibv_context_ops, poll_cq) X(ibv_context_ops, post_send)                   \
  X(ibv_context_ops, post_recv) X(ibv_device, node_type)                      \
  X(ibv_device, transport_type) X(ibv_device, name)                           \
  X(ibv_device, dev_name) X(ibv_device, dev_path)                             \
  X(ibv_device, ibdev_path) X(ibv_context, device) X(ibv_context, ops)        \
  X(ibv_context, ops.poll_cq) X(ibv_context, ops.post_send)                   \
  X(ibv_context, ops.post_recv) X(ibv_context, cmd_fd)                        \
  X(ibv_context, async_fd) X(ibv_context, num_comp_vectors)                   \
  X(ibv_context, mutex) X(ibv_context, abi_compat) X(ibv_cq, context)         \
  X(ibv_cq, channel) X(ibv_cq, cq_context) X(ibv_cq, handle)                  \
  X(ibv_cq, cqe) X(ibv_cq, mutex) X(ibv_cq, cond)                             \
  X(ibv_cq, comp_events_completed) X(ibv_cq, async_events_completed)          \
  X(ibv_qp, context) X(ibv_qp, qp_context) X(ibv_qp, pd)                      \
  X(ibv_qp, send_cq) X(ibv_qp, recv_cq) X(ibv_qp, srq) X(ibv_qp, handle)      \
  X(ibv_qp, qp_num) X(ibv_qp, state) X(ibv_qp, qp_type) X(ibv_qp, mutex)      \
  X(ibv_qp, cond) X(ibv_qp, events_completed)

// Fields the mirror names differently: (type, ours, header's).
// Types the mirror names differently: (ours, header's).
#define WEFT_LAYOUT_RENAMED_TYPES(X) X(ibv_device_ops_compat, _ibv_device_ops)

#define WEFT_LAYOUT_RENAMED_FIELDS(X)                         \
  X(ibv_context_ops, before_poll_cq, _compat_query_device)    \
  X(ibv_context_ops, before_post_send, req_notify_cq)         \
  X(ibv_context_ops, after_post_recv, _compat_create_ah)      \
  X(ibv_device, ops, _ops)                                   \
  X(ibv_device, ops.dummy1, _ops._dummy1)                    \
  X(ibv_device, ops.dummy2, _ops._dummy2)

#define WEFT_LAYOUT_CONSTANTS(X)                                            \
  X(IBV_NODE_UNKNOWN) X(IBV_NODE_CA) X(IBV_TRANSPORT_UNKNOWN)               \
  X(IBV_TRANSPORT_IB) X(IBV_MTU_256) X(IBV_MTU_512) X(IBV_MTU_1024)         \
  X(IBV_MTU_2048) X(IBV_MTU_4096) X(IBV_PORT_NOP) X(IBV_PORT_DOWN)          \
  X(IBV_PORT_INIT) X(IBV_PORT_ARMED) X(IBV_PORT_ACTIVE)                     \
  X(IBV_PORT_ACTIVE_DEFER) X(IBV_LINK_LAYER_UNSPECIFIED)                    \
  X(IBV_LINK_LAYER_INFINIBAND) X(IBV_LINK_LAYER_ETHERNET)                   \
  X(IBV_WC_SUCCESS) X(IBV_WC_LOC_LEN_ERR) X(IBV_WC_WR_FLUSH_ERR)            \
  X(IBV_WC_GENERAL_ERR) X(IBV_WC_TM_RNDV_INCOMPLETE) X(IBV_WC_SEND)         \
  X(IBV_WC_RECV) X(IBV_WC_GRH) X(IBV_WC_WITH_IMM)                           \
  X(IBV_ACCESS_LOCAL_WRITE) X(IBV_ACCESS_REMOTE_WRITE)                      \
  X(IBV_ACCESS_REMOTE_READ) X(IBV_QPT_RC) X(IBV_QPT_UC) X(IBV_QPT_UD)       \
  X(IBV_QP_STATE) X(IBV_QP_CUR_STATE) X(IBV_QP_ACCESS_FLAGS)                \
  X(IBV_QP_PKEY_INDEX) X(IBV_QP_PORT) X(IBV_QP_QKEY) X(IBV_QP_AV)           \
  X(IBV_QP_PATH_MTU) X(IBV_QP_TIMEOUT) X(IBV_QP_RETRY_CNT)                  \
  X(IBV_QP_RNR_RETRY) X(IBV_QP_RQ_PSN) X(IBV_QP_MAX_QP_RD_ATOMIC)           \
  X(IBV_QP_MIN_RNR_TIMER) X(IBV_QP_SQ_PSN) X(IBV_QP_MAX_DEST_RD_ATOMIC)     \
  X(IBV_QP_DEST_QPN) X(IBV_QPS_RESET) X(IBV_QPS_INIT) X(IBV_QPS_RTR)        \
  X(IBV_QPS_RTS) X(IBV_QPS_SQD) X(IBV_QPS_SQE) X(IBV_QPS_ERR)               \
  X(IBV_MIG_MIGRATED) X(IBV_WR_RDMA_WRITE) X(IBV_WR_RDMA_WRITE_WITH_IMM)    \
  X(IBV_WR_SEND) X(IBV_WR_SEND_WITH_IMM) X(IBV_SEND_FENCE)                  \
  X(IBV_SEND_SIGNALED) X(IBV_SEND_SOLICITED) X(IBV_SEND_INLINE)             \
  X(IBV_ATOMIC_NONE) X(IBV_MW_TYPE_1) X(IBV_SYSFS_NAME_MAX)                 \
  X(IBV_SYSFS_PATH_MAX)

// fabric/wc_status.h's enumerators and the header's, pairwise.
#define WEFT_WC_STATUSES(X)                                                  \
  X(kSuccess, IBV_WC_SUCCESS) X(kLocLenErr, IBV_WC_LOC_LEN_ERR)              \
  X(kLocQpOpErr, IBV_WC_LOC_QP_OP_ERR)                                       \
  X(kLocEecOpErr, IBV_WC_LOC_EEC_OP_ERR)                                     \
  X(kLocProtErr, IBV_WC_LOC_PROT_ERR) X(kWrFlushErr, IBV_WC_WR_FLUSH_ERR)    \
  X(kMwBindErr, IBV_WC_MW_BIND_ERR) X(kBadRespErr, IBV_WC_BAD_RESP_ERR)      \
  X(kLocAccessErr, IBV_WC_LOC_ACCESS_ERR)                                    \
  X(kRemInvReqErr, IBV_WC_REM_INV_REQ_ERR)                                   \
  X(kRemAccessErr, IBV_WC_REM_ACCESS_ERR) X(kRemOpErr, IBV_WC_REM_OP_ERR)    \
  X(kRetryExcErr, IBV_WC_RETRY_EXC_ERR)                                      \
  X(kRnrRetryExcErr, IBV_WC_RNR_RETRY_EXC_ERR)                               \
  X(kLocRddViolErr, IBV_WC_LOC_RDD_VIOL_ERR)                                 \
  X(kRemInvRdReqErr, IBV_WC_REM_INV_RD_REQ_ERR)                              \
  X(kRemAbortErr, IBV_WC_REM_ABORT_ERR)                                      \
  X(kInvEecnErr, IBV_WC_INV_EECN_ERR)                                        \
  X(kInvEecStateErr, IBV_WC_INV_EEC_STATE_ERR)                               \
  X(kFatalErr, IBV_WC_FATAL_ERR)                                             \
  X(kRespTimeoutErr, IBV_WC_RESP_TIMEOUT_ERR)                                \
  X(kGeneralErr, IBV_WC_GENERAL_ERR) X(kTmErr, IBV_WC_TM_ERR)                \
  X(kTmRndvIncomplete, IBV_WC_TM_RNDV_INCOMPLETE)

// clang-format on

// ------------------------------------------------------------ compile time

#define WEFT_ASSERT_TYPE(T)                                   \
  static_assert(sizeof(abi::T) == sizeof(::T), "sizeof " #T); \
  static_assert(alignof(abi::T) == alignof(::T), "alignof " #T);
WEFT_LAYOUT_TYPES(WEFT_ASSERT_TYPE)

#define WEFT_ASSERT_FIELD(T, F)                                            \
  static_assert(offsetof(abi::T, F) == offsetof(::T, F),                   \
                "offsetof " #T "." #F);                                    \
  static_assert(                                                           \
      sizeof(std::declval<abi::T&>().F) == sizeof(std::declval<::T&>().F), \
      "sizeof " #T "." #F);
WEFT_LAYOUT_FIELDS(WEFT_ASSERT_FIELD)

#define WEFT_ASSERT_RENAMED_TYPE(OURS, THEIRS)                           \
  static_assert(sizeof(abi::OURS) == sizeof(::THEIRS), "sizeof " #OURS); \
  static_assert(alignof(abi::OURS) == alignof(::THEIRS), "alignof " #OURS);
WEFT_LAYOUT_RENAMED_TYPES(WEFT_ASSERT_RENAMED_TYPE)

#define WEFT_ASSERT_RENAMED(T, OURS, THEIRS)                     \
  static_assert(offsetof(abi::T, OURS) == offsetof(::T, THEIRS), \
                "offsetof " #T "." #OURS);
WEFT_LAYOUT_RENAMED_FIELDS(WEFT_ASSERT_RENAMED)

#define WEFT_ASSERT_CONSTANT(C)                                                \
  static_assert(static_cast<long long>(abi::C) == static_cast<long long>(::C), \
                #C);
WEFT_LAYOUT_CONSTANTS(WEFT_ASSERT_CONSTANT)

#define WEFT_ASSERT_WC_STATUS(OURS, THEIRS)                                 \
  static_assert(                                                            \
      static_cast<int>(weft::WcStatus::OURS) == static_cast<int>(::THEIRS), \
      #THEIRS);
WEFT_WC_STATUSES(WEFT_ASSERT_WC_STATUS)

// The operation table's slot numbers, counted from the header.
static_assert(offsetof(::ibv_context_ops, poll_cq) / sizeof(void*) + 1 ==
              abi::kPollCqSlot);
static_assert(offsetof(::ibv_context_ops, post_send) / sizeof(void*) + 1 ==
              abi::kPostSendSlot);
static_assert(offsetof(::ibv_context_ops, post_recv) / sizeof(void*) + 1 ==
              abi::kPostRecvSlot);
static_assert(sizeof(::ibv_context_ops) / sizeof(void*) ==
              abi::kContextOpsSlots);

// ----------------------------------------------------------------- run time

struct Row {
  std::string item;
  long long weft;
  long long header;
};

std::vector<Row> layout_rows() {
  std::vector<Row> rows;
#define WEFT_ROW_TYPE(T)                                                      \
  rows.push_back({"sizeof(" #T ")", static_cast<long long>(sizeof(abi::T)),   \
                  static_cast<long long>(sizeof(::T))});                      \
  rows.push_back({"alignof(" #T ")", static_cast<long long>(alignof(abi::T)), \
                  static_cast<long long>(alignof(::T))});
  WEFT_LAYOUT_TYPES(WEFT_ROW_TYPE)
#define WEFT_ROW_RENAMED_TYPE(OURS, THEIRS)                  \
  rows.push_back({"sizeof(" #OURS " = " #THEIRS ")",         \
                  static_cast<long long>(sizeof(abi::OURS)), \
                  static_cast<long long>(sizeof(::THEIRS))});
  WEFT_LAYOUT_RENAMED_TYPES(WEFT_ROW_RENAMED_TYPE)
#define WEFT_ROW_FIELD(T, F)                                   \
  rows.push_back({"offsetof(" #T ", " #F ")",                  \
                  static_cast<long long>(offsetof(abi::T, F)), \
                  static_cast<long long>(offsetof(::T, F))});
  WEFT_LAYOUT_FIELDS(WEFT_ROW_FIELD)
#define WEFT_ROW_RENAMED(T, OURS, THEIRS)                         \
  rows.push_back({"offsetof(" #T ", " #OURS " = " #THEIRS ")",    \
                  static_cast<long long>(offsetof(abi::T, OURS)), \
                  static_cast<long long>(offsetof(::T, THEIRS))});
  WEFT_LAYOUT_RENAMED_FIELDS(WEFT_ROW_RENAMED)
#define WEFT_ROW_CONSTANT(C) \
  rows.push_back(            \
      {#C, static_cast<long long>(abi::C), static_cast<long long>(::C)});
  WEFT_LAYOUT_CONSTANTS(WEFT_ROW_CONSTANT)
#define WEFT_ROW_WC_STATUS(OURS, THEIRS)                        \
  rows.push_back({"WcStatus::" #OURS " = " #THEIRS,             \
                  static_cast<long long>(weft::WcStatus::OURS), \
                  static_cast<long long>(::THEIRS)});
  WEFT_WC_STATUSES(WEFT_ROW_WC_STATUS)
  return rows;
}

TEST(VerbsLayoutTest, EveryDeclarationMatchesTheRealHeader) {
  const std::vector<Row> rows = layout_rows();
  std::printf("%-62s %8s %8s\n", "item", "weft", "header");
  int mismatches = 0;
  for (const Row& row : rows) {
    const bool same = row.weft == row.header;
    mismatches += same ? 0 : 1;
    std::printf("%-62s %8lld %8lld%s\n", row.item.c_str(), row.weft, row.header,
                same ? "" : "  MISMATCH");
    EXPECT_EQ(row.weft, row.header) << row.item;
  }
  std::printf("%zu items, %d mismatches\n", rows.size(), mismatches);
  // Guards the table itself against losing its lists.
  EXPECT_GT(rows.size(), 250u);
}

TEST(VerbsLayoutTest, OperationTableSlotsAreTheHeaders) {
  EXPECT_EQ(offsetof(abi::ibv_context_ops, poll_cq),
            offsetof(::ibv_context_ops, poll_cq));
  EXPECT_EQ(offsetof(abi::ibv_context_ops, post_send),
            offsetof(::ibv_context_ops, post_send));
  EXPECT_EQ(offsetof(abi::ibv_context_ops, post_recv),
            offsetof(::ibv_context_ops, post_recv));
  EXPECT_EQ(sizeof(abi::ibv_context_ops) / sizeof(void*),
            sizeof(::ibv_context_ops) / sizeof(void*));
}

// The system library's names (rdma-core's on Linux, Apple's on macOS), read
// through dlopen so the test needs no RDMA device and links no library.
TEST(VerbsLayoutTest, StatusNamesEqualTheLibrarysStatusStrings) {
  const std::string name(weft::verbs::system_library_name());
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    GTEST_SKIP() << name << " is not installed: " << dlerror();
  }
  // Declared with an int parameter (same ABI) so codes outside the enum can
  // be passed without an out-of-range enum conversion.
  using StatusStr = const char* (*)(int);
  auto status_str =
      reinterpret_cast<StatusStr>(dlsym(library, "ibv_wc_status_str"));
  ASSERT_NE(status_str, nullptr) << dlerror();
  // Every code, plus a margin either side where both must say "unknown".
  constexpr int kMargin = 4;
  for (int code = -kMargin; code < weft::kWcStatusCount + kMargin; ++code) {
    const std::string expected = status_str(code);
    EXPECT_EQ(std::string(weft::wc_status_name(code)), expected)
        << "code " << code;
  }
  // The last enumerator is the last code weft names.
  EXPECT_EQ(static_cast<int>(::IBV_WC_TM_RNDV_INCOMPLETE) + 1,
            weft::kWcStatusCount);
  dlclose(library);
}

}  // namespace
