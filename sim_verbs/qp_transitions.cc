#include "sim_verbs/qp_transitions.h"

#include <cerrno>

namespace weft::sim_verbs {
namespace {

struct Rule {
  ibv_qp_state from;
  ibv_qp_state to;
  int required;
  int optional;
};

constexpr int kAlt = IBV_QP_ALT_PATH | IBV_QP_PATH_MIG_STATE;

constexpr Rule kRules[] = {
    {IBV_QPS_RESET, IBV_QPS_RESET, 0, 0},
    {IBV_QPS_RESET, IBV_QPS_INIT,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
    {IBV_QPS_INIT, IBV_QPS_INIT, 0,
     IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS},
    {IBV_QPS_INIT, IBV_QPS_RTR,
     IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN,
     IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
    {IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_SQ_PSN,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | kAlt},
    {IBV_QPS_RTS, IBV_QPS_RTS, 0,
     IBV_QP_CUR_STATE | IBV_QP_ACCESS_FLAGS | kAlt},
};

}  // namespace

int check_uc_transition(ibv_qp_state current, ibv_qp_state next, int mask) {
  const int attributes = mask & ~IBV_QP_STATE;
  if (next == IBV_QPS_RESET || next == IBV_QPS_ERR) {
    // Allowed from every state, with nothing but the state.
    return (attributes & ~IBV_QP_CUR_STATE) == 0 ? 0 : EINVAL;
  }
  for (const Rule& rule : kRules) {
    if (rule.from != current || rule.to != next) continue;
    const bool has_required = (attributes & rule.required) == rule.required;
    const bool only_known =
        (attributes & ~(rule.required | rule.optional)) == 0;
    return has_required && only_known ? 0 : EINVAL;
  }
  return EINVAL;
}

}  // namespace weft::sim_verbs
