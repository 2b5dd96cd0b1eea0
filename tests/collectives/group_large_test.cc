// More than 2 GiB in one call: 64-bit offsets everywhere. A broadcast of
// 2^31 + 64 bytes between two ranks over the ideal link (so the run costs
// only the copies), checked against a pattern: a 1 MiB pseudo-random tile,
// repeated, each copy stamped with its index so a misplaced block shows
// (frames hold 512 KiB - 64 bytes, so frame edges never line up with tiles).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

constexpr uint64_t kBytes = (uint64_t{1} << 31) + 64;

constexpr uint64_t kTile = 1 << 20;

// Tile t of the pattern (the last one may be cut short).
void make_tile(const ByteVec& base, uint64_t t, std::byte* out,
               uint64_t bytes) {
  std::memcpy(out, base.data(), bytes);
  std::memcpy(out, &t, std::min<uint64_t>(bytes, sizeof t));
}

TEST(GroupLarge, BroadcastOver2GiB) {
  std::unique_ptr<std::byte[]> root(new (std::nothrow) std::byte[kBytes]);
  std::unique_ptr<std::byte[]> other(new (std::nothrow) std::byte[kBytes]);
  if (!root || !other)
    GTEST_SKIP() << "not enough memory for two 2 GiB buffers";
  const ByteVec base = exact_input(DType::kUint64, kTile / 8, 0, 7);
  for (uint64_t at = 0; at < kBytes; at += kTile) {
    make_tile(base, at / kTile, root.get() + at, std::min(kTile, kBytes - at));
  }
  std::memset(other.get(), 0, kBytes);

  sim::WorldOptions world;
  world.topology = *Topology::mesh(2);
  world.link = sim::LinkModel::ideal();
  world.keep_trace_events = false;
  absl::StatusOr<SimCluster> cluster = SimCluster::create(world);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const Bytes a(root.get(), kBytes), b(other.get(), kBytes);
  ScriptRun run = cluster->run_scripts(
      {{[&](Group& g) { return g.broadcast_async(a, a, DType::kUint64, 0); }},
       {[&](Group& g) {
         return g.broadcast_async({}, b, DType::kUint64, 0);
       }}});
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (const auto& results : run.results) {
    ASSERT_EQ(results.size(), 1u);
    ASSERT_TRUE(results[0].ok()) << results[0];
  }
  ByteVec tile(kTile);
  for (uint64_t at = 0; at < kBytes; at += kTile) {
    const uint64_t bytes = std::min(kTile, kBytes - at);
    make_tile(base, at / kTile, tile.data(), bytes);
    ASSERT_EQ(std::memcmp(other.get() + at, tile.data(), bytes), 0)
        << "tile at byte offset " << at;
  }
}

}  // namespace
}  // namespace weft::testing
