// A sweep seed's world: its topology, link model and group options.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "harness/program.h"
#include "tools/weft-sim/sweep_draw.h"

namespace weft::tools::weft_sim {
namespace {

// World sizes: mostly small (cheap, and where most bugs show), sometimes
// middling, rarely up to kSweepMaxRanks.
constexpr double kSmallWorldChance = 0.85;
constexpr double kMiddleWorldChance = 0.12;
constexpr uint32_t kSmallMaxRanks = 8;
constexpr uint32_t kMiddleMaxRanks = 24;
// Above this many ranks a world has fewer cables and smaller frames, so
// its endpoints' slabs stay small.
constexpr uint32_t kBigWorldRanks = 16;
constexpr uint32_t kBigWorldMaxFrameBytes = 64 << 10;
constexpr uint32_t kBigWorldMaxDepth = 8;

constexpr double kMeshChance = 0.4;
constexpr double kRingChance = 0.35;  // the rest: partial meshes
constexpr uint32_t kMinPartialRanks = 4;
constexpr double kMaxChordDensity = 0.7;
constexpr double kBigWorldChordDensity = 0.2;

// Cables per pair: 1 most often, up to 4.
constexpr std::array<double, 4> kCableChances = {0.55, 0.25, 0.12, 0.08};

// Link figures: tb5's as they are, or each scaled by one of these factors
// (a table, not pow(): the same figures on every libm).
constexpr double kExactTb5Chance = 0.3;
constexpr std::array<double, 8> kLinkFactors = {0.25, 0.5, 0.75, 1,
                                                1.5,  2,   3,    4};
constexpr size_t kMaxBandwidthFactor = 6;  // bandwidth at most x2

constexpr std::array<uint32_t, 4> kFrameBytes = {4 << 10, 16 << 10, 64 << 10,
                                                 512 << 10};
constexpr std::array<uint32_t, 6> kDepths = {4, 6, 8, 12, 16, 28};
constexpr std::array<uint64_t, 3> kMeshExchangeMaxBytes = {4 << 10, 64 << 10,
                                                           1 << 20};
constexpr std::array<TimeNs, 3> kMinRtoNs = {5 * kNsPerUs, 20 * kNsPerUs,
                                             100 * kNsPerUs};
constexpr std::array<TimeNs, 3> kInitialRtoNs = {200 * kNsPerUs, kNsPerMs,
                                                 5 * kNsPerMs};
constexpr std::array<TimeNs, 2> kMaxRtoNs = {50 * kNsPerMs, 500 * kNsPerMs};
constexpr std::array<uint32_t, 3> kMaxRetries = {50, 100, 200};

template <typename T, size_t N>
T pick(sim::Prng& prng, const std::array<T, N>& values, size_t limit = N) {
  return values[prng.below(limit < N ? limit : N)];
}

uint32_t draw_ranks(sim::Prng& prng) {
  const double u = prng.unit();
  if (u < kSmallWorldChance) return 2 + prng.below(kSmallMaxRanks - 1);
  if (u < kSmallWorldChance + kMiddleWorldChance) {
    return kSmallMaxRanks + 1 + prng.below(kMiddleMaxRanks - kSmallMaxRanks);
  }
  return kMiddleMaxRanks + 1 + prng.below(kSweepMaxRanks - kMiddleMaxRanks);
}

uint32_t draw_cables(sim::Prng& prng) {
  double u = prng.unit();
  for (uint32_t i = 0; i < kCableChances.size(); ++i) {
    if (u < kCableChances[i]) return i + 1;
    u -= kCableChances[i];
  }
  return kCableChances.size();
}

// A ring with chords: each other pair joined with probability `density`.
// Built as device JSON, named as Topology::mesh names its cables.
Topology partial_mesh(sim::Prng& prng, uint32_t ranks, uint32_t cables,
                      double density) {
  std::vector<std::vector<bool>> joined(ranks, std::vector<bool>(ranks));
  for (uint32_t a = 0; a < ranks; ++a) {
    for (uint32_t b = a + 1; b < ranks; ++b) {
      const bool neighbours = b == a + 1 || (a == 0 && b == ranks - 1);
      joined[a][b] = joined[b][a] = neighbours || prng.chance(density);
    }
  }
  return *harness::topology_of(ranks, [&](uint32_t a, uint32_t b) {
    std::vector<std::string> names;
    for (uint32_t k = 0; k < cables && joined[a][b]; ++k) {
      names.push_back(absl::StrCat("sim_", a, "_", b, "_", k));
    }
    return names;
  });
}

void draw_topology(sim::Prng& prng, SweepCase* c) {
  const uint32_t ranks = draw_ranks(prng);
  const bool big = ranks > kBigWorldRanks;
  const double shape = prng.unit();
  uint32_t cables = draw_cables(prng);
  if (shape < kMeshChance || ranks < kMinPartialRanks) {
    if (big) cables = 1;
    c->topology_name = "mesh";
    c->world.topology = *Topology::mesh(ranks, cables);
  } else if (shape < kMeshChance + kRingChance) {
    c->topology_name = "ring";
    c->world.topology = *Topology::ring(ranks, cables);
  } else {
    if (big) cables = 1;
    const double density =
        draw_between(prng, 0, big ? kBigWorldChordDensity : kMaxChordDensity);
    c->topology_name = "partial mesh";
    c->world.topology = partial_mesh(prng, ranks, cables, density);
  }
}

sim::LinkModel draw_link(sim::Prng& prng) {
  sim::LinkModel link = sim::LinkModel::tb5();
  if (prng.chance(kExactTb5Chance)) return link;
  link.latency_ns = static_cast<TimeNs>(static_cast<double>(link.latency_ns) *
                                        pick(prng, kLinkFactors));
  link.bandwidth_bytes_per_s *= pick(prng, kLinkFactors, kMaxBandwidthFactor);
  link.per_message_ns = static_cast<TimeNs>(
      static_cast<double>(link.per_message_ns) * pick(prng, kLinkFactors));
  return link;
}

GroupOptions draw_group(sim::Prng& prng, uint32_t ranks) {
  const bool big = ranks > kBigWorldRanks;
  GroupOptions group;
  group.max_frame_bytes = pick(prng, kFrameBytes);
  if (big && group.max_frame_bytes > kBigWorldMaxFrameBytes) {
    group.max_frame_bytes = kBigWorldMaxFrameBytes;
  }
  group.depth = pick(prng, kDepths);
  if (big && group.depth > kBigWorldMaxDepth) group.depth = kBigWorldMaxDepth;
  group.ring_directions = prng.chance(0.5) ? 1 : 2;
  group.mesh_exchange_max_bytes = pick(prng, kMeshExchangeMaxBytes);
  const std::array<uint64_t, 4> queues = {group.max_frame_bytes,
                                          uint64_t{2} * group.max_frame_bytes,
                                          uint64_t{1} << 20, uint64_t{8} << 20};
  group.send_queue_bytes = pick(prng, queues);
  group.recovery.min_rto_ns = pick(prng, kMinRtoNs);
  group.recovery.initial_rto_ns = pick(prng, kInitialRtoNs);
  group.recovery.max_rto_ns = pick(prng, kMaxRtoNs);
  group.recovery.max_retries = pick(prng, kMaxRetries);
  if (!group.validate().ok()) return GroupOptions{};
  return group;
}

}  // namespace

double draw_between(sim::Prng& prng, double low, double high) {
  return low + prng.unit() * (high - low);
}

void draw_world(sim::Prng& prng, SweepCase* c) {
  draw_topology(prng, c);
  c->world.link = draw_link(prng);
  c->group = draw_group(prng, c->world.topology.ranks());
}

}  // namespace weft::tools::weft_sim
