// Proof that the aarch64 kernels of collectives/kernels/reduce_arm.cc give the
// same bits as the portable float16/bfloat16 reduction for every input: each
// kernel from simd_reduce_kernel() against a scalar reference written here
// from half.h's conversions and the documented op semantics (reduce.cc:
// widen to float32, apply the op, round back to nearest even; a sum or
// product that is NaN is the canonical quiet NaN; max/min keep a NaN in acc,
// else take a NaN in `in`, and keep acc on ties). Each call runs
// in place (dst == acc, reduce_into) and into a destination apart
// (reduce_to), which must give the same bits and leave the inputs alone.
//
// A standalone program (GoogleTest and Abseil are not built for aarch64
// here; random inputs come from sim/prng.cc), cross-compiled and run under
// qemu-aarch64 by scripts/arm-kernels.sh. It prints what it checked and
// exits nonzero at the first mismatch.
#if !defined(__aarch64__)
#error "reduce_arm_check is an aarch64 program: run scripts/arm-kernels.sh"
#endif

#include <arm_neon.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "collectives/kernels/half.h"
#include "collectives/kernels/reduce_kernels.h"
#include "sim/prng.h"

namespace weft::collectives::internal {
namespace {

constexpr ReduceOp kOps[] = {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax,
                             ReduceOp::kMin};
constexpr DType kDTypes[] = {DType::kFloat16, DType::kBFloat16};
constexpr size_t kPatterns = size_t{1} << 16;  // every 16-bit pattern
// The kernels reduce whole steps of 8 or 16 elements and leave the rest
// (fewer than 16) to the portable kernel.
constexpr size_t kMinStep = 8;
constexpr size_t kMaxStep = 16;
// Bytes past each buffer that a kernel must leave alone.
constexpr size_t kGuardBytes = 64;
constexpr unsigned char kGuardByte = 0xa5;

const char* dtype_label(DType dtype) {
  return dtype == DType::kFloat16 ? "float16" : "bfloat16";
}

const char* op_label(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kProd:
      return "prod";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
  }
  return "unknown";
}

// 16 bits from the simulator's fixed-seed generator, so every run checks the
// same inputs.
uint16_t next16(sim::Prng& bits) {
  constexpr int kTopBits = 48;
  return static_cast<uint16_t>(bits.next() >> kTopBits);
}

// ---- The scalar reference.

float widen(DType dtype, uint16_t h) {
  return dtype == DType::kFloat16 ? float16_to_float(h) : bfloat16_to_float(h);
}

uint16_t narrow(DType dtype, float f) {
  return dtype == DType::kFloat16 ? float_to_float16(f) : float_to_bfloat16(f);
}

bool is_nan(float f) {
  return (std::bit_cast<uint32_t>(f) & kF32AbsMask) > kF32InfBits;
}

// A sum or product that is NaN is the canonical quiet NaN, whichever NaN
// the hardware would pass on (docs/collectives.md, "Determinism").
float canonical_if_nan(float r) {
  return is_nan(r) ? std::numeric_limits<float>::quiet_NaN() : r;
}

float apply(ReduceOp op, float x, float y) {
  switch (op) {
    case ReduceOp::kSum:
      return canonical_if_nan(x + y);
    case ReduceOp::kProd:
      return canonical_if_nan(x * y);
    case ReduceOp::kMax:
      return (is_nan(x) || (!is_nan(y) && !(y > x))) ? x : y;
    case ReduceOp::kMin:
      return (is_nan(x) || (!is_nan(y) && !(y < x))) ? x : y;
  }
  return x;
}

uint16_t reference(DType dtype, ReduceOp op, uint16_t acc, uint16_t in) {
  return narrow(dtype, apply(op, widen(dtype, acc), widen(dtype, in)));
}

// ---- FCVTL and FCVTN themselves against half.h. Narrowing covers every
// sign, exponent and top 11 mantissa bits of a float32 (the kept bits and
// the rounding bit of any float16 result, normal or subnormal) with low bits
// that are zero, one, just under half, half, just over, all ones, and random.
[[noreturn]] void fail_conversion(const char* what, uint32_t input,
                                  uint32_t got, uint32_t want) {
  std::printf("FAIL %s of %08x: hardware %08x, half.h %08x\n", what, input, got,
              want);
  std::exit(EXIT_FAILURE);
}

size_t check_widening() {
  constexpr size_t kVector = 4;
  for (uint32_t h = 0; h < kPatterns; h += kVector) {
    const uint16_t in[kVector] = {
        static_cast<uint16_t>(h), static_cast<uint16_t>(h + 1),
        static_cast<uint16_t>(h + 2), static_cast<uint16_t>(h + 3)};
    uint32_t out[kVector];
    vst1q_u32(out, vreinterpretq_u32_f32(
                       vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(in)))));
    for (size_t i = 0; i < kVector; ++i) {
      const uint32_t want = std::bit_cast<uint32_t>(float16_to_float(in[i]));
      if (out[i] != want) fail_conversion("FCVTL", in[i], out[i], want);
    }
  }
  return kPatterns;
}

