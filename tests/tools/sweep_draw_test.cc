// What a sweep seed draws (tools/weft-sim/sweep_case.h), in process: the
// same seed draws the same case and runs to the same trace, every drawn
// program is one its world can run, and over a few thousand seeds the
// draws reach every corner the sweep promises: sub-groups, big worlds, four
// cables, partial meshes, other link models, asynchronous operations in
// flight together, sizes in the megabytes, long programs, faults after the
// program's expected end.
#include <cstdint>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "harness/program.h"
#include "sim/link_model.h"
#include "tools/weft-sim/sweep_case.h"
#include "tools/weft-sim/sweep_run.h"

namespace weft::tools::weft_sim {
namespace {

constexpr uint64_t kDraws = 2000;

TEST(SweepDraw, SameSeedSameCaseAndTrace) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    EXPECT_EQ(describe_sweep_case(draw_sweep_case(seed)),
              describe_sweep_case(draw_sweep_case(seed)))
        << seed;
  }
  EXPECT_NE(describe_sweep_case(draw_sweep_case(1)),
            describe_sweep_case(draw_sweep_case(2)));
  for (uint64_t seed : {3, 4, 5}) {
    const SweepCase c = draw_sweep_case(seed);
    const absl::StatusOr<SweepRun> a = run_sweep_case(c, {});
    const absl::StatusOr<SweepRun> b =
        run_sweep_case(draw_sweep_case(seed), {});
    ASSERT_TRUE(a.ok() && b.ok()) << seed;
    EXPECT_EQ(a->trace_hash, b->trace_hash) << seed;
    EXPECT_EQ(a->summary, b->summary) << seed;
  }
}

struct Coverage {
  uint64_t subgroup_ops = 0;
  uint64_t big_worlds = 0;  // >= 16 ranks
  uint64_t four_cables = 0;
  uint64_t partial_meshes = 0;
  uint64_t rings = 0;
  uint64_t other_links = 0;
  uint64_t async_overlaps = 0;  // an async op with another op after it
  uint64_t megabyte_ops = 0;    // >= 1 MiB
  uint64_t large_ops = 0;       // > 64 KiB
  uint64_t ops = 0;
  uint64_t long_programs = 0;  // >= 20 operations
  uint64_t in_place = 0;
  uint64_t registered = 0;
  uint64_t late_faults = 0;  // a timed fault after the expected end
  uint64_t late_stops = 0;   // rates that stop after the expected end
  std::set<int> kinds;
};

void count(const SweepCase& c, Coverage* k) {
  const Topology& t = c.world.topology;
  k->big_worlds += t.ranks() >= 16;
  k->four_cables += t.devices(0, 1).size() == 4;
  k->partial_meshes += c.topology_name == "partial mesh";
  k->rings += c.topology_name == "ring";
  k->other_links += !(c.world.link == sim::LinkModel::tb5());
  k->long_programs += c.program.ops.size() >= 20;
  for (size_t i = 0; i < c.program.ops.size(); ++i) {
    const harness::ProgramOp& op = c.program.ops[i];
    ++k->ops;
    k->subgroup_ops += op.group > 0;
    k->async_overlaps += op.async && i + 1 < c.program.ops.size();
    k->megabyte_ops += op.spec.bytes >= (uint64_t{1} << 20);
    k->large_ops += op.spec.bytes > (uint64_t{64} << 10);
    k->in_place += op.spec.in_place;
    k->registered += op.registered;
    k->kinds.insert(static_cast<int>(op.spec.kind));
  }
  for (const sim::ScriptedFault& f : c.world.faults.script) {
    k->late_faults += f.at_ns > c.expected_ns;
  }
  k->late_stops += c.world.faults.rates.until_ns > c.expected_ns;
}

TEST(SweepDraw, EveryDrawIsValidAndTheDrawsCoverTheRanges) {
  Coverage k;
  for (uint64_t seed = 1; seed <= kDraws; ++seed) {
    const SweepCase c = draw_sweep_case(seed);
    ASSERT_TRUE(
        harness::check_program(c.program, c.world.topology, c.group).ok())
        << seed << ": " << describe_sweep_case(c);
    ASSERT_TRUE(c.group.validate().ok()) << seed;
    ASSERT_GE(c.world.topology.ranks(), 2u);
    ASSERT_LE(c.world.topology.ranks(), kSweepMaxRanks);
    ASSERT_LE(c.program.ops.size(), kSweepMaxOps);
    count(c, &k);
  }
  EXPECT_GT(k.subgroup_ops, 0u);
  EXPECT_GT(k.big_worlds, 0u);
  EXPECT_GT(k.four_cables, 0u);
  EXPECT_GT(k.partial_meshes, 0u);
  EXPECT_GT(k.rings, 0u);
  EXPECT_GT(k.other_links, 0u);
  EXPECT_GT(k.async_overlaps, 0u);
  EXPECT_GT(k.megabyte_ops, 0u);
  EXPECT_GT(k.long_programs, 0u);
  EXPECT_GT(k.in_place, 0u);
  // About a third of the operations run on registered buffers.
  EXPECT_GT(k.registered * 4, k.ops);
  EXPECT_LT(k.registered * 2, k.ops);
  EXPECT_GT(k.late_faults, 0u);
  EXPECT_GT(k.late_stops, 0u);
  EXPECT_EQ(k.kinds.size(), static_cast<size_t>(harness::kCollectiveKindCount));
  // Big sizes stay rare, so the median seed stays cheap.
  EXPECT_LT(k.large_ops * 10, k.ops);
}

TEST(SweepDraw, KeepOpsKeepsTheNamedOperationsInOrder) {
  SweepCase c;
  for (uint64_t seed = 1; c.program.ops.size() < 3; ++seed) {
    c = draw_sweep_case(seed);
  }
  const absl::StatusOr<SweepCase> kept = keep_ops(c, {0, 2});
  ASSERT_TRUE(kept.ok()) << kept.status();
  ASSERT_EQ(kept->program.ops.size(), 2u);
  EXPECT_EQ(kept->program.ops[1].spec.bytes, c.program.ops[2].spec.bytes);
  EXPECT_EQ(kept->program.subgroups, c.program.subgroups);
  const absl::StatusOr<SweepCase> bad =
      keep_ops(c, {static_cast<uint32_t>(c.program.ops.size())});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace weft::tools::weft_sim
