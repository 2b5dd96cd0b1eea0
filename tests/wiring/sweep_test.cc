// The wiring sweep over a few dozen seeds (weft-sim wiring runs 1,000):
// every rank's discovery equals the true cabling, with no file and with
// the file probed first, and the check names every difference drawn.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "harness/wiring_sweep.h"

namespace weft::harness {
namespace {

constexpr uint64_t kSeeds = 32;

TEST(WiringSweepTest, DiscoveryFindsTheTruthAndTheCheckNamesEveryDifference) {
  std::array<uint32_t, kWiringDifferenceKinds> injected{};
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const WiringCase c = draw_wiring_case(seed);
    absl::StatusOr<WiringVerdict> v = run_wiring_case(c);
    ASSERT_TRUE(v.ok()) << "seed " << seed << ": " << v.status();
    EXPECT_TRUE(v->passed()) << absl::StrJoin(v->failures, "\n");
    for (size_t k = 0; k < kWiringDifferenceKinds; ++k) {
      injected[k] += v->injected[k];
    }
  }
  // The seeds draw every kind of difference.
  for (size_t k = 0; k < kWiringDifferenceKinds; ++k) {
    EXPECT_GT(injected[k], 0u)
        << wiring_difference_name(static_cast<WiringDifference>(k));
  }
}

TEST(WiringSweepTest, ASeedDrawsTheSameCaseEachTime) {
  const WiringCase a = draw_wiring_case(7);
  const WiringCase b = draw_wiring_case(7);
  EXPECT_EQ(a.truth.to_json(), b.truth.to_json());
  EXPECT_EQ(a.declared.to_json(), b.declared.to_json());
  EXPECT_EQ(a.faults.to_text(), b.faults.to_text());
  EXPECT_EQ(a.expected, b.expected);
  // And something differs from the truth.
  EXPECT_FALSE(a.injected.empty());
}

TEST(WiringSweepTest, DevicesAreNamedAsAMacNamesThem) {
  const WiringCase c = draw_wiring_case(3);
  for (uint32_t r = 0; r < c.ranks; ++r) {
    for (const std::string& d : c.expected.devices(r)) {
      EXPECT_EQ(d.rfind("rdma_en", 0), 0u) << d;
    }
  }
}

}  // namespace
}  // namespace weft::harness