size_t check_narrowing() {
  constexpr int kTailBits = 12;
  constexpr uint32_t kPrefixes = 1u << (32 - kTailBits);
  constexpr size_t kVector = 4;
  sim::Prng bits(0xfc7u);
  const uint32_t tails[2][kVector] = {
      {0x000, 0x001, 0x7ff, 0x800},
      {0x801, 0xfff, static_cast<uint32_t>(bits.next() >> (64 - kTailBits)),
       static_cast<uint32_t>(bits.next() >> (64 - kTailBits))}};
  size_t checked = 0;
  for (uint32_t prefix = 0; prefix < kPrefixes; ++prefix) {
    for (const uint32_t* tail : tails) {
      uint32_t in[kVector];
      for (size_t i = 0; i < kVector; ++i) {
        in[i] = (prefix << kTailBits) | tail[i];
      }
      uint16_t out[kVector];
      vst1_u16(out, vreinterpret_u16_f16(
                        vcvt_f16_f32(vreinterpretq_f32_u32(vld1q_u32(in)))));
      for (size_t i = 0; i < kVector; ++i) {
        const uint16_t want = float_to_float16(std::bit_cast<float>(in[i]));
        if (out[i] != want) fail_conversion("FCVTN", in[i], out[i], want);
      }
      checked += kVector;
    }
  }
  return checked;
}

// ---- Running a kernel.

struct Kernel {
  DType dtype;
  ReduceOp op;
  SimdReduceKernel run;
};

// One call's inputs: `in` is ignored when acc == in (`same`). The offsets are
// in bytes, so odd ones leave the elements unaligned.
struct Call {
  const uint16_t* acc;
  const uint16_t* in;
  size_t count;
  size_t acc_offset;
  size_t in_offset;
  bool same;
  const char* what;
};

uint16_t load16(const unsigned char* p, size_t i) {
  uint16_t v;
  std::memcpy(&v, p + i * sizeof v, sizeof v);
  return v;
}

// Copies `values` into a guarded buffer at byte `offset`.
std::vector<unsigned char> guarded(const uint16_t* values, size_t count,
                                   size_t offset) {
  std::vector<unsigned char> out(
      offset + count * sizeof(uint16_t) + kGuardBytes, kGuardByte);
  if (count > 0) {
    std::memcpy(out.data() + offset, values, count * sizeof(uint16_t));
  }
  return out;
}

[[noreturn]] void fail_result(const Kernel& k, const Call& c, size_t index,
                              uint16_t got, uint16_t want) {
  std::printf(
      "FAIL %s %s, %s (count %zu, acc offset %zu, in offset %zu%s): element "
      "%zu: acc %04x in %04x: kernel %04x, reference %04x\n",
      dtype_label(k.dtype), op_label(k.op), c.what, c.count, c.acc_offset,
      c.in_offset, c.same ? ", acc == in" : "", index, c.acc[index],
      (c.same ? c.acc : c.in)[index], got, want);
  std::exit(EXIT_FAILURE);
}

