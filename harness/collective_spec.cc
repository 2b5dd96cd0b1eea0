#include "harness/collective_spec.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace weft::harness {
namespace {

constexpr std::array<std::string_view, kCollectiveKindCount> kKindNames = {
    "all_reduce", "all_gather", "reduce_scatter", "broadcast",
    "reduce",     "all_to_all", "sendrecv",       "barrier"};

constexpr std::array<std::string_view, 5> kRequestNames = {
    "auto", "mesh", "mesh_exchange", "mesh_scatter", "ring"};

struct Alias {
  std::string_view name;
  CollectiveKind kind;
  bool sets_op;
  ReduceOp op;
};
constexpr Alias kAliases[] = {
    {"all_sum", CollectiveKind::kAllReduce, true, ReduceOp::kSum},
    {"all_prod", CollectiveKind::kAllReduce, true, ReduceOp::kProd},
    {"all_max", CollectiveKind::kAllReduce, true, ReduceOp::kMax},
    {"all_min", CollectiveKind::kAllReduce, true, ReduceOp::kMin},
    {"sum_scatter", CollectiveKind::kReduceScatter, true, ReduceOp::kSum},
    {"send_recv", CollectiveKind::kSendRecv, false, ReduceOp::kSum},
    {"send/recv", CollectiveKind::kSendRecv, false, ReduceOp::kSum},
    {"alltoall", CollectiveKind::kAllToAll, false, ReduceOp::kSum},
};

double bus_factor_of(CollectiveKind kind, uint32_t n) {
  const double part = static_cast<double>(n - 1) / n;
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return 2 * part;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll:
      return part;
    case CollectiveKind::kBroadcast:
    case CollectiveKind::kReduce:
    case CollectiveKind::kSendRecv:
      return 1;
    case CollectiveKind::kBarrier:
      return 0;
  }
  return 0;
}

}  // namespace

std::string_view collective_name(CollectiveKind kind) {
  const auto i = static_cast<size_t>(kind);
  return i < kKindNames.size() ? kKindNames[i] : "unknown";
}

std::string_view algorithm_request_name(AlgorithmRequest request) {
  const auto i = static_cast<size_t>(request);
  return i < kRequestNames.size() ? kRequestNames[i] : "unknown";
}

bool parse_algorithm_request(std::string_view text, AlgorithmRequest* out) {
  for (size_t i = 0; i < kRequestNames.size(); ++i) {
    if (kRequestNames[i] == text) {
      *out = static_cast<AlgorithmRequest>(i);
      return true;
    }
  }
  return false;
}

bool reduces(CollectiveKind kind) {
  return kind == CollectiveKind::kAllReduce ||
         kind == CollectiveKind::kReduceScatter ||
         kind == CollectiveKind::kReduce;
}

bool has_root(CollectiveKind kind) {
  return kind == CollectiveKind::kBroadcast || kind == CollectiveKind::kReduce;
}

std::string api_name(const CollectiveSpec& spec) {
  const std::string op(reduce_op_name(spec.op));
  switch (spec.kind) {
    case CollectiveKind::kAllReduce:
      return "all_" + op;
    case CollectiveKind::kReduceScatter:
      return spec.op == ReduceOp::kSum ? "sum_scatter" : "reduce_scatter/" + op;
    case CollectiveKind::kReduce:
      return "reduce/" + op;
    case CollectiveKind::kSendRecv:
      return "send/recv";
    default:
      return std::string(collective_name(spec.kind));
  }
}

bool parse_collective(std::string_view text, CollectiveKind* kind,
                      ReduceOp* op) {
  for (size_t i = 0; i < kKindNames.size(); ++i) {
    if (kKindNames[i] == text) {
      *kind = static_cast<CollectiveKind>(i);
      return true;
    }
  }
  for (const Alias& a : kAliases) {
    if (a.name != text) continue;
    *kind = a.kind;
    if (a.sets_op) *op = a.op;
    return true;
  }
  return false;
}

absl::StatusOr<CollectiveShape> shape_of(const CollectiveSpec& spec,
                                         uint32_t ranks) {
  if (!is_valid(spec.dtype)) {
    return absl::InvalidArgumentError("unknown dtype");
  }
  if (reduces(spec.kind) && !is_valid(spec.op)) {
    return absl::InvalidArgumentError("unknown reduction op");
  }
  if (ranks == 0) return absl::InvalidArgumentError("a group has no ranks");
  if (has_root(spec.kind) && spec.root >= ranks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "root %u is outside the group of %u ranks", spec.root, ranks));
  }
  if (spec.kind == CollectiveKind::kSendRecv && ranks < 2) {
    return absl::InvalidArgumentError("send/recv needs at least 2 ranks");
  }
  const uint64_t elem = dtype_size(spec.dtype);
  CollectiveShape s;
  s.ranks = ranks;
  s.bus_factor = bus_factor_of(spec.kind, ranks);
  switch (spec.kind) {
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll: {
      const uint64_t per_block = spec.bytes / elem / ranks;  // elements
      s.block_bytes = per_block * elem;
      s.size_bytes = s.block_bytes * ranks;
      s.count = per_block;
      const bool gather = spec.kind == CollectiveKind::kAllGather;
      const bool scatter = spec.kind == CollectiveKind::kReduceScatter;
      s.in_bytes = gather ? s.block_bytes : s.size_bytes;
      s.out_bytes = scatter ? s.block_bytes : s.size_bytes;
      return s;
    }
    case CollectiveKind::kBarrier:
      return s;
    default:
      s.count = spec.bytes / elem;
      s.size_bytes = s.count * elem;
      s.in_bytes = s.size_bytes;
      s.out_bytes = s.size_bytes;
      return s;
  }
}

uint64_t out_bytes_of(const CollectiveSpec& spec, const CollectiveShape& shape,
                      uint32_t rank) {
  if (spec.kind == CollectiveKind::kReduce && rank != spec.root) return 0;
  return shape.out_bytes;
}

Algorithm resolve_algorithm(const CollectiveSpec& spec,
                            const CollectiveShape& shape, bool full_mesh,
                            const GroupOptions& options) {
  if (spec.kind == CollectiveKind::kSendRecv) return Algorithm::kAuto;
  const uint64_t message = spec.kind == CollectiveKind::kAllGather ||
                                   spec.kind == CollectiveKind::kReduceScatter
                               ? shape.block_bytes
                               : shape.size_bytes;
  const Algorithm mesh = message <= mesh_exchange_limit(options, shape.ranks)
                             ? Algorithm::kMeshExchange
                             : Algorithm::kMeshScatter;
  switch (spec.algorithm) {
    case AlgorithmRequest::kAuto:
      return full_mesh ? mesh : Algorithm::kRing;
    case AlgorithmRequest::kMesh:
      return mesh;
    case AlgorithmRequest::kMeshExchange:
      return Algorithm::kMeshExchange;
    case AlgorithmRequest::kMeshScatter:
      return Algorithm::kMeshScatter;
    case AlgorithmRequest::kRing:
      return Algorithm::kRing;
  }
  return Algorithm::kAuto;
}

std::string_view resolved_algorithm_name(Algorithm algorithm) {
  return algorithm == Algorithm::kAuto ? "direct" : algorithm_name(algorithm);
}

}  // namespace weft::harness
