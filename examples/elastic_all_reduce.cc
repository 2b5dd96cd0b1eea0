// A loop of all-sums that outlives a rank: when one dies, the others'
// current all-sum ends with a typed error naming it, they shrink the group
// to the survivors (weft::ProcessGroup::shrink, docs/fault-tolerance.md)
// and carry on from the lowest step a survivor has not finished (an all-min
// over the shrunk group), checking every sum against the
// members the group has at that step. One process per rank, configured as
// all_reduce_hardware is (JACCL's or weft's environment); on Linux without
// RDMA hardware, on simulated Macs, with rank 2 killed 60 us in:
//   echo 'crash rank=2 at_ns=60000' > crash.plan
//   weft-sim launch --ranks=4 --faults=crash.plan --on_crash=kill --
//       ./elastic_all_reduce 30
// (one line).
// Argument: the number of all-sums (default 30).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/dtype.h"
#include "collectives/group.h"
#include "startup/process_group.h"

namespace {

absl::Status fail(uint32_t rank, const char* step, const absl::Status& s) {
  std::fprintf(stderr, "elastic_all_reduce: rank %u: %s: %s\n", rank, step,
               s.ToString().c_str());
  return s;
}

absl::Status run(int steps) {
  absl::StatusOr<std::unique_ptr<weft::ProcessGroup>> pg =
      weft::ProcessGroup::from_environment();
  if (!pg.ok()) return fail(0, "starting the group", pg.status());
  const uint32_t me = (*pg)->group().rank();  // the rank it started as
  int shrinks = 0;
  for (int step = 0; step < steps;) {
    weft::Group& group = (*pg)->group();
    // Each rank gives its starting rank + 1 in every element (+ the step,
    // so that no step's sum is another's): the sum runs over the members.
    std::vector<int32_t> in(1024, static_cast<int32_t>(me + 1 + step));
    std::vector<int32_t> out(in.size());
    absl::Status s = group.all_sum(std::as_bytes(std::span(in)),
                                   std::as_writable_bytes(std::span(out)),
                                   weft::DType::kInt32);
    if (!s.ok()) {
      std::printf(
          "elastic_all_reduce: rank %u: step %d failed (%s); "
          "shrinking\n",
          me, step,
          std::string(s.message().substr(0, s.message().find(';'))).c_str());
      if (absl::Status shrunk = (*pg)->shrink(); !shrunk.ok()) {
        return fail(me, "shrinking", shrunk);
      }
      ++shrinks;
      weft::Group& now = (*pg)->group();
      std::printf("elastic_all_reduce: rank %u: now rank %u of %u\n", me,
                  now.rank(), now.size());
      // A survivor may have finished this step before the others' failed
      // (the dead rank's part reached it first) and failed the next one:
      // all resume from the lowest step any of them has not finished.
      int32_t mine = step;
      int32_t lowest = 0;
      if (absl::Status m =
              now.all_min(std::as_bytes(std::span(&mine, 1)),
                          std::as_writable_bytes(std::span(&lowest, 1)),
                          weft::DType::kInt32);
          !m.ok()) {
        return fail(me, "agreeing on the step", m);
      }
      step = lowest;
      continue;
    }
    int32_t expected = 0;
    for (uint32_t m = 0; m < group.size(); ++m) {
      expected += static_cast<int32_t>(group.world_rank(m) + 1 + step);
    }
    for (int32_t v : out) {
      if (v != expected) {
        return fail(me, "checking", absl::DataLossError("wrong sum"));
      }
    }
    ++step;
  }
  std::printf(
      "elastic_all_reduce: rank %u (now %u of %u): %d all-sums "
      "correct, %d shrink(s)\n",
      me, (*pg)->group().rank(), (*pg)->group().size(), steps, shrinks);
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 30;
  if (steps <= 0) {
    std::fprintf(stderr, "usage: elastic_all_reduce [steps > 0]\n");
    return 2;
  }
  return run(steps).ok() ? 0 : 1;
}
