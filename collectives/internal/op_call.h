// OpCall: one collective call's arguments as the Group received them, and
// their validation: every check a call's arguments must pass before anything
// is sent, each failure an InvalidArgument (cause kBadInput) saying what is
// wrong and where.
#ifndef WEFT_COLLECTIVES_INTERNAL_OP_CALL_H_
#define WEFT_COLLECTIVES_INTERNAL_OP_CALL_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"
#include "collectives/dtype.h"
#include "collectives/group_options.h"
#include "collectives/algorithms/algorithms.h"
#include "collectives/internal/op_kind.h"

namespace weft::collectives::internal {

struct OpCall {
  OpKind kind = OpKind::kAllReduce;
  DType dtype = DType::kUint8;
  ReduceOp op = ReduceOp::kSum;
  uint32_t root = 0;  // broadcast, reduce; send/recv: the peer
  bool sending = false;
  std::span<const std::byte> in;
  std::span<std::byte> out;
  CallOptions options;
};

// The PlanInput for a valid call; InvalidArgument naming the call, rank
// (`world_rank`) and problem otherwise.
absl::StatusOr<PlanInput> check_call(const OpCall& call, uint32_t rank,
                                     uint32_t size, uint32_t world_rank);

}  // namespace weft::collectives::internal

#endif  // WEFT_COLLECTIVES_INTERNAL_OP_CALL_H_
