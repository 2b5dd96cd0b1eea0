// The shared collectives suite (tests/collectives_suite) over TcpFabric,
// ranks as threads over loopback (tcp_cluster.h): its fault-free parts,
// the matrix of every collective, bad input, mismatched calls and
// registered user memory. The
// determinism and fault-property tests need a simulated fabric (a trace
// that reruns bit for bit, injected faults) and are not instantiated.
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "tests/collectives_suite/suite.h"
#include "tests/tcp/tcp_cluster.h"

namespace weft::testing {
namespace {

class TcpFactory final : public ClusterFactory {
 public:
  const char* name() const override { return "tcp"; }
  absl::StatusOr<std::unique_ptr<Cluster>> create(
      const ClusterSpec& spec, const GroupOptions& options) const override {
    absl::StatusOr<std::unique_ptr<tcp::testing::TcpCluster>> c =
        tcp::testing::TcpCluster::create(spec, options);
    if (!c.ok()) return c.status();
    return std::unique_ptr<Cluster>(*std::move(c));
  }
  uint64_t fault_seeds() const override { return 0; }
};

const TcpFactory kTcp;

}  // namespace

WEFT_COLLECTIVES_SUITE_ONE(CollectivesMatrix, &kTcp);
WEFT_COLLECTIVES_SUITE_ONE(CollectivesBadInput, &kTcp);
WEFT_COLLECTIVES_SUITE_ONE(CollectivesMismatch, &kTcp);
WEFT_COLLECTIVES_SUITE_ONE(CollectivesRegistered, &kTcp);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CollectivesDeterminism);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CollectivesFaultProperty);

}  // namespace weft::testing
