// A sweep seed's program: its sub-groups and operations.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "harness/sim_cluster.h"
#include "tools/weft-sim/sweep_draw.h"

namespace weft::tools::weft_sim {
namespace {

using harness::AlgorithmRequest;
using harness::CollectiveKind;
using harness::CollectiveSpec;
using harness::ProgramOp;

// Program length: most programs short (a cheap median seed), the rest up
// to kSweepMaxOps.
constexpr double kShortProgramChance = 0.6;
constexpr uint32_t kShortProgramOps = 8;
// Worlds of more ranks run short programs only: every operation there
// costs tens of times more simulation than on a few ranks.
constexpr uint32_t kBigWorldRanks = 16;

constexpr double kSubgroupsChance = 0.5;
constexpr uint32_t kMaxSubgroups = 3;
constexpr uint32_t kMaxSubgroupRanks = 8;
constexpr double kBlockSubgroupChance = 0.5;  // consecutive ranks
constexpr double kShuffledSubgroupChance = 0.3;
constexpr double kSubgroupOpChance = 0.35;
constexpr double kAsyncChance = 0.3;

// Sizes: 0 bytes now and then; else log-uniform up to 64 KiB, and rarely
// up to kMaxOpBytes.
constexpr double kZeroBytesChance = 0.05;
constexpr double kLargeSizeChance = 0.08;
constexpr int kSmallMaxLog2 = 16;
constexpr int kMaxOpBytesLog2 = 24;
constexpr uint64_t kMaxOpBytes = uint64_t{1} << kMaxOpBytesLog2;
// Bytes times the group's ranks, for one operation and for the program:
// the buffers the harness holds and the frames the world moves.
constexpr uint64_t kOpByteBudget = uint64_t{32} << 20;
constexpr uint64_t kProgramByteBudget = uint64_t{64} << 20;

constexpr double kInPlaceChance = 0.25;
constexpr double kAutoAlgorithmChance = 0.5;
constexpr int kMaxOpAttempts = 8;

// A program's deadline: the base, plus this many times its longest
// operation's expected time.
constexpr TimeNs kDeadlineSlack = 50;

uint64_t draw_bytes(sim::Prng& prng) {
  if (prng.chance(kZeroBytesChance)) return 0;
  const int top =
      prng.chance(kLargeSizeChance) ? kMaxOpBytesLog2 : kSmallMaxLog2;
  const uint64_t base = uint64_t{1} << prng.below(top + 1);
  return std::min(base + prng.below(base), kMaxOpBytes);
}

std::vector<uint32_t> draw_members(sim::Prng& prng, uint32_t n) {
  const uint32_t most =
      std::max<uint32_t>(2, std::min(n - 1, kMaxSubgroupRanks));
  const auto k = static_cast<uint32_t>(2 + prng.below(most - 1));
  std::vector<uint32_t> members;
  if (prng.chance(kBlockSubgroupChance)) {
    const auto start = static_cast<uint32_t>(prng.below(n));
    for (uint32_t i = 0; i < k; ++i) members.push_back((start + i) % n);
  } else {
    std::vector<uint32_t> all(n);
    for (uint32_t r = 0; r < n; ++r) all[r] = r;
    for (uint32_t i = 0; i < k; ++i) {
      std::swap(all[i], all[i + prng.below(n - i)]);
      members.push_back(all[i]);
    }
    if (!prng.chance(kShuffledSubgroupChance)) {
      std::sort(members.begin(), members.end());
    }
  }
  // All n ranks in world order would be the world group itself.
  if (k == n && std::is_sorted(members.begin(), members.end())) {
    std::reverse(members.begin(), members.end());
  }
  return members;
}

void draw_subgroups(sim::Prng& prng, SweepCase* c) {
  if (!prng.chance(kSubgroupsChance)) return;
  const uint32_t n = c->world.topology.ranks();
  const uint64_t count = 1 + prng.below(kMaxSubgroups);
  for (uint64_t i = 0; i < count; ++i) {
    std::vector<uint32_t> members = draw_members(prng, n);
    auto& groups = c->program.subgroups;
    if (std::find(groups.begin(), groups.end(), members) == groups.end()) {
      groups.push_back(std::move(members));
    }
  }
}

CollectiveSpec draw_spec(sim::Prng& prng, uint32_t members, uint64_t budget) {
  CollectiveSpec s;
  s.kind =
      static_cast<CollectiveKind>(prng.below(harness::kCollectiveKindCount));
  s.dtype = static_cast<DType>(prng.below(kDTypeCount));
  s.op = static_cast<ReduceOp>(prng.below(kReduceOpCount));
  s.root = static_cast<uint32_t>(prng.below(members));
  s.bytes = draw_bytes(prng);
  while (s.bytes * members > budget) s.bytes /= 2;
  s.in_place =
      s.kind != CollectiveKind::kSendRecv && prng.chance(kInPlaceChance);
  if (!prng.chance(kAutoAlgorithmChance)) {
    s.algorithm = static_cast<AlgorithmRequest>(
        1 + prng.below(static_cast<uint64_t>(AlgorithmRequest::kRing)));
  }
  return s;
}

// One operation its group can run, or false after kMaxOpAttempts.
bool draw_op(sim::Prng& prng, const SweepCase& c,
             const std::vector<Topology>& topologies, uint64_t budget,
             ProgramOp* out) {
  const size_t subgroups = c.program.subgroups.size();
  for (int attempt = 0; attempt < kMaxOpAttempts; ++attempt) {
    ProgramOp op;
    if (subgroups > 0 && prng.chance(kSubgroupOpChance)) {
      op.group = static_cast<uint32_t>(1 + prng.below(subgroups));
    }
    const Topology& t = topologies[op.group];
    op.spec = draw_spec(prng, t.ranks(), std::min(budget, kOpByteBudget));
    op.async = prng.chance(kAsyncChance);
    if (!harness::check_collective(op.spec, t, c.group).ok()) {
      op.spec.algorithm = AlgorithmRequest::kAuto;
    }
    if (harness::check_collective(op.spec, t, c.group).ok()) {
      *out = op;
      return true;
    }
  }
  return false;
}

}  // namespace

TimeNs expected_op_ns(const SweepCase& c, uint64_t bytes, uint32_t members) {
  const sim::LinkModel& link = c.world.link;
  const TimeNs steps = 2 * static_cast<TimeNs>(members);
  TimeNs ns = steps * (link.latency_ns + link.per_message_ns);
  if (link.bandwidth_bytes_per_s > 0) {
    ns += static_cast<TimeNs>(2 * static_cast<double>(bytes) * kNsPerS /
                              link.bandwidth_bytes_per_s);
  }
  return ns;
}

void draw_program(sim::Prng& prng, SweepCase* c) {
  draw_subgroups(prng, c);
  std::vector<Topology> topologies = {c->world.topology};
  for (const std::vector<uint32_t>& members : c->program.subgroups) {
    topologies.push_back(*harness::sub_topology(c->world.topology, members));
  }
  const bool short_program = prng.chance(kShortProgramChance) ||
                             c->world.topology.ranks() > kBigWorldRanks;
  const uint64_t ops =
      1 + prng.below(short_program ? kShortProgramOps : kSweepMaxOps);
  uint64_t budget = kProgramByteBudget;
  TimeNs longest_ns = 0;
  for (uint64_t i = 0; i < ops; ++i) {
    ProgramOp op;
    if (!draw_op(prng, *c, topologies, budget, &op)) continue;
    const uint32_t members = topologies[op.group].ranks();
    budget -= op.spec.bytes * members;
    const TimeNs op_ns = expected_op_ns(*c, op.spec.bytes, members);
    c->expected_ns += op_ns;
    longest_ns = std::max(longest_ns, op_ns);
    c->program.ops.push_back(op);
  }
  c->deadline_ns = kSweepDeadlineNs + kDeadlineSlack * longest_ns;
}

}  // namespace weft::tools::weft_sim
