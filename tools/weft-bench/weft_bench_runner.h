// Where weft-bench's measurements come from: the simulator (every rank in
// this process, virtual time; weft_bench_sim.h) or a group on the verbs or
// TCP fabric (this process is one rank, wall time; weft_bench_group.h).
// The table, JSON and plot code sees only this interface.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RUNNER_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RUNNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "harness/collective_spec.h"
#include "tools/weft-bench/weft_bench_model.h"
#include "tools/weft-bench/weft_bench_result.h"

namespace weft::tools::weft_bench {

struct MeasureRequest {
  harness::CollectiveSpec spec;
  uint32_t warmup_iters = 0;
  uint32_t iters = 1;
  bool check = true;
  // Register the rank's buffers with the group before the first iteration.
  bool registered = false;
};

class BenchRunner {
 public:
  virtual ~BenchRunner() = default;

  virtual uint32_t ranks() const = 0;
  // True in the one process that prints (rank 0 on verbs).
  virtual bool reports() const = 0;
  // For the header: "8 simulated ranks, mesh, link tb5 (...), virtual time".
  virtual std::string describe() const = 0;
  // True when times are virtual (the simulator, or verbs over weft's
  // simulated provider), false for wall time.
  virtual bool virtual_time() const = 0;

  // InvalidArgument when `spec` cannot run on this group (bad root, an
  // algorithm needing cables the topology lacks, ...).
  virtual absl::Status check(const harness::CollectiveSpec& spec) const = 0;
  // The algorithm `spec` runs with.
  virtual Algorithm algorithm(const harness::CollectiveSpec& spec) const = 0;

  // Warm-up iterations, timed iterations and the check of one placement.
  // A failed collective is reported in the Measurement (the simulator goes
  // on with a fresh cluster); an error here means the benchmark cannot go
  // on (a failed group on hardware).
  virtual absl::StatusOr<Measurement> measure(
      const MeasureRequest& request) = 0;

  // The cost model of weft's algorithms on this group's link and cables.
  virtual CostModel cost_model() const = 0;

  // This rank's registration caches, one per RDMA device it opened (verbs
  // only; empty elsewhere).
  virtual std::vector<RegistrationCacheReport> registration_caches() const {
    return {};
  }
};

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RUNNER_H_
