// `weft-sim wiring`: the wiring sweep (harness/wiring_sweep.h). Per seed a
// world whose true cabling differs from the device file its ranks are
// given; discovery must find the truth and the check must name every
// difference. Prints the tallies, a line per failure with the command that
// replays the seed, and exits 1 when a seed failed.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "fabric/clock.h"
#include "fabric/topology.h"
#include "harness/wiring_sweep.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/exit_status.h"
#include "tools/weft-sim/commands.h"

ABSL_FLAG(std::string, wiring_ranks, "2-16",
          "wiring: ranks per world, N or LO-HI (2..16)");
ABSL_FLAG(std::string, wiring_cables, "1-4",
          "wiring: cables per pair, N or LO-HI (1..8); each seed draws its "
          "most, each pair its count");
ABSL_FLAG(std::string, max_loss, "0.1",
          "wiring: the highest loss rate a seed draws (each frame, each "
          "link direction; 0..0.5)");

ABSL_DECLARE_FLAG(std::string, seeds);       // sweep_flags.cc
ABSL_DECLARE_FLAG(std::string, first_seed);  // sweep_flags.cc

namespace weft::tools::weft_sim {

const cli::FlagSet kWiringFlags("wiring", "which wirings to draw", FLAGS_seeds,
                                FLAGS_first_seed, FLAGS_wiring_ranks,
                                FLAGS_wiring_cables, FLAGS_max_loss);

namespace {

// "N" or "LO-HI" within [min, max].
absl::Status parse_range(std::string_view flag, const std::string& text,
                         uint32_t min, uint32_t max, uint32_t* lo,
                         uint32_t* hi) {
  const size_t dash = text.find('-');
  absl::StatusOr<uint64_t> a = cli::parse_uint(
      flag, dash == std::string::npos ? text : text.substr(0, dash), min, max);
  if (!a.ok()) return a.status();
  absl::StatusOr<uint64_t> b =
      dash == std::string::npos
          ? a
          : cli::parse_uint(flag, text.substr(dash + 1), min, max);
  if (!b.ok()) return b.status();
  if (*b < *a) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--%s=%s: the range runs backwards; write LO-HI", flag, text));
  }
  *lo = static_cast<uint32_t>(*a);
  *hi = static_cast<uint32_t>(*b);
  return absl::OkStatus();
}

struct Tally {
  uint64_t seeds = 0;
  uint64_t passed = 0;
  uint64_t discovery_right = 0;
  uint64_t true_file_clean = 0;
  std::array<uint64_t, harness::kWiringDifferenceKinds> injected{};
  std::array<uint64_t, harness::kWiringDifferenceKinds> named{};
  uint64_t probes = 0;
  uint64_t pairs = 0;
  uint64_t rounds = 0;
  uint64_t check_probes = 0;
  uint64_t check_pairs = 0;
  uint64_t check_rounds = 0;
  // The largest world (most devices): its seed and figures.
  uint64_t largest_seed = 0;
  uint32_t largest_ranks = 0;
  uint64_t largest_devices = 0;
  harness::WiringVerdict largest;
};

void add(const harness::WiringCase& c, const harness::WiringVerdict& v,
         Tally* t) {
  ++t->seeds;
  t->passed += v.passed() ? 1 : 0;
  t->discovery_right += v.discovery_right ? 1 : 0;
  t->true_file_clean += v.true_file_clean ? 1 : 0;
  for (size_t k = 0; k < harness::kWiringDifferenceKinds; ++k) {
    t->injected[k] += v.injected[k];
    t->named[k] += v.named[k];
  }
  t->probes += v.stats.probes_sent;
  t->pairs += v.stats.pairs_probed;
  t->rounds += v.stats.rounds;
  t->check_probes += v.check_stats.probes_sent;
  t->check_pairs += v.check_stats.pairs_probed;
  t->check_rounds += v.check_stats.rounds;
  uint64_t devices = 0;
  for (uint32_t r = 0; r < c.ranks; ++r)
    devices += c.expected.devices(r).size();
  if (devices > t->largest_devices) {
    t->largest_devices = devices;
    t->largest_seed = c.seed;
    t->largest_ranks = c.ranks;
    t->largest = v;
  }
}

void print(const Tally& t, double wall_s) {
  std::printf("seeds passed            %llu / %llu\n",
              static_cast<unsigned long long>(t.passed),
              static_cast<unsigned long long>(t.seeds));
  std::printf("discovery = truth       %llu\n",
              static_cast<unsigned long long>(t.discovery_right));
  std::printf("true file checks clean  %llu\n",
              static_cast<unsigned long long>(t.true_file_clean));
  for (size_t k = 0; k < harness::kWiringDifferenceKinds; ++k) {
    std::printf("%-23s %llu injected, %llu named\n",
                absl::StrFormat("difference %s",
                                harness::wiring_difference_name(
                                    static_cast<harness::WiringDifference>(k)))
                    .c_str(),
                static_cast<unsigned long long>(t.injected[k]),
                static_cast<unsigned long long>(t.named[k]));
  }
  const double seeds = static_cast<double>(std::max<uint64_t>(t.seeds, 1));
  // One line of means a seed: "<label> R rounds, P pairs probed, N probes".
  const auto means = [seeds](const char* label, uint64_t rounds, uint64_t pairs,
                             uint64_t probes) {
    std::printf("%-23s %.1f rounds, %.0f pairs probed, %.0f probes sent\n",
                label, static_cast<double>(rounds) / seeds,
                static_cast<double>(pairs) / seeds,
                static_cast<double>(probes) / seeds);
  };
  means("discovery, mean a seed", t.rounds, t.pairs, t.probes);
  means("check, mean a seed", t.check_rounds, t.check_pairs, t.check_probes);
  std::printf(
      "largest world           seed %llu: %u ranks, %llu devices; "
      "discovery %u rounds, %llu pairs probed, %llu probes sent, %.3f "
      "ms virtual\n",
      static_cast<unsigned long long>(t.largest_seed), t.largest_ranks,
      static_cast<unsigned long long>(t.largest_devices),
      t.largest.stats.rounds,
      static_cast<unsigned long long>(t.largest.stats.pairs_probed),
      static_cast<unsigned long long>(t.largest.stats.probes_sent),
      static_cast<double>(t.largest.stats.elapsed_ns) / kNsPerMs);
  // The one line that differs from run to run (docs mask it).
  std::printf("wall time: %.1f s, %.1f seeds/s\n", wall_s,
              static_cast<double>(t.seeds) / std::max(wall_s, 1e-9));
}

}  // namespace

