#include "harness/rank_call.h"

#include <cstddef>
#include <span>
#include <utility>

#include "absl/status/statusor.h"

namespace weft::harness {
namespace {

// Output bytes no operation has written yet.
constexpr std::byte kPoison{0xcd};

}  // namespace

RankCall::RankCall(const Reference& reference, uint32_t rank,
                   RankBuffers recycled)
    : spec_(reference.spec()),
      rank_(rank),
      ranks_(reference.ranks()),
      in_storage_(std::move(recycled.in)),
      out_storage_(std::move(recycled.out)) {
  const std::byte* const in_before = in_storage_.data();
  const std::byte* const out_before = out_storage_.data();
  // Sizes from 0: a layout that leaves a buffer out leaves it empty.
  in_storage_.clear();
  out_storage_.clear();
  if (spec_.in_place) {
    lay_out_in_place(reference);
  } else {
    lay_out_out_of_place(reference);
  }
  // A buffer that moved was allocated (a recycled one only grows).
  allocations_ = (in_storage_.data() != in_before ? 1 : 0) +
                 (out_storage_.data() != out_before ? 1 : 0);
}

RankBuffers RankCall::release_buffers() {
  in_ = {};
  out_ = {};
  return RankBuffers{std::move(in_storage_), std::move(out_storage_)};
}

void RankCall::lay_out_out_of_place(const Reference& reference) {
  const CollectiveShape& shape = reference.shape();
  const bool reads_input =
      spec_.kind != CollectiveKind::kBroadcast || rank_ == spec_.root;
  if (reads_input) {
    in_storage_.resize(shape.in_bytes);
    reference.fill_input(rank_, in_storage_);
  }
  out_storage_.assign(out_bytes_of(spec_, shape, rank_), kPoison);
  in_ = in_storage_;
  out_ = out_storage_;
}

void RankCall::lay_out_in_place(const Reference& reference) {
  const CollectiveShape& shape = reference.shape();
  const uint64_t block = shape.block_bytes;
  in_storage_.assign(shape.size_bytes, kPoison);
  const std::span<std::byte> whole(in_storage_);
  switch (spec_.kind) {
    case CollectiveKind::kAllGather: {
      const std::span<std::byte> mine = whole.subspan(rank_ * block, block);
      reference.fill_input(rank_, mine);
      in_ = mine;
      out_ = whole;
      return;
    }
    case CollectiveKind::kReduceScatter:
      reference.fill_input(rank_, whole);
      in_ = whole;
      out_ = whole.subspan(rank_ * block, block);
      return;
    case CollectiveKind::kBroadcast:
      if (rank_ == spec_.root) reference.fill_input(rank_, whole);
      in_ = whole;
      out_ = whole;
      return;
    case CollectiveKind::kReduce:
      reference.fill_input(rank_, whole);
      in_ = whole;
      out_ = rank_ == spec_.root ? whole : std::span<std::byte>();
      return;
    default:  // all-reduce, all-to-all; barrier has no bytes
      reference.fill_input(rank_, whole);
      in_ = whole;
      out_ = whole;
      return;
  }
}

std::vector<Starter> RankCall::starters(const CallOptions& call) {
  const ConstBytes in = in_;
  const Bytes out = out_;
  const CollectiveSpec s = spec_;
  switch (spec_.kind) {
    case CollectiveKind::kAllReduce:
      return {[=](Group& g) {
        return g.all_reduce_async(in, out, s.dtype, s.op, call);
      }};
    case CollectiveKind::kAllGather:
      return {
          [=](Group& g) { return g.all_gather_async(in, out, s.dtype, call); }};
    case CollectiveKind::kReduceScatter:
      return {[=](Group& g) {
        return g.reduce_scatter_async(in, out, s.dtype, s.op, call);
      }};
    case CollectiveKind::kBroadcast:
      return {[=](Group& g) {
        return g.broadcast_async(in, out, s.dtype, s.root, call);
      }};
    case CollectiveKind::kReduce:
      return {[=](Group& g) {
        return g.reduce_async(in, out, s.dtype, s.op, s.root, call);
      }};
    case CollectiveKind::kAllToAll:
      return {
          [=](Group& g) { return g.all_to_all_async(in, out, s.dtype, call); }};
    case CollectiveKind::kSendRecv: {
      const uint32_t right = (rank_ + 1) % ranks_;
      const uint32_t left = (rank_ + ranks_ - 1) % ranks_;
      Starter send = [=](Group& g) {
        return g.send_async(in, s.dtype, right, call);
      };
      Starter recv = [=](Group& g) {
        return g.recv_async(out, s.dtype, left, call);
      };
      if (rank_ % 2 == 0) return {send, recv};
      return {recv, send};
    }
    case CollectiveKind::kBarrier:
      return {[=](Group& g) { return g.barrier_async(call); }};
  }
  return {};
}

absl::Status RankCall::register_with(Group& group,
                                     std::vector<RegisteredMemory>* out) {
  for (std::span<std::byte> buffer : buffers()) {
    absl::StatusOr<RegisteredMemory> h = group.register_memory(buffer);
    if (!h.ok()) return h.status();
    out->push_back(*std::move(h));
  }
  return absl::OkStatus();
}

}  // namespace weft::harness
