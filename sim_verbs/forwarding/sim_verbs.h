/* Forwarding header, kept for one release: the simulated verbs provider
 * moved from sim/verbs_provider/ to sim_verbs/. Include
 * "weft/sim_verbs/sim_verbs.h" instead (CHANGELOG.md, "Unreleased"). */
#ifndef WEFT_SIM_VERBS_PROVIDER_SIM_VERBS_FORWARDING_H_
#define WEFT_SIM_VERBS_PROVIDER_SIM_VERBS_FORWARDING_H_

#include "sim_verbs/sim_verbs.h"  // IWYU pragma: export

#endif  // WEFT_SIM_VERBS_PROVIDER_SIM_VERBS_FORWARDING_H_
