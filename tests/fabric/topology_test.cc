#include "fabric/topology.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(Topology, ParsesNullStringAndList) {
  absl::StatusOr<Topology> t = Topology::parse_json(
      R"([[null, "rdma_en2", ["rdma_en3", "rdma_en4"]],
          ["rdma_en2", null, null],
          [["rdma_en3", "rdma_en4"], null, null]])");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->ranks(), 3u);
  EXPECT_THAT(t->devices(0, 1), ElementsAre("rdma_en2"));
  EXPECT_THAT(t->devices(0, 2), ElementsAre("rdma_en3", "rdma_en4"));
  EXPECT_TRUE(t->devices(1, 2).empty());
  EXPECT_FALSE(t->connected(1, 2));
  EXPECT_FALSE(t->is_full_mesh());
  // Each rank's devices over all its links.
  EXPECT_EQ(t->devices_of(0), 3u);
  EXPECT_EQ(t->devices_of(1), 1u);
  EXPECT_EQ(t->devices_of(2), 2u);
}

struct BadCase {
  const char* json;
  const char* says;
};

TEST(Topology, BadInputSaysWhatAndWhere) {
  const BadCase cases[] = {
      {"not json", "not valid JSON"},
      {"{}", "top level"},
      {"[]", "top level"},
      {R"([[null, "a"], [null]])", "row 1 has 1 cells"},
      {R"([["a", null], [null, null]])", "cell [0][0]"},
      {R"([[null, 5], [null, null]])", "cell [0][1] is a number"},
      {R"([[null, ["a", 1]], [null, null]])", "cell [0][1] holds a list"},
      {R"([[null, ""], [null, null]])", "empty device name"},
      {R"([[null, []], [null, null]])", "empty list"},
      {R"([5])", "row 0"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<Topology> t = Topology::parse_json(c.json);
    ASSERT_FALSE(t.ok()) << c.json;
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(t.status().message(), HasSubstr(c.says)) << c.json;
  }
}

TEST(Topology, GeneratedMeshAndRing) {
  Topology mesh = Topology::mesh(4).value();
  EXPECT_TRUE(mesh.is_full_mesh());
  EXPECT_TRUE(mesh.has_ring());
  Topology ring = Topology::ring(5, 2).value();
  EXPECT_FALSE(ring.is_full_mesh());
  EXPECT_TRUE(ring.has_ring());
  EXPECT_EQ(ring.devices(0, 1).size(), 2u);
  EXPECT_EQ(ring.devices(0, 4).size(), 2u);
  EXPECT_FALSE(ring.connected(0, 2));
  EXPECT_EQ(ring.devices_of(3), 4u);  // two neighbours, two cables each
  EXPECT_EQ(Topology::mesh(4, 3)->devices_of(2), 9u);
  EXPECT_EQ(Topology::mesh(1)->devices_of(0), 0u);
  EXPECT_FALSE(Topology::mesh(0).ok());
  EXPECT_FALSE(Topology::ring(3, 0).ok());
}

TEST(Topology, JsonRoundTrip) {
  Topology ring = Topology::ring(4, 2).value();
  Topology back = Topology::parse_json(ring.to_json()).value();
  for (uint32_t i = 0; i < 4; ++i) {
    for (uint32_t j = 0; j < 4; ++j) {
      EXPECT_EQ(back.devices(i, j), ring.devices(i, j));
    }
  }
}

TEST(Topology, MissingFileIsNotFound) {
  EXPECT_EQ(
      Topology::load_json_file("/nonexistent/devices.json").status().code(),
      absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace weft
