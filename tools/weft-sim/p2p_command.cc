// weft-sim p2p: builds a world from the shared flags, runs point-to-point
// streams over every cabled pair, and prints what the receivers saw.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "harness/p2p_traffic.h"
#include "tools/cli/cli_common.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-sim/commands.h"

ABSL_FLAG(std::string, frames, "1000",
          "p2p: frames each endpoint sends (per cabled pair and cable, each "
          "direction)");
ABSL_FLAG(std::string, frame_bytes, "4096",
          "p2p: bytes per frame (1..1048576)");
ABSL_FLAG(bool, check_determinism, false,
          "run twice with the same options and seed and compare trace hashes; "
          "exit 1 if they differ");

namespace weft::tools::weft_sim {

const cli::FlagSet kP2pFlags("p2p", "point-to-point streams", FLAGS_frames,
                             FLAGS_frame_bytes, FLAGS_check_determinism);

namespace {

struct P2pRun {
  sim::RunResult result;
  sim::Counters counters;
  harness::P2pStats stats;
  uint64_t hash = 0;
  std::string hash_hex;
};

absl::StatusOr<P2pRun> run_once(const cli::WorldFlags& flags,
                                const harness::P2pConfig& config,
                                bool write_trace) {
  sim::WorldOptions options = flags.options;
  const bool keep = write_trace && !flags.trace_path.empty();
  options.keep_trace_events = keep;
  absl::StatusOr<std::unique_ptr<sim::World>> world =
      sim::World::create(std::move(options));
  if (!world.ok()) return world.status();
  absl::StatusOr<std::unique_ptr<harness::P2pTraffic>> traffic =
      harness::P2pTraffic::create(**world, config);
  if (!traffic.ok()) return traffic.status();
  const std::vector<sim::RankProgram*> programs = (*traffic)->programs();
  P2pRun run;
  run.result = (*world)->run(programs);
  run.counters = (*world)->counters();
  run.stats = (*traffic)->stats();
  run.hash = (*world)->trace().hash();
  run.hash_hex = (*world)->trace().hash_hex();
  if (keep) {
    if (absl::Status s =
            (*world)->trace().write_perfetto_json(flags.trace_path);
        !s.ok()) {
      return s;
    }
  }
  return run;
}

void print_summary(const cli::WorldFlags& flags,
                   const harness::P2pConfig& config, const P2pRun& run) {
  const sim::WorldOptions& o = flags.options;
  const sim::Counters& c = run.counters;
  const harness::P2pStats& s = run.stats;
  std::printf("weft-sim p2p: %u ranks, %s, link %s (%s), seed %llu\n",
              o.topology.ranks(), flags.topology_name.c_str(),
              flags.link_name.c_str(), o.link.to_string().c_str(),
              static_cast<unsigned long long>(o.seed));
  std::printf("streams            %llu x %u frames of %u bytes\n",
              static_cast<unsigned long long>(s.streams),
              config.frames_per_pair, config.frame_bytes);
  std::printf("outcome            %s\n",
              std::string(sim::outcome_name(run.result.outcome)).c_str());
  std::printf("virtual time       %.3f us\n",
              static_cast<double>(run.result.end_ns) / 1e3);
  std::string out = absl::StrFormat(
      "frames sent        %u\nframes delivered   %u\nframes dropped     %u (no "
      "receive %u, "
      "lost %u, link down %u, receiver crashed %u, queue pair not ready %u)\n"
      "gaps detected      %u (%u frames skipped)\nduplicates         "
      "%u\nreordered          "
      "%u\ncorrupt            %u\nerror completions  %u (flushed %u, failed "
      "streams %u)\n"
      "missing at end     %u\nfaults injected    %u\n",
      c.frames_sent, c.frames_delivered, c.frames_dropped, c.dropped_no_receive,
      c.dropped_loss, c.dropped_link_down, c.dropped_peer_crashed,
      c.dropped_not_ready, s.gaps, s.lost, s.duplicates, s.reordered, s.corrupt,
      s.error_completions, s.flushed, s.failed_streams, s.missing,
      c.faults_total());
  std::fputs(out.c_str(), stdout);
  for (int k = 1; k < sim::kFaultKindCount; ++k) {
    if (c.faults[static_cast<size_t>(k)] == 0) continue;
    std::printf(
        "  %-16s %llu\n",
        std::string(sim::fault_kind_name(static_cast<sim::FaultKind>(k)))
            .c_str(),
        static_cast<unsigned long long>(c.faults[static_cast<size_t>(k)]));
  }
  if (!run.result.completed()) std::printf("%s", run.result.report.c_str());
  if (!flags.trace_path.empty())
    std::printf("trace written to %s\n", flags.trace_path.c_str());
}

absl::StatusOr<harness::P2pConfig> p2p_config() {
  harness::P2pConfig config;
  absl::StatusOr<uint64_t> frames = cli::parse_uint(
      "frames", absl::GetFlag(FLAGS_frames), 1, harness::P2pConfig::kMaxFrames);
  if (!frames.ok()) return frames.status();
  absl::StatusOr<uint64_t> bytes =
      cli::parse_uint("frame_bytes", absl::GetFlag(FLAGS_frame_bytes), 1,
                      harness::P2pConfig::kMaxFrameBytes);
  if (!bytes.ok()) return bytes.status();
  config.frames_per_pair = static_cast<uint32_t>(*frames);
  config.frame_bytes = static_cast<uint32_t>(*bytes);
  return config;
}

}  // namespace

int run_p2p(int argc, char** argv) {
  if (const CommandArgs args = parse_command_flags(argc, argv, "p2p");
      args.exit_code) {
    return *args.exit_code;
  }
  absl::StatusOr<cli::WorldFlags> flags = cli::world_flags();
  if (!flags.ok()) return cli::bad_input(flags.status());
  absl::StatusOr<harness::P2pConfig> config = p2p_config();
  if (!config.ok()) return cli::bad_input(config.status());
  absl::StatusOr<P2pRun> run = run_once(*flags, *config, /*write_trace=*/true);
  if (!run.ok()) return cli::bad_input(run.status());
  print_summary(*flags, *config, *run);
  int code = run->result.completed() && run->stats.corrupt == 0
                 ? cli::kExitOk
                 : cli::kExitFailed;
  if (absl::GetFlag(FLAGS_check_determinism)) {
    absl::StatusOr<P2pRun> again =
        run_once(*flags, *config, /*write_trace=*/false);
    if (!again.ok()) return cli::bad_input(again.status());
    if (again->hash != run->hash) {
      std::printf("determinism: MISMATCH, second run hash %s\n",
                  again->hash_hex.c_str());
      code = cli::kExitFailed;
    } else {
      std::printf("determinism: ok, two runs, same hash\n");
    }
  }
  std::printf("trace hash: %s\n", run->hash_hex.c_str());
  return code;
}

}  // namespace weft::tools::weft_sim
