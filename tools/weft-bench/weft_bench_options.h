// weft-bench's own flags (nccl-tests' long names where nccl-tests has one;
// weft_bench_args.h maps its short options onto them) and the options they
// make, validated so bad input exits 2 with one line naming the flag.
//
//   --minbytes/-b --maxbytes/-e --stepbytes/-i --stepfactor/-f   sizes
//   --warmup_iters/-w --iters/-n --check/-c                      iterations
//   --datatype/-d --redop/-o --root/-r                           data
//   --op --algorithm                 what to run (comma-separated lists)
//   --json --plot --model            outputs
//   --model_only                     the cost model alone, nothing measured
//   --fabric                         sim, verbs or tcp (default:
//                                    WEFT_FABRIC, else sim)
//   --recovery --send_queue          the group
//   --registered                     registered buffers
// (the FlagSet kBenchFlags).
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_OPTIONS_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/dtype.h"
#include "collectives/group_options.h"
#include "harness/collective_spec.h"
#include "tools/cli/flag_scope.h"

namespace weft::tools::weft_bench {

// Where the ranks are: all in this process on the simulator, or one per
// process in a group on the verbs fabric or on TCP.
enum class FabricKind : uint8_t { kSim, kVerbs, kTcp };

// "sim", "verbs", "tcp", as --fabric and the JSON name them.
const char* fabric_name(FabricKind fabric);
// The inverse of fabric_name; nullopt for any other text.
std::optional<FabricKind> parse_fabric(std::string_view name);

// The fabric of one run: --fabric's `flag` ("" when not given) and
// WEFT_FABRIC's value (`launched`, nullptr or "" when unset), which
// `weft-sim launch` sets for every rank. Without the flag, the variable
// decides (else sim); a flag that contradicts it, or a variable naming no
// group fabric (tcp, verbs), is InvalidArgument saying what to change, so
// a process under launch never benchmarks something other than the group
// it was started in.
absl::StatusOr<FabricKind> choose_fabric(std::string_view flag,
                                         const char* launched);

// One block of rows: a collective, its reduction and its element type
// (-o all and -d all make one for each, as nccl-tests runs each).
struct BenchOp {
  harness::CollectiveKind kind = harness::CollectiveKind::kAllReduce;
  ReduceOp redop = ReduceOp::kSum;
  DType dtype = DType::kFloat32;
};

struct BenchOptions {
  // Most sizes one run sweeps.
  static constexpr size_t kMaxSizes = 4096;
  static constexpr uint32_t kMaxIters = 1'000'000;

  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
  uint64_t step_bytes = 0;
  uint64_t step_factor = 1;  // > 1: sizes multiply by it; 1: add step_bytes
  std::vector<uint64_t> sizes;
  uint32_t warmup_iters = 0;
  uint32_t iters = 0;
  bool check = true;
  // Buffers registered with the group (Group::register_memory).
  bool registered = false;
  DType dtype = DType::kFloat32;  // -d; every op's own when not all_dtypes
  bool all_dtypes = false;        // -d all: every dtype, a block each
  uint32_t root = 0;
  std::vector<BenchOp> ops;
  std::vector<harness::AlgorithmRequest> algorithms;
  std::string json_path;
  std::string plot_path;
  bool model = false;
  // Print each algorithm's cost and the bound per size; measure nothing.
  bool model_only = false;
  // The group every rank forms (--recovery, --send_queue).
  GroupOptions group;
  FabricKind fabric = FabricKind::kSim;
};

// Every flag above; weft-bench also accepts the world flags
// (tools/cli/world_flags.h).
extern const cli::FlagSet kBenchFlags;

// Reads and validates the flags (after absl::ParseCommandLine).
absl::StatusOr<BenchOptions> bench_options();

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_OPTIONS_H_