// Checks the bytes a kernel must leave alone: the guard bytes before and
// after, and the elements from `from` on.
void check_untouched(const Kernel& k, const Call& c,
                     const std::vector<unsigned char>& after,
                     const std::vector<unsigned char>& before, size_t offset,
                     size_t from, const char* buffer, const char* which) {
  for (size_t i = 0; i < after.size(); ++i) {
    const bool element = i >= offset && i < offset + c.count * sizeof(uint16_t);
    if ((element && (i - offset) / sizeof(uint16_t) < from) ||
        after[i] == before[i])
      continue;
    std::printf(
        "FAIL %s %s, %s (count %zu, acc offset %zu, in offset %zu%s): %s: "
        "%s byte %zu of the %s buffer is %02x, was %02x\n",
        dtype_label(k.dtype), op_label(k.op), c.what, c.count, c.acc_offset,
        c.in_offset, c.same ? ", acc == in" : "", which,
        element ? "element" : "guard", i, buffer, after[i], before[i]);
    std::exit(EXIT_FAILURE);
  }
}

// Runs the kernel on one call and compares every element; returns the
// elements it compared.
size_t check_call(const Kernel& k, const Call& c) {
  std::vector<unsigned char> acc = guarded(c.acc, c.count, c.acc_offset);
  const std::vector<unsigned char> acc_before = acc;
  const std::vector<unsigned char> in = guarded(c.in, c.count, c.in_offset);
  const std::vector<unsigned char> in_before = in;
  unsigned char* acc_at = acc.data() + c.acc_offset;
  const size_t done =
      k.run(acc_at, acc_at, c.same ? acc_at : in.data() + c.in_offset, c.count);
  if (done > c.count || c.count - done >= kMaxStep || done % kMinStep != 0) {
    std::printf("FAIL %s %s, %s: count %zu, kernel says it reduced %zu\n",
                dtype_label(k.dtype), op_label(k.op), c.what, c.count, done);
    std::exit(EXIT_FAILURE);
  }
  for (size_t i = 0; i < done; ++i) {
    const uint16_t b = c.same ? c.acc[i] : c.in[i];
    const uint16_t want = reference(k.dtype, k.op, c.acc[i], b);
    const uint16_t got = load16(acc_at, i);
    if (got != want) fail_result(k, c, i, got, want);
  }
  check_untouched(k, c, acc, acc_before, c.acc_offset, done, "acc",
                  "wrote past what it reduced");
  if (!c.same) {
    check_untouched(k, c, in, in_before, c.in_offset, 0, "in",
                    "changed its input");
  }
  // Into a destination apart from the inputs (reduce_to): the same bits,
  // nothing past them written, the inputs only read.
  std::vector<unsigned char> dst(acc_before.size(), kGuardByte);
  const std::vector<unsigned char> dst_before = dst;
  std::vector<unsigned char> a = acc_before;
  const unsigned char* a_at = a.data() + c.acc_offset;
  const size_t done_apart =
      k.run(dst.data() + c.acc_offset, a_at,
            c.same ? a_at : in.data() + c.in_offset, c.count);
  if (done_apart != done) {
    std::printf("FAIL %s %s, %s: count %zu, %zu reduced in place, %zu apart\n",
                dtype_label(k.dtype), op_label(k.op), c.what, c.count, done,
                done_apart);
    std::exit(EXIT_FAILURE);
  }
  for (size_t i = 0; i < done; ++i) {
    const uint16_t got = load16(dst.data() + c.acc_offset, i);
    if (got != load16(acc_at, i)) fail_result(k, c, i, got, load16(acc_at, i));
  }
  check_untouched(k, c, dst, dst_before, c.acc_offset, done, "dst",
                  "wrote past what it reduced, apart");
  check_untouched(k, c, a, acc_before, c.acc_offset, 0, "acc",
                  "changed its first input, apart");
  return done;
}

