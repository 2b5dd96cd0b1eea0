#include "tools/weft-sim/sweep_tally.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace weft::sim::cli {
namespace {

constexpr double kPercent = 100;

double percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0
                    : kPercent * static_cast<double>(part) /
                          static_cast<double>(whole);
}

}  // namespace

void SweepTally::add(const SweepRun& run, bool in_target, bool deterministic,
                     bool failed_oracle) {
  ++seeds;
  ++by_verdict[static_cast<size_t>(run.verdict)];
  disagree += run.ranks_disagree ? 1 : 0;
  nondeterministic += deterministic ? 0 : 1;
  failed += failed_oracle ? 1 : 0;
  if (in_target) {
    ++target_seeds;
    target_correct += run.verdict == harness::Verdict::kCorrect ? 1 : 0;
  }
  folded_hash = fold_hash(folded_hash, run.trace_hash);
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
  if (check_determinism) {
    absl::StrAppendFormat(&out, kRow, "nondeterministic", t.nondeterministic,
                          percent(t.nondeterministic, t.seeds));
  }
  absl::StrAppendFormat(&out, "%-18s %10u\n", "total", t.seeds);
  absl::StrAppendFormat(
      &out,
      "loss <= 1%%, no crash, dead link, qp_error or error completion: %u "
      "seeds, %u correct (%.3f%%)\n",
      t.target_seeds, t.target_correct,
      percent(t.target_correct, t.target_seeds));
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

}  // namespace weft::sim::cli
