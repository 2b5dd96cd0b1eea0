#include "tools/weft-bench/weft_bench_options.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "base/absl_compat.h"
#include "fabric/topology.h"
#include "tools/cli/byte_size.h"
#include "tools/cli/cli_common.h"
#include "tools/weft-bench/weft_bench_args.h"

ABSL_FLAG(std::string, minbytes, "32M",
          "-b: smallest size (nccl-tests' size: the all-gather output, the "
          "reduce-scatter input, else the buffer; K, M, G suffixes)");
ABSL_FLAG(std::string, maxbytes, "32M", "-e: largest size");
ABSL_FLAG(std::string, stepbytes, "1M",
          "-i: size increment when --stepfactor is 1");
ABSL_FLAG(std::string, stepfactor, "1",
          "-f: multiply the size by this from one row to the next (1: add "
          "--stepbytes instead)");
ABSL_FLAG(
    std::string, warmup_iters, "",
    "-w: untimed iterations before each measurement (default 5 on "
    "verbs and tcp; 1 on the simulator, where every iteration takes the same "
    "virtual time)");
ABSL_FLAG(std::string, iters, "",
          "-n: timed iterations per measurement (default 20 on verbs and "
          "tcp, 1 on the simulator)");
ABSL_FLAG(std::string, check, "1",
          "-c: 1 checks every output against a reference computed directly "
          "(the #wrong column), 0 skips the check (N/A)");
ABSL_FLAG(std::string, datatype, "float",
          "-d: float, half, double, bfloat16, int8..int64, uint8..uint64, "
          "bool, complex64 (nccl-tests' or weft's names), or all (every "
          "type, a block each, as nccl-tests' -d all)");
ABSL_FLAG(std::string, redop, "",
          "-o: reduction of all_reduce, reduce_scatter and reduce: sum, "
          "prod, max, min (default sum), or all (each, a block each, as "
          "nccl-tests' -o all)");
ABSL_FLAG(std::string, root, "0", "-r: root rank of broadcast and reduce");
ABSL_FLAG(std::string, op, "all_reduce",
          "collective(s), comma-separated: all_reduce, all_gather, "
          "reduce_scatter, broadcast, reduce, all_to_all, sendrecv, or all");
ABSL_FLAG(std::string, algorithm, "auto",
          "algorithm(s), comma-separated: auto, mesh, mesh_exchange, "
          "mesh_scatter, ring");
ABSL_FLAG(std::string, json, "", "also write the results as JSON here");
ABSL_FLAG(std::string, plot, "",
          "also draw bus bandwidth against size, one line per op and "
          "algorithm, as an SVG chart here");
ABSL_FLAG(bool, model, false,
          "print beside each time the Thakur-Rabenseifner-Gropp cost of the "
          "ring algorithm on the same link and the ratio time/model, and the "
          "bound (the lowest lower bound of the link model over the "
          "algorithms the group can run) and the ratio time/bound");
ABSL_FLAG(bool, model_only, false,
          "print the cost model alone, measuring nothing: per op and size, "
          "each algorithm the group can run with its steps, bytes per step, "
          "step-by-step cost and lower bound, and which is the bound");
ABSL_FLAG(std::string, recovery, "on",
          "retransmission of lost frames (GroupOptions::recovery): on or off; "
          "compare the two to see what recovery costs");
ABSL_FLAG(std::string, send_queue, "1M",
          "data bytes each cable keeps posted and not yet sent "
          "(GroupOptions::send_queue_bytes; K, M suffixes): lower recovers "
          "losses sooner, higher keeps the link busier");
ABSL_FLAG(bool, registered, false,
          "register each rank's input and output with the group once per "
          "row (Group::register_memory), so operations send from and "
          "receive into them instead of staging through weft's frames");
ABSL_FLAG(std::string, fabric, "",
          "sim: simulated ranks in this process (--ranks, --link, ...), "
          "virtual time; verbs: this process is one rank of a group formed "
          "from JACCL's environment (JACCL_RANK, JACCL_IBV_DEVICES, "
          "JACCL_COORDINATOR), wall time; tcp: this process is one rank of a "
          "group over TCP formed from MLX's ring hostfile (MLX_HOSTFILE, "
          "MLX_RANK), wall time. Default: WEFT_FABRIC when it is set "
          "(weft-sim launch sets it: verbs under --fabric=sim, tcp under "
          "--fabric=tcp), else sim; a --fabric that contradicts WEFT_FABRIC "
          "is refused");