// ---- What is checked.

// `in` values that matter for each dtype, then random patterns.
std::vector<uint16_t> special_values(DType dtype) {
  constexpr size_t kRandomValues = 24;
  std::vector<uint16_t> values;
  if (dtype == DType::kFloat16) {
    values = {
        0x0000, 0x8000,                  // zeros
        0x7c00, 0xfc00,                  // infinities
        0x7e00, 0xfe00, 0x7e01, 0x7fff,  // quiet NaNs, with payloads
        0x7c01, 0x7d55, 0xfdff,          // signalling NaNs
        0x0001, 0x8001, 0x03ff, 0x83ff,  // subnormals
        0x0200, 0x0400,                  // half the least normal, least normal
        0x7bff, 0xfbff,                  // max finite
        0x3c00, 0xbc00, 0x3800, 0x4000,  // 1, -1, 0.5, 2
        0x4c00,  // 16: 65504 + 16 is the tie that rounds to infinity
        0x1000,  // 2^-11: 1 + 2^-11 is a tie that rounds to even 1
        0x3555,  // about 1/3: products round
    };
  } else {
    values = {
        0x0000, 0x8000,                  // zeros
        0x7f80, 0xff80,                  // infinities
        0x7fc0, 0xffc0, 0x7fc1, 0x7fff,  // quiet NaNs, with payloads
        0x7f81, 0x7faa, 0xffbf,          // signalling NaNs
        0x0001, 0x8001, 0x007f, 0x807f,  // subnormals
        0x0040, 0x0080,                  // half the least normal, least normal
        0x7f7f, 0xff7f,                  // max finite
        0x3f80, 0xbf80, 0x3f00, 0x4000,  // 1, -1, 0.5, 2
        0x7b00,  // 2^119: max finite + it is the tie that rounds to infinity
        0x3b80,  // 2^-8: 1 + 2^-8 is a tie that rounds to even 1
        0x3eab,  // about 1/3: products round
    };
  }
  sim::Prng bits(0x5eed0000u + static_cast<uint64_t>(dtype));
  for (size_t i = 0; i < kRandomValues; ++i) values.push_back(next16(bits));
  return values;
}

struct Tally {
  size_t calls = 0;
  size_t elements = 0;
  void add(size_t reduced) {
    ++calls;
    elements += reduced;
  }
};

// Every pattern as acc against each special `in` value, every pattern as
// `in` against each as acc, every pattern against itself (acc == in) and
// against random patterns.
void check_every_pattern(const Kernel& k, Tally& tally) {
  constexpr size_t kOffsets = 4;  // byte offsets 0..3 of acc and in
  std::vector<uint16_t> all(kPatterns), fixed(kPatterns), random(kPatterns);
  sim::Prng bits(0xa11u + static_cast<uint64_t>(k.dtype));
  for (size_t i = 0; i < kPatterns; ++i) {
    all[i] = static_cast<uint16_t>(i);
    random[i] = next16(bits);
  }
  const std::vector<uint16_t> values = special_values(k.dtype);
  for (size_t j = 0; j < values.size(); ++j) {
    std::fill(fixed.begin(), fixed.end(), values[j]);
    const size_t a = j % kOffsets;
    const size_t b = (j / kOffsets) % kOffsets;
    tally.add(check_call(k, {all.data(), fixed.data(), kPatterns, a, b, false,
                             "every pattern as acc"}));
    tally.add(check_call(k, {fixed.data(), all.data(), kPatterns, b, a, false,
                             "every pattern as in"}));
  }
  tally.add(check_call(
      k, {all.data(), all.data(), kPatterns, 1, 1, true, "every pattern"}));
  tally.add(check_call(k, {all.data(), random.data(), kPatterns, 3, 2, false,
                           "every pattern against random ones"}));
}

