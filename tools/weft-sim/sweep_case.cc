#include "tools/weft-sim/sweep_case.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/absl_compat.h"
#include "sim/prng.h"
#include "tools/weft-sim/sweep_draw.h"

namespace weft::tools::weft_sim {
namespace {

using harness::AlgorithmRequest;
using harness::CollectiveKind;
using harness::CollectiveSpec;

// The draw's own sub-stream of the seed (the world forks its links from the
// seed itself).
constexpr uint64_t kDrawStream = 0x5377656570ull;  // "Sweep"
// Which operations run on registered buffers: a stream of its own, so the
// world, program and faults of a seed are what they were before it.
constexpr uint64_t kRegisterStream = 0x5265676973ull;  // "Regis"
constexpr double kRegisteredChance = 0.35;
// A pulled cable of a pair joined by several (survived: its lanes move to
// another cable), or of a pair's only cable on a mesh (survived: its lane
// goes through the other ranks): a stream of its own too.
constexpr uint64_t kCablePullStream = 0x50756c6cull;  // "Pull"
constexpr double kCablePullChance = 0.25;

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

// The faults stop (rates and timed faults) at a time drawn up to this
// multiple of the program's expected duration and linger, so some strike
// after the last operation and some seeds end with a quiet stretch.
constexpr double kFaultSpan = 1.25;

// Timed faults, each rare.
constexpr double kCrashChance = 0.03;
constexpr double kLinkDownChance = 0.03;
constexpr double kQpErrorChance = 0.02;
constexpr double kStallChance = 0.05;
constexpr TimeNs kMinStallNs = kNsPerUs;
constexpr TimeNs kMaxStallNs = 20 * kNsPerMs;

sim::FaultRates draw_rates(sim::Prng& prng) {
  const double band = prng.unit();
  const RateBand& b = band < kQuietBand      ? kQuiet
                      : band < kModerateBand ? kModerate
                                             : kHarsh;
  const bool quiet = &b == &kQuiet;
  sim::FaultRates r;
  r.loss = quiet && !prng.chance(kQuietLossChance)
               ? 0
               : draw_between(prng, b.loss_min, b.loss_max);
  r.duplicate = draw_between(prng, 0, b.duplicate);
  r.reorder = draw_between(prng, 0, b.reorder);
  r.error_completion =
      prng.chance(kErrorChance) ? draw_between(prng, 0, b.error) : 0;
  return r;
}

// A rank and one of its cabled peers.
std::pair<uint32_t, uint32_t> draw_pair(sim::Prng& prng, const Topology& t) {
  const auto rank = static_cast<uint32_t>(prng.below(t.ranks()));
  std::vector<uint32_t> peers;
  for (uint32_t p = 0; p < t.ranks(); ++p) {
    if (p != rank && t.connected(rank, p)) peers.push_back(p);
  }
  return {rank, peers[prng.below(peers.size())]};
}

void draw_timed_faults(sim::Prng& prng, TimeNs until_ns, SweepCase* c) {
  const Topology& t = c->world.topology;
  std::vector<sim::ScriptedFault>& script = c->world.faults.script;
  const auto at = [&] {
    return static_cast<TimeNs>(prng.below(static_cast<uint64_t>(until_ns) + 1));
  };
  if (prng.chance(kCrashChance)) {
    script.push_back({.kind = sim::FaultKind::kCrash,
                      .rank = static_cast<uint32_t>(prng.below(t.ranks())),
                      .at_ns = at()});
  }
  if (prng.chance(kLinkDownChance)) {
    const auto [from, to] = draw_pair(prng, t);
    script.push_back({.kind = sim::FaultKind::kLinkDown,
                      .rank = from,
                      .peer = to,
                      .at_ns = at()});
  }
  if (prng.chance(kQpErrorChance)) {
    const auto [rank, peer] = draw_pair(prng, t);
    script.push_back({.kind = sim::FaultKind::kQpError,
                      .rank = rank,
                      .peer = peer,
                      .at_ns = at()});
  }
  if (prng.chance(kStallChance)) {
    script.push_back(
        {.kind = sim::FaultKind::kStall,
         .rank = static_cast<uint32_t>(prng.below(t.ranks())),
         .at_ns = at(),
         .duration_ns = static_cast<TimeNs>(
             kMinStallNs + prng.below(kMaxStallNs - kMinStallNs))});
  }
}

std::string bytes_text(uint64_t bytes) {
  constexpr uint64_t kKiB = 1024;
  return bytes % kKiB == 0 && bytes > 0 ? absl::StrCat(bytes / kKiB, "K")
                                        : absl::StrCat(bytes);
}

std::string op_text(const harness::ProgramOp& op) {
  const CollectiveSpec& s = op.spec;
  std::string out = harness::api_name(s);
  if (s.kind != CollectiveKind::kBarrier) {  // a barrier moves no data
    absl::StrAppend(&out, " ", base::to_absl(dtype_name(s.dtype)), " ",
                    bytes_text(s.bytes));
  }
  if (harness::has_root(s.kind)) absl::StrAppend(&out, " root ", s.root);
  if (s.in_place) absl::StrAppend(&out, " in place");
  if (s.algorithm != AlgorithmRequest::kAuto &&
      s.kind != CollectiveKind::kSendRecv) {  // send/recv has no algorithm
    absl::StrAppend(
        &out, " ", base::to_absl(harness::algorithm_request_name(s.algorithm)));
  }
  if (op.group > 0) absl::StrAppend(&out, " @", op.group);
  if (op.async) absl::StrAppend(&out, " async");
  if (op.registered) absl::StrAppend(&out, " registered");
  return out;
}

std::string options_text(const GroupOptions& g) {
  return absl::StrFormat(
      "frames %s depth %u ring directions %u send queue %s mesh exchange "
      "<= %s, rto %d..%d ns x%u",
      bytes_text(g.max_frame_bytes), g.depth, g.ring_directions,
      bytes_text(g.send_queue_bytes), bytes_text(g.mesh_exchange_max_bytes),
      g.recovery.min_rto_ns, g.recovery.max_rto_ns, g.recovery.max_retries);
}

}  // namespace

void draw_faults(sim::Prng& prng, SweepCase* c) {
  c->world.faults.rates = draw_rates(prng);
  const double span = static_cast<double>(c->expected_ns + kSweepLingerNs);
  const auto until_ns =
      static_cast<TimeNs>(draw_between(prng, 0, kFaultSpan * span));
  c->world.faults.rates.until_ns = until_ns;
  draw_timed_faults(prng, until_ns, c);
}

namespace {

// A pull of one cable of a drawn pair, both ways, when the pair has
// several, or of its only cable on a mesh of three ranks or more (routed
// around through the others).
void draw_cable_pull(uint64_t seed, SweepCase* c) {
  const Topology& t = c->world.topology;
  sim::Prng prng = sim::Prng(seed).fork(kCablePullStream);
  if (!prng.chance(kCablePullChance)) return;
  const auto [rank, peer] = draw_pair(prng, t);
  const auto cables = static_cast<uint32_t>(t.devices(rank, peer).size());
  if (cables < 2 && (t.ranks() < 3 || !t.is_full_mesh())) return;
  // While the program runs (its expected duration), so most pulls meet
  // traffic.
  c->world.faults.script.push_back(
      {.kind = sim::FaultKind::kLinkDown,
       .rank = rank,
       .peer = peer,
       .at_ns = static_cast<TimeNs>(
           prng.below(static_cast<uint64_t>(c->expected_ns) + 1)),
       .cable = static_cast<uint32_t>(prng.below(cables)),
       .both_ways = true});
}

}  // namespace

SweepCase draw_sweep_case(uint64_t seed) {
  sim::Prng prng = sim::Prng(seed).fork(kDrawStream);
  SweepCase c;
  c.seed = seed;
  c.world.seed = seed;
  c.world.keep_trace_events = false;
  draw_world(prng, &c);
  draw_program(prng, &c);
  draw_faults(prng, &c);
  sim::Prng registering = sim::Prng(seed).fork(kRegisterStream);
  for (harness::ProgramOp& op : c.program.ops) {
    op.registered = registering.chance(kRegisteredChance);
  }
  draw_cable_pull(seed, &c);
  // Each operation ends by its deadline, one after another: a run past
  // them all (and two more) is a hang.
  c.world.time_limit_ns =
      static_cast<TimeNs>(c.program.ops.size() + 2) * c.deadline_ns;
  return c;
}

absl::StatusOr<SweepCase> keep_ops(const SweepCase& c,
                                   const std::vector<uint32_t>& keep) {
  SweepCase out = c;
  out.program.ops.clear();
  for (uint32_t i : keep) {
    if (i >= c.program.ops.size()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "operation %u is not in seed %u's program (operations 0..%u)", i,
          c.seed, c.program.ops.size() - 1));
    }
    out.program.ops.push_back(c.program.ops[i]);
  }
  return out;
}

