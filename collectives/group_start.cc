// Group::start: from a validated call to a queued operation (algorithm
// choice, striping over cables, plan, frame size, frame identity).
#include "absl/strings/str_format.h"
#include "collectives/group.h"
#include "collectives/internal/algorithms.h"
#include "collectives/internal/engine.h"
#include "collectives/internal/op_call.h"
#include "fabric/errors.h"

namespace weft {

using internal::OpKind;

namespace {

struct Route {
  Algorithm algorithm = Algorithm::kAuto;
  internal::Striping striping;
};

absl::Status refuse(uint32_t world_rank, const std::string& message) {
  return make_error(
      absl::StatusCode::kInvalidArgument,
      ErrorPlace{world_rank, kNoPeer, "", ErrorCause::kBadInput},
      message + "; nothing was sent and the group is still usable");
}

}  // namespace

Operation Group::start(const internal::OpCall& call) {
  const uint32_t me = members_[rank_];
  absl::StatusOr<internal::PlanInput> input =
      internal::check_call(call, rank_, size(), me);
  if (!input.ok()) {
    return Operation(internal::Engine::finished(input.status()), engine_);
  }
  const std::string what = internal::op_kind_name(call.kind, call.op);
  Route route;
  route.striping.lanes = mesh_cables_;
  if (call.kind == OpKind::kSendRecv) {
    route.striping.lanes = cables(rank_, call.root);
    if (route.striping.lanes == 0) {
      return Operation(
          internal::Engine::finished(refuse(
              me, absl::StrFormat("%s: ranks %u and %u are not joined by a "
                                  "cable, and send/recv is not relayed; use "
                                  "a mesh topology or send to a neighbour",
                                  what, rank_, call.root))),
          engine_);
    }
  } else if (size() > 1) {
    Algorithm want = call.options.algorithm != Algorithm::kAuto
                         ? call.options.algorithm
                         : options_.algorithm;
    if (want == Algorithm::kAuto) {
      want = mesh_cables_ > 0
                 ? (input->bytes <= options_.mesh_exchange_max_bytes
                        ? Algorithm::kMeshExchange
                        : Algorithm::kMeshScatter)
                 : Algorithm::kRing;
    }
    const bool ring = want == Algorithm::kRing;
    if ((ring ? ring_cables_ : mesh_cables_) == 0) {
      return Operation(
          internal::Engine::finished(refuse(
              me,
              absl::StrFormat("%s: algorithm %s needs %s, which this "
                              "group's topology lacks",
                              what, algorithm_name(want),
                              ring ? "a cable between each pair of "
                                     "consecutive ranks"
                                   : "a cable between every pair of ranks"))),
          engine_);
    }
    route.algorithm = want;
    route.striping.lanes = ring ? ring_cables_ : mesh_cables_;
    route.striping.directions =
        ring && size() > 2 ? options_.ring_directions : 1;
  } else {
    route.algorithm = Algorithm::kMeshExchange;
  }

  internal::OpIdentity id;
  id.kind = static_cast<uint8_t>(call.kind);
  id.dtype = static_cast<uint8_t>(call.dtype);
  id.reduce_op =
      internal::op_kind_reduces(call.kind) ? static_cast<uint8_t>(call.op) : 0;
  id.algorithm = static_cast<uint8_t>(route.algorithm);
  id.group_id = group_id_;
  id.total_bytes = input->bytes;
  if (call.kind == OpKind::kSendRecv) {
    id.op_seq = call.sending ? sent_seq_[call.root]++ : recv_seq_[call.root]++;
    id.root = call.sending ? rank_ : call.root;
  } else {
    id.op_seq = op_seq_++;
    id.root = (call.kind == OpKind::kBroadcast || call.kind == OpKind::kReduce)
                  ? call.root
                  : 0;
  }
  id.chunk_bytes = internal::chunk_payload_bytes(
      internal::nominal_item_bytes(*input, route.algorithm, route.striping),
      options_.max_frame_bytes);

  internal::Plan plan =
      internal::build_plan(*input, route.algorithm, route.striping);
  internal::Engine* engine = engine_.get();
  const std::vector<uint32_t>& members = members_;
  auto runner = std::make_unique<internal::OpRunner>(
      std::move(plan), id, call.dtype, call.op,
      internal::OpBuffers{call.in.data(), call.out.data()}, me,
      [&](uint32_t peer, uint32_t cable) {
        return engine->lane(members[peer], cable);
      });
  const TimeNs timeout_ns = call.options.timeout_ns > 0
                                ? call.options.timeout_ns
                                : options_.timeout_ns;
  return Operation(engine_->submit(std::move(runner), timeout_ns), engine_);
}

}  // namespace weft
