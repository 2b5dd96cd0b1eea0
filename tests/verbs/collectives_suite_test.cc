// The shared collectives suite (tests/collectives_suite) over VerbsFabric
// loaded through the simulated verbs provider (verbs_cluster.h). The fault
// property runs the first half of the simulator's seeds, to stay fast
// under ASan.
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/collectives_suite/suite.h"
#include "tests/verbs/verbs_cluster.h"

namespace weft::testing {
namespace {

class VerbsFactory final : public ClusterFactory {
 public:
  const char* name() const override { return "verbs"; }
  absl::StatusOr<std::unique_ptr<Cluster>> create(
      const ClusterSpec& spec, const GroupOptions& options) const override {
    absl::StatusOr<std::unique_ptr<verbs::testing::VerbsCluster>> c =
        verbs::testing::VerbsCluster::create(spec, options);
    if (!c.ok()) return c.status();
    return std::unique_ptr<Cluster>(*std::move(c));
  }
  uint64_t fault_seeds() const override { return 120; }
};

const VerbsFactory kVerbs;

}  // namespace

WEFT_COLLECTIVES_SUITE_OVER(&kVerbs);

}  // namespace weft::testing
