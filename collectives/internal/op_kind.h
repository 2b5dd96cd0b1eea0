// OpKind: which collective an operation is, as carried in frame headers.
#ifndef WEFT_COLLECTIVES_INTERNAL_OP_KIND_H_
#define WEFT_COLLECTIVES_INTERNAL_OP_KIND_H_

#include <cstdint>
#include <string>

#include "collectives/dtype.h"

namespace weft::collectives::internal {

enum class OpKind : uint8_t {
  kAllReduce = 1,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,
  kBarrier,
};
// The kind byte of the frames of Group::agree() and shrink()'s agreement
// (engine/agreement.h): not a collective, so no OpKind (no plan has one).
inline constexpr uint8_t kAgreeKind = 16;

// "all_sum" (all-reduce with its op), "all_gather", "sum_scatter", ...
std::string op_kind_name(uint8_t kind, uint8_t reduce_op);
inline std::string op_kind_name(OpKind kind, ReduceOp op = ReduceOp::kSum) {
  return op_kind_name(static_cast<uint8_t>(kind), static_cast<uint8_t>(op));
}
// True for kinds whose frames are reduced into the destination.
bool op_kind_reduces(OpKind kind);

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_INTERNAL_OP_KIND_H_
