#include "tools/weft-sim/sweep_tally.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace weft::tools::weft_sim {
namespace {

constexpr double kPercent = 100;

double percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0
                    : kPercent * static_cast<double>(part) /
                          static_cast<double>(whole);
}

}  // namespace

void SweepTally::add(const SweepRun& run, bool deterministic,
                     bool failed_oracle, double seed_wall_s) {
  ++seeds;
  ++by_verdict[static_cast<size_t>(run.verdict)];
  disagree += run.ranks_disagree ? 1 : 0;
  nondeterministic += deterministic ? 0 : 1;
  failed += failed_oracle ? 1 : 0;
  not_live += run.not_live ? 1 : 0;
  if (!run.fatal) {
    ++nonfatal_seeds;
    nonfatal_correct += run.verdict == harness::Verdict::kCorrect ? 1 : 0;
  }
  folded_hash = fold_hash(folded_hash, run.trace_hash);
  wall_s.push_back(seed_wall_s);
}

std::string sweep_cost_line(const SweepTally& t, uint64_t first_seed,
                            uint64_t shard_index, uint64_t shard_count) {
  if (t.wall_s.empty()) return "seed cost: no seeds\n";
  std::vector<double> sorted = t.wall_s;
  std::sort(sorted.begin(), sorted.end());
  const auto at = [&](double q) {
    return sorted[static_cast<size_t>(q *
                                      static_cast<double>(sorted.size() - 1))];
  };
  constexpr double kMedian = 0.5;
  constexpr double kP99 = 0.99;
  constexpr double kMs = 1000;
  const size_t worst = static_cast<size_t>(
      std::max_element(t.wall_s.begin(), t.wall_s.end()) - t.wall_s.begin());
  return absl::StrFormat(
      "seed cost: median %.1f ms, p99 %.1f ms, max %.1f ms (seed %u)\n",
      kMs * at(kMedian), kMs * at(kP99), kMs * sorted.back(),
      first_seed + shard_index + worst * shard_count);
}

std::string sweep_table(const SweepTally& t, bool check_determinism) {
  constexpr char kRow[] = "%-18s %10u %8.2f%%\n";
  std::string out =
      absl::StrFormat("%-18s %10s %9s\n", "outcome", "seeds", "%");
  for (int v = 0; v < harness::kVerdictCount; ++v) {
    absl::StrAppendFormat(
        &out, kRow, harness::verdict_name(static_cast<harness::Verdict>(v)),
        t.by_verdict[v], percent(t.by_verdict[v], t.seeds));
  }
  absl::StrAppendFormat(&out, kRow, "ranks disagree", t.disagree,
                        percent(t.disagree, t.seeds));
  absl::StrAppendFormat(&out, kRow, "not live", t.not_live,
                        percent(t.not_live, t.seeds));
  if (check_determinism) {
    absl::StrAppendFormat(&out, kRow, "nondeterministic", t.nondeterministic,
                          percent(t.nondeterministic, t.seeds));
  }
  absl::StrAppendFormat(&out, "%-18s %10u\n", "total", t.seeds);
  absl::StrAppendFormat(
      &out,
      "no crash, dead link (but one cable of several, or a mesh pair's only "
      "cable), qp_error or error "
      "completion: %u seeds, %u correct (%.3f%%)\n",
      t.nonfatal_seeds, t.nonfatal_correct,
      percent(t.nonfatal_correct, t.nonfatal_seeds));
  absl::StrAppendFormat(&out, "failed an oracle: %u seeds\n", t.failed);
  return out;
}

std::string sweep_progress_counts(const SweepTally& t) {
  const auto v = [&](harness::Verdict verdict) {
    return t.by_verdict[static_cast<size_t>(verdict)];
  };
  return absl::StrFormat("correct %u  typed error %u  failed %u",
                         v(harness::Verdict::kCorrect),
                         v(harness::Verdict::kTypedError), t.failed);
}

}  // namespace weft::tools::weft_sim
