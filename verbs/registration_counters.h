// RegistrationCounters: how a verbs device's memory-region cache has been
// used (VerbsFabric::registration_counters), for tests, benchmarks and
// reports: how often a post found its memory registered, and how often the
// cache had to register it and evict another region to stay in budget.
#ifndef WEFT_VERBS_REGISTRATION_COUNTERS_H_
#define WEFT_VERBS_REGISTRATION_COUNTERS_H_

#include <cstdint>

namespace weft::verbs {

struct RegistrationCounters {
  uint64_t registrations = 0;  // memory regions registered (ibv_reg_mr)
  uint64_t evictions = 0;      // regions deregistered to make room
  uint64_t hits = 0;           // posts that found their memory registered
  uint64_t misses = 0;         // posts that had to register it first
};

}  // namespace weft::verbs

#endif  // WEFT_VERBS_REGISTRATION_COUNTERS_H_
