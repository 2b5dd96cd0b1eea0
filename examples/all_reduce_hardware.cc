// The all-reduce on real Macs (or Linux RDMA hosts): one process per rank,
// configured from MLX JACCL's environment, so JACCL launch scripts work:
//   JACCL_RANK         this process's rank
//   JACCL_IBV_DEVICES  the device JSON (devices[i][j]: the device joining
//                      rank i to rank j; its rows are the group's size)
//   JACCL_COORDINATOR  host:port where rank 0 listens for the others
// weft::ProcessGroup does the rest in one call: the ranks exchange
// queue-pair addresses through rank 0 over TCP, then sum over RDMA with
// weft's verbs fabric. On Linux without RDMA hardware, run it
// on simulated Macs: `weft-sim launch --ranks=2 -- ./all_reduce_hardware`
// sets the same variables and loads weft's simulated verbs provider.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/dtype.h"
#include "collectives/group.h"
#include "startup/process_group.h"

namespace {

absl::Status fail(const char* step, const absl::Status& status) {
  std::fprintf(stderr, "all_reduce_hardware: %s: %s\n", step,
               status.ToString().c_str());
  return status;
}

absl::Status run() {
  // Reads the environment (InvalidArgument naming the variable to set when
  // one is missing or bad), joins rank 0, loads librdma.dylib (macOS) or
  // libibverbs.so.1 (saying what is missing) and forms the group. Each call
  // may wait WEFT_TIMEOUT_S (default 600 s) for a late peer.
  absl::StatusOr<std::unique_ptr<weft::ProcessGroup>> pg =
      weft::ProcessGroup::from_environment();
  if (!pg.ok()) return fail("starting the group", pg.status());
  weft::Group& group = (*pg)->group();

  // Rank r contributes r + 1 in every element: the sum is n(n+1)/2.
  const uint32_t n = group.size();
  std::vector<int32_t> in(1024, static_cast<int32_t>(group.rank() + 1));
  std::vector<int32_t> out(in.size());
  // Blocking: returns the sums, or a typed error within the deadline.
  if (absl::Status s = group.all_sum(std::as_bytes(std::span(in)),
                                     std::as_writable_bytes(std::span(out)),
                                     weft::DType::kInt32);
      !s.ok()) {
    return fail("all_sum", s);
  }
  const auto expected = static_cast<int32_t>(n * (n + 1) / 2);
  for (int32_t v : out) {
    if (v != expected) {
      return fail("checking", absl::DataLossError("wrong sum"));
    }
  }
  std::printf("all_reduce_hardware: rank %u of %u: sum %d, correct\n",
              group.rank(), n, expected);
  // The ProcessGroup closes the group, the fabric and the side channel, in
  // that order.
  return absl::OkStatus();
}

}  // namespace

int main() { return run().ok() ? 0 : 1; }
