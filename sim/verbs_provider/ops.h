// The simulated provider's operation table: poll_cq, post_send and
// post_recv, the entries the header's inline ibv_poll_cq/ibv_post_send/
// ibv_post_recv call through. Each takes the provider's lock.
#ifndef WEFT_SIM_VERBS_PROVIDER_OPS_H_
#define WEFT_SIM_VERBS_PROVIDER_OPS_H_

#include <infiniband/verbs.h>

namespace weft::verbs::provider {

// Sets the three entries weft's fabric calls; every other entry is null.
void fill_operations(ibv_context_ops* ops);

}  // namespace weft::verbs::provider

#endif  // WEFT_SIM_VERBS_PROVIDER_OPS_H_
