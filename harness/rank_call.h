// RankCall: one rank's part of a collective. It owns the rank's buffers,
// laid out as the Group API wants them out of place or in place (in place:
// the all-gather input is the rank's block of the output, the
// reduce-scatter output the rank's block of the input), with the input
// from the Reference and every output byte not yet written poisoned; and
// it gives the Group calls that run the collective on this rank, in order
// (send/recv: even ranks send to rank+1 first and then receive from
// rank-1, odd ranks the other way round, since a Group runs one operation
// at a time).
#ifndef WEFT_HARNESS_RANK_CALL_H_
#define WEFT_HARNESS_RANK_CALL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "collectives/group.h"
#include "collectives/operation.h"
#include "collectives/registered_memory.h"
#include "harness/reference.h"

namespace weft::harness {

// Starts one operation on a rank's Group.
using Starter = std::function<Operation(Group&)>;

class RankCall;

// Buffers and their registrations, which end before the buffers go
// (declared after them): what a failed registered operation leaves to be
// kept until its group closes (SimCluster::keep_until_closed).
struct RegisteredCalls {
  std::vector<std::unique_ptr<RankCall>> calls;
  std::vector<RegisteredMemory> registrations;
};

// A rank's two buffers between runs: what one RankCall leaves for the next
// (RankCall::release_buffers), so a run of the same size or smaller reuses
// memory the process already touched. A large buffer allocated and freed
// at every run costs a page fault per page at every run.
struct RankBuffers {
  std::vector<std::byte> in;
  std::vector<std::byte> out;
};

class RankCall {
 public:
  // Lays out and fills rank `rank`'s buffers for reference.spec() in
  // `recycled` (allocating only where it is too small).
  // REQUIRES: not in place for send/recv.
  RankCall(const Reference& reference, uint32_t rank,
           RankBuffers recycled = {});
  RankCall(const RankCall&) = delete;
  RankCall& operator=(const RankCall&) = delete;

  // The operations of one run, in order. `call` picks the algorithm and
  // deadline. REQUIRES: the RankCall outlives the operations.
  std::vector<Starter> starters(const CallOptions& call);

  // What the rank's output holds (empty when it has none).
  std::span<const std::byte> output() const { return out_; }
  // The rank's buffers, input storage first, each that is not empty (for
  // registering them: Group::register_memory).
  std::vector<std::span<std::byte>> buffers() {
    std::vector<std::span<std::byte>> out;
    for (std::vector<std::byte>* v : {&in_storage_, &out_storage_}) {
      if (!v->empty()) out.emplace_back(*v);
    }
    return out;
  }
  // Registers each of buffers() with `group`, appending the handles to
  // *out; the first registration's error stops it.
  absl::Status register_with(Group& group, std::vector<RegisteredMemory>* out);

  // How many of its buffers the constructor had to allocate (0, 1 or 2):
  // those `recycled` could not hold.
  uint32_t allocations() const { return allocations_; }
  // The buffers, for the next run's RankCall; this one has none after.
  // REQUIRES: no operation uses them any more.
  RankBuffers release_buffers();

 private:
  void lay_out_in_place(const Reference& reference);
  void lay_out_out_of_place(const Reference& reference);

  CollectiveSpec spec_;
  uint32_t rank_;
  uint32_t ranks_;
  std::vector<std::byte> in_storage_;
  std::vector<std::byte> out_storage_;
  std::span<const std::byte> in_;
  std::span<std::byte> out_;
  uint32_t allocations_ = 0;
};

}  // namespace weft::harness

#endif  // WEFT_HARNESS_RANK_CALL_H_