namespace weft::tools::weft_bench {

const cli::FlagSet kBenchFlags(
    "weft-bench", "what to measure and how", FLAGS_minbytes, FLAGS_maxbytes,
    FLAGS_stepbytes, FLAGS_stepfactor, FLAGS_warmup_iters, FLAGS_iters,
    FLAGS_check, FLAGS_datatype, FLAGS_redop, FLAGS_root, FLAGS_op,
    FLAGS_algorithm, FLAGS_json, FLAGS_plot, FLAGS_model, FLAGS_model_only,
    FLAGS_recovery, FLAGS_send_queue, FLAGS_registered, FLAGS_fabric);

namespace {

using tools::cli::parse_byte_size;
using tools::cli::parse_uint;

constexpr uint64_t kMaxStepFactor = 1024;
constexpr uint32_t kSimWarmup = 1, kSimIters = 1;
constexpr uint32_t kGroupWarmup = 5, kGroupIters = 20;
constexpr harness::CollectiveKind kAllOps[] = {
    harness::CollectiveKind::kAllReduce,
    harness::CollectiveKind::kAllGather,
    harness::CollectiveKind::kReduceScatter,
    harness::CollectiveKind::kBroadcast,
    harness::CollectiveKind::kReduce,
    harness::CollectiveKind::kAllToAll,
    harness::CollectiveKind::kSendRecv};

// What -d and -o chose: one type and reduction, or every one ("all").
struct DataChoice {
  DType dtype = DType::kFloat32;
  bool all_dtypes = false;
  ReduceOp redop = ReduceOp::kSum;
  bool redop_given = false;
  bool all_redops = false;
};

// `op` once for each type and, where it reduces, each reduction chosen.
void add_blocks(BenchOp op, const DataChoice& d, std::vector<BenchOp>* out) {
  std::vector<ReduceOp> redops = {op.redop};
  if (d.all_redops && harness::reduces(op.kind)) {
    redops = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin};
  }
  std::vector<DType> dtypes = {d.dtype};
  if (d.all_dtypes) {
    dtypes.clear();
    for (int t = 0; t < kDTypeCount; ++t) dtypes.push_back(DType(t));
  }
  for (DType dtype : dtypes) {
    for (ReduceOp redop : redops) out->push_back({op.kind, redop, dtype});
  }
}

absl::StatusOr<std::vector<BenchOp>> parse_ops(const DataChoice& d) {
  std::vector<BenchOp> out;
  const std::string text = absl::GetFlag(FLAGS_op);
  for (absl::string_view piece : absl::StrSplit(text, ',')) {
    if (piece == "all") {
      for (harness::CollectiveKind k : kAllOps) {
        add_blocks({k, d.redop, d.dtype}, d, &out);
      }
      continue;
    }
    BenchOp op{harness::CollectiveKind::kAllReduce, d.redop, d.dtype};
    ReduceOp named = d.redop;
    if (!harness::parse_collective(base::to_std(piece), &op.kind, &named) ||
        op.kind == harness::CollectiveKind::kBarrier) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--op: \"", piece, "\" is not a collective weft-bench measures"));
    }
    if (!d.redop_given) op.redop = named;  // all_max: max
    add_blocks(op, d, &out);
  }
  return out;
}

absl::StatusOr<std::vector<harness::AlgorithmRequest>> parse_algorithms() {
  std::vector<harness::AlgorithmRequest> out;
  const std::string text = absl::GetFlag(FLAGS_algorithm);
  for (absl::string_view piece : absl::StrSplit(text, ',')) {
    harness::AlgorithmRequest a;
    if (!harness::parse_algorithm_request(base::to_std(piece), &a)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--algorithm: \"", piece,
                       "\" is none of auto, mesh, mesh_exchange, "
                       "mesh_scatter, ring"));
    }
    out.push_back(a);
  }
  return out;
}

