// A jaccl::Config as weft's: the topology JACCL would choose, the device
// lists as a weft::Topology (several names per pair: several cables), and
// the rank's checks.
#include "jaccl/internal/weft_config.h"

#include <optional>
#include <stdexcept>
#include <string>

#include "fabric/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaccl/jaccl.h"

namespace jaccl::internal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Devices kMesh3 = {
    {{}, {"a"}, {"b"}}, {{"a"}, {}, {"b"}}, {{"a"}, {"b"}, {}}};
// Four ranks in a ring (0-2 and 1-3 not joined).
const Devices kRing4 = {{{}, {"e1"}, {}, {"e3"}},
                        {{"e1"}, {}, {"e2"}, {}},
                        {{}, {"e2"}, {}, {"e3"}},
                        {{"e3"}, {}, {"e2"}, {}}};

Config with(const Devices& d, bool prefer_ring) {
  Config c;
  c.set_devices(d);
  c.prefer_ring(prefer_ring);
  return c;
}

TEST(ChoosesRing, AsJacclDoes) {
  EXPECT_FALSE(chooses_ring(with(kMesh3, false)));  // a mesh
  EXPECT_TRUE(chooses_ring(with(kMesh3, true)));    // a ring on the mesh
  EXPECT_TRUE(chooses_ring(with(kRing4, false)));   // no mesh: the ring
  EXPECT_TRUE(chooses_ring(with(kRing4, true)));
}

TEST(ToTopology, NamesAndCablesCarryOver) {
  const weft::Topology t =
      to_topology({{{}, {"en2", "en5"}}, {{"en3", "en6"}, {}}});
  ASSERT_EQ(t.ranks(), 2u);
  EXPECT_THAT(t.devices(0, 1), ElementsAre("en2", "en5"));
  EXPECT_THAT(t.devices(1, 0), ElementsAre("en3", "en6"));
  EXPECT_TRUE(t.devices(0, 0).empty());
  EXPECT_TRUE(to_topology(kMesh3).is_full_mesh());
  const weft::Topology ring = to_topology(kRing4);
  EXPECT_FALSE(ring.is_full_mesh());
  EXPECT_TRUE(ring.has_ring());
}

TEST(ToTopology, WeftRefusesAnEmptyName) {
  try {
    to_topology({{{}, {""}}, {{"en3"}, {}}});
    FAIL() << "an empty device name was taken";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("[jaccl] the devices"));
  }
}

TEST(CheckedRank, TextAndNumbers) {
  EXPECT_EQ(checked_rank(std::nullopt, 3), 3u);
  EXPECT_EQ(checked_rank(std::string("12"), 0), 12u);
  for (const char* bad : {"", "-1", "1x", " 1", "1234567890"}) {
    EXPECT_THROW(checked_rank(std::string(bad), 0), std::runtime_error) << bad;
  }
  EXPECT_THROW(checked_rank(std::nullopt, -2), std::runtime_error);
}

}  // namespace
}  // namespace jaccl::internal
