// Delta debugging (Zeller's ddmin, complements only) over a list of
// scripted faults: finds a subset that still makes a run fail, from which
// no single fault can be removed without the run passing. It first tries
// the empty list (a failure that needs no fault at all), then removes
// halves, quarters, ... down to single faults, keeping any removal after
// which the run still fails.
#ifndef WEFT_TOOLS_WEFT_SIM_SHRINK_FAULTS_H_
#define WEFT_TOOLS_WEFT_SIM_SHRINK_FAULTS_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/faults.h"

namespace weft::sim::cli {

// Whether a run with exactly these scripted faults (and no rates) fails.
using FailsWith = std::function<bool(const std::vector<ScriptedFault>&)>;

struct ShrinkResult {
  std::vector<ScriptedFault> faults;
  uint32_t runs = 0;    // calls to `fails`
  bool minimal = true;  // false when max_runs stopped it early
};

// REQUIRES: fails(faults). Calls `fails` at most `max_runs` times; keeps
// the order of `faults`.
ShrinkResult shrink_faults(std::vector<ScriptedFault> faults,
                           const FailsWith& fails, uint32_t max_runs);

}  // namespace weft::sim::cli

#endif  // WEFT_TOOLS_WEFT_SIM_SHRINK_FAULTS_H_