absl::Status parse_sizes(BenchOptions* o) {
  absl::StatusOr<uint64_t> min =
      cli::parse_byte_size("minbytes", absl::GetFlag(FLAGS_minbytes));
  if (!min.ok()) return min.status();
  absl::StatusOr<uint64_t> max =
      parse_byte_size("maxbytes", absl::GetFlag(FLAGS_maxbytes));
  if (!max.ok()) return max.status();
  absl::StatusOr<uint64_t> step =
      parse_byte_size("stepbytes", absl::GetFlag(FLAGS_stepbytes));
  if (!step.ok()) return step.status();
  absl::StatusOr<uint64_t> factor = cli::parse_uint(
      "stepfactor", absl::GetFlag(FLAGS_stepfactor), 1, kMaxStepFactor);
  if (!factor.ok()) return factor.status();
  if (*min > *max) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--minbytes (", *min, ") is larger than --maxbytes (", *max, ")"));
  }
  if (*factor == 1 && *step == 0 && *min < *max) {
    return absl::InvalidArgumentError(
        "--stepbytes=0 with --stepfactor=1 never reaches --maxbytes");
  }
  o->min_bytes = *min;
  o->max_bytes = *max;
  o->step_bytes = *step;
  o->step_factor = *factor;
  for (uint64_t size = *min; size <= *max;) {
    if (o->sizes.size() == BenchOptions::kMaxSizes) {
      return absl::InvalidArgumentError(
          absl::StrCat("these sizes make more than ", BenchOptions::kMaxSizes,
                       " rows; raise --stepbytes or --stepfactor"));
    }
    o->sizes.push_back(size);
    const uint64_t next =
        *factor > 1 ? (size == 0 ? 1 : size * *factor) : size + *step;
    if (next <= size) break;  // overflow
    size = next;
  }
  return absl::OkStatus();
}

absl::Status parse_iterations(BenchOptions* o) {
  const bool sim = o->fabric == FabricKind::kSim;
  const std::string warmup = absl::GetFlag(FLAGS_warmup_iters);
  const std::string iters = absl::GetFlag(FLAGS_iters);
  absl::StatusOr<uint64_t> w =
      warmup.empty()
          ? (sim ? kSimWarmup : kGroupWarmup)
          : cli::parse_uint("warmup_iters", warmup, 0, BenchOptions::kMaxIters);
  if (!w.ok()) return w.status();
  absl::StatusOr<uint64_t> n =
      iters.empty() ? (sim ? kSimIters : kGroupIters)
                    : parse_uint("iters", iters, 1, BenchOptions::kMaxIters);
  if (!n.ok()) return n.status();
  absl::StatusOr<uint64_t> check =
      parse_uint("check", absl::GetFlag(FLAGS_check), 0, 1);
  if (!check.ok()) return check.status();
  o->warmup_iters = static_cast<uint32_t>(*w);
  o->iters = static_cast<uint32_t>(*n);
  o->check = *check != 0;
  o->registered = absl::GetFlag(FLAGS_registered);
  return absl::OkStatus();
}

absl::Status parse_data(BenchOptions* o, DataChoice* d) {
  const std::string dtype = absl::GetFlag(FLAGS_datatype);
  d->all_dtypes = dtype == "all";
  if (!d->all_dtypes && !parse_dtype(weft_dtype_name(dtype), &d->dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--datatype=", dtype, " is not a type (see --help)"));
  }
  o->dtype = d->dtype;
  o->all_dtypes = d->all_dtypes;
  const std::string r = absl::GetFlag(FLAGS_redop);
  d->redop_given = !r.empty();
  d->all_redops = r == "all";
  if (d->redop_given && !d->all_redops && !parse_reduce_op(r, &d->redop)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--redop=", r, " is none of sum, prod, max, min, all"));
  }
  absl::StatusOr<uint64_t> root = cli::parse_uint(
      "root", absl::GetFlag(FLAGS_root), 0, Topology::kMaxRanks - 1);
  if (!root.ok()) return root.status();
  o->root = static_cast<uint32_t>(*root);
  return absl::OkStatus();
}

}  // namespace

std::optional<FabricKind> parse_fabric(std::string_view name) {
  for (FabricKind kind :
       {FabricKind::kSim, FabricKind::kVerbs, FabricKind::kTcp}) {
    if (name == fabric_name(kind)) return kind;
  }
  return std::nullopt;
}

