// gMock mocks of the fabric interface, for unit tests of code that consumes
// endpoints and completions (weft's own tests, and users'). Link
// weft::testing.
#ifndef WEFT_FABRIC_TESTING_MOCK_FABRIC_H_
#define WEFT_FABRIC_TESTING_MOCK_FABRIC_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/fabric.h"
#include "fabric/wc_status.h"
#include "gmock/gmock.h"

namespace weft::testing {

class MockEndpoint : public Endpoint {
 public:
  MOCK_METHOD(const EndpointInfo&, info, (), (const, override));
  MOCK_METHOD(absl::StatusOr<Destination>, destination, (), (const, override));
  MOCK_METHOD(absl::Status, connect, (const Destination& peer), (override));
  MOCK_METHOD(absl::Status, post_recv, (WorkId id, const Frame& frame),
              (override));
  MOCK_METHOD(absl::Status, post_send,
              (WorkId id, const Frame& frame, uint32_t length,
               uint32_t immediate),
              (override));
  MOCK_METHOD(absl::StatusOr<size_t>, poll, (std::span<Completion> out),
              (override));
};

class MockFabric : public Fabric {
 public:
  MOCK_METHOD(std::string_view, kind, (), (const, override));
  MOCK_METHOD(uint32_t, rank, (), (const, override));
  MOCK_METHOD(const Clock&, clock, (), (const, override));
  MOCK_METHOD(absl::StatusOr<Slab*>, create_slab, (uint64_t bytes), (override));
  MOCK_METHOD(absl::StatusOr<std::unique_ptr<Endpoint>>, open,
              (std::string_view device, uint32_t peer), (override));
};

// An action for MockEndpoint::poll that hands out `completions` once.
// Usage: EXPECT_CALL(ep, poll).WillOnce(ReturnCompletions({c1, c2}));
// A completion whose `status` was set and whose status_name was left at
// its default ("success") gets its status's verbs name, as every fabric
// gives it, so a test need only set `status`; a name set by hand stays.
inline auto ReturnCompletions(std::vector<Completion> completions) {
  for (Completion& c : completions) {
    if (c.status_name == wc_status_name(WcStatus::kSuccess)) {
      c.status_name = wc_status_name(c.status);
    }
  }
  return [completions](std::span<Completion> out) -> absl::StatusOr<size_t> {
    const size_t n = std::min(out.size(), completions.size());
    std::copy_n(completions.begin(), n, out.begin());
    return n;
  };
}

}  // namespace weft::testing

#endif  // WEFT_FABRIC_TESTING_MOCK_FABRIC_H_
