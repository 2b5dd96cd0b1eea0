#include "harness/program.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "harness/sim_cluster.h"

namespace weft::harness {
namespace {

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

absl::Status check_members(const std::vector<uint32_t>& members,
                           uint32_t world_ranks, size_t index) {
  if (members.size() < 2) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "program sub-group %u has %u member(s); a sub-group needs two or more",
        index + 1, members.size()));
  }
  std::vector<bool> seen(world_ranks);
  for (uint32_t m : members) {
    if (m >= world_ranks || seen[m]) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "program sub-group %u lists rank %u %s; list ranks 0..%u once each",
          index + 1, m, m >= world_ranks ? "outside the world" : "twice",
          world_ranks - 1));
    }
    seen[m] = true;
  }
  return absl::OkStatus();
}

absl::Status check_groups(const Program& program, uint32_t world_ranks) {
  for (size_t i = 0; i < program.subgroups.size(); ++i) {
    const std::vector<uint32_t>& members = program.subgroups[i];
    if (absl::Status s = check_members(members, world_ranks, i); !s.ok()) {
      return s;
    }
    for (size_t j = 0; j < i; ++j) {
      if (program.subgroups[j] == members) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "program sub-groups %u and %u have the same members; a group is "
            "known by its members, so split each list once",
            j + 1, i + 1));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<uint32_t> group_members(const Program& program, uint32_t group,
                                    uint32_t world_ranks) {
  if (group > 0) return program.subgroups[group - 1];
  std::vector<uint32_t> all(world_ranks);
  for (uint32_t r = 0; r < world_ranks; ++r) all[r] = r;
  return all;
}

absl::StatusOr<Topology> topology_of(
    uint32_t ranks,
    const std::function<std::vector<std::string>(uint32_t, uint32_t)>&
        devices) {
  std::vector<std::string> rows;
  for (uint32_t a = 0; a < ranks; ++a) {
    std::vector<std::string> cells;
    for (uint32_t b = 0; b < ranks; ++b) {
      std::vector<std::string> names;
      if (a != b) {
        for (const std::string& d : devices(a, b)) {
          names.push_back(json_string(d));
        }
      }
      cells.push_back(names.empty()
                          ? "null"
                          : absl::StrCat("[", absl::StrJoin(names, ","), "]"));
    }
    rows.push_back(absl::StrCat("[", absl::StrJoin(cells, ","), "]"));
  }
  return Topology::parse_json(absl::StrCat("[", absl::StrJoin(rows, ","), "]"));
}

absl::StatusOr<Topology> sub_topology(const Topology& topology,
                                      std::span<const uint32_t> members) {
  for (uint32_t m : members) {
    if (m >= topology.ranks()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "sub-topology: rank %u is outside the topology's %u ranks", m,
          topology.ranks()));
    }
  }
  return topology_of(static_cast<uint32_t>(members.size()),
                     [&](uint32_t a, uint32_t b) {
                       return topology.devices(members[a], members[b]);
                     });
}

absl::Status check_program(const Program& program, const Topology& topology,
                           const GroupOptions& options) {
  if (program.ops.size() > kMaxProgramOps) {
    return absl::InvalidArgumentError(
        absl::StrFormat("program has %u operations; at most %u run in one",
                        program.ops.size(), kMaxProgramOps));
  }
  if (absl::Status s = check_groups(program, topology.ranks()); !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const ProgramOp& op = program.ops[i];
    if (op.group > program.subgroups.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "program operation %u names group %u; there are %u sub-groups", i + 1,
          op.group, program.subgroups.size()));
    }
    absl::StatusOr<Topology> t = sub_topology(
        topology, group_members(program, op.group, topology.ranks()));
    if (!t.ok()) return t.status();
    if (absl::Status s = check_collective(op.spec, *t, options); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "program operation %u (group %u): %s", i + 1, op.group, s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace weft::harness
