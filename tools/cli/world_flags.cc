#include "tools/cli/world_flags.h"

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "fabric/topology_check.h"
#include "harness/memory_estimate.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/memory_check.h"

ABSL_FLAG(std::string, ranks, "8",
          "number of simulated ranks (1..4096) for a generated --topology; "
          "ignored with --devices");
ABSL_FLAG(std::string, devices, "",
          "JACCL device JSON file: devices[i][j] is null, a device name or a "
          "list of names (one per cable) joining rank i to rank j");
ABSL_FLAG(std::string, topology, "mesh",
          "generated topology without --devices: mesh (every pair cabled) or "
          "ring (neighbours only)");
ABSL_FLAG(std::string, cables, "1",
          "cables per cabled pair in a generated topology (1..8)");
ABSL_FLAG(std::string, link, "tb5",
          "link model: tb5 (Thunderbolt 5, 4.64 us at 4 KiB, 75 Gbit/s at 64 "
          "KiB), ideal (zero latency, infinite bandwidth), or "
          "latency_ns=N,bandwidth_gbps=X,overhead_ns=M (any subset, optionally "
          "after a preset: tb5,latency_ns=10000)");
// The rates' defaults are "" (not given) rather than 0, so that a rate
// given as 0 still overrides the --faults plan's rates line.
ABSL_FLAG(std::string, loss, "",
          "per-frame, per-link probability a frame is lost (0..1; not given: "
          "0, or the --faults plan's rates line)");
ABSL_FLAG(std::string, duplicate, "",
          "per-frame probability a frame arrives twice (0..1; not given: 0, or "
          "the --faults plan's)");
ABSL_FLAG(std::string, reorder, "",
          "per-frame probability a frame is delayed by up to 20 us, so later "
          "frames overtake it (0..1; not given: 0, or the --faults plan's)");
ABSL_FLAG(std::string, error, "",
          "per-frame probability of an error completion on the sending or "
          "receiving side; the queue pair then flushes (0..1; not given: 0, "
          "or the --faults plan's)");
ABSL_FLAG(std::string, faults, "",
          "fault plan file: one fault per line (rates, drop, duplicate, delay, "
          "error, qp_error, crash, link_down, stall; see docs/simulator.md); "
          "rate flags override its rates line");
ABSL_FLAG(std::string, seed, "1",
          "seed of the run (0..2^64-1); same seed, same run");
ABSL_FLAG(
    bool, apple_limits, false,
    "enforce Apple's limits: 10 queue pairs and 100 memory regions per device");
ABSL_FLAG(
    std::string, time_limit_ms, "60000",
    "virtual time after which a run is stopped as too slow (milliseconds)");
ABSL_FLAG(std::string, trace, "",
          "write the run's trace here as Chrome trace JSON (open it in "
          "ui.perfetto.dev)");

namespace weft::tools::cli {

const FlagSet kWorldFlags("world", "the simulated world", FLAGS_ranks,
                          FLAGS_devices, FLAGS_topology, FLAGS_cables,
                          FLAGS_link, FLAGS_loss, FLAGS_duplicate,
                          FLAGS_reorder, FLAGS_error, FLAGS_faults, FLAGS_seed,
                          FLAGS_apple_limits, FLAGS_time_limit_ms, FLAGS_trace);

namespace {

constexpr uint64_t kMaxTimeLimitMs = 86'400'000;  // one day of virtual time

// How weft-sim and weft-bench users run the ring.
constexpr std::string_view kUseRing = "use --algorithm=ring or auto";

absl::Status flag_error(std::string_view flag, const absl::Status& s) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", base::to_absl(flag), ": ", s.message()));
}

// Generated worlds of at least this many endpoints are checked before
// their topology is built: it holds a link per endpoint (a mesh of 1024
// ranks about a million, a hundred MiB and a second to build; of 4096
// ranks 16.8 million, gigabytes). Smaller ones are checked against the
// run's whole estimate once built (row_runner.h).
constexpr uint64_t kEarlyCheckEndpoints = uint64_t{1} << 20;

// Every endpoint of a world costs at least harness::kEndpointStateBytes,
// whatever runs on it: a big generated world whose endpoints alone exceed
// the memory limit is refused before its topology is built.
absl::Status check_generated_size(const std::string& name, uint64_t ranks,
                                  uint64_t cables) {
  if (name != "mesh" && name != "ring") return absl::OkStatus();
  const uint64_t pairs =
      name == "mesh" || ranks <= 2 ? ranks * (ranks - 1) : 2 * ranks;
  const uint64_t endpoints = pairs * cables;
  if (endpoints < kEarlyCheckEndpoints) return absl::OkStatus();
  absl::StatusOr<MemoryLimit> limit = memory_limit();
  if (!limit.ok()) return limit.status();
  const uint64_t bytes = endpoints * harness::kEndpointStateBytes;
  if (!limit->bytes || bytes <= *limit->bytes) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat(
      "a %s of %u ranks opens %u endpoints, whose state alone needs about "
      "%s of memory, but %s is %s; use fewer ranks%s, or pass "
      "--max_memory=SIZE (or off) to run it anyway",
      name, ranks, endpoints, memory_size_text(bytes), limit->source,
      memory_size_text(*limit->bytes), name == "mesh" ? " or a ring" : ""));
}

