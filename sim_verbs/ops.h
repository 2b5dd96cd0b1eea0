// The simulated provider's operation table: poll_cq, req_notify_cq,
// post_send and post_recv, the entries the header's inline ibv_poll_cq,
// ibv_req_notify_cq, ibv_post_send and ibv_post_recv call through. Each
// takes the provider's lock.
#ifndef WEFT_SIM_VERBS_OPS_H_
#define WEFT_SIM_VERBS_OPS_H_

#include <infiniband/verbs.h>

namespace weft::sim_verbs {

// Sets those four entries; every other entry is null (the header's inline
// callers of the others, ibv_alloc_mw and the memory window and shared
// receive queue calls, check for null or need an object the provider never
// creates).
void fill_operations(ibv_context_ops* ops);

}  // namespace weft::sim_verbs

#endif  // WEFT_SIM_VERBS_OPS_H_
