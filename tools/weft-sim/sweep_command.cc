// weft-sim sweep: swarm testing. Each seed draws its own world, program
// and faults (sweep_case.h) and runs them against the oracles (sweep_run.h);
// the sweep prints each failing seed with the command that replays it and
// a Perfetto trace, then a table of outcomes, the liveness line, the wall
// time and cost per seed, and the combined trace hash. Exits 0 when every
// seed passed every oracle, 1 when any failed, 2 for bad flags; SIGINT or
// SIGTERM ends it after the seed running, with the tally of the seeds run
// and which they were (exit 130, 143).
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/output_file.h"
#include "tools/cli/progress.h"
#include "tools/weft-sim/commands.h"
#include "tools/weft-sim/sim_json.h"
#include "tools/weft-sim/stop_signals.h"
#include "tools/weft-sim/sweep_case.h"
#include "tools/weft-sim/sweep_flags.h"
#include "tools/weft-sim/sweep_json.h"
#include "tools/weft-sim/sweep_run.h"
#include "tools/weft-sim/sweep_tally.h"

namespace weft::tools::weft_sim {
namespace {

// Failing seeds whose traces are written (each can be megabytes).
constexpr uint64_t kMaxTraces = 100;

std::string replay_command(uint64_t seed, const SweepFlags& flags) {
  std::string out =
      absl::StrCat("weft-sim sweep --seeds=1 --first-seed=", seed);
  if (!flags.recovery) absl::StrAppend(&out, " --recovery=off");
  if (flags.require_correct) absl::StrAppend(&out, " --require-correct");
  if (flags.faults) absl::StrAppend(&out, " --faults=", flags.faults_path);
  if (flags.keep_ops) {
    absl::StrAppend(&out, " --keep-ops=", absl::StrJoin(*flags.keep_ops, ","));
  }
  if (flags.check_determinism) absl::StrAppend(&out, " --check-determinism");
  return out;
}

absl::Status make_dir(const std::string& dir) {
  if (mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("cannot create --out directory ", dir, " (",
                   std::strerror(errno), "); give a writable --out"));
}

// Before the first seed: failing seeds' traces can be written under
// --out=`dir`. It is a writable directory, or one can be made there (made
// and removed again: a sweep without failures leaves nothing).
absl::Status check_out_dir(const std::string& dir) {
  struct stat st {};
  const bool existed = stat(dir.c_str(), &st) == 0;
  if (existed && !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out=", dir,
                     " is not a directory; name a directory for the "
                     "failing seeds' traces; checked before running"));
  }
  if (!existed && mkdir(dir.c_str(), 0755) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out=", dir, ": cannot create the directory (",
                     std::strerror(errno), "); checked before running"));
  }
  // Written as the traces would be (check_writable's probe, removed again).
  const absl::Status writable =
      cli::check_writable("out", absl::StrCat(dir, "/seed-1.json"));
  if (!existed) rmdir(dir.c_str());
  if (!writable.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--out=", dir, ": cannot write in it; checked before running"));
  }
  return absl::OkStatus();
}

// Prints a failing seed: what it ran, why it failed, how to replay it, and
// (for the first kMaxTraces) its trace, from a rerun that keeps events.
absl::Status report_failure(const SweepCase& c, const std::string& why,
                            const SweepFlags& flags, uint64_t* traces) {
  std::printf("FAIL seed %llu: %s\n", static_cast<unsigned long long>(c.seed),
              why.c_str());
  // A one-seed sweep has printed what the seed runs already.
  if (flags.seeds > 1)
    std::printf("  runs: %s\n", describe_sweep_case(c).c_str());
  std::printf("  replay: %s\n", replay_command(c.seed, flags).c_str());
  if (*traces >= kMaxTraces) {
    std::printf(
        "  trace: not written (the first %llu failing seeds have one)\n",
        static_cast<unsigned long long>(kMaxTraces));
    return absl::OkStatus();
  }
  if (absl::Status s = make_dir(flags.out_dir); !s.ok()) return s;
  SweepRunOptions options{.recovery = flags.recovery};
  options.trace_path = absl::StrCat(flags.out_dir, "/seed-", c.seed, ".json");
  absl::StatusOr<SweepRun> traced = run_sweep_case(c, options);
  if (!traced.ok()) return traced.status();
  ++*traces;
  std::printf("  trace: %s (open it in ui.perfetto.dev)\n",
              options.trace_path.c_str());
  return absl::OkStatus();
}

