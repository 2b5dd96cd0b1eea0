#include "tools/weft-sim/collective_flags.h"

#include <string_view>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "fabric/topology.h"
#include "tools/cli/byte_size.h"
#include "tools/cli/cli_common.h"

ABSL_FLAG(std::string, op, "all_sum",
          "run: the collective: all_sum, all_prod, all_max, all_min, "
          "all_gather, sum_scatter, broadcast, reduce, all_to_all, send_recv, "
          "barrier (or nccl-tests' names: all_reduce, reduce_scatter, "
          "sendrecv, with --redop)");
ABSL_FLAG(std::string, bytes, "1M",
          "run: size as nccl-tests counts it: the all-gather output, the "
          "reduce-scatter input, else the buffer (K, M, G suffixes); rounded "
          "down to whole elements on every rank");
ABSL_FLAG(std::string, dtype, "float32",
          "run: bool, int8..int64, uint8..uint64, float16, bfloat16, float32, "
          "float64, complex64");
ABSL_FLAG(std::string, redop, "",
          "run: reduction of all_reduce/reduce_scatter/reduce: sum, prod, "
          "max, min (default: the one --op names, else sum)");
ABSL_FLAG(std::string, root, "0", "run: root rank of broadcast and reduce");
ABSL_FLAG(std::string, algorithm, "auto",
          "run: auto, mesh (exchange when small, scatter when large), "
          "mesh_exchange, mesh_scatter, ring");
ABSL_FLAG(bool, in_place, false, "run: in place instead of out of place");
ABSL_FLAG(std::string, iterations, "1",
          "run: times the collective runs back to back (1..10000); the time "
          "shown is per iteration");
ABSL_FLAG(std::string, timeout_ms, "0",
          "run: deadline of each operation in virtual milliseconds (0: the "
          "group's default, 30 s)");
ABSL_FLAG(std::string, recovery, "on",
          "run, sweep, shrink: retransmission of lost, duplicated and "
          "reordered frames (GroupOptions::recovery): on or off");

namespace weft::tools::weft_sim {

const cli::FlagSet kCollectiveFlags("collective", "one collective", FLAGS_op,
                                    FLAGS_bytes, FLAGS_dtype, FLAGS_redop,
                                    FLAGS_root, FLAGS_algorithm, FLAGS_in_place,
                                    FLAGS_iterations, FLAGS_timeout_ms,
                                    FLAGS_recovery);

namespace {

constexpr uint64_t kMaxIterations = 10'000;
constexpr uint64_t kMaxTimeoutMs = 86'400'000;

absl::Status parse_names(harness::CollectiveSpec* spec) {
  const std::string op = absl::GetFlag(FLAGS_op);
  if (!harness::parse_collective(op, &spec->kind, &spec->op)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--op=", op, " is not a collective (see --help)"));
  }
  const std::string redop = absl::GetFlag(FLAGS_redop);
  if (!redop.empty() && !parse_reduce_op(redop, &spec->op)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--redop=", redop, " is none of sum, prod, max, min"));
  }
  const std::string dtype = absl::GetFlag(FLAGS_dtype);
  if (!parse_dtype(dtype, &spec->dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--dtype=", dtype, " is not a dtype (see --help)"));
  }
  const std::string algorithm = absl::GetFlag(FLAGS_algorithm);
  if (!harness::parse_algorithm_request(algorithm, &spec->algorithm)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--algorithm=", algorithm,
        " is none of auto, mesh, mesh_exchange, mesh_scatter, ring"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> recovery_flag() {
  return cli::parse_on_off("recovery", absl::GetFlag(FLAGS_recovery));
}

absl::StatusOr<CollectiveFlags> collective_flags() {
  CollectiveFlags out;
  absl::StatusOr<bool> recovery = recovery_flag();
  if (!recovery.ok()) return recovery.status();
  out.group.recovery.enabled = *recovery;
  if (absl::Status s = parse_names(&out.spec); !s.ok()) return s;
  absl::StatusOr<uint64_t> bytes =
      cli::parse_byte_size("bytes", absl::GetFlag(FLAGS_bytes));
  if (!bytes.ok()) return bytes.status();
  out.spec.bytes = *bytes;
  absl::StatusOr<uint64_t> root = cli::parse_uint(
      "root", absl::GetFlag(FLAGS_root), 0, Topology::kMaxRanks - 1);
  if (!root.ok()) return root.status();
  out.spec.root = static_cast<uint32_t>(*root);
  out.spec.in_place = absl::GetFlag(FLAGS_in_place);
  absl::StatusOr<uint64_t> iterations = cli::parse_uint(
      "iterations", absl::GetFlag(FLAGS_iterations), 1, kMaxIterations);
  if (!iterations.ok()) return iterations.status();
  out.iterations = static_cast<uint32_t>(*iterations);
  absl::StatusOr<uint64_t> timeout_ms = cli::parse_uint(
      "timeout_ms", absl::GetFlag(FLAGS_timeout_ms), 0, kMaxTimeoutMs);
  if (!timeout_ms.ok()) return timeout_ms.status();
  out.timeout_ns = static_cast<TimeNs>(*timeout_ms) * kNsPerMs;
  return out;
}

bool sets_collective_flag(std::span<const std::string> args) {
  const absl::CommandLineFlag& recovery =
      absl::GetFlagReflectionHandle(FLAGS_recovery);
  for (const std::string& arg : args) {
    const absl::CommandLineFlag* flag =
        absl::FindCommandLineFlag(cli::flag_name(arg));
    if (flag != nullptr && flag != &recovery &&
        kCollectiveFlags.contains(*flag)) {
      return true;
    }
  }
  return false;
}

}  // namespace weft::tools::weft_sim
