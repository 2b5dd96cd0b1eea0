// Group::start: from a validated call to a queued operation: the route
// (algorithm and striping over cables), the frame identity every peer
// checks, the plan, and the runner the engine executes.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/algorithms/algorithms.h"
#include "collectives/engine/engine.h"
#include "collectives/engine/user_memory.h"
#include "collectives/group.h"
#include "collectives/internal/op_call.h"
#include "fabric/errors.h"
#include "fabric/slab.h"

namespace weft {

using collectives::internal::OpKind;

namespace {

absl::Status refuse(uint32_t world_rank, const std::string& message) {
  return make_error(
      absl::StatusCode::kInvalidArgument,
      ErrorPlace{world_rank, kNoPeer, "", ErrorCause::kBadInput},
      message + "; nothing was sent and the group is still usable");
}

}  // namespace

absl::StatusOr<Group::RouteChoice> Group::route(
    const collectives::internal::OpCall& call, uint64_t bytes) const {
  const std::string what =
      collectives::internal::op_kind_name(call.kind, call.op);
  RouteChoice r;
  r.lanes = mesh_cables_;
  if (call.kind == OpKind::kSendRecv) {
    r.lanes = cables(rank_, call.root);
    if (r.lanes == 0) {
      return refuse(world_rank(rank_),
                    absl::StrFormat("%s: ranks %u and %u are not joined by a "
                                    "cable, and send/recv is not relayed; "
                                    "use a mesh topology or send to a "
                                    "neighbour",
                                    what, rank_, call.root));
    }
    r.algorithm = Algorithm::kAuto;  // direct, over every cable
    return r;
  }
  if (size() == 1) return r;
  Algorithm want = call.options.algorithm != Algorithm::kAuto
                       ? call.options.algorithm
                       : options_.algorithm;
  if (want == Algorithm::kAuto) {
    want = mesh_cables_ == 0 ? Algorithm::kRing
           : bytes <= mesh_exchange_limit(options_, size())
               ? Algorithm::kMeshExchange
               : Algorithm::kMeshScatter;
  }
  const bool ring = want == Algorithm::kRing;
  if ((ring ? ring_cables_ : mesh_cables_) == 0) {
    return refuse(
        world_rank(rank_),
        absl::StrFormat("%s: algorithm %s needs %s, which this "
                        "group's topology lacks",
                        what, algorithm_name(want),
                        ring ? "a cable between each pair of "
                               "consecutive ranks"
                             : "a cable between every pair of ranks"));
  }
  r.algorithm = want;
  r.lanes = ring ? ring_cables_ : mesh_cables_;
  r.directions = ring && size() > 2 ? options_.ring_directions : 1;
  return r;
}

collectives::internal::OpIdentity Group::identity(
    const collectives::internal::OpCall& call, uint64_t bytes,
    Algorithm algorithm) {
  collectives::internal::OpIdentity id;
  id.kind = static_cast<uint8_t>(call.kind);
  id.dtype = static_cast<uint8_t>(call.dtype);
  id.reduce_op = collectives::internal::op_kind_reduces(call.kind)
                     ? static_cast<uint8_t>(call.op)
                     : 0;
  id.algorithm = static_cast<uint8_t>(algorithm);
  id.group_id = group_id_;
  id.total_bytes = bytes;
  if (call.kind == OpKind::kSendRecv) {
    // Each direction of each pair counts its own calls.
    id.op_seq =
        call.sending ? sent_seq_[call.root]++ : recv_seq_[call.root]++;
    id.root = call.sending ? rank_ : call.root;
  } else {
    id.op_seq = op_seq_++;
    const bool rooted =
        call.kind == OpKind::kBroadcast || call.kind == OpKind::kReduce;
    id.root = rooted ? call.root : 0;
  }
  return id;
}

Operation Group::start(const collectives::internal::OpCall& call) {
  absl::StatusOr<collectives::internal::PlanInput> input =
      collectives::internal::check_call(call, rank_, size(), world_rank(rank_));
  if (!input.ok()) {
    return Operation(collectives::internal::Engine::finished(input.status()),
                     engine_);
  }
  absl::StatusOr<RouteChoice> r = route(call, input->bytes);
  if (!r.ok())
    return Operation(collectives::internal::Engine::finished(r.status()),
                     engine_);
  const collectives::internal::Striping striping{r->lanes, r->directions};

  collectives::internal::OpIdentity id =
      identity(call, input->bytes, r->algorithm);
  id.chunk_bytes = collectives::internal::chunk_payload_bytes(
      collectives::internal::nominal_item_bytes(*input, r->algorithm, striping),
      r->algorithm, options_.max_frame_bytes);
  collectives::internal::Engine* engine = engine_.get();
  // Buffers inside registered user memory are sent from directly.
  collectives::internal::OpBuffers buffers{call.in, call.out};
  collectives::internal::UserMemory* user = engine_->user_memory().get();
  if (user != nullptr && user->size() > 0) {
    buffers.in_slab = user->find(call.in);
    buffers.out_slab = user->find(call.out);
  }
  auto runner = std::make_unique<collectives::internal::OpRunner>(
      collectives::internal::build_plan(*input, r->algorithm, striping), id,
      call.dtype, call.op, buffers, world_rank(rank_),
      [&](uint32_t peer, uint32_t cable) {
        return engine->lane(world_rank(peer), cable);
      });
  if (user != nullptr && user->size() > 0) {
    const Slab* slabs[] = {buffers.in_slab, buffers.out_slab};
    runner->keep(user->use(slabs));
  }
  const TimeNs timeout_ns = call.options.timeout_ns > 0
                                ? call.options.timeout_ns
                                : options_.timeout_ns;
  return Operation(engine_->submit(std::move(runner), timeout_ns, epoch_),
                   engine_);
}

}  // namespace weft