// Why a seed failed its oracles ("" when it passed them all).
std::string failure_of(const SweepRun& run, bool deterministic,
                       uint64_t second_hash, bool require_correct) {
  std::string why;
  if (!harness::verdict_allowed(run.verdict) ||
      (require_correct && !run.not_live &&
       run.verdict != harness::Verdict::kCorrect)) {
    why = run.summary;
  }
  if (run.not_live) {
    absl::StrAppend(&why, why.empty() ? "" : "; ",
                    "not live: no fatal fault struck, yet it ended ",
                    run.summary);
  }
  if (run.ranks_disagree) {
    absl::StrAppend(&why, why.empty() ? "" : "; ",
                    "ranks disagree: some ended OK, some with ", run.summary);
  }
  if (!deterministic) {
    absl::StrAppend(&why, why.empty() ? "" : "; ",
                    absl::StrFormat("not deterministic: trace hash %016x then "
                                    "%016x",
                                    run.trace_hash, second_hash));
  }
  return why;
}

// Runs one seed, prints it if it failed (taking the progress bar off the
// terminal first), counts it in `tally` and, when `cases` is given
// (--json), adds it there.
absl::Status run_seed(uint64_t seed, const SweepFlags& flags, SweepTally* tally,
                      uint64_t* traces, cli::Progress* progress,
                      nlohmann::ordered_json* cases) {
  const auto start = std::chrono::steady_clock::now();
  SweepCase c = draw_sweep_case(seed);
  if (flags.keep_ops) {
    absl::StatusOr<SweepCase> kept = keep_ops(c, *flags.keep_ops);
    if (!kept.ok()) return kept.status();
    c = *std::move(kept);
  }
  if (flags.faults) c.world.faults = *flags.faults;
  const SweepRunOptions options{.recovery = flags.recovery};
  absl::StatusOr<SweepRun> run = run_sweep_case(c, options);
  if (!run.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("seed ", seed, ": ", run.status().message()));
  }
  uint64_t second_hash = run->trace_hash;
  if (flags.check_determinism) {
    absl::StatusOr<SweepRun> again = run_sweep_case(c, options);
    if (!again.ok()) return again.status();
    second_hash = again->trace_hash;
  }
  const bool deterministic = second_hash == run->trace_hash;
  const std::string why =
      failure_of(*run, deterministic, second_hash, flags.require_correct);
  tally->add(
      *run, deterministic, !why.empty(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  if (flags.seeds == 1 || !why.empty()) progress->clear();
  if (flags.seeds == 1) {
    std::printf("seed %llu: %s\n  runs: %s\n",
                static_cast<unsigned long long>(seed), run->summary.c_str(),
                describe_sweep_case(c).c_str());
  }
  if (cases != nullptr) {
    cases->push_back(
        sweep_seed_json(c, *run, why, replay_command(c.seed, flags)));
  }
  if (why.empty()) return absl::OkStatus();
  return report_failure(c, why, flags, traces);
}

uint64_t shard_seeds(const SweepFlags& f) {
  return f.seeds / f.shard_count +
         (f.shard_index < f.seeds % f.shard_count ? 1 : 0);
}

// The seeds an interrupted sweep ran: the first `ran` of its shard, which
// go up from the first by the shard count.
std::string seeds_run(const SweepFlags& f, uint64_t ran) {
  const uint64_t first = f.first_seed + f.shard_index;
  const uint64_t last = first + (ran - 1) * f.shard_count;
  if (ran == 0) return "no seed had finished";
  if (ran == 1) return absl::StrCat("ran seed ", first);
  if (f.shard_count == 1) {
    return absl::StrCat("ran seeds ", first, "..", last, " (resume with ",
                        "--first-seed=", last + 1, " --seeds=", f.seeds - ran,
                        ")");
  }
  return absl::StrCat("ran seeds ", first, ", ", first + f.shard_count,
                      ", ..., ", last, " (in steps of ", f.shard_count, ")");
}

// The table and the lines after it, for a whole sweep or the part an
// interrupted one ran.
void print_summary(const SweepTally& tally, const SweepFlags& flags,
                   std::chrono::steady_clock::time_point start) {
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::fputs(sweep_table(tally, flags.check_determinism).c_str(), stdout);
  std::printf("wall time: %.2f s, %.1f seeds/s\n", wall_s,
              wall_s > 0 ? static_cast<double>(tally.seeds) / wall_s : 0.0);
  std::fputs(sweep_cost_line(tally, flags.first_seed, flags.shard_index,
                             flags.shard_count)
                 .c_str(),
             stdout);
  std::printf("trace hash: %s\n", hash_hex(tally.folded_hash).c_str());
}

}  // namespace

