// The simulated provider's exported entry points: rdma-core's ibv_*
// functions (with the real header's signatures) and the weft_sim_verbs_*
// control calls of sim_verbs.h. Each takes the provider's lock and forwards.
// The version script (exports.map) gives each ibv_* function the symbol
// version rdma-core gives it, so programs linked against rdma-core's
// libibverbs.so.1 bind to these, and keeps every other symbol local.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "fabric/wc_status.h"
#include "sim_verbs/provider.h"
#include "sim_verbs/sim_verbs.h"

using weft::sim_verbs::Provider;

namespace {
Provider& locked(std::unique_lock<std::mutex>* lock) {
  Provider& p = Provider::instance();
  *lock = std::unique_lock<std::mutex>(p.mutex());
  return p;
}

// A name for each value of an enum that starts at `first`; "unknown"
// outside, as rdma-core's ibv_*_str functions answer.
template <size_t N>
const char* name_of(int value, int first, const char* const (&names)[N]) {
  if (value < first || value - first >= static_cast<int>(N)) return "unknown";
  return names[value - first];
}
}  // namespace

// rdma-core's infiniband/driver.h (not installed by libibverbs-dev) declares
// ibv_query_gid_type with this enum: what sysfs calls the GID's type.
enum ibv_gid_type_sysfs {
  IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
  IBV_GID_TYPE_SYSFS_ROCE_V2,
};

// Parenthesised names: rdma-core's header defines some as macros.
extern "C" {

ibv_device**(ibv_get_device_list)(int* num_devices) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).get_device_list(num_devices);
}

void ibv_free_device_list(ibv_device** list) {
  std::unique_lock<std::mutex> lock;
  locked(&lock).free_device_list(list);
}

const char* ibv_get_device_name(ibv_device* device) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).device_name(device);
}

__be64 ibv_get_device_guid(ibv_device* device) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).device_guid(device);
}

ibv_context* ibv_open_device(ibv_device* device) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).open_device(device);
}

int ibv_close_device(ibv_context* context) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).close_device(context);
}

int ibv_query_device(ibv_context* context, ibv_device_attr* attr) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).query_device(context, attr);
}

int(ibv_query_port)(ibv_context* context, uint8_t port_num,
                    _compat_ibv_port_attr* port_attr) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).query_port(context, port_num,
                                  reinterpret_cast<ibv_port_attr*>(port_attr));
}

int ibv_query_gid(ibv_context* context, uint8_t port_num, int index,
                  ibv_gid* gid) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).query_gid(context, port_num, index, gid);
}

ibv_pd* ibv_alloc_pd(ibv_context* context) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).alloc_pd(context);
}

int ibv_dealloc_pd(ibv_pd* pd) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).dealloc_pd(pd);
}

ibv_mr*(ibv_reg_mr)(ibv_pd* pd, void* addr, size_t length, int access) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).reg_mr(pd, addr, length, access);
}

int ibv_dereg_mr(ibv_mr* mr) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).dereg_mr(mr);
}

ibv_cq* ibv_create_cq(ibv_context* context, int cqe, void* cq_context,
                      ibv_comp_channel* channel, int comp_vector) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).create_cq(context, cqe, cq_context, channel,
                                 comp_vector);
}

int ibv_destroy_cq(ibv_cq* cq) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).destroy_cq(cq);
}

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).create_qp(pd, attr);
}

int ibv_destroy_qp(ibv_qp* qp) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).destroy_qp(qp);
}

int ibv_modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).modify_qp(qp, attr, attr_mask);
}

int ibv_query_qp(ibv_qp* qp, ibv_qp_attr* attr, int attr_mask,
                 ibv_qp_init_attr* init_attr) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).query_qp(qp, attr, attr_mask, init_attr);
}

int ibv_query_gid_type(ibv_context* context, uint8_t port_num,
                       unsigned int index, ibv_gid_type_sysfs* type) {
  std::unique_lock<std::mutex> lock;
  int value = 0;
  const int rc = locked(&lock).query_gid_type(
      context, port_num, index, type == nullptr ? nullptr : &value);
  if (rc == 0) *type = static_cast<ibv_gid_type_sysfs>(value);
  return rc;
}

