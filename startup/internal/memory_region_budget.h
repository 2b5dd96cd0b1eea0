// The verbs fabric's memory-region budget of a group started by
// ProcessGroup, from WEFT_MR_BUDGET: how many memory regions weft keeps
// registered at once on each RDMA device, its slabs included
// (verbs/verbs_fabric.h, VerbsFabricOptions::memory_region_budget).
#ifndef WEFT_STARTUP_INTERNAL_MEMORY_REGION_BUDGET_H_
#define WEFT_STARTUP_INTERNAL_MEMORY_REGION_BUDGET_H_

#include <cstddef>
#include <string_view>

#include "absl/status/statusor.h"
#include "rendezvous/config.h"

namespace weft::startup::internal {

inline constexpr const char* kMemoryRegionBudgetEnv = "WEFT_MR_BUDGET";

// `text` as a whole number of memory regions (decimal digits only) in
// 1..verbs::kMaxMemoryRegionBudget. InvalidArgument naming the variable,
// `text` and the range otherwise.
absl::StatusOr<size_t> parse_memory_region_budget(std::string_view text);

// WEFT_MR_BUDGET through `getenv` as parse_memory_region_budget();
// verbs::kDefaultMemoryRegionBudget when unset.
absl::StatusOr<size_t> read_memory_region_budget(const EnvLookup& getenv);

}  // namespace weft::startup::internal

#endif  // WEFT_STARTUP_INTERNAL_MEMORY_REGION_BUDGET_H_
