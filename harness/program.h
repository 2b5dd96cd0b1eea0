// Program: what one rank-wide workload of the swarm runs on a simulated
// cluster: a sequence of collectives, each on the whole world or on a
// sub-group made with Group::split, some started asynchronously so several
// are in flight together. Every member of an operation's group runs it;
// the others skip it. Each operation's output is checked against its own
// Reference (reference.h), with the group's size and ranks.
//
//   Program p;
//   p.subgroups = {{0, 2}};                              // group 1
//   p.ops.push_back({.spec = all_sum_spec, .group = 1, .async = true});
//   p.ops.push_back({.spec = barrier_spec});            // the world
//   p.ops.push_back({.spec = all_sum_spec, .registered = true});
//   ProgramRun run = *run_program(cluster, p, ProgramRunOptions{});
#ifndef WEFT_HARNESS_PROGRAM_H_
#define WEFT_HARNESS_PROGRAM_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "fabric/topology.h"
#include "harness/collective_spec.h"

namespace weft::harness {

// Most operations of one program, and most started but not ended on one
// rank at once (each in-flight operation holds its buffers).
inline constexpr uint32_t kMaxProgramOps = 64;
inline constexpr uint32_t kMaxInFlight = 4;

struct ProgramOp {
  CollectiveSpec spec;  // root: a rank of the op's group
  uint32_t group = 0;   // 0: the world; k: Program::subgroups[k - 1]
  // The next operation starts before this one ends (at most kMaxInFlight
  // in flight); false: this one ends first.
  bool async = false;
  // Each member registers the operation's buffers with the operation's
  // group (Group::register_memory) before starting it and, once it ended
  // OK, overwrites them: a frame still unacknowledged must not be resent
  // from them (the modify-after-return hazard of registered memory). A
  // failed one's buffers are kept as they are until the cluster closes
  // (SimCluster::keep_until_closed).
  bool registered = false;
};

struct Program {
  // Each sub-group's members, world ranks in group-rank order, split from
  // the world group once, before the first operation.
  std::vector<std::vector<uint32_t>> subgroups;
  std::vector<ProgramOp> ops;
};

// The world ranks of group `group` (0: every rank of `world_ranks`).
// REQUIRES: group <= program.subgroups.size().
std::vector<uint32_t> group_members(const Program& program, uint32_t group,
                                    uint32_t world_ranks);

// A topology of `ranks` ranks in which rank a reaches rank b over the
// devices devices(a, b) names (none: no cable), built through JACCL's device
// JSON so it is checked as a parsed one is. Topology::parse_json's errors.
absl::StatusOr<Topology> topology_of(
    uint32_t ranks,
    const std::function<std::vector<std::string>(uint32_t, uint32_t)>& devices);

// The cables among `members` as a topology of its own (rank i is
// members[i]), with the cables' device names: what a sub-group sees.
// InvalidArgument for a member outside `topology`.
absl::StatusOr<Topology> sub_topology(const Topology& topology,
                                      std::span<const uint32_t> members);

// InvalidArgument naming the first problem: too many operations, a
// sub-group with fewer than two members, a repeated or out-of-range member,
// two sub-groups with the same members, an operation naming no group, or
// an operation its group cannot run (check_collective on the group's
// sub-topology).
absl::Status check_program(const Program& program, const Topology& topology,
                           const GroupOptions& options);

}  // namespace weft::harness

#endif  // WEFT_HARNESS_PROGRAM_H_
