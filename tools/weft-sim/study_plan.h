// What weft-sim's default study runs on each topology: every collective at
// a handful of sizes from 4 KiB to 16 MiB and the all-sum up to 64 MiB
// (float32, algorithm auto), the other reductions once each in other
// dtypes, and a barrier; and the low fault rates it turns on unless the
// user gives fault flags.
#ifndef WEFT_TOOLS_WEFT_SIM_STUDY_PLAN_H_
#define WEFT_TOOLS_WEFT_SIM_STUDY_PLAN_H_

#include <cstdint>
#include <vector>

#include "harness/collective_spec.h"
#include "sim/faults.h"

namespace weft::tools::weft_sim {

// The rows of one topology, in the order they are printed.
std::vector<harness::CollectiveSpec> study_plan();

// Per frame and link direction: rare enough that most rows end correct,
// common enough that some rows show detection.
sim::FaultRates study_fault_rates();

// The row whose trace the study writes: an all-sum of this size on the
// last topology (the ring when the study runs both).
inline constexpr uint64_t kStudyTraceBytes = uint64_t{1} << 20;

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_STUDY_PLAN_H_
