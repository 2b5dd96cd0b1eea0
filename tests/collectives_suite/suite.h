// The shared collectives suite: the matrix of every collective against the
// reference, determinism, bad input, mismatched calls, the fault property
// and registered user memory, each test written once against Cluster
// (cluster.h) and parameterised by the fabric's ClusterFactory. A test binary
// runs the suite over its fabric with
//
//   WEFT_COLLECTIVES_SUITE_OVER(&factory);
//
// at namespace scope in weft::testing; the tests are then named
// Over/<Suite>.<Test>/<fabric name>.
#ifndef WEFT_TESTS_COLLECTIVES_SUITE_SUITE_H_
#define WEFT_TESTS_COLLECTIVES_SUITE_SUITE_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "harness/cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

class CollectivesSuiteTest
    : public ::testing::TestWithParam<const ClusterFactory*> {
 protected:
  absl::StatusOr<std::unique_ptr<Cluster>> make_cluster(
      const ClusterSpec& spec, const GroupOptions& options = {}) const {
    return GetParam()->create(spec, options);
  }
};

// A cluster spec over `topology` and `link` (the ideal link: no virtual
// time passes).
inline ClusterSpec spec_of(Topology topology,
                           LinkKind link = LinkKind::kIdeal) {
  ClusterSpec s;
  s.topology = std::move(topology);
  s.link = link;
  return s;
}

// The smallest frames and depth: a message of a few KiB is many frames.
inline GroupOptions small_frames() {
  GroupOptions o;
  o.max_frame_bytes = GroupOptions::kMinFrameBytes;
  o.depth = GroupOptions::kMinDepth;
  return o;
}

class CollectivesMatrix : public CollectivesSuiteTest {};
class CollectivesDeterminism : public CollectivesSuiteTest {};
class CollectivesBadInput : public CollectivesSuiteTest {};
class CollectivesMismatch : public CollectivesSuiteTest {};
class CollectivesFaultProperty : public CollectivesSuiteTest {};
class CollectivesRegistered : public CollectivesSuiteTest {};

inline std::string fabric_test_name(
    const ::testing::TestParamInfo<const ClusterFactory*>& info) {
  return info.param->name();
}

}  // namespace weft::testing

#define WEFT_COLLECTIVES_SUITE_ONE(suite, factory)                  \
  INSTANTIATE_TEST_SUITE_P(Over, suite, ::testing::Values(factory), \
                           ::weft::testing::fabric_test_name)
#define WEFT_COLLECTIVES_SUITE_OVER(factory)                     \
  WEFT_COLLECTIVES_SUITE_ONE(CollectivesMatrix, factory);        \
  WEFT_COLLECTIVES_SUITE_ONE(CollectivesDeterminism, factory);   \
  WEFT_COLLECTIVES_SUITE_ONE(CollectivesBadInput, factory);      \
  WEFT_COLLECTIVES_SUITE_ONE(CollectivesMismatch, factory);      \
  WEFT_COLLECTIVES_SUITE_ONE(CollectivesFaultProperty, factory); \
  WEFT_COLLECTIVES_SUITE_ONE(CollectivesRegistered, factory)

#endif  // WEFT_TESTS_COLLECTIVES_SUITE_SUITE_H_
