// weft-bench on real RDMA: this process is one rank of a group formed as
// JACCL forms it (weft::ProcessGroup from collectives/config.h's
// environment: JACCL_RANK, JACCL_IBV_DEVICES, JACCL_COORDINATOR,
// JACCL_RING; the group's deadlines are weft-bench's own), over the verbs
// fabric (Apple's librdma.dylib over Thunderbolt 5, or libibverbs.so.1; the
// library in WEFT_VERBS_LIBRARY if set). Every rank runs each measurement
// with blocking waits and wall time; the ranks then average their times
// and add up their #wrong with an all-sum, and rank 0 prints.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_VERBS_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_VERBS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/config.h"
#include "collectives/group_options.h"
#include "harness/rank_call.h"
#include "sim/link_model.h"
#include "startup/process_group.h"
#include "tools/weft-bench/weft_bench_runner.h"

namespace weft::bench {

class VerbsRunner final : public BenchRunner {
 public:
  // InvalidArgument for a bad environment (say what to set); the
  // bootstrap's, the library's and group formation's errors otherwise.
  // `model_link` is the link the cost model assumes.
  static absl::StatusOr<std::unique_ptr<VerbsRunner>> create(
      const sim::LinkModel& model_link, const GroupOptions& options);
  ~VerbsRunner() override;

  uint32_t ranks() const override { return config().size; }
  bool reports() const override { return config().rank == 0; }
  std::string describe() const override;
  bool virtual_time() const override;
  absl::Status check(const harness::CollectiveSpec& spec) const override;
  Algorithm algorithm(const harness::CollectiveSpec& spec) const override;
  absl::StatusOr<Measurement> measure(const MeasureRequest& request) override;
  RingModel ring_model() const override;

 private:
  VerbsRunner(std::unique_ptr<ProcessGroup> process_group,
              const sim::LinkModel& model_link, GroupOptions group);
  const Config& config() const { return process_group_->config(); }
  // Runs every starter of `starters` `iterations` times, blocking.
  absl::Status run_blocking(const std::vector<harness::Starter>& starters,
                            uint32_t iterations);
  // Whether kAuto may pick the mesh: a full mesh, and JACCL_RING unset.
  bool mesh_allowed() const;

  std::unique_ptr<ProcessGroup> process_group_;
  sim::LinkModel model_link_;
  GroupOptions group_options_;
};

}  // namespace weft::bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_VERBS_H_
