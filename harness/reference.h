// Reference: every rank's input of a collective and the output each rank
// must end with, computed directly with plain loops in rank order, never
// with weft's own kernels, so a tool's verdict "correct" means weft's bytes
// equal bytes computed independently.
//
// Inputs are deterministic in (seed, rank, element) and chosen so that
// every reduction order gives the same bits (the ring reduces in ring
// order, the mesh in rank order): integers take any value (they wrap);
// floats take values from {+-0.5, +-1, +-2}, and in groups of more than 8
// ranks at most 8 ranks contribute to any one element (the others add 0 or
// multiply by 1), so every partial sum and product is exact even in
// bfloat16; complex products use positive reals, so no signed zero depends
// on the order.
#ifndef WEFT_HARNESS_REFERENCE_H_
#define WEFT_HARNESS_REFERENCE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "harness/collective_spec.h"

namespace weft::harness {

class Reference {
 public:
  // REQUIRES: `shape` is shape_of(spec, ranks). `recycled`: a buffer a
  // previous Reference released (release_reduced), used for the reduction
  // where it is large enough, so a series of runs does not allocate (and
  // fault in) the reduction's memory anew each time.
  Reference(const CollectiveSpec& spec, const CollectiveShape& shape,
            uint32_t ranks, uint64_t seed,
            std::vector<std::byte> recycled = {});

  const CollectiveSpec& spec() const { return spec_; }
  const CollectiveShape& shape() const { return shape_; }
  uint32_t ranks() const { return ranks_; }

  // Writes rank `rank`'s input. REQUIRES: in.size() == shape().in_bytes.
  void fill_input(uint32_t rank, std::span<std::byte> in) const;

  // How many elements of rank `rank`'s output differ in any bit from the
  // expected output. An output of the wrong size counts as all wrong.
  // Computes (once) and keeps the element-wise reduction the reductions
  // need.
  uint64_t wrong_elements(uint32_t rank, std::span<const std::byte> out);

  // Whether computing the reduction allocated its buffer (`recycled` was
  // too small); false before it is computed.
  bool allocated() const { return allocated_; }
  // The reduction's buffer, for the next Reference.
  std::vector<std::byte> release_reduced();

 private:
  // `count` elements of rank `rank`'s input starting at element `first`.
  void input(uint32_t rank, uint64_t first, uint64_t count,
             std::byte* out) const;
  // `count` elements of rank `rank`'s expected output from `first`.
  void expected(uint32_t rank, uint64_t first, uint64_t count, std::byte* out);
  // Every rank's input reduced element-wise in rank order (cached).
  const std::vector<std::byte>& reduced();

  CollectiveSpec spec_;
  CollectiveShape shape_;
  uint32_t ranks_;
  uint64_t seed_;
  size_t elem_;
  uint32_t stride_;  // a float element takes part on ranks with
                     // (element + rank) % stride_ == 0
  std::vector<std::byte> reduced_;
  bool have_reduced_ = false;
  bool allocated_ = false;
};

}  // namespace weft::harness

#endif  // WEFT_HARNESS_REFERENCE_H_
