#include "harness/wiring_sweep.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/assert.h"
#include "harness/sim_wiring.h"
#include "sim/prng.h"
#include "sim/world.h"

namespace weft::harness {
namespace {

using wiring::Cable;
using wiring::Port;
using wiring::Problem;

// A cable of the draw: rank a's device toward rank b's (a < b), the
// directions that carry frames, and whether the file lists it.
struct DrawnCable {
  Port a;
  Port b;
  uint32_t index = 0;  // among the cables of the pair (a.rank, b.rank)
  bool a_to_b = true;
  bool b_to_a = true;
  bool used = false;  // a difference is drawn on it
};

uint32_t between(sim::Prng& rng, uint32_t lo, uint32_t hi) {
  return lo + static_cast<uint32_t>(rng.below(uint64_t{hi} - lo + 1));
}

// The true cabling: every pair joined by min_cables..max_cables cables,
// each rank's devices named as a Mac names its ports, in a drawn order
// (Topology::with_neutral_names).
Topology draw_truth(sim::Prng& rng, uint32_t ranks, uint32_t min_cables,
                    uint32_t max_cables) {
  absl::StatusOr<Topology> t = Topology::unjoined(ranks);
  WEFT_ASSERT(t.ok(), "a draw has a valid number of ranks");
  for (uint32_t i = 0; i < ranks; ++i) {
    for (uint32_t j = i + 1; j < ranks; ++j) {
      const uint32_t n = between(rng, min_cables, max_cables);
      for (uint32_t c = 0; c < n; ++c) {
        const std::string name = absl::StrFormat("cable_%u_%u_%u", i, j, c);
        const absl::Status there = t->add_device(i, j, name);
        const absl::Status back = t->add_device(j, i, name);
        WEFT_ASSERT(there.ok() && back.ok(), "a drawn cable joins two ranks");
      }
    }
  }
  return t->with_neutral_names(rng.next());
}

// The cables of `truth`, by pair, cable c of a pair joining entry c of
// cell [i][j] to entry c of cell [j][i].
std::vector<DrawnCable> cables_of(const Topology& truth) {
  std::vector<DrawnCable> cables;
  for (uint32_t i = 0; i < truth.ranks(); ++i) {
    for (uint32_t j = i + 1; j < truth.ranks(); ++j) {
      const std::vector<std::string>& there = truth.devices(i, j);
      for (uint32_t c = 0; c < there.size(); ++c) {
        cables.push_back({{i, there[c]}, {j, truth.devices(j, i)[c]}, c});
      }
    }
  }
  return cables;
}

// A cable no difference is on yet, or nullopt.
std::optional<size_t> free_cable(sim::Prng& rng,
                                 const std::vector<DrawnCable>& cables) {
  std::vector<size_t> free;
  for (size_t k = 0; k < cables.size(); ++k) {
    if (!cables[k].used) free.push_back(k);
  }
  if (free.empty()) return std::nullopt;
  return free[rng.below(free.size())];
}

// Two free cables of one rank to two different peers, or nullopt.
std::optional<std::pair<size_t, size_t>> crossable(
    sim::Prng& rng, const std::vector<DrawnCable>& cables, uint32_t* rank) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::optional<size_t> x = free_cable(rng, cables);
    if (!x.has_value()) return std::nullopt;
    const DrawnCable& first = cables[*x];
    *rank = rng.chance(0.5) ? first.a.rank : first.b.rank;
    const uint32_t peer = first.a.rank == *rank ? first.b.rank : first.a.rank;
    std::vector<size_t> others;
    for (size_t k = 0; k < cables.size(); ++k) {
      const DrawnCable& c = cables[k];
      if (c.used || k == *x) continue;
      if ((c.a.rank == *rank && c.b.rank != peer) ||
          (c.b.rank == *rank && c.a.rank != peer)) {
        others.push_back(k);
      }
    }
    if (!others.empty()) {
      return std::pair(*x, others[rng.below(others.size())]);
    }
  }
  return std::nullopt;
}

Port& end_on(DrawnCable& c, uint32_t rank) {
  return c.a.rank == rank ? c.a : c.b;
}

}  // namespace

const char* wiring_difference_name(WiringDifference kind) {
  switch (kind) {
    case WiringDifference::kCrossed:
      return "crossed";
    case WiringDifference::kMissing:
      return "missing";
    case WiringDifference::kOneWay:
      return "one-way";
    case WiringDifference::kExtra:
      return "extra";
  }
  return "?";
}