const char* fabric_name(FabricKind fabric) {
  switch (fabric) {
    case FabricKind::kSim:
      return "sim";
    case FabricKind::kVerbs:
      return "verbs";
    case FabricKind::kTcp:
      return "tcp";
  }
  return "sim";
}

absl::StatusOr<FabricKind> choose_fabric(std::string_view flag_text,
                                         const char* launched) {
  // Abseil's strings, not std::string_view, on older Abseil.
  const std::string flag(flag_text);
  const std::string env = launched == nullptr ? "" : launched;
  std::optional<FabricKind> from_env;
  if (!env.empty()) {
    from_env = parse_fabric(env);
    // Only a group fabric can be what launch (or a user) chose for this
    // process: never run the simulator in its place.
    if (!from_env || *from_env == FabricKind::kSim) {
      return absl::InvalidArgumentError(absl::StrCat(
          "WEFT_FABRIC=", env,
          " names no fabric weft-bench can join as one rank: set it to tcp "
          "or verbs (weft-sim launch sets it), or unset it to run the "
          "simulator"));
    }
  }
  if (flag.empty()) return from_env.value_or(FabricKind::kSim);
  const std::optional<FabricKind> chosen = parse_fabric(flag);
  if (!chosen) {
    return absl::InvalidArgumentError(
        absl::StrCat("--fabric=", flag, " is none of sim, verbs, tcp"));
  }
  if (from_env && *chosen != *from_env) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--fabric=", flag, ", but WEFT_FABRIC=", env,
        " says this process is one rank of a group on ", env,
        *chosen == FabricKind::kSim
            ? " (weft-sim launch sets it), where --fabric=sim would run every "
              "rank in each process: leave out --fabric"
            : ": leave out --fabric",
        ", or unset WEFT_FABRIC"));
  }
  return *chosen;
}

absl::StatusOr<BenchOptions> bench_options() {
  BenchOptions o;
  absl::StatusOr<FabricKind> fabric =
      choose_fabric(absl::GetFlag(FLAGS_fabric), std::getenv("WEFT_FABRIC"));
  if (!fabric.ok()) return fabric.status();
  o.fabric = *fabric;
  if (absl::Status s = parse_sizes(&o); !s.ok()) return s;
  if (absl::Status s = parse_iterations(&o); !s.ok()) return s;
  DataChoice data;
  if (absl::Status s = parse_data(&o, &data); !s.ok()) return s;
  absl::StatusOr<std::vector<BenchOp>> ops = parse_ops(data);
  if (!ops.ok()) return ops.status();
  o.ops = *std::move(ops);
  absl::StatusOr<std::vector<harness::AlgorithmRequest>> algorithms =
      parse_algorithms();
  if (!algorithms.ok()) return algorithms.status();
  o.algorithms = *std::move(algorithms);
  absl::StatusOr<bool> recovery =
      cli::parse_on_off("recovery", absl::GetFlag(FLAGS_recovery));
  if (!recovery.ok()) return recovery.status();
  o.group.recovery.enabled = *recovery;
  absl::StatusOr<uint64_t> send_queue =
      cli::parse_byte_size("send_queue", absl::GetFlag(FLAGS_send_queue));
  if (!send_queue.ok()) return send_queue.status();
  o.group.send_queue_bytes = *send_queue;
  if (absl::Status s = o.group.validate(); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--send_queue: ", s.message()));
  }
  o.json_path = absl::GetFlag(FLAGS_json);
  o.plot_path = absl::GetFlag(FLAGS_plot);
  // The chart is SVG: a .png (or any other name) would hold SVG text that
  // viewers refuse by the name.
  if (!o.plot_path.empty() && !absl::EndsWithIgnoreCase(o.plot_path, ".svg")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--plot=", o.plot_path,
        ": weft-bench draws the chart as SVG only; name the file FILE.svg "
        "(convert it afterwards for another format)"));
  }
  o.model = absl::GetFlag(FLAGS_model);
  o.model_only = absl::GetFlag(FLAGS_model_only);
  if (o.model_only && !(o.json_path.empty() && o.plot_path.empty())) {
    return absl::InvalidArgumentError(
        "--model_only measures nothing, so --json and --plot would have no "
        "results to hold: leave them out, or use --model to measure and "
        "print the model beside");
  }
  return o;
}

}  // namespace weft::tools::weft_bench
