// The all-reduce on real Macs (or Linux RDMA hosts): one process per rank,
// configured from MLX JACCL's environment, so JACCL launch scripts work:
//   JACCL_RANK         this process's rank
//   JACCL_IBV_DEVICES  the device JSON (devices[i][j]: the device joining
//                      rank i to rank j; its rows are the group's size)
//   JACCL_COORDINATOR  host:port where rank 0 listens for the others
// The ranks exchange queue-pair addresses through rank 0 over TCP, then sum
// over RDMA with weft's verbs fabric. On Linux without RDMA hardware, run it
// on simulated Macs: `weft-sim launch --ranks=2 -- ./all_reduce_hardware`
// sets the same variables and loads weft's simulated verbs provider.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/config.h"
#include "collectives/dtype.h"
#include "collectives/group.h"
#include "collectives/group_builder.h"
#include "collectives/group_options.h"
#include "collectives/tcp_bootstrap.h"
#include "verbs/verbs_fabric.h"

namespace {

absl::Status fail(const char* step, const absl::Status& status) {
  std::fprintf(stderr, "all_reduce_hardware: %s: %s\n", step,
               status.ToString().c_str());
  return status;
}

absl::Status run() {
  // InvalidArgument naming the variable to set when one is missing or bad.
  absl::StatusOr<weft::Config> config = weft::Config::from_environment();
  if (!config.ok()) return fail("configuration", config.status());
  absl::StatusOr<std::unique_ptr<weft::TcpBootstrap>> bootstrap =
      weft::TcpBootstrap::connect(*config);
  if (!bootstrap.ok()) return fail("bootstrap", bootstrap.status());
  // Loads librdma.dylib (macOS) or libibverbs.so.1; says what is missing.
  absl::StatusOr<std::unique_ptr<weft::verbs::VerbsFabric>> fabric =
      weft::verbs::VerbsFabric::open(config->rank);
  if (!fabric.ok()) return fail("verbs", fabric.status());
  absl::StatusOr<std::unique_ptr<weft::Group>> group = weft::create_group(
      **fabric, **bootstrap, config->devices, weft::GroupOptions{});
  if (!group.ok()) return fail("forming the group", group.status());

  // Rank r contributes r + 1 in every element: the sum is n(n+1)/2.
  const uint32_t n = (*group)->size();
  std::vector<int32_t> in(1024, static_cast<int32_t>(config->rank + 1));
  std::vector<int32_t> out(in.size());
  // Blocking: returns the sums, or a typed error within the deadline.
  if (absl::Status s = (*group)->all_sum(std::as_bytes(std::span(in)),
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
              config->rank, n, expected);
  // The group goes before the fabric and the bootstrap (declared earlier).
  return absl::OkStatus();
}

}  // namespace

int main() { return run().ok() ? 0 : 1; }
