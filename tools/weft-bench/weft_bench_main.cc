// weft-bench: nccl-tests' interface and table for weft's collectives, on
// any fabric. With no fabric flags it runs 8 simulated ranks over the tb5
// link and reports virtual time; --fabric verbs (JACCL's environment) or
// --fabric tcp (MLX's ring hostfile, as weft-sim launch --fabric=tcp sets
// it) makes this process one rank of a group and reports wall time.
// docs/benchmarking.md shows how to run it and compare with other tools.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/absl_compat.h"
#include "tools/cli/exit_status.h"
#include "tools/cli/flag_parse.h"
#include "tools/cli/flag_scope.h"
#include "tools/cli/memory_check.h"
#include "tools/cli/output_file.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-bench/weft_bench_args.h"
#include "tools/weft-bench/weft_bench_group.h"
#include "tools/weft-bench/weft_bench_options.h"
#include "tools/weft-bench/weft_bench_run.h"
#include "tools/weft-bench/weft_bench_sim.h"
#include "tools/weft-bench/weft_bench_table.h"

namespace weft::tools::weft_bench {
namespace {

using tools::cli::kExitBadInput;
using tools::cli::kExitFailed;  // a measurement failed or was wrong
using tools::cli::kExitOk;

int report(int code, std::string_view what) {
  return cli::report_line("weft-bench", code, what);
}

constexpr char kUsage[] =
    "nccl-tests' benchmark for weft's collectives\n\n"
    "usage: weft-bench [-b min] [-e max] [-f factor] [-i step] [-w warmup] "
    "[-n iters] [-c 0|1] [-d type] [-o redop] [-r root] [--op=...] "
    "[--algorithm=...] [--json=FILE] [--plot=FILE.svg] [--model] "
    "[--fabric=sim|verbs|tcp] [simulator flags: --ranks, --topology, "
    "--devices, --link, --loss, ...]\n"
    "Short options are nccl-tests' (-b 8 means --minbytes=8).";

// --help and -h: the usage, then every flag, set by set (its own, the
// simulated world's, the memory check of its simulated runs), but --trace:
// weft-bench measures many runs in one world, and refuses it. Exits 0.
int print_help() {
  const cli::FlagSet world = cli::kWorldFlags.without(cli::kTraceFlagName);
  const cli::FlagSet* sets[] = {&kBenchFlags, &world, &cli::kMemoryFlags};
  std::printf("weft-bench: %s\n\n%s\n", kUsage,
              cli::flags_help(sets, {}).c_str());
  std::printf("--helpfull also lists absl's own flags (--flagfile, ...).\n");
  return cli::kExitOk;
}

absl::StatusOr<std::unique_ptr<BenchRunner>> make_runner(
    const BenchOptions& options) {
  absl::StatusOr<cli::WorldFlags> flags = cli::world_flags();
  if (!flags.ok()) return flags.status();
  if (!flags->trace_path.empty()) {
    return absl::InvalidArgumentError(
        "--trace is weft-sim's; trace one run with weft-sim run --op=... "
        "--bytes=... --trace=FILE");
  }
  if (options.fabric == FabricKind::kSim) {
    return std::make_unique<SimRunner>(*std::move(flags), options.group);
  }
  absl::StatusOr<std::unique_ptr<GroupRunner>> group =
      GroupRunner::create(options.fabric, flags->options.link, options.group);
  if (!group.ok()) return group.status();
  return std::unique_ptr<BenchRunner>(*std::move(group));
}

// Everything that can be checked before the first measurement: each row's
// collective on this group (a root outside it, an op the group's size does
// not allow), and that --json and --plot can be written. So bad input never
// costs a sweep's results.
absl::Status check_before_measuring(const BenchRunner& runner,
                                    const BenchOptions& options) {
  for (const BenchOp& op : options.ops) {
    for (harness::AlgorithmRequest algorithm : options.algorithms) {
      for (uint64_t bytes : options.sizes) {
        if (absl::Status s =
                runner.check(spec_of(op, algorithm, bytes, options));
            !s.ok()) {
          return s;
        }
      }
    }
  }
  for (const auto& [flag, path] :
       {std::pair<const char*, std::string>{"json", options.json_path},
        {"plot", options.plot_path}}) {
    if (path.empty()) continue;
    if (absl::Status s = cli::check_writable(flag, path); !s.ok()) return s;
  }
  return absl::OkStatus();
}

int run(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  absl::StatusOr<std::vector<std::string>> args = translate_args(argc, argv);
  if (!args.ok())
    return report(cli::kExitBadInput, base::to_std(args.status().message()));
  if (cli::wants_help(*args)) return print_help();
  if (cli::wants_version(*args)) {
    std::printf("%s\n", cli::version_line("weft-bench").c_str());
    return cli::kExitOk;
  }
  cli::set_flags(*std::move(args));
  absl::StatusOr<BenchOptions> options = bench_options();
  if (!options.ok()) {
    return report(cli::kExitBadInput, base::to_std(options.status().message()));
  }
  absl::StatusOr<std::unique_ptr<BenchRunner>> runner = make_runner(*options);
  if (!runner.ok()) {
    const bool input = absl::IsInvalidArgument(runner.status()) ||
                       absl::IsNotFound(runner.status());
    return report(input ? cli::kExitBadInput : cli::kExitFailed,
                  base::to_std(runner.status().message()));
  }
  // Nothing is measured, so nothing is checked for measuring.
  if (options->model_only) {
    if ((*runner)->reports())
      std::fputs(model_tables(**runner, *options).c_str(), stdout);
    return cli::kExitOk;
  }
  if (absl::Status s = check_before_measuring(**runner, *options); !s.ok()) {
    return report(cli::kExitBadInput, base::to_std(s.message()));
  }
  const BenchRun result = run_blocks(**runner, *options);
  if (!result.status.ok()) {
    const bool input = absl::IsInvalidArgument(result.status);
    return report(input ? cli::kExitBadInput : cli::kExitFailed,
                  stopped_line(result, *options, **runner));
  }
  if (!(*runner)->reports()) return cli::kExitOk;
  std::fputs(registration_footer((*runner)->registration_caches(), 0).c_str(),
             stdout);
  if (absl::Status s = write_outputs(result.blocks, *options, **runner);
      !s.ok())
    return report(cli::kExitFailed, base::to_std(s.message()));
  for (const BenchBlock& block : result.blocks) {
    if (wrong_total(block) > 0 || error_count(block) > 0)
      return cli::kExitFailed;
  }
  return cli::kExitOk;
}

}  // namespace
}  // namespace weft::tools::weft_bench

int main(int argc, char** argv) {
  return weft::tools::weft_bench::run(argc, argv);
}
