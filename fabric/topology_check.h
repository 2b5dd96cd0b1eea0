// The one check of a device file (a Topology read from JACCL's device JSON),
// shared by every command and library that reads one: weft-sim and
// weft-bench (tools/cli/world_flags.cc), the simulated verbs provider
// (sim_verbs/config.cc), weft::Config::from_environment
// (rendezvous/config.cc), jaccl::Config and jaccl::init, and the harness's
// choice of algorithm (harness/sim_cluster.cc). Each problem is one line
// naming the file and the cells (rank i, rank j) concerned, with one piece
// of advice per file whatever algorithm was asked, so that two commands
// never disagree on what to fix.
//
// Topology::parse_json checks the syntax (a square list of lists, null on
// the diagonal); this checks what a well-formed file says:
//   - symmetry: rank i names a device toward j but j names none toward i,
//     or the two name a different number of cables;
//   - isolated ranks: a rank joined to no rank, in a world of two or more;
//   - what the algorithm needs: the mesh every pair joined, the ring each
//     rank joined to the next (i +- 1 mod n), auto one of the two.
// The algorithm's needs are judged only once the links are sound, so a file
// with a one-way cable or an isolated rank gets that finding alone, whatever
// algorithm was asked.
//
// find_topology_problems() returns every finding (for a reporting mode that
// lists them all); check_topology() the first as one InvalidArgument line.
#ifndef WEFT_FABRIC_TOPOLOGY_CHECK_H_
#define WEFT_FABRIC_TOPOLOGY_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "fabric/topology.h"

namespace weft {

// What the caller will run over the topology.
enum class TopologyNeeds : uint8_t {
  kLinks,       // sound links only (point-to-point traffic, a launch)
  kMesh,        // and every pair joined: the mesh algorithms
  kRing,        // and each rank joined to the next: the ring algorithm
  kMeshOrRing,  // and one of the two: the automatic choice
};

// What a finding is about.
enum class TopologyProblem : uint8_t {
  // Rank `rank` names a device toward `peer`; `peer` names none back.
  kOneWay,
  // Both name devices toward each other, a different number each way
  // (`rank` < `peer`).
  kCableCounts,
  // Rank `rank` is joined to no rank (`peer` == `rank`).
  kIsolated,
  // `rank` < `peer` are not joined, which the mesh needs; the ring runs.
  kMeshPair,
  // Ring neighbours `rank` and `peer` = rank + 1 (mod n) are not joined:
  // neither the ring nor the mesh runs.
  kRingPair,
};

struct TopologyFinding {
  TopologyProblem problem;
  uint32_t rank;  // the row of the cell concerned (i)
  uint32_t peer;  // its column (j)
  // One line: "<source>: what is wrong (the cells); what to do". No
  // trailing newline.
  std::string text;
};

// The words the caller's user knows, used in the findings' text.
struct TopologyWording {
  // Names the file at the start of each line (its path, or the variable
  // and its path).
  std::string_view source = "device JSON";
  // How this caller's user runs the ring, for a file that only the ring
  // runs on: "use --algorithm=ring or auto", "set JACCL_RING=1".
  std::string_view use_ring = "use the ring algorithm";
};

struct TopologyReport {
  // The findings in order: one-way cables and cable counts (by row, then
  // column), isolated ranks (by rank), then what `needs` lacks (by rank).
  // At most the `limit` given; `total` counts them all.
  std::vector<TopologyFinding> findings;
  uint64_t total = 0;

  bool ok() const { return total == 0; }
};

// Most findings listed by default: a ring of 4096 ranks asked for a mesh
// lacks 8.4 million pairs, which no one reads.
inline constexpr size_t kMaxTopologyFindings = 64;

// Every finding of `topology` for `needs`, at most `limit` of them listed.
TopologyReport find_topology_problems(const Topology& topology,
                                      TopologyNeeds needs,
                                      const TopologyWording& wording = {},
                                      size_t limit = kMaxTopologyFindings);

// OK when `topology` has no finding for `needs`; otherwise InvalidArgument
// whose message is the first finding's line, followed by "(and N more
// problems)" when there are others.
absl::Status check_topology(const Topology& topology, TopologyNeeds needs,
                            const TopologyWording& wording = {});

}  // namespace weft

#endif  // WEFT_FABRIC_TOPOLOGY_CHECK_H_