int run_wiring(int argc, char** argv) {
  const CommandArgs args = parse_command_flags(argc, argv, "wiring");
  if (args.exit_code.has_value()) return *args.exit_code;
  absl::StatusOr<uint64_t> seeds = cli::parse_uint(
      "seeds",
      absl::GetFlag(FLAGS_seeds).empty() ? "100" : absl::GetFlag(FLAGS_seeds),
      1, 100'000'000);
  if (!seeds.ok()) return cli::bad_input(seeds.status());
  absl::StatusOr<uint64_t> first = cli::parse_uint(
      "first_seed", absl::GetFlag(FLAGS_first_seed), 0, UINT64_MAX);
  if (!first.ok()) return cli::bad_input(first.status());
  harness::WiringDraw draw;
  if (absl::Status s =
          parse_range("wiring_ranks", absl::GetFlag(FLAGS_wiring_ranks), 2, 16,
                      &draw.min_ranks, &draw.max_ranks);
      !s.ok()) {
    return cli::bad_input(s);
  }
  if (absl::Status s =
          parse_range("wiring_cables", absl::GetFlag(FLAGS_wiring_cables), 1,
                      Topology::kMaxCables, &draw.min_cables, &draw.max_cables);
      !s.ok()) {
    return cli::bad_input(s);
  }
  if (!absl::SimpleAtod(absl::GetFlag(FLAGS_max_loss), &draw.max_loss) ||
      !(draw.max_loss >= 0 && draw.max_loss <= 0.5)) {
    return cli::bad_input(
        absl::StrFormat("--max_loss=%s is not a rate in 0..0.5",
                        absl::GetFlag(FLAGS_max_loss)));
  }
  std::printf(
      "wiring sweep: seeds %llu..%llu, %u-%u ranks, %u-%u cables per "
      "pair, loss up to %g\n",
      static_cast<unsigned long long>(*first),
      static_cast<unsigned long long>(*first + *seeds - 1), draw.min_ranks,
      draw.max_ranks, draw.min_cables, draw.max_cables, draw.max_loss);
  const auto start = std::chrono::steady_clock::now();
  Tally tally;
  for (uint64_t k = 0; k < *seeds; ++k) {
    const uint64_t seed = *first + k;
    const harness::WiringCase c = harness::draw_wiring_case(seed, draw);
    absl::StatusOr<harness::WiringVerdict> v = harness::run_wiring_case(c);
    if (!v.ok()) {
      harness::WiringVerdict failed;
      failed.failures.push_back(absl::StrFormat(
          "seed %llu: %s", static_cast<unsigned long long>(seed),
          v.status().ToString()));
      v = failed;
    }
    for (const std::string& line : v->failures) {
      std::printf(
          "FAIL %s\n  replay: weft-sim wiring --first_seed=%llu "
          "--seeds=1 --wiring_ranks=%s --wiring_cables=%s "
          "--max_loss=%s\n",
          line.c_str(), static_cast<unsigned long long>(seed),
          absl::GetFlag(FLAGS_wiring_ranks).c_str(),
          absl::GetFlag(FLAGS_wiring_cables).c_str(),
          absl::GetFlag(FLAGS_max_loss).c_str());
    }
    add(c, *v, &tally);
  }
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  print(tally, wall_s);
  return tally.passed == tally.seeds ? cli::kExitOk : cli::kExitFailed;
}

}  // namespace weft::tools::weft_sim
