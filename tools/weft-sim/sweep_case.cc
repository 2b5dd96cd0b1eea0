#include "tools/weft-sim/sweep_case.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "fabric/absl_compat.h"
#include "harness/sim_cluster.h"
#include "sim/prng.h"

namespace weft::sim::cli {
namespace {

using harness::AlgorithmRequest;
using harness::CollectiveKind;
using harness::CollectiveSpec;

// The draw's own sub-stream of the seed (the world forks its links from the
// seed itself).
constexpr uint64_t kDrawStream = 0x5377656570ull;  // "Sweep"

constexpr uint32_t kMinRanks = 2;
constexpr uint32_t kMaxRanks = 8;
constexpr double kRingChance = 0.5;
constexpr double kTwoCablesChance = 0.2;

constexpr std::array<uint32_t, 4> kFrameBytes = {4 << 10, 16 << 10, 64 << 10,
                                                 512 << 10};
constexpr std::array<uint32_t, 3> kDepths = {4, 8, 16};

// Sizes: 0 bytes now and then, else log-uniform up to kMaxOpBytes.
constexpr double kZeroBytesChance = 0.1;
constexpr int kMaxOpBytesLog2 = 18;
constexpr uint64_t kMaxOpBytes = uint64_t{1} << kMaxOpBytesLog2;
constexpr double kInPlaceChance = 0.25;
constexpr double kAutoAlgorithmChance = 0.5;
constexpr int kMaxOpAttempts = 8;

// Fault bands: a third nearly clean, most with loss up to 1%, the rest
// harsh (loss up to 5%).
constexpr double kQuietBand = 1.0 / 3;
constexpr double kModerateBand = 0.85;
struct RateBand {
  double loss_min, loss_max, duplicate, reorder, error;
};
constexpr RateBand kQuiet = {0, 1e-4, 1e-4, 1e-3, 1e-5};
constexpr RateBand kModerate = {0, 0.01, 0.002, 0.01, 5e-4};
constexpr RateBand kHarsh = {0.01, 0.05, 0.01, 0.05, 0.005};
constexpr double kQuietLossChance = 0.5;
// Error completions are fatal to a queue pair: only some seeds get them, so
// most seeds test what recovery can survive.
constexpr double kErrorChance = 0.25;

// Timed faults, each rare; they strike within the first kTimedWindowNs.
constexpr double kCrashChance = 0.03;
constexpr double kLinkDownChance = 0.03;
constexpr double kQpErrorChance = 0.02;
constexpr double kStallChance = 0.05;
constexpr TimeNs kTimedWindowNs = 200 * kNsPerUs;
constexpr TimeNs kMinStallNs = kNsPerUs;
constexpr TimeNs kMaxStallNs = 20 * kNsPerMs;

uint64_t draw_bytes(Prng& prng) {
  if (prng.chance(kZeroBytesChance)) return 0;
  const uint64_t base = uint64_t{1} << prng.below(kMaxOpBytesLog2 + 1);
  const uint64_t bytes = base + prng.below(base);
  return bytes < kMaxOpBytes ? bytes : kMaxOpBytes;
}

GroupOptions draw_group(Prng& prng) {
  GroupOptions group;
  group.max_frame_bytes = kFrameBytes[prng.below(kFrameBytes.size())];
  group.depth = kDepths[prng.below(kDepths.size())];
  group.ring_directions = prng.chance(0.5) ? 1 : 2;
  if (!group.validate().ok()) return GroupOptions{};
  return group;
}

// One collective valid on `c`'s topology, or false after kMaxOpAttempts.
bool draw_op(Prng& prng, const SweepCase& c, CollectiveSpec* out) {
  const uint32_t ranks = c.world.topology.ranks();
  for (int attempt = 0; attempt < kMaxOpAttempts; ++attempt) {
    CollectiveSpec s;
    s.kind =
        static_cast<CollectiveKind>(prng.below(harness::kCollectiveKindCount));
    s.dtype = static_cast<DType>(prng.below(kDTypeCount));
    s.op = static_cast<ReduceOp>(prng.below(kReduceOpCount));
    s.root = static_cast<uint32_t>(prng.below(ranks));
    s.bytes = draw_bytes(prng);
    s.in_place =
        s.kind != CollectiveKind::kSendRecv && prng.chance(kInPlaceChance);
    if (!prng.chance(kAutoAlgorithmChance)) {
      s.algorithm = static_cast<AlgorithmRequest>(
          1 + prng.below(static_cast<uint64_t>(AlgorithmRequest::kRing)));
    }
    if (!harness::check_collective(s, c.world.topology, c.group).ok()) {
      s.algorithm = AlgorithmRequest::kAuto;
    }
    if (harness::check_collective(s, c.world.topology, c.group).ok()) {
      *out = s;
      return true;
    }
  }
  return false;
}

double between(Prng& prng, double low, double high) {
  return low + prng.unit() * (high - low);
}

FaultRates draw_rates(Prng& prng) {
  const double band = prng.unit();
  const RateBand& b = band < kQuietBand      ? kQuiet
                      : band < kModerateBand ? kModerate
                                             : kHarsh;
  const bool quiet = &b == &kQuiet;
  FaultRates r;
  r.loss = quiet && !prng.chance(kQuietLossChance)
               ? 0
               : between(prng, b.loss_min, b.loss_max);
  r.duplicate = between(prng, 0, b.duplicate);
  r.reorder = between(prng, 0, b.reorder);
  r.error_completion =
      prng.chance(kErrorChance) ? between(prng, 0, b.error) : 0;
  return r;
}

// A rank and one of its cabled peers.
std::pair<uint32_t, uint32_t> draw_pair(Prng& prng, const Topology& t) {
  const auto rank = static_cast<uint32_t>(prng.below(t.ranks()));
  std::vector<uint32_t> peers;
  for (uint32_t p = 0; p < t.ranks(); ++p) {
    if (p != rank && t.connected(rank, p)) peers.push_back(p);
  }
  return {rank, peers[prng.below(peers.size())]};
}

void draw_timed_faults(Prng& prng, SweepCase* c) {
  const Topology& t = c->world.topology;
  std::vector<ScriptedFault>& script = c->world.faults.script;
  if (prng.chance(kCrashChance)) {
    script.push_back(
        {.kind = FaultKind::kCrash,
         .rank = static_cast<uint32_t>(prng.below(t.ranks())),
         .at_ns = static_cast<TimeNs>(prng.below(kTimedWindowNs))});
  }
  if (prng.chance(kLinkDownChance)) {
    const auto [from, to] = draw_pair(prng, t);
    script.push_back(
        {.kind = FaultKind::kLinkDown,
         .rank = from,
         .peer = to,
         .at_ns = static_cast<TimeNs>(prng.below(kTimedWindowNs))});
  }
  if (prng.chance(kQpErrorChance)) {
    const auto [rank, peer] = draw_pair(prng, t);
    script.push_back(
        {.kind = FaultKind::kQpError,
         .rank = rank,
         .peer = peer,
         .at_ns = static_cast<TimeNs>(prng.below(kTimedWindowNs))});
  }
  if (prng.chance(kStallChance)) {
    script.push_back(
        {.kind = FaultKind::kStall,
         .rank = static_cast<uint32_t>(prng.below(t.ranks())),
         .at_ns = static_cast<TimeNs>(prng.below(kTimedWindowNs)),
         .duration_ns = static_cast<TimeNs>(
             kMinStallNs + prng.below(kMaxStallNs - kMinStallNs))});
  }
}

std::string bytes_text(uint64_t bytes) {
  constexpr uint64_t kKiB = 1024;
  return bytes % kKiB == 0 && bytes > 0 ? absl::StrCat(bytes / kKiB, "K")
                                        : absl::StrCat(bytes);
}

std::string op_text(const CollectiveSpec& s) {
  std::string out =
      absl::StrCat(harness::api_name(s), " ", to_absl(dtype_name(s.dtype)), " ",
                   bytes_text(s.bytes));
  if (harness::has_root(s.kind)) absl::StrAppend(&out, " root ", s.root);
  if (s.in_place) absl::StrAppend(&out, " in place");
  if (s.algorithm != AlgorithmRequest::kAuto &&
      s.kind != CollectiveKind::kSendRecv) {  // send/recv has no algorithm
    absl::StrAppend(&out, " ",
                    to_absl(harness::algorithm_request_name(s.algorithm)));
  }
  return out;
}

}  // namespace

SweepCase draw_sweep_case(uint64_t seed) {
  Prng prng = Prng(seed).fork(kDrawStream);
  SweepCase c;
  c.seed = seed;
  const auto ranks =
      static_cast<uint32_t>(kMinRanks + prng.below(kMaxRanks - kMinRanks + 1));
  const bool ring = prng.chance(kRingChance);
  const uint32_t cables = prng.chance(kTwoCablesChance) ? 2 : 1;
  c.topology_name = ring ? "ring" : "mesh";
  c.world.topology =
      ring ? *Topology::ring(ranks, cables) : *Topology::mesh(ranks, cables);
  c.world.link = LinkModel::tb5();
  c.world.seed = seed;
  c.world.time_limit_ns = 2 * kSweepDeadlineNs;
  c.world.keep_trace_events = false;
  c.group = draw_group(prng);
  const uint64_t ops = 1 + prng.below(kSweepMaxOps);
  for (uint64_t i = 0; i < ops; ++i) {
    CollectiveSpec spec;
    if (draw_op(prng, c, &spec)) c.ops.push_back(spec);
  }
  c.world.faults.rates = draw_rates(prng);
  draw_timed_faults(prng, &c);
  return c;
}

std::string describe_sweep_case(const SweepCase& c) {
  const Topology& t = c.world.topology;
  const auto cables =
      static_cast<uint32_t>(t.ranks() > 1 ? t.devices(0, 1).size() : 1);
  std::vector<std::string> ops;
  for (const CollectiveSpec& s : c.ops) ops.push_back(op_text(s));
  const FaultRates& r = c.world.faults.rates;
  std::string faults =
      absl::StrFormat("loss=%.3g duplicate=%.3g reorder=%.3g error=%.3g",
                      r.loss, r.duplicate, r.reorder, r.error_completion);
  for (const ScriptedFault& f : c.world.faults.script) {
    absl::StrAppend(&faults, "; ", f.to_text());
  }
  return absl::StrFormat(
      "%u ranks %s x%u cable%s, frames %s depth %u ring directions %u; %s; %s",
      t.ranks(), c.topology_name, cables, cables == 1 ? "" : "s",
      bytes_text(c.group.max_frame_bytes), c.group.depth,
      c.group.ring_directions, absl::StrJoin(ops, ", "), faults);
}

}  // namespace weft::sim::cli
