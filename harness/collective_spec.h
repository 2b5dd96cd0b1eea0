// What one benchmark or study row runs: a collective with its size in
// nccl-tests' terms, dtype, reduction, root, algorithm and placement, and
// what follows from it for a group of n ranks (each rank's buffer sizes,
// nccl-tests' count column, the bus-bandwidth factor).
//
// Sizes follow nccl-tests: `bytes` is the larger of one rank's input and
// output (the all-gather output, the reduce-scatter input, the all-reduce,
// broadcast, reduce, all-to-all and send/recv buffer), rounded down to
// whole elements on every rank.
#ifndef WEFT_HARNESS_COLLECTIVE_SPEC_H_
#define WEFT_HARNESS_COLLECTIVE_SPEC_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "collectives/dtype.h"
#include "collectives/group_options.h"

namespace weft::harness {

enum class CollectiveKind : uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAllToAll,
  kSendRecv,  // every rank sends to rank+1 and receives from rank-1
  kBarrier,
};
inline constexpr int kCollectiveKindCount = 8;

// nccl-tests' names: "all_reduce", "all_gather", "reduce_scatter",
// "broadcast", "reduce", "all_to_all", "sendrecv", "barrier".
std::string_view collective_name(CollectiveKind kind);

// Which algorithm to run. kMesh is the mesh half of kAuto: the exchange for
// small messages, reduce-scatter + all-gather for large ones.
enum class AlgorithmRequest : uint8_t {
  kAuto,
  kMesh,
  kMeshExchange,
  kMeshScatter,
  kRing,
};
// "auto", "mesh", "mesh_exchange", "mesh_scatter", "ring".
std::string_view algorithm_request_name(AlgorithmRequest request);
bool parse_algorithm_request(std::string_view text, AlgorithmRequest* out);

struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  ReduceOp op = ReduceOp::kSum;  // reductions only
  DType dtype = DType::kFloat32;
  uint64_t bytes = 0;
  uint32_t root = 0;  // broadcast and reduce
  AlgorithmRequest algorithm = AlgorithmRequest::kAuto;
  bool in_place = false;
};

// True for the kinds that take a reduction op.
bool reduces(CollectiveKind kind);
// True for broadcast and reduce.
bool has_root(CollectiveKind kind);

// The Group API's name of a spec's call: "all_sum", "all_max", ...,
// "sum_scatter" (or "reduce_scatter/max"), "all_gather", "broadcast",
// "reduce/sum", "all_to_all", "send/recv", "barrier".
std::string api_name(const CollectiveSpec& spec);

// Parses an op name: nccl-tests' (all_reduce, reduce_scatter, ...) leaving
// *op alone, or the Group API's (all_sum, all_prod, all_max, all_min,
// sum_scatter, send_recv, send/recv, alltoall) setting *op where the name
// carries one. False for anything else.
bool parse_collective(std::string_view text, CollectiveKind* kind,
                      ReduceOp* op);

// A spec's buffers on every rank of a group of `ranks`.
struct CollectiveShape {
  uint32_t ranks = 0;        // the group's
  uint64_t size_bytes = 0;   // nccl-tests' size (spec.bytes, rounded down)
  uint64_t count = 0;        // nccl-tests' count column
  uint64_t in_bytes = 0;     // one rank's input
  uint64_t out_bytes = 0;    // one rank's output (0: none; reduce off root)
  uint64_t block_bytes = 0;  // all-gather input, reduce-scatter output,
                             // all-to-all block
  // busbw = algbw * bus_factor: 2(n-1)/n all-reduce; (n-1)/n all-gather,
  // reduce-scatter, all-to-all; 1 broadcast, reduce, send/recv; 0 barrier.
  double bus_factor = 0;
};

// InvalidArgument for an invalid dtype or op, a root outside the group, or
// a group of one rank for send/recv.
absl::StatusOr<CollectiveShape> shape_of(const CollectiveSpec& spec,
                                         uint32_t ranks);
// Rank `rank`'s output bytes (only the root has an output in reduce).
uint64_t out_bytes_of(const CollectiveSpec& spec, const CollectiveShape& shape,
                      uint32_t rank);

// The algorithm the call runs: the request resolved the way Group resolves
// Algorithm::kAuto (collectives/group_options.h): on a fully connected
// group, the mesh exchange for messages up to mesh_exchange_limit() (the
// all-gather input, the reduce-scatter output, else the buffer) and the
// mesh scatter above; the ring otherwise. Send/recv has no algorithm
// (kAuto).
Algorithm resolve_algorithm(const CollectiveSpec& spec,
                            const CollectiveShape& shape, bool full_mesh,
                            const GroupOptions& options);
// "mesh_exchange", "mesh_scatter", "ring", or "direct" for send/recv.
std::string_view resolved_algorithm_name(Algorithm algorithm);

}  // namespace weft::harness

#endif  // WEFT_HARNESS_COLLECTIVE_SPEC_H_
