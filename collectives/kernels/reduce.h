// Reduction kernels: acc[i] = op(acc[i], in[i]) (or dst[i] = op(a[i], b[i]))
// over `count` elements of a dtype. float16 and bfloat16 compute in float32 and
// round to nearest even; complex64 max/min compare the real part, then the
// imaginary part; bool sum/max is OR, prod/min is AND; integer sums wrap. The
// kernels are deterministic: the same inputs give the same bytes on every run
// and platform.
#ifndef WEFT_COLLECTIVES_KERNELS_REDUCE_H_
#define WEFT_COLLECTIVES_KERNELS_REDUCE_H_

#include <cstddef>

#include "absl/status/status.h"
#include "collectives/dtype.h"

namespace weft {

// acc[i] = op(acc[i], in[i]) for i < count. `acc` and `in` may be unaligned
// but must not overlap partially (acc == in is allowed).
// InvalidArgument for an unknown dtype or op.
absl::Status reduce_into(DType dtype, ReduceOp op, void* acc, const void* in,
                         size_t count);

// dst[i] = op(a[i], b[i]) for i < count: one pass where a copy of `a` and
// reduce_into would take two. dst may be a (then it is reduce_into); it
// must not overlap b otherwise, nor a partially. The same bits as copying
// a into dst and reducing b into it. InvalidArgument for an unknown dtype
// or op, or a null buffer.
absl::Status reduce_to(DType dtype, ReduceOp op, void* dst, const void* a,
                       const void* b, size_t count);

}  // namespace weft

#endif  // WEFT_COLLECTIVES_KERNELS_REDUCE_H_