WiringCase draw_wiring_case(uint64_t seed, const WiringDraw& draw) {
  sim::Prng rng(seed);
  WiringCase out;
  out.seed = seed;
  out.ranks = between(rng, draw.min_ranks, draw.max_ranks);
  out.max_cables = between(rng, draw.min_cables, draw.max_cables);
  out.loss = static_cast<double>(rng.below(1001)) / 1000 * draw.max_loss;
  out.truth = draw_truth(rng, out.ranks, draw.min_cables, out.max_cables);
  std::vector<DrawnCable> cables = cables_of(out.truth);
  // The declared file: one (rank, device) pair per cable it lists.
  std::vector<std::pair<Port, Port>> declared;
  std::vector<bool> listed(cables.size(), true);
  std::vector<std::pair<size_t, Port>> renamed;  // crossed: cable, new end
  const uint32_t differences = between(rng, 1, 3);
  for (uint32_t d = 0; d < differences; ++d) {
    auto kind =
        static_cast<WiringDifference>(rng.below(kWiringDifferenceKinds));
    uint32_t rank = 0;
    std::optional<std::pair<size_t, size_t>> pair;
    if (kind == WiringDifference::kCrossed) {
      pair = crossable(rng, cables, &rank);
      if (!pair.has_value()) kind = WiringDifference::kMissing;
    }
    if (kind == WiringDifference::kCrossed) {
      DrawnCable& x = cables[pair->first];
      DrawnCable& y = cables[pair->second];
      x.used = y.used = true;
      const Port px = end_on(x, rank);
      const Port py = end_on(y, rank);
      renamed.push_back({pair->first, py});
      renamed.push_back({pair->second, px});
      out.injected.push_back({kind, Problem::kCrossed, px, std::nullopt});
      out.injected.push_back({kind, Problem::kCrossed, py, std::nullopt});
      continue;
    }
    const std::optional<size_t> k = free_cable(rng, cables);
    if (!k.has_value()) break;
    DrawnCable& c = cables[*k];
    c.used = true;
    sim::ScriptedFault down;
    down.kind = sim::FaultKind::kLinkDown;
    down.at_ns = 0;
    down.cable = c.index;
    switch (kind) {
      case WiringDifference::kMissing:
        listed[*k] = false;
        out.injected.push_back({kind, Problem::kUndeclared, c.a, c.b});
        break;
      case WiringDifference::kOneWay: {
        const bool a_side_dead = rng.chance(0.5);
        down.rank = a_side_dead ? c.a.rank : c.b.rank;
        down.peer = a_side_dead ? c.b.rank : c.a.rank;
        (a_side_dead ? c.a_to_b : c.b_to_a) = false;
        out.faults.script.push_back(down);
        out.injected.push_back({kind, Problem::kOneWay, c.a, c.b});
        break;
      }
      case WiringDifference::kExtra:
        down.rank = c.a.rank;
        down.peer = c.b.rank;
        down.both_ways = true;
        c.a_to_b = c.b_to_a = false;
        out.faults.script.push_back(down);
        out.injected.push_back({kind, Problem::kNoCable, c.a, c.b});
        break;
      case WiringDifference::kCrossed:
        WEFT_ASSERT(false, "crossed cables are drawn above");
    }
  }
  out.faults.rates.loss = out.loss;

  absl::StatusOr<Topology> file = Topology::unjoined(out.ranks);
  WEFT_ASSERT(file.ok(), "a draw has a valid number of ranks");
  absl::Status added;
  std::vector<Cable> expected;
  for (size_t k = 0; k < cables.size(); ++k) {
    const DrawnCable& c = cables[k];
    if (c.a_to_b || c.b_to_a) {
      expected.push_back({c.a, c.b, c.a_to_b, c.b_to_a});
    }
    if (!listed[k]) continue;
    Port a = c.a;
    Port b = c.b;
    for (const auto& [cable, port] : renamed) {
      if (cable == k) (a.rank == port.rank ? a : b) = port;
    }
    added.Update(file->add_device(a.rank, b.rank, a.device));
    added.Update(file->add_device(b.rank, a.rank, b.device));
  }
  std::vector<std::vector<std::string>> devices;
  for (uint32_t r = 0; r < out.ranks; ++r) {
    devices.push_back(out.truth.device_names(r));
  }
  absl::StatusOr<wiring::Wiring> w =
      wiring::Wiring::create(std::move(devices), std::move(expected));
  WEFT_ASSERT(added.ok() && w.ok(), "a drawn case is well formed");
  out.declared = *std::move(file);
  out.expected = *std::move(w);
  return out;
}