std::string describe_sweep_case(const SweepCase& c) {
  const Topology& t = c.world.topology;
  const auto cables =
      static_cast<uint32_t>(t.ranks() > 1 ? t.devices(0, 1).size() : 1);
  std::vector<std::string> groups;
  for (size_t g = 0; g < c.program.subgroups.size(); ++g) {
    groups.push_back(absl::StrCat(
        "@", g + 1, " [", absl::StrJoin(c.program.subgroups[g], " "), "]"));
  }
  std::vector<std::string> ops;
  for (const harness::ProgramOp& op : c.program.ops) ops.push_back(op_text(op));
  const sim::FaultRates& r = c.world.faults.rates;
  std::string faults = absl::StrFormat(
      "loss=%.3g duplicate=%.3g reorder=%.3g error=%.3g until_ns=%d", r.loss,
      r.duplicate, r.reorder, r.error_completion, r.until_ns);
  for (const sim::ScriptedFault& f : c.world.faults.script) {
    absl::StrAppend(&faults, "; ", f.to_text());
  }
  return absl::StrFormat(
      "%u ranks %s x%u cable%s, link %s, %s; groups %s; %u ops: %s; %s",
      t.ranks(), c.topology_name, cables, cables == 1 ? "" : "s",
      c.world.link == sim::LinkModel::tb5() ? "tb5" : c.world.link.to_string(),
      options_text(c.group),
      groups.empty() ? "none" : absl::StrJoin(groups, ", "),
      c.program.ops.size(), absl::StrJoin(ops, ", "), faults);
}

}  // namespace weft::tools::weft_sim
