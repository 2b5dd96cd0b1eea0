// The verbs fabric in the conformance suite: weft's own VerbsFabric code
// over the simulated verbs provider (libweft_sim_verbs.so, loaded as
// VerbsFabric::Options::library names it, as WEFT_VERBS_LIBRARY would),
// two ranks of the provider's world joined by one cable. The provider's
// world moves a fixed step of virtual time with each poll.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "gtest/gtest.h"
#include "tests/conformance/fabric_under_test.h"
#include "tests/verbs/sim_provider.h"
#include "verbs/verbs_fabric.h"

namespace weft::testing {
namespace {

// Poll rounds one wait may take (a poll moves the world 1 us).
constexpr int kMaxRounds = 10'000;
// Virtual time within which anything sent has landed (tb5: 4.6 us).
constexpr TimeNs kSettleNs = 100 * kNsPerUs;

class VerbsPair final : public ConformancePair {
 public:
  bool open() {
    provider_.configure({});
    for (uint32_t r = 0; r < 2; ++r) {
      fabrics_[r] = provider_.open_rank(r);
      if (fabrics_[r] == nullptr) return false;
      absl::StatusOr<Slab*> slab =
          fabrics_[r]->create_slab(kConformanceSlabBytes);
      const std::string device =
          "sim_" + std::to_string(r) + "_" + std::to_string(1 - r) + "_0";
      absl::StatusOr<std::unique_ptr<Endpoint>> endpoint =
          fabrics_[r]->open(device, 1 - r);
      EXPECT_TRUE(slab.ok() && endpoint.ok());
      if (!slab.ok() || !endpoint.ok()) return false;
      side[r].fabric = fabrics_[r].get();
      side[r].slab = *slab;
      side[r].endpoint = *std::move(endpoint);
    }
    return true;
  }
  // Endpoints, then fabrics, then the provider library.
  ~VerbsPair() override {
    for (ConformanceSide& s : side) s.endpoint.reset();
    for (auto& f : fabrics_) f.reset();
  }

  bool advance(int round) override { return round < kMaxRounds; }
  void settle() override {
    const TimeNs until_ns = provider_.now_ns() + kSettleNs;
    EXPECT_TRUE(poll_until([&] { return provider_.now_ns() >= until_ns; }));
  }

 private:
  verbs::testing::SimProvider provider_;
  std::array<std::unique_ptr<verbs::VerbsFabric>, 2> fabrics_;
};

class VerbsUnderTest final : public FabricUnderTest {
 public:
  std::string name() const override { return "verbs"; }
  // VerbsFabric posts what weft sends: SEND_WITH_IMM only, and leaves the
  // error state to the device.
  Offers offers() const override { return {}; }
  std::unique_ptr<ConformancePair> make() const override {
    auto pair = std::make_unique<VerbsPair>();
    return pair->open() ? std::move(pair) : nullptr;
  }
};

const VerbsUnderTest kVerbsUnderTest;

INSTANTIATE_TEST_SUITE_P(Verbs, EndpointConformance,
                         ::testing::Values(&kVerbsUnderTest), fabric_name);

}  // namespace
}  // namespace weft::testing
