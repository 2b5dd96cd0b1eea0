#include "tools/weft-sim/study_plan.h"

namespace weft::tools::weft_sim {
namespace {

using harness::CollectiveKind;
using harness::CollectiveSpec;

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
// Every collective at these sizes; the all-sum also at kLargestBytes (each
// 64 MiB run touches about a gigabyte, so one per topology keeps the study
// well under a minute).
constexpr uint64_t kSizes[] = {4 * kKiB, 64 * kKiB, 1 * kMiB, 16 * kMiB};
constexpr uint64_t kLargestBytes = 64 * kMiB;

constexpr CollectiveKind kSweptKinds[] = {
    CollectiveKind::kAllReduce,     CollectiveKind::kAllGather,
    CollectiveKind::kReduceScatter, CollectiveKind::kBroadcast,
    CollectiveKind::kReduce,        CollectiveKind::kAllToAll,
    CollectiveKind::kSendRecv};

CollectiveSpec spec(CollectiveKind kind, uint64_t bytes, DType dtype,
                    ReduceOp op = ReduceOp::kSum) {
  CollectiveSpec s;
  s.kind = kind;
  s.bytes = bytes;
  s.dtype = dtype;
  s.op = op;
  return s;
}

}  // namespace

std::vector<CollectiveSpec> study_plan() {
  std::vector<CollectiveSpec> out;
  for (CollectiveKind kind : kSweptKinds) {
    for (uint64_t bytes : kSizes) {
      out.push_back(spec(kind, bytes, DType::kFloat32));
    }
    if (kind == CollectiveKind::kAllReduce) {
      out.push_back(spec(kind, kLargestBytes, DType::kFloat32));
    }
  }
  out.push_back(spec(CollectiveKind::kAllReduce, 64 * kKiB, DType::kFloat64,
                     ReduceOp::kProd));
  out.push_back(spec(CollectiveKind::kAllReduce, 1 * kMiB, DType::kInt32,
                     ReduceOp::kMax));
  out.push_back(spec(CollectiveKind::kAllReduce, 1 * kMiB, DType::kBFloat16,
                     ReduceOp::kMin));
  out.push_back(spec(CollectiveKind::kBarrier, 0, DType::kUint8));
  return out;
}

sim::FaultRates study_fault_rates() {
  sim::FaultRates rates;
  rates.loss = 1e-4;
  rates.duplicate = 1e-4;
  rates.reorder = 1e-4;
  rates.error_completion = 5e-5;
  return rates;
}

}  // namespace weft::tools::weft_sim
