#include "collectives/group.h"

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "collectives/algorithms/algorithms.h"
#include "collectives/engine/engine.h"
#include "collectives/engine/user_memory.h"
#include "collectives/internal/op_call.h"
#include "fabric/errors.h"

namespace weft {

using collectives::internal::OpCall;
using collectives::internal::OpKind;

namespace {

// FNV-1a over the members' world ranks, four bytes each, and then, for a
// group made by shrink() (epoch above 0), over the epoch: the same on every
// member, and different for groups over different ranks (frames of a
// sub-group are never taken for the parent's) and for a shrunk group and
// one split over the same ranks before.
uint32_t group_id_of(const Group& group, uint32_t epoch) {
  uint32_t h = 2166136261u;
  auto mix = [&h](uint32_t v) {
    for (int i = 0; i < 4; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 16777619u;
  };
  for (uint32_t r = 0; r < group.size(); ++r) mix(group.world_rank(r));
  if (epoch > 0) mix(epoch);
  return h;
}

bool is_whole_world(const std::vector<uint32_t>& members,
                    const Topology& topology) {
  if (members.size() != topology.ranks()) return false;
  for (uint32_t r = 0; r < members.size(); ++r) {
    if (members[r] != r) return false;
  }
  return true;
}

}  // namespace

Group::Group(std::shared_ptr<collectives::internal::Engine> engine,
             std::shared_ptr<const Topology> topology,
             std::vector<uint32_t> members, uint32_t rank, GroupOptions options)
    : engine_(std::move(engine)),
      topology_(std::move(topology)),
      members_(std::move(members)),
      size_(members_.empty() ? topology_->ranks()
                             : static_cast<uint32_t>(members_.size())),
      rank_(rank),
      options_(options) {
  if (is_whole_world(members_, *topology_))
    std::vector<uint32_t>().swap(members_);
  epoch_ = engine_->epoch();
  group_id_ = group_id_of(*this, epoch_);
  engine_->register_group(group_id_);
  const uint32_t n = size();
  mesh_cables_ = n == 1 ? 1 : Topology::kMaxCables;
  ring_cables_ = mesh_cables_;
  for (uint32_t a = 0; a < n && mesh_cables_ > 0; ++a) {
    for (uint32_t b = a + 1; b < n && mesh_cables_ > 0; ++b) {
      mesh_cables_ = std::min(mesh_cables_, cables(a, b));
    }
  }
  for (uint32_t a = 0; a < n && n > 1; ++a) {
    ring_cables_ = std::min(ring_cables_, cables(a, (a + 1) % n));
  }
}

Group::~Group() = default;

uint32_t Group::cables(uint32_t a, uint32_t b) const {
  return static_cast<uint32_t>(
      topology_->devices(world_rank(a), world_rank(b)).size());
}

absl::Status Group::all_sum(ConstBytes in, Bytes out, DType dtype,
                            CallOptions c) {
  return all_reduce(in, out, dtype, ReduceOp::kSum, c);
}
absl::Status Group::all_prod(ConstBytes in, Bytes out, DType dtype,
                             CallOptions c) {
  return all_reduce(in, out, dtype, ReduceOp::kProd, c);
}
absl::Status Group::all_max(ConstBytes in, Bytes out, DType dtype,
                            CallOptions c) {
  return all_reduce(in, out, dtype, ReduceOp::kMax, c);
}
absl::Status Group::all_min(ConstBytes in, Bytes out, DType dtype,
                            CallOptions c) {
  return all_reduce(in, out, dtype, ReduceOp::kMin, c);
}
absl::Status Group::all_reduce(ConstBytes in, Bytes out, DType dtype,
                               ReduceOp op, CallOptions c) {
  return all_reduce_async(in, out, dtype, op, c).wait();
}
absl::Status Group::all_gather(ConstBytes in, Bytes out, DType dtype,
                               CallOptions c) {
  return all_gather_async(in, out, dtype, c).wait();
}
absl::Status Group::sum_scatter(ConstBytes in, Bytes out, DType dtype,
                                CallOptions c) {
  return reduce_scatter(in, out, dtype, ReduceOp::kSum, c);
}
absl::Status Group::reduce_scatter(ConstBytes in, Bytes out, DType dtype,
                                   ReduceOp op, CallOptions c) {
  return reduce_scatter_async(in, out, dtype, op, c).wait();
}
absl::Status Group::broadcast(ConstBytes in, Bytes out, DType dtype,
                              uint32_t root, CallOptions c) {
  return broadcast_async(in, out, dtype, root, c).wait();
}
absl::Status Group::reduce(ConstBytes in, Bytes out, DType dtype, ReduceOp op,
                           uint32_t root, CallOptions c) {
  return reduce_async(in, out, dtype, op, root, c).wait();
}
absl::Status Group::all_to_all(ConstBytes in, Bytes out, DType dtype,
                               CallOptions c) {
  return all_to_all_async(in, out, dtype, c).wait();
}
absl::Status Group::send(ConstBytes in, DType dtype, uint32_t peer,
                         CallOptions c) {
  return send_async(in, dtype, peer, c).wait();
}
absl::Status Group::recv(Bytes out, DType dtype, uint32_t peer, CallOptions c) {
  return recv_async(out, dtype, peer, c).wait();
}
absl::Status Group::barrier(CallOptions c) { return barrier_async(c).wait(); }

Operation Group::all_reduce_async(ConstBytes in, Bytes out, DType dtype,
                                  ReduceOp op, CallOptions c) {
  return start({OpKind::kAllReduce, dtype, op, 0, false, in, out, c});
}
Operation Group::all_gather_async(ConstBytes in, Bytes out, DType dtype,
                                  CallOptions c) {
  return start(
      {OpKind::kAllGather, dtype, ReduceOp::kSum, 0, false, in, out, c});
}
Operation Group::reduce_scatter_async(ConstBytes in, Bytes out, DType dtype,
                                      ReduceOp op, CallOptions c) {
  return start({OpKind::kReduceScatter, dtype, op, 0, false, in, out, c});
}
Operation Group::broadcast_async(ConstBytes in, Bytes out, DType dtype,
                                 uint32_t root, CallOptions c) {
  return start(
      {OpKind::kBroadcast, dtype, ReduceOp::kSum, root, false, in, out, c});
}
Operation Group::reduce_async(ConstBytes in, Bytes out, DType dtype,
                              ReduceOp op, uint32_t root, CallOptions c) {
  return start({OpKind::kReduce, dtype, op, root, false, in, out, c});
}
Operation Group::all_to_all_async(ConstBytes in, Bytes out, DType dtype,
                                  CallOptions c) {
  return start(
      {OpKind::kAllToAll, dtype, ReduceOp::kSum, 0, false, in, out, c});
}
Operation Group::send_async(ConstBytes in, DType dtype, uint32_t peer,
                            CallOptions c) {
  return start(
      {OpKind::kSendRecv, dtype, ReduceOp::kSum, peer, true, in, {}, c});
}
Operation Group::recv_async(Bytes out, DType dtype, uint32_t peer,
                            CallOptions c) {
  return start(
      {OpKind::kSendRecv, dtype, ReduceOp::kSum, peer, false, {}, out, c});
}
Operation Group::barrier_async(CallOptions c) {
  return start(
      {OpKind::kBarrier, DType::kUint8, ReduceOp::kSum, 0, false, {}, {}, c});
}

absl::StatusOr<RegisteredMemory> Group::register_memory(
    std::span<std::byte> memory) {
  const ErrorPlace place{world_rank(rank_), kNoPeer, "", ErrorCause::kBadInput};
  if (memory.empty()) {
    return make_error(absl::StatusCode::kInvalidArgument, place,
                      "register_memory: the memory is empty; register a "
                      "buffer of at least one byte");
  }
  const std::shared_ptr<collectives::internal::UserMemory>& user =
      engine_->user_memory();
  if (user == nullptr) {
    return make_error(absl::StatusCode::kFailedPrecondition, place,
                      "register_memory: this group has no fabric to register "
                      "with");
  }
  absl::StatusOr<uint64_t> id = user->add(memory);
  if (!id.ok()) return id.status();
  return RegisteredMemory(user, *id, memory);
}

Progress Group::progress() { return engine_->progress(); }
void Group::abort() { engine_->abort(); }
void Group::revoke(std::string_view reason) {
  engine_->revoke(std::string(reason));
}
void Group::watch(std::function<absl::Status()> check) {
  engine_->watch(std::move(check), kWatchIntervalNs);
}
absl::Status Group::health() const { return engine_->health(); }

GroupCounters Group::counters() const { return engine_->counters(); }

absl::StatusOr<std::unique_ptr<Group>> Group::split(
    std::span<const uint32_t> ranks) const {
  const ErrorPlace place{world_rank(rank_), kNoPeer, "", ErrorCause::kBadInput};
  std::vector<bool> seen(size());
  std::vector<uint32_t> members;
  uint32_t mine = size();
  for (uint32_t r : ranks) {
    if (r >= size() || seen[r]) {
      return make_error(
          absl::StatusCode::kInvalidArgument, place,
          absl::StrFormat("split: rank %u is %s; list each of "
                          "ranks 0..%u at most once",
                          r, r >= size() ? "out of range" : "listed twice",
                          size() - 1));
    }
    seen[r] = true;
    if (r == rank_) mine = static_cast<uint32_t>(members.size());
    members.push_back(world_rank(r));
  }
  if (mine == size()) {
    return make_error(absl::StatusCode::kInvalidArgument, place,
                      absl::StrFormat("split: rank %u is not in the list; only "
                                      "members call split",
                                      rank_));
  }
  return std::unique_ptr<Group>(
      new Group(engine_, topology_, std::move(members), mine, options_));
}

}  // namespace weft
