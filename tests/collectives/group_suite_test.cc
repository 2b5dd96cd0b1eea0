// The shared collectives suite (tests/collectives_suite) over the
// simulator: the harness's SimFactory, ranks stepped by the world's
// scheduler in virtual time.
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/suite.h"

namespace weft::testing {
namespace {

const harness::SimFactory kSim;

}  // namespace

WEFT_COLLECTIVES_SUITE_OVER(&kSim);

}  // namespace weft::testing
