// What weft-bench measures, in nccl-tests' terms: per size a row with the
// out-of-place and in-place measurements (time per iteration, #wrong), and
// per (op, algorithm) a block of rows with its footer figures. Bandwidths
// follow nccl-tests: algbw = size / time, busbw = algbw * the op's bus
// factor (harness::CollectiveShape::bus_factor).
#ifndef WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RESULT_H_
#define WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RESULT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/group_counters.h"
#include "harness/collective_spec.h"
#include "verbs/registration_counters.h"

namespace weft::tools::weft_bench {

struct Measurement {
  bool ran = false;    // false: no such form (in-place send/recv)
  std::string error;   // non-empty: the run failed, and why
  double time_us = 0;  // per iteration: virtual on the simulator, else wall
  bool checked = false;
  uint64_t wrong = 0;   // elements that differ from the reference
  double model_us = 0;  // --model: the ring's cost, 0 if the ring did not run
  // --model: the link model's lower bound, the lowest over the algorithms
  // the group can run (0 if the model does not cover the op), and that
  // algorithm.
  double bound_us = 0;
  std::string bound_algorithm;
  // What the engines counted during the measurement (warm-up, timed
  // iterations and check), summed over ranks (Group::counters()).
  LinkCounters counters;

  bool ok() const { return ran && error.empty(); }
};

struct BenchRow {
  uint64_t size_bytes = 0;
  uint64_t count = 0;
  std::string type;   // nccl-tests' type name
  std::string redop;  // "sum", ..., or "none"
  int64_t root = -1;  // -1 when the op has no root
  double bus_factor = 0;
  std::string algorithm;  // as run: "ring", "mesh_scatter", ...
  Measurement out_of_place;
  Measurement in_place;
};

// Gigabytes (1e9 bytes) per second; none when `m` did not run cleanly or
// the bandwidth is not a number: nothing moved (size 0) or it took no time
// (--link=ideal), which weft-sim's table shows as "-" too.
std::optional<double> algbw_gbs(const BenchRow& row, const Measurement& m);
std::optional<double> busbw_gbs(const BenchRow& row, const Measurement& m);

struct BenchBlock {
  std::string op;         // nccl-tests' name: "all_reduce", ...
  std::string algorithm;  // as asked: "auto", "mesh", "ring", ...
  std::vector<BenchRow> rows;
};

// nccl-tests' footer figures: busbw averaged over every measurement that
// has one (both placements; nullopt when none has, as on --link=ideal), and
// #wrong summed over all of them.
std::optional<double> average_busbw_gbs(const BenchBlock& block);
uint64_t wrong_total(const BenchBlock& block);
// Measurements that ended in an error.
uint64_t error_count(const BenchBlock& block);

// One RDMA device's registration cache on the rank that prints, after the
// run (verbs only: VerbsFabric::registration_counters): its budget, the
// memory regions registered at the end, and what the cache counted over
// the whole run, group formation included.
struct RegistrationCacheReport {
  std::string device;
  uint64_t budget = 0;   // most regions registered at once
  uint64_t regions = 0;  // registered now
  verbs::RegistrationCounters counters;
};

}  // namespace weft::tools::weft_bench

#endif  // WEFT_TOOLS_WEFT_BENCH_WEFT_BENCH_RESULT_H_
