// A JACCL program that outlives a rank through weft's addition
// (jaccl/weft.h): a loop of all_sums over jaccl::init()'s group; when one
// throws (a peer died), it shrinks the weft::ProcessGroup behind the group
// and resumes from the lowest step a survivor has not finished (an all_min
// over the survivors), checking every sum.
// Argument: the number of steps. Prints one line at the end:
//   jaccl_elastic: rank R (now r of n): S all_sums correct, K shrink(s)
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "jaccl/jaccl.h"
#include "jaccl/weft.h"

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 20;
  std::shared_ptr<jaccl::Group> group = jaccl::init();
  if (group == nullptr) {
    std::fprintf(stderr, "jaccl_elastic: jaccl::init() gave no group\n");
    return 2;
  }
  weft::ProcessGroup* pg = jaccl::weft_process_group(*group);
  if (pg == nullptr) {
    std::fprintf(stderr, "jaccl_elastic: not a weft group\n");
    return 2;
  }
  const int me = group->rank();  // the rank it started as
  int shrinks = 0;
  for (int step = 0; step < steps;) {
    std::vector<int> in(256, me + 1 + step);
    std::vector<int> out(in.size());
    try {
      group->all_sum(in.data(), out.data(), in.size() * sizeof(int),
                     jaccl::Int32);
    } catch (const std::exception& e) {
      std::printf("jaccl_elastic: rank %d: step %d: %s\n", me, step, e.what());
      if (absl::Status s = pg->shrink(); !s.ok()) {
        std::fprintf(stderr, "jaccl_elastic: rank %d: shrink: %s\n", me,
                     s.ToString().c_str());
        return 3;
      }
      ++shrinks;
      // Every survivor resumes from the lowest step one has not finished
      // (one may have finished this step before the others' failed).
      int lowest = step;
      group->all_min(&step, &lowest, sizeof(int), jaccl::Int32);
      step = lowest;
      continue;
    }
    int expected = 0;
    for (int m = 0; m < group->size(); ++m) {
      expected += static_cast<int>(pg->group().world_rank(m)) + 1 + step;
    }
    for (int v : out) {
      if (v != expected) {
        std::fprintf(stderr, "jaccl_elastic: rank %d: step %d: %d, not %d\n",
                     me, step, v, expected);
        return 1;
      }
    }
    ++step;
  }
  std::printf(
      "jaccl_elastic: rank %d (now %d of %d): %d all_sums correct, "
      "%d shrink(s)\n",
      me, group->rank(), group->size(), steps, shrinks);
  return 0;
}
