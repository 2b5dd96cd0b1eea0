// The conformance suite of Endpoint (endpoint_conformance.cc): the fabric
// contract (fabric/endpoint.h, fabric/uc_contract.h, docs/architecture.md
// "The fabric contract") as test cases written once and run on every
// fabric. A fabric takes part with a FabricUnderTest, which makes a pair of
// ranks, and one line:
//
//   INSTANTIATE_TEST_SUITE_P(Sim, EndpointConformance,
//                            ::testing::Values(&kSimUnderTest),
//                            weft::testing::fabric_name);
//
// The cases see only the Fabric and Endpoint interfaces, plus what the pair
// does to move time on (advance(), settle()) and what the fabric offers
// beyond the contract's core (Offers).
#ifndef WEFT_TESTS_CONFORMANCE_FABRIC_UNDER_TEST_H_
#define WEFT_TESTS_CONFORMANCE_FABRIC_UNDER_TEST_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/fabric.h"
#include "fabric/slab.h"
#include "fabric/work_id.h"
#include "gtest/gtest.h"

namespace weft::testing {

// Bytes of each side's slab.
inline constexpr uint64_t kConformanceSlabBytes = uint64_t{1} << 20;

// One rank of a pair: its fabric, a slab of kConformanceSlabBytes, its
// endpoint towards the other rank, and the completions polled from it so
// far, in order.
struct ConformanceSide {
  Fabric* fabric = nullptr;
  Slab* slab = nullptr;
  std::unique_ptr<Endpoint> endpoint;
  std::vector<Completion> completions;

  Frame frame(uint64_t offset, uint32_t bytes) const {
    return *slab->frame(offset, bytes);
  }
  size_t count(WorkKind kind) const {
    size_t n = 0;
    for (const Completion& c : completions) n += c.id.kind == kind ? 1 : 0;
    return n;
  }
};

// Ranks 0 and 1 of one fabric, each with an endpoint towards the other,
// opened but not connected (connect() connects them, as a bootstrap would:
// the cases test a send before connect() too).
class ConformancePair {
 public:
  virtual ~ConformancePair() = default;

  // Moves the pair one round further beyond polling (the simulator runs
  // its world; TCP waits on its sockets, briefly; the verbs provider's
  // world moves with each poll). `round` counts from 0 within one wait;
  // false once that wait has lasted longer than the fabric allows.
  virtual bool advance(int round) = 0;
  // Moves the pair until every message sent so far has landed in a
  // receive or been dropped for want of one (no pair in error).
  virtual void settle() = 0;

  // Exchanges destinations and connects both endpoints; false (with the
  // failure reported) when one is refused.
  bool connect();
  // Polls both live endpoints into their sides' completions, then
  // advance()s, until `done()`; false when the fabric's bound passed.
  bool poll_until(const std::function<bool()>& done);
  // Polls both live endpoints once.
  void poll_once();

  std::array<ConformanceSide, 2> side;
};

class FabricUnderTest {
 public:
  // What the fabric offers beyond the contract's core; where it does not,
  // the cases check that it says so (Unimplemented, or false).
  struct Offers {
    bool send_without_immediate = false;  // post_send_without_immediate()
    bool move_to_error = false;           // move_to_error()
    bool tells_departures = false;        // peer_departed() (TCP's goodbye)
  };

  virtual ~FabricUnderTest() = default;
  // The test name's suffix: "sim", "tcp", "verbs".
  virtual std::string name() const = 0;
  virtual Offers offers() const = 0;
  // A fresh pair (nullptr, with the failure reported, when the fabric
  // cannot be set up).
  virtual std::unique_ptr<ConformancePair> make() const = 0;
};

// For INSTANTIATE_TEST_SUITE_P: the fabric's name.
inline std::string fabric_name(
    const ::testing::TestParamInfo<const FabricUnderTest*>& info) {
  return info.param->name();
}

// The suite: every case on a fresh pair from the fabric under test.
class EndpointConformance
    : public ::testing::TestWithParam<const FabricUnderTest*> {
 protected:
  void SetUp() override {
    pair_ = GetParam()->make();
    ASSERT_NE(pair_, nullptr) << "the fabric could not be set up";
  }
  void TearDown() override { pair_.reset(); }

  FabricUnderTest::Offers offers() const { return GetParam()->offers(); }
  ConformancePair& pair() { return *pair_; }
  ConformanceSide& side(int rank) { return pair_->side[rank]; }
  Endpoint& endpoint(int rank) { return *pair_->side[rank].endpoint; }

 private:
  std::unique_ptr<ConformancePair> pair_;
};

}  // namespace weft::testing

#endif  // WEFT_TESTS_CONFORMANCE_FABRIC_UNDER_TEST_H_