namespace {

bool named(const wiring::CheckReport& report, const InjectedDifference& d) {
  for (const wiring::Finding& f : report.findings) {
    if (f.problem != d.problem) continue;
    const Port at{f.rank, f.device};
    if (at == d.port || (d.other.has_value() && at == *d.other)) return true;
  }
  return false;
}

std::string cable_text(const Cable& c) {
  return absl::StrFormat("%u:%s%s%u:%s", c.a.rank, c.a.device,
                         c.two_way() ? "<->" : (c.a_to_b ? "->" : "<-"),
                         c.b.rank, c.b.device);
}

bool has_two_way_cable(const wiring::Wiring& w, uint32_t rank) {
  for (const Cable& c : w.cables()) {
    if (c.two_way() && (c.a.rank == rank || c.b.rank == rank)) return true;
  }
  return false;
}

// What `found` lacks of `want` and has beyond it, one cable each.
std::string wiring_difference(const wiring::Wiring& want,
                              const wiring::Wiring& found) {
  std::string out;
  for (const Cable& c : want.cables()) {
    if (std::find(found.cables().begin(), found.cables().end(), c) ==
        found.cables().end()) {
      absl::StrAppend(&out, " missed ", cable_text(c));
    }
  }
  for (const Cable& c : found.cables()) {
    if (std::find(want.cables().begin(), want.cables().end(), c) ==
        want.cables().end()) {
      absl::StrAppend(&out, " invented ", cable_text(c));
    }
  }
  return out.empty() ? " (the device lists differ)" : out;
}

// Every rank's discovery over a fresh world of the case.
absl::StatusOr<std::vector<wiring::Discovery>> discover_case(
    const WiringCase& c, const wiring::DiscoveryOptions& options) {
  sim::WorldOptions world_options;
  world_options.topology = c.truth;
  world_options.faults = c.faults;
  world_options.seed = c.seed;
  world_options.apple_limits = true;
  world_options.keep_trace_events = false;
  absl::StatusOr<std::unique_ptr<sim::World>> world =
      sim::World::create(world_options);
  if (!world.ok()) return world.status();
  return discover_in_process(**world, options);
}

// A failure line for each rank whose wiring is not the truth.
void judge_discovery(const WiringCase& c, std::string_view run,
                     const std::vector<wiring::Discovery>& found,
                     WiringVerdict* v) {
  for (uint32_t r = 0; r < found.size(); ++r) {
    if (found[r].wiring == c.expected) continue;
    v->discovery_right = false;
    v->failures.push_back(absl::StrFormat(
        "seed %u: %s: rank %u's wiring differs from the truth:%s", c.seed, run,
        r, wiring_difference(c.expected, found[r].wiring)));
  }
}

}  // namespace

absl::StatusOr<WiringVerdict> run_wiring_case(
    const WiringCase& c, const wiring::DiscoveryOptions& options) {
  wiring::DiscoveryOptions plain = options;
  plain.declared.reset();
  absl::StatusOr<std::vector<wiring::Discovery>> discovered =
      discover_case(c, plain);
  if (!discovered.ok()) return discovered.status();
  wiring::DiscoveryOptions checking = options;
  checking.declared = c.declared;
  checking.probe_all = true;
  absl::StatusOr<std::vector<wiring::Discovery>> found =
      discover_case(c, checking);
  if (!found.ok()) return found.status();

  WiringVerdict v;
  v.stats = discovered->front().stats;
  v.check_stats = found->front().stats;
  v.discovery_right = true;
  judge_discovery(c, "discovery", *discovered, &v);
  judge_discovery(c, "the check's discovery", *found, &v);
  const wiring::CheckReport report =
      wiring::check_wiring(c.declared, found->front().wiring, "devices.json");
  for (const InjectedDifference& d : c.injected) {
    const auto kind = static_cast<size_t>(d.kind);
    ++v.injected[kind];
    if (named(report, d)) {
      ++v.named[kind];
    } else {
      v.failures.push_back(absl::StrFormat(
          "seed %u: the check does not name the %s difference at rank %u's %s",
          c.seed, wiring_difference_name(d.kind), d.port.rank, d.port.device));
    }
  }
  // The true file (the cables that work both ways) is right, but for
  // the one-way cables it leaves out and the ranks it then isolates.
  const wiring::CheckReport clean = wiring::check_wiring(
      c.expected.topology(), found->front().wiring, "truth.json");
  v.true_file_clean = true;
  for (const wiring::Finding& f : clean.findings) {
    const Cable* cable = c.expected.cable_at({f.rank, f.device});
    if (f.problem == Problem::kUndeclared && cable != nullptr &&
        !cable->two_way()) {
      continue;
    }
    // A rank whose every cable carries one way or none is isolated in it.
    if (f.problem == Problem::kShape && f.rank == f.peer &&
        !has_two_way_cable(c.expected, f.rank)) {
      continue;
    }
    v.true_file_clean = false;
    v.failures.push_back(absl::StrFormat(
        "seed %u: the true file gets a finding: %s", c.seed, f.text));
  }
  return v;
}

}  // namespace weft::harness