// Counts around the step widths and the prefetching block path, at every
// pair of byte offsets (for the large counts, the pairs with equal offsets
// or offsets adding to 3), and acc == in.
void check_counts(const Kernel& k, Tally& tally) {
  constexpr size_t kOffsets = 4;
  constexpr size_t kLarge = kPrefetchMinBytes / sizeof(uint16_t);
  constexpr size_t kSmallLimit = 1024;
  const size_t counts[] = {
      0,  1,  7,  8,    9,          15,     16,          17,
      63, 64, 65, 1000, kLarge - 3, kLarge, kLarge + 13, 2 * kLarge + 517};
  const size_t most = 2 * kLarge + 517;
  const std::vector<uint16_t> values = special_values(k.dtype);
  sim::Prng bits(0xc0417u + static_cast<uint64_t>(k.dtype));
  std::vector<uint16_t> acc(most), in(most);
  for (size_t i = 0; i < most; ++i) {
    // A quarter special values, so they meet in every lane position.
    const uint64_t r = bits.next();
    acc[i] = (r & 3) == 0 ? values[(r >> 8) % values.size()] : next16(bits);
    in[i] = (r & 12) == 0 ? values[(r >> 16) % values.size()] : next16(bits);
  }
  for (size_t count : counts) {
    for (size_t a = 0; a < kOffsets; ++a) {
      for (size_t b = 0; b < kOffsets; ++b) {
        if (count > kSmallLimit && !(a == b || a + b == kOffsets - 1)) continue;
        tally.add(check_call(
            k, {acc.data(), in.data(), count, a, b, false, "random counts"}));
      }
      tally.add(check_call(
          k, {acc.data(), acc.data(), count, a, a, true, "random counts"}));
    }
  }
}

// The 16-bit floats have a kernel for every op; other dtypes are left to the
// portable kernels.
void check_which_kernels(std::vector<Kernel>& kernels) {
  for (DType dtype : kDTypes) {
    for (ReduceOp op : kOps) {
      SimdReduceKernel run = simd_reduce_kernel(dtype, op);
      if (run == nullptr) {
        std::printf("FAIL no kernel for %s %s\n", dtype_label(dtype),
                    op_label(op));
        std::exit(EXIT_FAILURE);
      }
      kernels.push_back({dtype, op, run});
    }
  }
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32}) {
    if (simd_reduce_kernel(dtype, ReduceOp::kSum) != nullptr) {
      std::printf("FAIL a kernel for dtype %d, which has none on aarch64\n",
                  static_cast<int>(dtype));
      std::exit(EXIT_FAILURE);
    }
  }
}

int run_checks() {
  std::printf("FCVTL matches float16_to_float for all %zu float16\n",
              check_widening());
  std::printf("FCVTN matches float_to_float16 for %zu float32\n",
              check_narrowing());
  std::vector<Kernel> kernels;
  check_which_kernels(kernels);
  size_t total = 0;
  for (const Kernel& k : kernels) {
    Tally patterns, counts;
    check_every_pattern(k, patterns);
    check_counts(k, counts);
    std::printf(
        "%-8s %-4s ok: every pattern against %zu in/acc values, itself and "
        "random ones (%zu calls, %zu elements); counts 0..%zu at byte "
        "offsets 0-3 and acc == in (%zu calls, %zu elements)\n",
        dtype_label(k.dtype), op_label(k.op), special_values(k.dtype).size(),
        patterns.calls, patterns.elements,
        2 * kPrefetchMinBytes / sizeof(uint16_t) + 517, counts.calls,
        counts.elements);
    total += patterns.elements + counts.elements;
  }
  std::printf("PASS: %zu kernels, %zu elements, bit for bit\n", kernels.size(),
              total);
  return EXIT_SUCCESS;
}

}  // namespace
}  // namespace weft::collectives::internal

int main() { return weft::collectives::internal::run_checks(); }
