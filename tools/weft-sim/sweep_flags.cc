#include "tools/weft-sim/sweep_flags.h"

#include <utility>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "tools/cli/cli_common.h"
#include "tools/weft-sim/collective_flags.h"

ABSL_FLAG(std::string, seeds, "",
          "sweep: how many seeds to run, from --first-seed on (1..100000000)");
ABSL_FLAG(std::string, first_seed, "1", "sweep: the first seed (0..2^64-1)");
ABSL_FLAG(bool, require_correct, false,
          "sweep: every run must end correct; a typed error fails too (for "
          "studies of faults recovery must survive, with --faults)");
ABSL_FLAG(std::string, shard, "0/1",
          "sweep: i/N runs only the seeds whose index (seed - first seed) is "
          "i modulo N, for job arrays (0 <= i < N <= 1000000)");
ABSL_FLAG(std::string, keep_ops, "",
          "sweep: run only these operations of each seed's program, "
          "comma-separated indices from 0 (what weft-sim shrink prints)");
ABSL_FLAG(std::string, out, "",
          "sweep: directory for the Perfetto traces of failing seeds (default "
          "sweep-out); shrink: file for the minimal plan (default "
          "shrink-<seed>.plan)");

// Defined by other commands, read here too.
ABSL_DECLARE_FLAG(bool, check_determinism);  // p2p_command.cc
ABSL_DECLARE_FLAG(std::string, seed);        // cli::world_flags.cc
ABSL_DECLARE_FLAG(std::string, faults);      // cli::world_flags.cc
ABSL_DECLARE_FLAG(std::string, recovery);    // collective_flags.cc

namespace weft::tools::weft_sim {

const cli::FlagSet kSweepFlags("sweep", "which seeds, and what fails one",
                               FLAGS_seeds, FLAGS_first_seed, FLAGS_shard,
                               FLAGS_check_determinism, FLAGS_recovery,
                               FLAGS_require_correct, FLAGS_faults,
                               FLAGS_keep_ops, FLAGS_out);
const cli::FlagSet kShrinkFlags("shrink", "the seed to shrink", FLAGS_seed,
                                FLAGS_recovery, FLAGS_out);

namespace {

bool given(std::span<const std::string> args, std::string_view name) {
  for (size_t i = 1; i < args.size(); ++i) {
    if (cli::flag_name(args[i]) == name) return true;
  }
  return false;
}

absl::Status parse_shard(const std::string& text, SweepFlags* out) {
  const size_t slash = text.find('/');
  uint64_t index = 0;
  uint64_t count = 0;
  if (slash == std::string::npos ||
      !absl::SimpleAtoi(text.substr(0, slash), &index) ||
      !absl::SimpleAtoi(text.substr(slash + 1), &count) || count == 0 ||
      count > kMaxShards || index >= count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--shard=", text, " is not i/N with 0 <= i < N <= ", kMaxShards));
  }
  out->shard_index = index;
  out->shard_count = count;
  return absl::OkStatus();
}

absl::Status parse_keep_ops(const std::string& text, SweepFlags* out) {
  if (text.empty()) return absl::OkStatus();
  std::vector<uint32_t> ops;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    uint32_t index = 0;
    if (!absl::SimpleAtoi(item, &index) ||
        (!ops.empty() && index <= ops.back())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--keep-ops=", text,
          " is not a rising comma-separated list of operation indices "
          "(e.g. --keep-ops=0,3,7)"));
    }
    ops.push_back(index);
  }
  out->keep_ops = std::move(ops);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SweepFlags> sweep_flags() {
  SweepFlags out;
  const std::string seeds = absl::GetFlag(FLAGS_seeds);
  if (seeds.empty()) {
    return absl::InvalidArgumentError(
        "--seeds is required: how many seeds to run (e.g. --seeds=10000)");
  }
  absl::StatusOr<uint64_t> n =
      cli::parse_uint("seeds", seeds, 1, kMaxSweepSeeds);
  if (!n.ok()) return n.status();
  out.seeds = *n;
  absl::StatusOr<uint64_t> first =
      cli::parse_uint("first_seed", absl::GetFlag(FLAGS_first_seed), 0,
                      ~uint64_t{0} - (out.seeds - 1));
  if (!first.ok()) return first.status();
  out.first_seed = *first;
  if (absl::Status s = parse_shard(absl::GetFlag(FLAGS_shard), &out); !s.ok())
    return s;
  out.check_determinism = absl::GetFlag(FLAGS_check_determinism);
  out.require_correct = absl::GetFlag(FLAGS_require_correct);
  absl::StatusOr<bool> recovery = recovery_flag();
  if (!recovery.ok()) return recovery.status();
  out.recovery = *recovery;
  out.faults_path = absl::GetFlag(FLAGS_faults);
  if (!out.faults_path.empty()) {
    absl::StatusOr<sim::FaultPlan> plan =
        sim::FaultPlan::load_file(out.faults_path);
    if (!plan.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--faults: ", plan.status().message()));
    }
    out.faults = *std::move(plan);
  }
  if (absl::Status s = parse_keep_ops(absl::GetFlag(FLAGS_keep_ops), &out);
      !s.ok()) {
    return s;
  }
  out.out_dir = absl::GetFlag(FLAGS_out);
  if (out.out_dir.empty()) out.out_dir = kDefaultSweepOut;
  return out;
}

absl::StatusOr<ShrinkFlags> shrink_flags(std::span<const std::string> args) {
  if (!given(args, "seed")) {
    return absl::InvalidArgumentError(
        "--seed is required: the sweep seed to shrink (e.g. --seed=42)");
  }
  ShrinkFlags out;
  absl::StatusOr<uint64_t> seed =
      cli::parse_uint("seed", absl::GetFlag(FLAGS_seed), 0, ~uint64_t{0});
  if (!seed.ok()) return seed.status();
  out.seed = *seed;
  absl::StatusOr<bool> recovery = recovery_flag();
  if (!recovery.ok()) return recovery.status();
  out.recovery = *recovery;
  out.out_path = absl::GetFlag(FLAGS_out);
  if (out.out_path.empty())
    out.out_path = absl::StrCat("shrink-", out.seed, ".plan");
  return out;
}

}  // namespace weft::tools::weft_sim
