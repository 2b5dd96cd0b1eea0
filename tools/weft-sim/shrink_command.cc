// weft-sim shrink: reruns a sweep seed, takes every fault it injected
// (World::injected_faults(), rate-drawn ones included) as a script with no
// rates, and reduces (shrink_list.h) first the seed's program to the
// operations the failure needs, then the script to the faults it needs,
// each while the seed still fails the same way: the same verdict, and the
// same disagreement and liveness oracles. Prints the operations kept and
// the minimal plan, writes the plan to --out, and gives the command that
// replays both. Exits 0 with a plan, 1 when the seed does not fail (or its
// faults replayed as a script do not reproduce the failure), 2 for bad
// flags.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tools/cli/cli_common.h"
#include "tools/weft-sim/commands.h"
#include "tools/weft-sim/shrink_list.h"
#include "tools/weft-sim/sweep_case.h"
#include "tools/weft-sim/sweep_flags.h"
#include "tools/weft-sim/sweep_run.h"

namespace weft::tools::weft_sim {
namespace {

// Most reruns each of the two shrinks may take (each is one run).
constexpr uint32_t kMaxShrinkRuns = 10'000;

// How a run failed: what must stay the same while shrinking.
struct Failure {
  harness::Verdict verdict;
  bool disagree;
  bool not_live;
  friend bool operator==(const Failure&, const Failure&) = default;
};

Failure failure_of(const SweepRun& run) {
  return {run.verdict, run.ranks_disagree, run.not_live};
}

bool failed(const SweepRun& run) {
  return run.verdict != harness::Verdict::kCorrect || run.ranks_disagree;
}

// Whether the seed with operations `ops` and exactly `faults` scripted (no
// rates) fails as `target`.
bool fails_as(const SweepCase& c, bool recovery, const Failure& target,
              const std::vector<uint32_t>& ops,
              const std::vector<sim::ScriptedFault>& faults) {
  absl::StatusOr<SweepCase> kept = keep_ops(c, ops);
  if (!kept.ok()) return false;
  sim::FaultPlan plan;
  plan.script = faults;
  absl::StatusOr<SweepRun> run =
      run_sweep_case(*kept, {.recovery = recovery, .faults = plan});
  return run.ok() && failure_of(*run) == target;
}

absl::Status write_plan(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  file.close();
  if (!file) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot write the plan to ", path, "; give a writable --out"));
  }
  return absl::OkStatus();
}

void print_result(const ShrinkFlags& flags, const Shrunk<uint32_t>& ops,
                  size_t all_ops, const Shrunk<sim::ScriptedFault>& faults,
                  size_t injected, const std::string& text) {
  const bool minimal = ops.minimal && faults.minimal;
  std::printf("minimal program: %zu of %zu operations: %s\n", ops.items.size(),
              all_ops, absl::StrJoin(ops.items, ",").c_str());
  std::printf("minimal plan: %zu of %zu injected faults, %u runs%s\n",
              faults.items.size(), injected, ops.runs + faults.runs + 2,
              minimal ? "" : " (run limit reached: maybe not minimal)");
  std::fputs(text.c_str(), stdout);
  std::printf("plan written to %s\n", flags.out_path.c_str());
  std::printf(
      "replay: weft-sim sweep --seeds=1 --first-seed=%llu%s --keep-ops=%s "
      "--faults=%s\n",
      static_cast<unsigned long long>(flags.seed),
      flags.recovery ? "" : " --recovery=off",
      absl::StrJoin(ops.items, ",").c_str(), flags.out_path.c_str());
}

}  // namespace

int run_shrink(int argc, char** argv) {
  const CommandArgs args = parse_command_flags(argc, argv, "shrink");
  if (args.exit_code) return *args.exit_code;
  absl::StatusOr<ShrinkFlags> flags = shrink_flags(args.given);
  if (!flags.ok()) return cli::bad_input(flags.status());
  const SweepCase c = draw_sweep_case(flags->seed);
  absl::StatusOr<SweepRun> original =
      run_sweep_case(c, {.recovery = flags->recovery, .want_injected = true});
  if (!original.ok()) return cli::bad_input(original.status());
  std::printf("weft-sim shrink: seed %llu, recovery %s\n  runs: %s\n",
              static_cast<unsigned long long>(flags->seed),
              flags->recovery ? "on" : "off", describe_sweep_case(c).c_str());
  std::printf("outcome: %s, %zu faults injected\n", original->summary.c_str(),
              original->injected.size());
  if (!failed(*original)) {
    std::printf("the seed ends correct: nothing to shrink\n");
    return cli::kExitFailed;
  }
  const Failure target = failure_of(*original);
  std::vector<uint32_t> all_ops;
  for (uint32_t i = 0; i < c.program.ops.size(); ++i) all_ops.push_back(i);
  if (!fails_as(c, flags->recovery, target, all_ops, original->injected)) {
    std::printf(
        "replaying the injected faults as a script did not end %s again: "
        "cannot shrink\n",
        std::string(harness::verdict_name(target.verdict)).c_str());
    return cli::kExitFailed;
  }
  const Shrunk<uint32_t> ops = shrink_list<uint32_t>(
      all_ops,
      [&](const std::vector<uint32_t>& kept) {
        return fails_as(c, flags->recovery, target, kept, original->injected);
      },
      kMaxShrinkRuns);
  const Shrunk<sim::ScriptedFault> faults = shrink_list<sim::ScriptedFault>(
      original->injected,
      [&](const std::vector<sim::ScriptedFault>& kept) {
        return fails_as(c, flags->recovery, target, ops.items, kept);
      },
      kMaxShrinkRuns);
  sim::FaultPlan plan;
  plan.script = faults.items;
  const std::string text = plan.to_text();
  if (absl::Status s = write_plan(flags->out_path, text); !s.ok())
    return cli::bad_input(s);
  print_result(*flags, ops, all_ops.size(), faults, original->injected.size(),
               text);
  return cli::kExitOk;
}

}  // namespace weft::tools::weft_sim
