// Which queue pair state changes verbs allows for UC queue pairs, and with
// which attribute masks (the InfiniBand specification's table, as the
// kernel's ib_modify_qp_is_ok() applies it).
#ifndef WEFT_SIM_VERBS_QP_TRANSITIONS_H_
#define WEFT_SIM_VERBS_QP_TRANSITIONS_H_

#include <infiniband/verbs.h>

namespace weft::sim_verbs {

// 0 when moving a UC queue pair from `current` to `next` with `mask` is
// allowed (every required attribute present, nothing outside required and
// optional); EINVAL otherwise. `next` is `current` when the mask lacks
// IBV_QP_STATE.
int check_uc_transition(ibv_qp_state current, ibv_qp_state next, int mask);

}  // namespace weft::sim_verbs

#endif  // WEFT_SIM_VERBS_QP_TRANSITIONS_H_