absl::StatusOr<Topology> topology_from_flags(std::string* name,
                                             std::string* source) {
  const std::string devices = absl::GetFlag(FLAGS_devices);
  if (!devices.empty()) {
    *name = devices;
    *source = absl::StrCat("--devices: ", devices);
    absl::StatusOr<Topology> t = Topology::load_json_file(devices);
    if (!t.ok()) return flag_error("devices", t.status());
    // Every command refuses a file with a one-way cable or a rank joined to
    // none here, before any output, in the same words.
    if (absl::Status s =
            check_topology(*t, TopologyNeeds::kLinks,
                           {.source = *source, .use_ring = kUseRing});
        !s.ok()) {
      return s;
    }
    return t;
  }
  absl::StatusOr<uint64_t> ranks =
      parse_uint("ranks", absl::GetFlag(FLAGS_ranks), 1, Topology::kMaxRanks);
  if (!ranks.ok()) return ranks.status();
  absl::StatusOr<uint64_t> cables = parse_uint(
      "cables", absl::GetFlag(FLAGS_cables), 1, Topology::kMaxCables);
  if (!cables.ok()) return cables.status();
  *name = absl::GetFlag(FLAGS_topology);
  *source = absl::StrCat("--topology=", *name);
  if (absl::Status s = check_generated_size(*name, *ranks, *cables); !s.ok())
    return s;
  absl::StatusOr<Topology> t;
  if (*name == "mesh") {
    t = Topology::mesh(static_cast<uint32_t>(*ranks),
                       static_cast<uint32_t>(*cables));
  } else if (*name == "ring") {
    t = Topology::ring(static_cast<uint32_t>(*ranks),
                       static_cast<uint32_t>(*cables));
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("--topology=", *name, " is neither mesh nor ring"));
  }
  if (!t.ok()) return flag_error("ranks", t.status());
  return t;
}

// The --faults plan with the rate flags given over its rates line.
absl::StatusOr<sim::FaultPlan> faults_from_flags() {
  sim::FaultPlan plan;
  if (const std::string path = absl::GetFlag(FLAGS_faults); !path.empty()) {
    absl::StatusOr<sim::FaultPlan> loaded = sim::FaultPlan::load_file(path);
    if (!loaded.ok()) return flag_error("faults", loaded.status());
    plan = *std::move(loaded);
  }
  const std::pair<const char*,
                  std::pair<const absl::Flag<std::string>*, double*>>
      rates[] = {{"loss", {&FLAGS_loss, &plan.rates.loss}},
                 {"duplicate", {&FLAGS_duplicate, &plan.rates.duplicate}},
                 {"reorder", {&FLAGS_reorder, &plan.rates.reorder}},
                 {"error", {&FLAGS_error, &plan.rates.error_completion}}};
  for (const auto& [name, flag_and_rate] : rates) {
    const std::string text = absl::GetFlag(*flag_and_rate.first);
    if (text.empty()) continue;  // not given: the plan's, or 0
    absl::StatusOr<double> rate = sim::FaultRates::parse_rate(name, text);
    if (!rate.ok()) return flag_error(name, rate.status());
    *flag_and_rate.second = *rate;
  }
  return plan;
}

}  // namespace

TopologyWording WorldFlags::wording() const {
  return {.source = topology_source, .use_ring = kUseRing};
}

absl::StatusOr<WorldFlags> world_flags() {
  WorldFlags out;
  absl::StatusOr<Topology> topology =
      topology_from_flags(&out.topology_name, &out.topology_source);
  if (!topology.ok()) return topology.status();
  out.options.topology = *std::move(topology);
  out.link_name = absl::GetFlag(FLAGS_link);
  absl::StatusOr<sim::LinkModel> link = sim::LinkModel::parse(out.link_name);
  if (!link.ok()) return flag_error("link", link.status());
  out.options.link = *link;
  absl::StatusOr<sim::FaultPlan> faults = faults_from_flags();
  if (!faults.ok()) return faults.status();
  const uint32_t ranks = out.options.topology.ranks();
  if (absl::Status s = faults->check_world(out.options.topology); !s.ok()) {
    return flag_error(
        "faults", absl::InvalidArgumentError(absl::StrCat(
                      absl::GetFlag(FLAGS_faults), ": ", s.message())));
  }
  // A run is judged on the ranks that survive it: with none left there is
  // nothing to judge, and "correct" would say nothing.
  std::vector<bool> crashes(ranks, false);
  uint32_t crashed = 0;
  for (const sim::ScriptedFault& f : faults->script) {
    if (f.kind != sim::FaultKind::kCrash || crashes[f.rank]) continue;
    crashes[f.rank] = true;
    ++crashed;
  }
  if (ranks > 0 && crashed == ranks) {
    return flag_error(
        "faults",
        absl::InvalidArgumentError(absl::StrFormat(
            "%s: the plan crashes every rank (%u of %u), so no rank is left "
            "whose result could be checked; crash at most %u",
            absl::GetFlag(FLAGS_faults), crashed, ranks, ranks - 1)));
  }
  out.options.faults = *std::move(faults);
  absl::StatusOr<uint64_t> seed =
      parse_uint("seed", absl::GetFlag(FLAGS_seed), 0, ~uint64_t{0});
  if (!seed.ok()) return seed.status();
  out.options.seed = *seed;
  absl::StatusOr<uint64_t> limit_ms = parse_uint(
      "time_limit_ms", absl::GetFlag(FLAGS_time_limit_ms), 1, kMaxTimeLimitMs);
  if (!limit_ms.ok()) return limit_ms.status();
  out.options.time_limit_ns = static_cast<TimeNs>(*limit_ms) * kNsPerMs;
  out.options.apple_limits = absl::GetFlag(FLAGS_apple_limits);
  out.trace_path = absl::GetFlag(FLAGS_trace);
  out.options.keep_trace_events = !out.trace_path.empty();
  return out;
}

}  // namespace weft::tools::cli
