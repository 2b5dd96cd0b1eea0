// weft-sim shrink: reruns a sweep seed, takes every fault it injected
// (World::injected_faults(), rate-drawn ones included) as a script with no
// rates, and reduces that script (shrink_faults.h) to a minimal one that
// still makes the seed fail the same way: the same verdict (for a seed
// that ended in a typed error, still a typed error). Prints the minimal
// plan, writes it to --out, and gives the command that replays it. Exits 0
// with a plan, 1 when the seed does not fail (or its faults replayed as a
// script do not reproduce the failure), 2 for bad flags.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tools/cli/cli_common.h"
#include "tools/weft-sim/commands.h"
#include "tools/weft-sim/shrink_faults.h"
#include "tools/weft-sim/sweep_case.h"
#include "tools/weft-sim/sweep_flags.h"
#include "tools/weft-sim/sweep_run.h"

namespace weft::sim::cli {
namespace {

// Most reruns one shrink may take (each is one run of the seed).
constexpr uint32_t kMaxShrinkRuns = 10'000;

// The seed's run with exactly `faults` scripted and no rates.
absl::StatusOr<SweepRun> run_with(const SweepCase& c, bool recovery,
                                  const std::vector<ScriptedFault>& faults) {
  FaultPlan plan;
  plan.script = faults;
  return run_sweep_case(c, {.recovery = recovery, .faults = plan});
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

void print_result(const ShrinkFlags& flags, const ShrinkResult& result,
                  size_t injected, const std::string& text) {
  std::printf("minimal plan: %zu of %zu injected faults, %u runs%s\n",
              result.faults.size(), injected, result.runs + 2,
              result.minimal ? "" : " (run limit reached: maybe not minimal)");
  std::fputs(text.c_str(), stdout);
  std::printf("plan written to %s\n", flags.out_path.c_str());
  std::printf(
      "replay: weft-sim sweep --seeds=1 --first-seed=%llu%s --faults=%s\n",
      static_cast<unsigned long long>(flags.seed),
      flags.recovery ? "" : " --recovery=off", flags.out_path.c_str());
}

}  // namespace

int run_shrink(int argc, char** argv) {
  const CommandArgs args = parse_command_flags(argc, argv, "shrink");
  if (args.exit_code) return *args.exit_code;
  absl::StatusOr<ShrinkFlags> flags = shrink_flags(args.given);
  if (!flags.ok()) return bad_input(flags.status());
  const SweepCase c = draw_sweep_case(flags->seed);
  absl::StatusOr<SweepRun> original =
      run_sweep_case(c, {.recovery = flags->recovery, .want_injected = true});
  if (!original.ok()) return bad_input(original.status());
  std::printf("weft-sim shrink: seed %llu, recovery %s\n  runs: %s\n",
              static_cast<unsigned long long>(flags->seed),
              flags->recovery ? "on" : "off", describe_sweep_case(c).c_str());
  std::printf("outcome: %s, %zu faults injected\n", original->summary.c_str(),
              original->injected.size());
  if (original->verdict == harness::Verdict::kCorrect) {
    std::printf("the seed ends correct: nothing to shrink\n");
    return kExitFailed;
  }
  const harness::Verdict target = original->verdict;
  const FailsWith fails = [&](const std::vector<ScriptedFault>& faults) {
    absl::StatusOr<SweepRun> run = run_with(c, flags->recovery, faults);
    return run.ok() && run->verdict == target;
  };
  if (!fails(original->injected)) {
    std::printf(
        "replaying the injected faults as a script did not end %s again: "
        "cannot shrink\n",
        std::string(harness::verdict_name(target)).c_str());
    return kExitFailed;
  }
  const ShrinkResult result =
      shrink_faults(original->injected, fails, kMaxShrinkRuns);
  FaultPlan plan;
  plan.script = result.faults;
  const std::string text = plan.to_text();
  if (absl::Status s = write_plan(flags->out_path, text); !s.ok())
    return bad_input(s);
  print_result(*flags, result, original->injected.size(), text);
  return kExitOk;
}

}  // namespace weft::sim::cli
