// gMock mock of the Bootstrap interface (collectives/bootstrap.h), for unit
// tests of code that forms groups or watches a group's side channel: make
// an exchange fail, time out or hand back other ranks' addresses, without
// sockets or threads. Link weft::collectives_testing.
//
//   weft::testing::MockBootstrap bootstrap;
//   ON_CALL(bootstrap, rank).WillByDefault(Return(0));
//   ON_CALL(bootstrap, size).WillByDefault(Return(2));
//   EXPECT_CALL(bootstrap, all_gather)
//       .WillOnce(Return(absl::DeadlineExceededError("rank 1 is silent")));
#ifndef WEFT_COLLECTIVES_TESTING_MOCK_BOOTSTRAP_H_
#define WEFT_COLLECTIVES_TESTING_MOCK_BOOTSTRAP_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/bootstrap.h"
#include "fabric/clock.h"
#include "gmock/gmock.h"

namespace weft::testing {

class MockBootstrap : public Bootstrap {
 public:
  MOCK_METHOD(uint32_t, rank, (), (const, override));
  MOCK_METHOD(uint32_t, size, (), (const, override));
  MOCK_METHOD(absl::StatusOr<std::vector<std::vector<uint8_t>>>, all_gather,
              (std::span<const uint8_t> mine, TimeNs timeout_ns), (override));
  MOCK_METHOD(absl::Status, check_alive, (), (override));
};

}  // namespace weft::testing

#endif  // WEFT_COLLECTIVES_TESTING_MOCK_BOOTSTRAP_H_