int run_sweep(int argc, char** argv) {
  if (const CommandArgs args = parse_command_flags(argc, argv, "sweep");
      args.exit_code) {
    return *args.exit_code;
  }
  absl::StatusOr<SweepFlags> flags = sweep_flags();
  if (!flags.ok()) return cli::bad_input(flags.status());
  absl::StatusOr<std::string> json = json_path();
  if (!json.ok()) return cli::bad_input(json.status());
  if (absl::Status s = check_out_dir(flags->out_dir); !s.ok()) {
    return cli::bad_input(s);
  }
  const uint64_t total = shard_seeds(*flags);
  std::printf(
      "weft-sim sweep: %llu seeds from %llu, shard %llu/%llu (%llu seeds), "
      "recovery %s%s%s\n",
      static_cast<unsigned long long>(flags->seeds),
      static_cast<unsigned long long>(flags->first_seed),
      static_cast<unsigned long long>(flags->shard_index),
      static_cast<unsigned long long>(flags->shard_count),
      static_cast<unsigned long long>(total), flags->recovery ? "on" : "off",
      flags->faults ? ", faults from " : "", flags->faults_path.c_str());
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  SweepTally tally;
  cli::Progress progress("sweep", "seeds", total);
  uint64_t traces = 0;
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  // Checked between seeds: the seed running when one comes finishes first.
  const StopSignals signals;
  for (uint64_t i = flags->shard_index;
       i < flags->seeds && StopSignals::received() == 0;
       i += flags->shard_count) {
    if (absl::Status s =
            run_seed(flags->first_seed + i, *flags, &tally, &traces, &progress,
                     json->empty() ? nullptr : &cases);
        !s.ok()) {
      return cli::bad_input(s);
    }
    std::fflush(stdout);
    progress.update(tally.seeds, sweep_progress_counts(tally));
  }
  if (const int signal = StopSignals::received(); signal != 0) {
    progress.clear();
    if (StopSignals::quiet()) return StopSignals::exit_code();
    std::printf(
        "weft-sim sweep: interrupted by %s after %llu of %llu seeds: %s; "
        "the tally counts those%s\n",
        StopSignals::name(signal), static_cast<unsigned long long>(tally.seeds),
        static_cast<unsigned long long>(total),
        seeds_run(*flags, tally.seeds).c_str(),
        json->empty() ? "" : " (--json not written)");
    print_summary(tally, *flags, start);
    std::fflush(stdout);
    return StopSignals::exit_code();
  }
  progress.finish(tally.seeds, sweep_progress_counts(tally));
  print_summary(tally, *flags, start);
  if (!json->empty()) {
    if (absl::Status s =
            write_json(*json, sweep_json(*flags, std::move(cases), tally));
        !s.ok()) {
      return cli::bad_input(s);
    }
  }
  return tally.failed == 0 ? cli::kExitOk : cli::kExitFailed;
}

}  // namespace weft::tools::weft_sim
