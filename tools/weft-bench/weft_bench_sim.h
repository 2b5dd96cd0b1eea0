// weft-bench on the simulator: every rank in this process over a simulated
// world (weft-sim's world flags: --ranks, --topology, --devices, --link,
// fault rates, --seed), through the harness weft-sim uses. Times are
// virtual: deterministic, and independent of how busy this machine is.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_SIM_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_SIM_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/sim_cluster.h"
#include "tools/cli/world_flags.h"
#include "tools/weft-bench/weft_bench_runner.h"

namespace weft::tools::weft_bench {

class SimRunner final : public BenchRunner {
 public:
  SimRunner(cli::WorldFlags flags, GroupOptions group);

  uint32_t ranks() const override;
  bool reports() const override { return true; }
  std::string describe() const override;
  bool virtual_time() const override { return true; }
  absl::Status check(const harness::CollectiveSpec& spec) const override;
  Algorithm algorithm(const harness::CollectiveSpec& spec) const override;
  absl::StatusOr<Measurement> measure(const MeasureRequest& request) override;
  CostModel cost_model() const override;

 private:
  // The cluster runs go to; a fresh one after a failed run.
  absl::StatusOr<harness::SimCluster*> cluster();
  // Runs and folds a failure into `m`; false when the run failed.
  // Group::counters() summed over the cluster's ranks (zero: no cluster).
  LinkCounters counted() const;
  bool run_into(const MeasureRequest& request, uint32_t iterations, bool check,
                Measurement* m, harness::CaseRun* out);

  cli::WorldFlags flags_;
  GroupOptions group_options_;
  std::unique_ptr<harness::SimCluster> cluster_;
};

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_SIM_H_
