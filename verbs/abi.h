// The ibverbs ABI, mirrored: our own declarations of every structure, field
// and constant weft's verbs fabric passes to or reads from the system RDMA
// library (Apple's librdma.dylib, rdma-core's libibverbs.so.1), so weft
// builds with no SDK or rdma-core header. The library is loaded at run time
// (verbs/loader.h); nothing here links against it.
//
// Names are the C header's own (struct ibv_wc, IBV_QPT_UC, ...) so each line
// can be compared with <infiniband/verbs.h>; tests/verbs/layout_test.cc
// checks every size, field offset and constant below against the real
// header wherever one is installed. Structures weft allocates (work requests,
// attributes, completions) are complete; structures the library allocates
// and weft only reads through a pointer (context, queue pair, ...) are
// complete too, so their sizes can be checked, but their unused tails are
// plain storage.
#ifndef WEFT_VERBS_ABI_H_
#define WEFT_VERBS_ABI_H_

#include <pthread.h>

#include <cstddef>
#include <cstdint>

namespace weft::verbs::abi {

// ---------------------------------------------------------------- constants
// Only the enumerators weft uses are named. Every enumeration has a fixed
// underlying type (int, 4 bytes as C compilers lay these out), so a value the
// library returns that weft does not name is still a valid value of it.

enum ibv_node_type : int {
  IBV_NODE_UNKNOWN = -1,
  IBV_NODE_CA = 1,
};

enum ibv_transport_type : int {
  IBV_TRANSPORT_UNKNOWN = -1,
  IBV_TRANSPORT_IB = 0,
};

enum ibv_mtu : int {
  IBV_MTU_256 = 1,
  IBV_MTU_512 = 2,
  IBV_MTU_1024 = 3,
  IBV_MTU_2048 = 4,
  IBV_MTU_4096 = 5,
};

enum ibv_port_state : int {
  IBV_PORT_NOP = 0,
  IBV_PORT_DOWN = 1,
  IBV_PORT_INIT = 2,
  IBV_PORT_ARMED = 3,
  IBV_PORT_ACTIVE = 4,
  IBV_PORT_ACTIVE_DEFER = 5,
};

// ibv_port_attr::link_layer.
enum : int {
  IBV_LINK_LAYER_UNSPECIFIED = 0,
  IBV_LINK_LAYER_INFINIBAND = 1,
  IBV_LINK_LAYER_ETHERNET = 2,
};

// Values equal weft::WcStatus (fabric/wc_status.h); the layout test checks
// both against the real header.
enum ibv_wc_status : int {
  IBV_WC_SUCCESS = 0,
  IBV_WC_LOC_LEN_ERR = 1,
  IBV_WC_WR_FLUSH_ERR = 5,
  IBV_WC_GENERAL_ERR = 21,
  IBV_WC_TM_RNDV_INCOMPLETE = 23,
};

enum ibv_wc_opcode : int {
  IBV_WC_SEND = 0,
  IBV_WC_RECV = 1 << 7,
};

enum ibv_wc_flags : int {
  IBV_WC_GRH = 1 << 0,
  IBV_WC_WITH_IMM = 1 << 1,
};

enum ibv_access_flags : int {
  IBV_ACCESS_LOCAL_WRITE = 1,
  IBV_ACCESS_REMOTE_WRITE = 1 << 1,
  IBV_ACCESS_REMOTE_READ = 1 << 2,
};

enum ibv_qp_type : int {
  IBV_QPT_RC = 2,
  IBV_QPT_UC = 3,
  IBV_QPT_UD = 4,
};

enum ibv_qp_attr_mask : int {
  IBV_QP_STATE = 1 << 0,
  IBV_QP_CUR_STATE = 1 << 1,
  IBV_QP_ACCESS_FLAGS = 1 << 3,
  IBV_QP_PKEY_INDEX = 1 << 4,
  IBV_QP_PORT = 1 << 5,
  IBV_QP_QKEY = 1 << 6,
  IBV_QP_AV = 1 << 7,
  IBV_QP_PATH_MTU = 1 << 8,
  IBV_QP_TIMEOUT = 1 << 9,
  IBV_QP_RETRY_CNT = 1 << 10,
  IBV_QP_RNR_RETRY = 1 << 11,
  IBV_QP_RQ_PSN = 1 << 12,
  IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13,
  IBV_QP_MIN_RNR_TIMER = 1 << 15,
  IBV_QP_SQ_PSN = 1 << 16,
  IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
  IBV_QP_DEST_QPN = 1 << 20,
};

enum ibv_qp_state : int {
  IBV_QPS_RESET = 0,
  IBV_QPS_INIT = 1,
  IBV_QPS_RTR = 2,
  IBV_QPS_RTS = 3,
  IBV_QPS_SQD = 4,
  IBV_QPS_SQE = 5,
  IBV_QPS_ERR = 6,
};

enum ibv_mig_state : int {
  IBV_MIG_MIGRATED = 0,
};

enum ibv_wr_opcode : int {
  IBV_WR_RDMA_WRITE = 0,
  IBV_WR_RDMA_WRITE_WITH_IMM = 1,
  IBV_WR_SEND = 2,
  IBV_WR_SEND_WITH_IMM = 3,
};

enum ibv_send_flags : int {
  IBV_SEND_FENCE = 1 << 0,
  IBV_SEND_SIGNALED = 1 << 1,
  IBV_SEND_SOLICITED = 1 << 2,
  IBV_SEND_INLINE = 1 << 3,
};

enum ibv_atomic_cap : int {
  IBV_ATOMIC_NONE = 0,
};

enum ibv_mw_type : int {
  IBV_MW_TYPE_1 = 1,
};

// Lengths of ibv_device's name and path arrays.
enum : int {
  IBV_SYSFS_NAME_MAX = 64,
  IBV_SYSFS_PATH_MAX = 256,
};

// ------------------------------------------------------------------- objects
// Opaque to weft: only ever handled through pointers.
struct ibv_srq;
struct ibv_ah;
struct ibv_mw;
struct ibv_comp_channel;

struct ibv_context;
struct ibv_cq;
struct ibv_qp;

union ibv_gid {
  uint8_t raw[16];
  struct {
    uint64_t subnet_prefix;  // big-endian
    uint64_t interface_id;   // big-endian
  } global;
};

struct ibv_device_attr {
  char fw_ver[64];
  uint64_t node_guid;  // big-endian
  uint64_t sys_image_guid;
  uint64_t max_mr_size;
  uint64_t page_size_cap;
  uint32_t vendor_id;
  uint32_t vendor_part_id;
  uint32_t hw_ver;
  int max_qp;
  int max_qp_wr;
  unsigned int device_cap_flags;
  int max_sge;
  int max_sge_rd;
  int max_cq;
  int max_cqe;
  int max_mr;
  int max_pd;
  int max_qp_rd_atom;
  int max_ee_rd_atom;
  int max_res_rd_atom;
  int max_qp_init_rd_atom;
  int max_ee_init_rd_atom;
  ibv_atomic_cap atomic_cap;
  int max_ee;
  int max_rdd;
  int max_mw;
  int max_raw_ipv6_qp;
  int max_raw_ethy_qp;
  int max_mcast_grp;
  int max_mcast_qp_attach;
  int max_total_mcast_qp_attach;
  int max_ah;
  int max_fmr;
  int max_map_per_fmr;
  int max_srq;
  int max_srq_wr;
  int max_srq_sge;
  uint16_t max_pkeys;
  uint8_t local_ca_ack_delay;
  uint8_t phys_port_cnt;
};

struct ibv_port_attr {
  ibv_port_state state;
  ibv_mtu max_mtu;
  ibv_mtu active_mtu;
  int gid_tbl_len;
  uint32_t port_cap_flags;
  uint32_t max_msg_sz;
  uint32_t bad_pkey_cntr;
  uint32_t qkey_viol_cntr;
  uint16_t pkey_tbl_len;
  uint16_t lid;
  uint16_t sm_lid;
  uint8_t lmc;
  uint8_t max_vl_num;
  uint8_t sm_sl;
  uint8_t subnet_timeout;
  uint8_t init_type_reply;
  uint8_t active_width;
  uint8_t active_speed;
  uint8_t phys_state;
  uint8_t link_layer;
  uint8_t flags;
  uint16_t port_cap_flags2;
};

struct ibv_wc {
  uint64_t wr_id;
  ibv_wc_status status;
  ibv_wc_opcode opcode;
  uint32_t vendor_err;
  uint32_t byte_len;
  union {
    uint32_t imm_data;  // big-endian
    uint32_t invalidated_rkey;
  };
  uint32_t qp_num;
  uint32_t src_qp;
  unsigned int wc_flags;
  uint16_t pkey_index;
  uint16_t slid;
  uint8_t sl;
  uint8_t dlid_path_bits;
};

struct ibv_pd {
  ibv_context* context;
  uint32_t handle;
};

struct ibv_mr {
  ibv_context* context;
  ibv_pd* pd;
  void* addr;
  size_t length;
  uint32_t handle;
  uint32_t lkey;
  uint32_t rkey;
};

struct ibv_mw_bind_info {
  ibv_mr* mr;
  uint64_t addr;
  uint64_t length;
  unsigned int mw_access_flags;
};

struct ibv_global_route {
  ibv_gid dgid;
  uint32_t flow_label;
  uint8_t sgid_index;
  uint8_t hop_limit;
  uint8_t traffic_class;
};

struct ibv_ah_attr {
  ibv_global_route grh;
  uint16_t dlid;
  uint8_t sl;
  uint8_t src_path_bits;
  uint8_t static_rate;
  uint8_t is_global;
  uint8_t port_num;
};

struct ibv_qp_cap {
  uint32_t max_send_wr;
  uint32_t max_recv_wr;
  uint32_t max_send_sge;
  uint32_t max_recv_sge;
  uint32_t max_inline_data;
};

struct ibv_qp_init_attr {
  void* qp_context;
  ibv_cq* send_cq;
  ibv_cq* recv_cq;
  ibv_srq* srq;
  ibv_qp_cap cap;
  ibv_qp_type qp_type;
  int sq_sig_all;
};

struct ibv_qp_attr {
  ibv_qp_state qp_state;
  ibv_qp_state cur_qp_state;
  ibv_mtu path_mtu;
  ibv_mig_state path_mig_state;
  uint32_t qkey;
  uint32_t rq_psn;
  uint32_t sq_psn;
  uint32_t dest_qp_num;
  unsigned int qp_access_flags;
  ibv_qp_cap cap;
  ibv_ah_attr ah_attr;
  ibv_ah_attr alt_ah_attr;
  uint16_t pkey_index;
  uint16_t alt_pkey_index;
  uint8_t en_sqd_async_notify;
  uint8_t sq_draining;
  uint8_t max_rd_atomic;
  uint8_t max_dest_rd_atomic;
  uint8_t min_rnr_timer;
  uint8_t port_num;
  uint8_t timeout;
  uint8_t retry_cnt;
  uint8_t rnr_retry;
  uint8_t alt_port_num;
  uint8_t alt_timeout;
  uint32_t rate_limit;
};

struct ibv_sge {
  uint64_t addr;
  uint32_t length;
  uint32_t lkey;
};

struct ibv_send_wr {
  uint64_t wr_id;
  ibv_send_wr* next;
  ibv_sge* sg_list;
  int num_sge;
  ibv_wr_opcode opcode;
  unsigned int send_flags;
  union {
    uint32_t imm_data;  // big-endian
    uint32_t invalidate_rkey;
  };
  // RDMA, atomic and UD parameters; SEND uses none of them.
  union {
    struct {
      uint64_t remote_addr;
      uint32_t rkey;
    } rdma;
    struct {
      uint64_t remote_addr;
      uint64_t compare_add;
      uint64_t swap;
      uint32_t rkey;
    } atomic;
    struct {
      ibv_ah* ah;
      uint32_t remote_qpn;
      uint32_t remote_qkey;
    } ud;
  } wr;
  union {
    struct {
      uint32_t remote_srqn;
    } xrc;
  } qp_type;
  // Memory-window binding and TSO parameters (named types: standard C++
  // allows no unnamed struct inside an anonymous union).
  struct bind_mw_fields {
    ibv_mw* mw;
    uint32_t rkey;
    ibv_mw_bind_info bind_info;
  };
  struct tso_fields {
    void* hdr;
    uint16_t hdr_sz;
    uint16_t mss;
  };
  union {
    bind_mw_fields bind_mw;
    tso_fields tso;
  };
};

struct ibv_recv_wr {
  uint64_t wr_id;
  ibv_recv_wr* next;
  ibv_sge* sg_list;
  int num_sge;
};

// Operation tables ----------------------------------------------------------

// Entries weft never calls are untyped slots; their count and order follow
// the header (32 pointers).
using ibv_unused_op = void (*)();
using ibv_poll_cq_op = int (*)(ibv_cq* cq, int num_entries, ibv_wc* wc);
using ibv_post_send_op = int (*)(ibv_qp* qp, ibv_send_wr* wr,
                                 ibv_send_wr** bad_wr);
using ibv_post_recv_op = int (*)(ibv_qp* qp, ibv_recv_wr* wr,
                                 ibv_recv_wr** bad_wr);

// Slot positions (1-based, as the header's comments count them).
inline constexpr int kContextOpsSlots = 32;
inline constexpr int kPollCqSlot = 12;
inline constexpr int kPostSendSlot = 26;
inline constexpr int kPostRecvSlot = 27;

struct ibv_context_ops {
  ibv_unused_op before_poll_cq[kPollCqSlot - 1];  // _compat_query_device ..
  ibv_poll_cq_op poll_cq;
  ibv_unused_op before_post_send[kPostSendSlot - kPollCqSlot - 1];
  ibv_post_send_op post_send;
  ibv_post_recv_op post_recv;
  ibv_unused_op after_post_recv[kContextOpsSlots - kPostRecvSlot];
};

// Obsolete in rdma-core ("never used, do not touch"), kept for the layout.
struct ibv_device_ops_compat {
  ibv_unused_op dummy1;
  ibv_unused_op dummy2;
};

struct ibv_device {
  ibv_device_ops_compat ops;
  ibv_node_type node_type;
  ibv_transport_type transport_type;
  char name[IBV_SYSFS_NAME_MAX];
  char dev_name[IBV_SYSFS_NAME_MAX];
  char dev_path[IBV_SYSFS_PATH_MAX];
  char ibdev_path[IBV_SYSFS_PATH_MAX];
};

struct ibv_context {
  ibv_device* device;
  ibv_context_ops ops;
  int cmd_fd;
  int async_fd;
  int num_comp_vectors;
  pthread_mutex_t mutex;
  void* abi_compat;
};

struct ibv_cq {
  ibv_context* context;
  ibv_comp_channel* channel;
  void* cq_context;
  uint32_t handle;
  int cqe;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  uint32_t comp_events_completed;
  uint32_t async_events_completed;
};

struct ibv_qp {
  ibv_context* context;
  void* qp_context;
  ibv_pd* pd;
  ibv_cq* send_cq;
  ibv_cq* recv_cq;
  ibv_srq* srq;
  uint32_t handle;
  uint32_t qp_num;
  ibv_qp_state state;
  ibv_qp_type qp_type;
  pthread_mutex_t mutex;
  pthread_cond_t cond;
  uint32_t events_completed;
};

}  // namespace weft::verbs::abi

#endif  // WEFT_VERBS_ABI_H_
