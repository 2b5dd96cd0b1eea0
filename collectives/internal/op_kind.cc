#include "collectives/internal/op_kind.h"

#include "absl/strings/str_cat.h"
#include "base/absl_compat.h"

namespace weft::collectives::internal {

std::string op_kind_name(uint8_t kind, uint8_t reduce_op) {
  const auto op = static_cast<ReduceOp>(reduce_op);
  if (kind == kAgreeKind) return "agree";
  switch (static_cast<OpKind>(kind)) {
    case OpKind::kAllReduce:
      return absl::StrCat("all_", base::to_absl(reduce_op_name(op)));
    case OpKind::kAllGather:
      return "all_gather";
    case OpKind::kReduceScatter:
      return absl::StrCat(base::to_absl(reduce_op_name(op)), "_scatter");
    case OpKind::kBroadcast:
      return "broadcast";
    case OpKind::kReduce:
      return absl::StrCat("reduce_", base::to_absl(reduce_op_name(op)));
    case OpKind::kAllToAll:
      return "all_to_all";
    case OpKind::kSendRecv:
      return "send/recv";
    case OpKind::kBarrier:
      return "barrier";
  }
  return absl::StrCat("unknown collective ", kind);
}

bool op_kind_reduces(OpKind kind) {
  return kind == OpKind::kAllReduce || kind == OpKind::kReduceScatter ||
         kind == OpKind::kReduce;
}

}  // namespace weft::collectives::internal
