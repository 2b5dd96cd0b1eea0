// weft-bench on a real fabric: this process is one rank of a group that
// weft::ProcessGroup forms from the environment (rendezvous/config.h; the
// group's deadlines are weft-bench's own), on the fabric --fabric names:
// verbs (JACCL_RANK, JACCL_IBV_DEVICES, JACCL_COORDINATOR, JACCL_RING;
// Apple's librdma.dylib over Thunderbolt 5, or libibverbs.so.1, the
// library in WEFT_VERBS_LIBRARY if set) or TCP (MLX's ring hostfile,
// MLX_HOSTFILE or WEFT_HOSTFILE, and MLX_RANK, as `weft-sim launch
// --fabric=tcp` sets them). The two differ only in the fabric the group
// opens. Every rank runs each measurement with blocking waits and wall
// time; the ranks then average their times and add up their #wrong with an
// all-sum, and rank 0 prints.
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_GROUP_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_GROUP_H_

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "collectives/registered_memory.h"
#include "harness/rank_call.h"
#include "rendezvous/config.h"
#include "sim/link_model.h"
#include "startup/process_group.h"
#include "tools/weft-bench/weft_bench_options.h"
#include "tools/weft-bench/weft_bench_runner.h"

namespace weft::tools::weft_bench {

class GroupRunner final : public BenchRunner {
 public:
  // InvalidArgument for a bad environment (say what to set: a hostfile for
  // tcp, none for verbs); the bootstrap's, the fabric's and group
  // formation's errors otherwise. `model_link` is the link the cost model
  // assumes. `fabric` is kVerbs or kTcp.
  static absl::StatusOr<std::unique_ptr<GroupRunner>> create(
      FabricKind fabric, const sim::LinkModel& model_link,
      const GroupOptions& options, const EnvLookup& getenv = ::getenv);
  ~GroupRunner() override;

  uint32_t ranks() const override { return config().size; }
  bool reports() const override { return config().rank == 0; }
  std::string describe() const override;
  bool virtual_time() const override;
  absl::Status check(const harness::CollectiveSpec& spec) const override;
  Algorithm algorithm(const harness::CollectiveSpec& spec) const override;
  absl::StatusOr<Measurement> measure(const MeasureRequest& request) override;
  CostModel cost_model() const override;
  std::vector<RegistrationCacheReport> registration_caches() const override;

 private:
  GroupRunner(FabricKind fabric, std::unique_ptr<ProcessGroup> process_group,
              const sim::LinkModel& model_link, GroupOptions group);
  const Config& config() const { return process_group_->config(); }
  // Registers each of `call`'s buffers with the group (--registered).
  absl::Status register_buffers(harness::RankCall& call,
                                std::vector<RegisteredMemory>* out);
  // Runs every starter of `starters` `iterations` times, blocking.
  absl::Status run_blocking(const std::vector<harness::Starter>& starters,
                            uint32_t iterations);
  // Whether kAuto may pick the mesh: a full mesh, and JACCL_RING unset.
  bool mesh_allowed() const;

  FabricKind fabric_;
  std::unique_ptr<ProcessGroup> process_group_;
  sim::LinkModel model_link_;
  GroupOptions group_options_;
};

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_GROUP_H_