ibv_comp_channel* ibv_create_comp_channel(ibv_context* context) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).create_comp_channel(context);
}

int ibv_destroy_comp_channel(ibv_comp_channel* channel) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).destroy_comp_channel(channel);
}

int ibv_get_cq_event(ibv_comp_channel* channel, ibv_cq** cq,
                     void** cq_context) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).get_cq_event(channel, cq, cq_context);
}

void ibv_ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  std::unique_lock<std::mutex> lock;
  locked(&lock).ack_cq_events(cq, nevents);
}

// The simulated devices have no sysfs directory: every file reads as
// missing (ibv_devinfo asks for board_id and prints nothing then).
int ibv_read_sysfs_file(const char* /*dir*/, const char* /*file*/,
                        char* /*buf*/, size_t /*size*/) {
  errno = ENOENT;
  return -1;
}

// rdma-core's *_str functions take a C enum and name any value, known or
// not: a C enum holds any int, and callers pass what the device reported.
// In C++ a value past the enum's range is undefined to load, which clang's
// UBSan checks (-fsanitize=enum); these read it as the C callers mean it.
#if defined(__clang__)
#define WEFT_TAKES_ANY_C_ENUM __attribute__((no_sanitize("enum")))
#else
#define WEFT_TAKES_ANY_C_ENUM
#endif

WEFT_TAKES_ANY_C_ENUM const char* ibv_wc_status_str(ibv_wc_status status) {
  // NUL-terminated: the names are string literals.
  return weft::wc_status_name(static_cast<int32_t>(status)).data();
}

WEFT_TAKES_ANY_C_ENUM const char* ibv_node_type_str(ibv_node_type node_type) {
  static const char* const kNames[] = {"InfiniBand channel adapter",
                                       "InfiniBand switch",
                                       "InfiniBand router",
                                       "iWARP NIC",
                                       "usNIC",
                                       "usNIC UDP",
                                       "unspecified"};
  return name_of(node_type, IBV_NODE_CA, kNames);
}

WEFT_TAKES_ANY_C_ENUM const char* ibv_port_state_str(
    ibv_port_state port_state) {
  static const char* const kNames[] = {
      "no state change (NOP)", "down", "init", "armed", "active",
      "active defer"};
  return name_of(port_state, IBV_PORT_NOP, kNames);
}

WEFT_TAKES_ANY_C_ENUM const char* ibv_event_type_str(ibv_event_type event) {
  static const char* const kNames[] = {
      "CQ error",
      "local work queue catastrophic error",
      "invalid request local work queue error",
      "local access violation work queue error",
      "communication established",
      "send queue drained",
      "path migrated",
      "path migration request error",
      "local catastrophic error",
      "port active",
      "port error",
      "LID change",
      "P_Key change",
      "SM change",
      "SRQ catastrophic error",
      "SRQ limit reached",
      "last WQE reached",
      "client reregistration",
      "GID table change",
      "WQ fatal"};
  return name_of(event, IBV_EVENT_CQ_ERR, kNames);
}

int weft_sim_verbs_reset(void) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).reset();
}

int weft_sim_verbs_set_rank(uint32_t rank) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).set_rank(rank);
}

int weft_sim_verbs_live(const char* kind, uint32_t rank, const char* device) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).live(kind == nullptr ? "" : kind, rank, device);
}

int weft_sim_verbs_qp_sgid_index(uint32_t qp_num) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).qp_sgid_index(qp_num);
}

int64_t weft_sim_verbs_now_ns(void) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).now_ns();
}

int weft_sim_verbs_idle(int64_t wake_at_ns) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).idle(wake_at_ns);
}

int weft_sim_verbs_crashed(uint32_t rank) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).crashed(rank);
}

int weft_sim_verbs_departed(uint32_t* ranks, int64_t* left_at_ns,
                            int capacity) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).departed(ranks, left_at_ns, capacity);
}

uint64_t weft_sim_verbs_trace_hash(void) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).trace_hash();
}

const char* weft_sim_verbs_last_error(void) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).last_error();
}

}  // extern "C"
