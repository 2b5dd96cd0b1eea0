// jaccl/group.h: MLX JACCL's communication group, as JACCL's stand-alone
// library declares it (mlx/distributed/jaccl/lib/jaccl/group.h in
// ml-explore/mlx), so programs written for JACCL build unchanged against
// weft. The group behind the interface is a weft::Group (docs/jaccl.md).
//
// Every call blocks until it is done on this rank and throws
// std::runtime_error when it cannot be done: the message names weft's cause,
// this rank and the peer involved. Sizes are in bytes; a size that is not a
// whole number of `dtype` elements, or a dtype outside Dtype, is refused with
// an exception (JACCL truncates the first and ignores the second).
#ifndef WEFT_JACCL_GROUP_H_
#define WEFT_JACCL_GROUP_H_

#include <cstddef>
#include <memory>

namespace jaccl {

class Group {
 public:
  virtual ~Group() {}

  virtual int rank() = 0;
  virtual int size() = 0;

  // output[i] = the sum (max, min) over ranks of input[i]; n_bytes of each.
  virtual void all_sum(const void* input, void* output, size_t n_bytes,
                       int dtype) = 0;
  virtual void all_max(const void* input, void* output, size_t n_bytes,
                       int dtype) = 0;
  virtual void all_min(const void* input, void* output, size_t n_bytes,
                       int dtype) = 0;

  // output (size() * n_bytes) holds every rank's n_bytes of input, in rank
  // order.
  virtual void all_gather(const void* input, void* output, size_t n_bytes) = 0;

  // input holds size() blocks of n_bytes; output (n_bytes) gets the sum over
  // ranks of block rank().
  virtual void sum_scatter(const void* input, void* output, size_t n_bytes,
                           int dtype) = 0;

  virtual void send(const void* input, size_t n_bytes, int dst) = 0;
  virtual void recv(void* output, size_t n_bytes, int src) = 0;

  // Returns once every rank has called it.
  virtual void barrier() = 0;
};

// Element types, with JACCL's values.
enum Dtype {
  Bool = 0,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Float16,
  BFloat16,
  Float32,
  Float64,
  Complex64,
};

}  // namespace jaccl

#endif  // WEFT_JACCL_GROUP_H_
