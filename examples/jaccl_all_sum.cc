// A program written for MLX's JACCL, built unchanged against weft's `jaccl`
// library (docs/jaccl.md): JACCL's headers, JACCL's calls, JACCL's target
// name on the link line (examples/CMakeLists.txt). Configured by JACCL's
// environment (JACCL_RANK, JACCL_IBV_DEVICES, JACCL_COORDINATOR); on Linux
// without RDMA, `weft-sim launch --ranks=2 -- ./jaccl_all_sum` sets it and
// runs the ranks on simulated Macs.
//
// Where JACCL would hang on a lost frame or a dead peer, weft resends or
// throws std::runtime_error naming the rank, the peer and the cause.
#include <jaccl/jaccl.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <vector>

int main() {
  std::shared_ptr<jaccl::Group> group;
  try {
    group = jaccl::init();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jaccl_all_sum: %s\n", e.what());
    return 1;
  }
  if (!group) {
    std::fprintf(stderr,
                 "jaccl_all_sum: no group: set JACCL_RANK, JACCL_IBV_DEVICES "
                 "and JACCL_COORDINATOR\n");
    return 1;
  }
  const int rank = group->rank();
  const int size = group->size();
  // Rank r contributes r + 1 in every element: the sum is n(n+1)/2.
  std::vector<float> in(4096, static_cast<float>(rank + 1));
  std::vector<float> out(in.size());
  try {
    group->all_sum(in.data(), out.data(), in.size() * sizeof(float),
                   jaccl::Float32);
    group->barrier();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "jaccl_all_sum: rank %d: %s\n", rank, e.what());
    return 1;
  }
  const float expected = static_cast<float>(size * (size + 1) / 2);
  for (float v : out) {
    if (v != expected) {
      std::fprintf(stderr, "jaccl_all_sum: rank %d: got %g, expected %g\n",
                   rank, v, expected);
      return 1;
    }
  }
  std::printf("jaccl_all_sum: rank %d of %d: sum %g, correct\n", rank, size,
              expected);
  return 0;
}
