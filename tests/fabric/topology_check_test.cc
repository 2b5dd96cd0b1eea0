#include "fabric/topology_check.h"

#include <cstdint>
#include <span>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/topology.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;

constexpr TopologyNeeds kEveryNeed[] = {
    TopologyNeeds::kLinks, TopologyNeeds::kMesh, TopologyNeeds::kRing,
    TopologyNeeds::kMeshOrRing};
constexpr TopologyNeeds kEveryAlgorithm[] = {
    TopologyNeeds::kMesh, TopologyNeeds::kRing, TopologyNeeds::kMeshOrRing};

const TopologyWording kWording{"cluster.json", "use --algorithm=ring or auto"};

Topology parsed(const char* json) {
  absl::StatusOr<Topology> t = Topology::parse_json(json);
  EXPECT_TRUE(t.ok()) << json << ": " << t.status();
  return t.ok() ? *std::move(t) : *Topology::mesh(1);
}

// The one line check_topology() gives for `needs`.
std::string line_for(const Topology& t, TopologyNeeds needs) {
  const absl::Status s = check_topology(t, needs, kWording);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(std::string(s.message()).find('\n'), std::string::npos) << s;
  return std::string(s.message());
}

// The same line whatever is asked: the advice never depends on it.
void expect_every_need_says(const Topology& t,
                            std::span<const TopologyNeeds> needs,
                            const std::string& line) {
  for (TopologyNeeds need : needs) {
    EXPECT_EQ(line_for(t, need), line) << static_cast<int>(need);
  }
}

TEST(TopologyCheck, MeshAndRingAndOneRankPassWhatTheyCanRun) {
  for (TopologyNeeds need : kEveryNeed) {
    EXPECT_TRUE(check_topology(*Topology::mesh(4, 2), need).ok());
    EXPECT_TRUE(check_topology(*Topology::mesh(1), need).ok());
    EXPECT_TRUE(check_topology(*Topology::mesh(2), need).ok());
  }
  const Topology ring = *Topology::ring(5);
  EXPECT_TRUE(check_topology(ring, TopologyNeeds::kLinks).ok());
  EXPECT_TRUE(check_topology(ring, TopologyNeeds::kRing).ok());
  EXPECT_TRUE(check_topology(ring, TopologyNeeds::kMeshOrRing).ok());
}

TEST(TopologyCheck, AOneWayCableNamesBothCellsWhateverIsAsked) {
  const Topology t = parsed(R"([[null, "a"], [null, null]])");
  expect_every_need_says(
      t, kEveryNeed,
      "cluster.json: rank 0 names device a toward rank 1 (cell [0][1]) but "
      "rank 1 names none toward rank 0 (cell [1][0] is null); name rank 1's "
      "device toward rank 0 in cell [1][0], or set cell [0][1] to null");
}

TEST(TopologyCheck, DifferentCableCountsEachWaySaySo) {
  const Topology t = parsed(R"([[null, ["a", "b"]], ["c", null]])");
  expect_every_need_says(
      t, kEveryNeed,
      "cluster.json: rank 0 gives rank 1 two cables (cell [0][1]: a, b) but "
      "rank 1 gives rank 0 one (cell [1][0]: c); list one device per cable "
      "on each side, as many each way");
}

// The finding of issue 32: mesh said "use ring or auto", auto said "use
// mesh or a ring topology". Neither runs; the advice is one.
TEST(TopologyCheck, AnIsolatedRankGetsOneAdviceWhateverIsAsked) {
  const Topology t =
      parsed(R"([[null, "a", null], ["b", null, null], [null, null, null]])");
  expect_every_need_says(
      t, kEveryNeed,
      "cluster.json: rank 2 is joined to no rank (row 2 and column 2 are all "
      "null); give it cables to ranks 1 and 0 (its ring neighbours; to every "
      "rank for the mesh), or run with fewer ranks (remove row 2 and column "
      "2)");
  const Topology two = parsed(R"([[null, null], [null, null]])");
  EXPECT_EQ(line_for(two, TopologyNeeds::kLinks),
            "cluster.json: rank 0 is joined to no rank (row 0 and column 0 "
            "are all null); give it a cable to rank 1, or run with fewer "
            "ranks (remove row 0 and column 0) (and 1 more problem)");
}

TEST(TopologyCheck, ARingFileAskedForTheMeshIsToldToUseTheRing) {
  const Topology ring = *Topology::ring(5);
  EXPECT_EQ(line_for(ring, TopologyNeeds::kMesh),
            "cluster.json: ranks 0 and 2 are not joined (cells [0][2] and "
            "[2][0] are null), which the mesh needs (every pair joined); the "
            "ring runs on these cables (each rank is joined to the next): use "
            "--algorithm=ring or auto, or join every pair for the mesh (and 4 "
            "more problems)");
}

TEST(TopologyCheck, AFileNeitherRunsOnGetsOneAdviceWhateverIsAsked) {
  // A line 0-1-2-3: the ring lacks 3-0, the mesh 0-2, 0-3 and 1-3.
  const Topology line = parsed(
      R"([[null, "a", null, null], ["b", null, "c", null],
          [null, "d", null, "e"], [null, null, "f", null]])");
  EXPECT_TRUE(check_topology(line, TopologyNeeds::kLinks).ok());
  expect_every_need_says(
      line, kEveryAlgorithm,
      "cluster.json: ranks 3 and 0 are not joined (cells [3][0] and [0][3] "
      "are null), so neither the ring (each rank joined to the next) nor the "
      "mesh (every pair joined) runs on these cables; join ranks 3 and 0 for "
      "the "
      "ring, or every pair for the mesh");
}

TEST(TopologyCheck, TheListHasEveryFindingInOrderUpToTheLimit) {
  // 0 -> 1 one way, 2 and 3 two cables against one, 4 joined to no one.
  const Topology t = parsed(
      R"([[null, "a", null, null, null], [null, null, null, null, null],
          [null, null, null, ["b", "c"], null], [null, null, "d", null, null],
          [null, null, null, null, null]])");
  const TopologyReport all =
      find_topology_problems(t, TopologyNeeds::kMesh, kWording);
  EXPECT_EQ(all.total, 3u);
  EXPECT_FALSE(all.ok());
  EXPECT_THAT(
      all.findings,
      ElementsAre(
          Field(&TopologyFinding::problem, TopologyProblem::kOneWay),
          Field(&TopologyFinding::problem, TopologyProblem::kCableCounts),
          Field(&TopologyFinding::problem, TopologyProblem::kIsolated)));
  EXPECT_EQ(all.findings[1].rank, 2u);
  EXPECT_EQ(all.findings[1].peer, 3u);
  EXPECT_EQ(all.findings[2].rank, 4u);
  const TopologyReport two =
      find_topology_problems(t, TopologyNeeds::kMesh, kWording, 2);
  EXPECT_EQ(two.total, 3u);
  EXPECT_EQ(two.findings.size(), 2u);
}

// A big ring asked for a mesh lacks millions of pairs: counted, not listed.
TEST(TopologyCheck, ABigRingAskedForTheMeshListsTheLimitAndCountsTheRest) {
  const uint32_t n = Topology::kMaxRanks;
  const TopologyReport r = find_topology_problems(
      *Topology::ring(n), TopologyNeeds::kMesh, kWording);
  EXPECT_EQ(r.findings.size(), kMaxTopologyFindings);
  EXPECT_EQ(r.total, uint64_t{n} * (n - 1) / 2 - n);
  EXPECT_EQ(r.findings.back().problem, TopologyProblem::kMeshPair);
}

}  // namespace
}  // namespace weft
