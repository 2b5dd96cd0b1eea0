// Wiring: validation, the device order, the JACCL matrix and the table.
#include "wiring/wiring.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::wiring {
namespace {

using ::testing::HasSubstr;

TEST(DeviceNameTest, DigitsCompareByValue) {
  EXPECT_TRUE(device_name_less("rdma_en2", "rdma_en10"));
  EXPECT_FALSE(device_name_less("rdma_en10", "rdma_en2"));
  EXPECT_TRUE(device_name_less("rdma_en9", "rdma_fn1"));
  EXPECT_TRUE(device_name_less("en", "en0"));
  EXPECT_FALSE(device_name_less("rdma_en3", "rdma_en3"));
}

TEST(WiringTest, RefusesADeviceAtTwoCables) {
  absl::StatusOr<Wiring> w = Wiring::create(
      {{"a"}, {"b"}, {"c"}}, {{{0, "a"}, {1, "b"}}, {{0, "a"}, {2, "c"}}});
  ASSERT_FALSE(w.ok());
  EXPECT_THAT(w.status().message(), HasSubstr("another cable"));
}

TEST(WiringTest, RefusesAnUnlistedDeviceAndADeadCable) {
  EXPECT_FALSE(Wiring::create({{"a"}, {"b"}}, {{{0, "a"}, {1, "x"}}}).ok());
  EXPECT_FALSE(
      Wiring::create({{"a"}, {"b"}}, {{{0, "a"}, {1, "b"}, false, false}})
          .ok());
}

TEST(WiringTest, TopologyListsTwoWayCablesInTheLowerRanksNameOrder) {
  // Rank 0's rdma_en10 and rdma_en2 both reach rank 1; by name, rdma_en2
  // comes first, so its far end rdma_en7 is entry 0 of cell [1][0].
  absl::StatusOr<Wiring> w = Wiring::create(
      {{"rdma_en10", "rdma_en2", "rdma_en3"}, {"rdma_en5", "rdma_en7", "x"}},
      {{{1, "rdma_en5"}, {0, "rdma_en10"}},
       {{0, "rdma_en2"}, {1, "rdma_en7"}},
       {{0, "rdma_en3"}, {1, "x"}, true, false}});
  ASSERT_TRUE(w.ok()) << w.status();
  const Topology t = w->topology();
  EXPECT_EQ(t.devices(0, 1),
            (std::vector<std::string>{"rdma_en2", "rdma_en10"}));
  EXPECT_EQ(t.devices(1, 0),
            (std::vector<std::string>{"rdma_en7", "rdma_en5"}));
  EXPECT_EQ(w->devices(0),
            (std::vector<std::string>{"rdma_en2", "rdma_en3", "rdma_en10"}));
  const std::string table = w->table();
  EXPECT_THAT(table, HasSubstr("rdma_en2,rdma_en10"));
  EXPECT_THAT(table, HasSubstr("cable: rank 0 rdma_en3 -> rank 1 x, one way"));
  EXPECT_THAT(table, HasSubstr("3 cables (1 working one way only)"));
}

TEST(WiringTest, TableNamesDevicesNoCableReaches) {
  absl::StatusOr<Wiring> w =
      Wiring::create({{"a", "b"}, {"c"}}, {{{0, "a"}, {1, "c"}}});
  ASSERT_TRUE(w.ok());
  EXPECT_THAT(w->table(), HasSubstr("unused: rank 0 b reaches no rank"));
}

}  // namespace
}  // namespace weft::wiring
