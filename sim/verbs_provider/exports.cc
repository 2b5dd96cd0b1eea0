// The simulated provider's exported entry points: rdma-core's ibv_*
// functions (with the real header's signatures) and the weft_sim_verbs_*
// control calls of sim_verbs.h. Each takes the provider's lock and forwards.
// The version script (exports.map) keeps every other symbol local.
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdint>
#include <mutex>

#include "fabric/wc_status.h"
#include "sim/verbs_provider/provider.h"
#include "sim/verbs_provider/sim_verbs.h"

using weft::verbs::provider::Provider;

namespace {
Provider& locked(std::unique_lock<std::mutex>* lock) {
  Provider& p = Provider::instance();
  *lock = std::unique_lock<std::mutex>(p.mutex());
  return p;
}
}  // namespace

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
  Provider& p = locked(&lock);
  if (channel != nullptr || comp_vector != 0) {
    errno = EINVAL;  // no completion channels in the simulator
    return nullptr;
  }
  return p.create_cq(context, cqe, cq_context);
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

const char* ibv_wc_status_str(ibv_wc_status status) {
  // NUL-terminated: the names are string literals.
  return weft::wc_status_name(static_cast<int32_t>(status)).data();
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

int weft_sim_verbs_crashed(uint32_t rank) {
  std::unique_lock<std::mutex> lock;
  return locked(&lock).crashed(rank);
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
