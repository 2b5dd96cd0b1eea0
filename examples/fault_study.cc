// A fault study: the same all-sum on four simulated Macs under 2% frame
// loss and rare error completions, once per seed. weft promises that each
// run ends either with the right sums on every rank or with a typed error
// (an absl::Status saying which rank, peer and cause); never with wrong
// data reported as success (CORRUPT) and never hanging. This counts both
// allowed outcomes and checks that nothing else happened.
//
//   $ ./fault_study
//   seed 2, first typed error: rank 1, peer 3, ...
//   fault_study: 40 seeds at 2% loss and 0.2% error completions: 19 correct,
//   21 typed error, 0 other
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "all_sum_on_sim.h"
#include "fabric/errors.h"
#include "fabric/topology.h"
#include "sim/world.h"

namespace {

enum class Outcome { kCorrect, kTypedError, kOther };

// Correct: every rank OK with the right sums. Typed error: some rank failed
// with an error that names where (fabric/errors.h), and no rank that said
// OK holds wrong sums. Anything else breaks weft's promise.
Outcome classify(const example::SimAllSum& run, uint32_t ranks, uint64_t seed) {
  if (!run.run.completed()) {
    std::printf("seed %llu: HANG: %s\n", static_cast<unsigned long long>(seed),
                run.run.report.c_str());
    return Outcome::kOther;
  }
  bool failed = false;
  for (uint32_t r = 0; r < ranks; ++r) {
    const absl::Status& status = run.statuses[r];
    if (status.ok() && example::wrong_elements(run.outputs[r], ranks) > 0) {
      std::printf("seed %llu: CORRUPT: rank %u says OK with wrong sums\n",
                  static_cast<unsigned long long>(seed), r);
      return Outcome::kOther;
    }
    if (!status.ok() && !weft::error_place(status).has_value()) {
      std::printf("seed %llu: untyped error on rank %u: %s\n",
                  static_cast<unsigned long long>(seed), r,
                  status.ToString().c_str());
      return Outcome::kOther;
    }
    failed = failed || !status.ok();
  }
  return failed ? Outcome::kTypedError : Outcome::kCorrect;
}

}  // namespace

int main() {
  constexpr uint32_t kRanks = 4;
  constexpr uint64_t kSeeds = 40;
  uint64_t tally[3] = {0, 0, 0};
  for (uint64_t seed = 1; seed <= kSeeds; ++seed) {
    weft::sim::WorldOptions options;
    options.topology = *weft::Topology::mesh(kRanks);
    options.faults.rates.loss = 0.02;
    options.faults.rates.error_completion = 0.002;
    options.seed = seed;  // a seed's run can be replayed exactly
    options.keep_trace_events = false;
    absl::StatusOr<example::SimAllSum> run =
        example::all_sum_on_sim(options, 16 * 1024);
    if (!run.ok()) {
      std::fprintf(stderr, "fault_study: %s\n",
                   run.status().ToString().c_str());
      return 1;
    }
    const Outcome outcome = classify(*run, kRanks, seed);
    if (outcome == Outcome::kTypedError && tally[1] == 0) {
      // What a typed error looks like: the rank, peer and cause up front.
      for (const absl::Status& status : run->statuses) {
        if (status.ok()) continue;
        std::printf("seed %llu, first typed error: %s\n",
                    static_cast<unsigned long long>(seed),
                    std::string(status.message()).c_str());
        break;
      }
    }
    ++tally[static_cast<int>(outcome)];
  }
  std::printf(
      "fault_study: %llu seeds at 2%% loss and 0.2%% error "
      "completions: %llu correct, %llu typed error, %llu other\n",
      static_cast<unsigned long long>(kSeeds),
      static_cast<unsigned long long>(tally[0]),
      static_cast<unsigned long long>(tally[1]),
      static_cast<unsigned long long>(tally[2]));
  return tally[2] == 0 ? 0 : 1;
}
