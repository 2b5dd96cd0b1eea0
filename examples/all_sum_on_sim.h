// How to run a collective on simulated Macs with weft's public API: a
// sim::World of N ranks, one Group per rank formed in process, and one
// RankProgram per rank that drives the rank's all-sum. The simulator runs
// every rank in one thread and in virtual time, so the program never
// blocks: it starts the operation and steps it when the scheduler says.
// Shared by all_reduce_sim.cc and fault_study.cc.
#ifndef WEFT_EXAMPLES_ALL_SUM_ON_SIM_H_
#define WEFT_EXAMPLES_ALL_SUM_ON_SIM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/dtype.h"
#include "collectives/group.h"
#include "collectives/group_options.h"
#include "collectives/inprocess_bootstrap.h"
#include "collectives/operation.h"
#include "fabric/fabric.h"
#include "fabric/progress.h"
#include "sim/world.h"

namespace example {

// Rank r contributes in[i] = 1000 * r + i % 1000: small integers, so the
// float32 sums are exact and easy to check by hand.
inline float input_value(uint32_t rank, size_t i) {
  return static_cast<float>(1000 * rank + i % 1000);
}

// One rank's part: start the all-sum, then step it when the scheduler asks.
class AllSumProgram final : public weft::sim::RankProgram {
 public:
  AllSumProgram(weft::Group& group, std::span<const float> in,
                std::span<float> out)
      : op_(group.all_reduce_async(
            std::as_bytes(in), std::as_writable_bytes(out),
            weft::DType::kFloat32, weft::ReduceOp::kSum)) {}
  weft::Progress step() override { return op_.progress(); }
  std::string outstanding() const override { return "all_sum"; }
  bool done() const { return op_.done(); }
  absl::Status status() const { return op_.status(); }

 private:
  weft::Operation op_;
};

struct SimAllSum {
  weft::sim::RunResult run;                 // how the simulation ended
  std::vector<absl::Status> statuses;       // each rank's result
  std::vector<std::vector<float>> outputs;  // each rank's sums
};

// An all-sum of `count` float32 values on every rank of a world made from
// `options`. Errors here are the world's or group formation's; the
// collective's own errors are in the statuses.
inline absl::StatusOr<SimAllSum> all_sum_on_sim(
    const weft::sim::WorldOptions& options, size_t count) {
  absl::StatusOr<std::unique_ptr<weft::sim::World>> world =
      weft::sim::World::create(options);
  if (!world.ok()) return world.status();
  const uint32_t ranks = (*world)->ranks();
  SimAllSum result;
  std::vector<std::vector<float>> inputs(ranks, std::vector<float>(count));
  result.outputs.assign(ranks, std::vector<float>(count));
  std::vector<weft::Fabric*> fabrics;
  for (uint32_t r = 0; r < ranks; ++r) {
    fabrics.push_back(&(*world)->fabric(r));
    for (size_t i = 0; i < count; ++i) inputs[r][i] = input_value(r, i);
  }
  // Every rank's group at once: in one thread no rank can wait for another
  // in a blocking exchange of addresses.
  absl::StatusOr<std::vector<std::unique_ptr<weft::Group>>> groups =
      weft::form_groups_in_process(fabrics, options.topology,
                                   weft::GroupOptions{});
  if (!groups.ok()) return groups.status();
  std::vector<std::unique_ptr<AllSumProgram>> programs;
  std::vector<weft::sim::RankProgram*> to_run;
  for (uint32_t r = 0; r < ranks; ++r) {
    programs.push_back(std::make_unique<AllSumProgram>(*(*groups)[r], inputs[r],
                                                       result.outputs[r]));
    to_run.push_back(programs.back().get());
  }
  result.run = (*world)->run(to_run);
  for (uint32_t r = 0; r < ranks; ++r) {
    result.statuses.push_back(programs[r]->status());
    // An operation left unfinished (a hang) must not write into our
    // buffers later: cancel it before they go.
    if (!programs[r]->done()) {
      (*groups)[r]->abort();
      (*groups)[r]->progress();
    }
  }
  return result;
}

// How many of rank outputs' elements differ from the sums computed here.
inline size_t wrong_elements(const std::vector<float>& out, uint32_t ranks) {
  size_t wrong = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    float expected = 0;
    for (uint32_t r = 0; r < ranks; ++r) expected += input_value(r, i);
    if (out[i] != expected) ++wrong;
  }
  return wrong;
}

}  // namespace example

#endif  // WEFT_EXAMPLES_ALL_SUM_ON_SIM_H_
