// Benchmarks of the reduction kernels: reduce_into for every dtype and op at
// 64 KiB (cache-resident) and 64 MiB (memory-bound), beside two baselines in
// the same binary and built with the same flags: memcpy and a plain float32
// in-place add loop; and reduce_to (float32 and bfloat16 sums into a third
// buffer) beside the copy-then-reduce it replaces. Bytes/s counts the bytes of
// one input buffer (count x dtype size), so every row is comparable with memcpy
// of the same size.
//
//   weft_kernels_bench --benchmark_filter='64MiB' --benchmark_repetitions=3
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "bench/bench_support.h"
#include "benchmark/benchmark.h"
#include "collectives/dtype.h"
#include "collectives/kernels/reduce.h"

namespace weft::bench {
namespace {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kSizesBytes[] = {64 * kKiB, 64 * kMiB};
constexpr size_t kMaxBytes = 64 * kMiB;

// One 1 in each dtype's encoding: sums stay finite for the few thousand
// iterations a run makes, products stay 1, no subnormals slow the floats.
std::vector<unsigned char> one_of(DType dtype) {
  const size_t size = dtype_size(dtype);
  std::vector<unsigned char> bytes(size, 0);
  auto put = [&](auto value) {
    std::memcpy(bytes.data(), &value, sizeof value);
  };
  switch (dtype) {
    case DType::kFloat16:
      put(uint16_t{0x3c00});
      break;
    case DType::kBFloat16:
      put(uint16_t{0x3f80});
      break;
    case DType::kFloat32:
    case DType::kComplex64:  // (1, 0)
      put(1.0f);
      break;
    case DType::kFloat64:
      put(1.0);
      break;
    default:  // bool and the integers: 1 in a type of their size
      if (size == sizeof(uint8_t)) put(uint8_t{1});
      if (size == sizeof(uint16_t)) put(uint16_t{1});
      if (size == sizeof(uint32_t)) put(uint32_t{1});
      if (size == sizeof(uint64_t)) put(uint64_t{1});
      break;
  }
  return bytes;
}

// Page-aligned buffers shared by every benchmark (allocated once, filled
// per run), as the fabric's slab frames are.
struct Buffer {
  Buffer()
      : data(static_cast<unsigned char*>(bench::allocate_pages(kMaxBytes))) {}
  ~Buffer() { std::free(data); }
  unsigned char* data;
};

struct Buffers {
  Buffer acc;
  Buffer in;
  Buffer dst;  // reduce_to's destination
};

Buffers& buffers() {
  static Buffers* b = new Buffers();
  return *b;
}

// Repeats `element` over the first `bytes` of `buffer`, doubling the filled
// prefix with each copy.
void fill(Buffer& buffer, size_t bytes,
          const std::vector<unsigned char>& element) {
  std::memcpy(buffer.data, element.data(), element.size());
  for (size_t done = element.size(); done < bytes;) {
    const size_t n = std::min(done, bytes - done);
    std::memcpy(buffer.data + done, buffer.data, n);
    done += n;
  }
}

void bm_reduce(benchmark::State& state, DType dtype, ReduceOp op,
               size_t bytes) {
  Buffers& b = buffers();
  const std::vector<unsigned char> one = one_of(dtype);
  fill(b.acc, bytes, one);
  fill(b.in, bytes, one);
  const size_t count = bytes / dtype_size(dtype);
  for (auto _ : state) {
    const absl::Status status =
        reduce_into(dtype, op, b.acc.data, b.in.data, count);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// dst = op(acc, in): reduce_to in one pass, or (`copy_first`) as the
// engine combined before it, a copy of acc into dst and reduce_into, a
// 16 KiB piece at a time.
constexpr size_t kPieceBytes = 16 * kKiB;  // what the engine copied at once

void bm_reduce_to(benchmark::State& state, DType dtype, ReduceOp op,
                  size_t bytes, bool copy_first) {
  Buffers& b = buffers();
  const std::vector<unsigned char> one = one_of(dtype);
  fill(b.acc, bytes, one);
  fill(b.in, bytes, one);
  const size_t elem = dtype_size(dtype);
  const size_t count = bytes / elem;
  for (auto _ : state) {
    absl::Status status;
    if (copy_first) {
      for (size_t done = 0; done < bytes && status.ok(); done += kPieceBytes) {
        const size_t n = std::min(kPieceBytes, bytes - done);
        std::memcpy(b.dst.data + done, b.acc.data + done, n);
        status = reduce_into(dtype, op, b.dst.data + done, b.in.data + done,
                             n / elem);
      }
    } else {
      status = reduce_to(dtype, op, b.dst.data, b.acc.data, b.in.data, count);
    }
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void bm_memcpy(benchmark::State& state, size_t bytes) {
  Buffers& b = buffers();
  std::memset(b.acc.data, 0, bytes);
  std::memset(b.in.data, 1, bytes);
  for (auto _ : state) {
    std::memcpy(b.acc.data, b.in.data, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

// The baseline float32 kernel: what any C++ programmer would write. Not
// inlined, so the compiler knows nothing of the buffers it is given, as it
// knows nothing of those given to the library.
__attribute__((noinline)) void plain_add(float* a, const float* b,
                                         size_t count) {
  for (size_t i = 0; i < count; ++i) a[i] += b[i];
}

void bm_plain_add(benchmark::State& state, size_t bytes) {
  Buffers& b = buffers();
  const std::vector<unsigned char> one = one_of(DType::kFloat32);
  fill(b.acc, bytes, one);
  fill(b.in, bytes, one);
  auto* a = reinterpret_cast<float*>(b.acc.data);
  const auto* in = reinterpret_cast<const float*>(b.in.data);
  const size_t count = bytes / sizeof(float);
  for (auto _ : state) {
    plain_add(a, in, count);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

std::string size_label(size_t bytes) {
  return bytes >= kMiB ? std::to_string(bytes / kMiB) + "MiB"
                       : std::to_string(bytes / kKiB) + "KiB";
}

void register_all() {
  for (size_t bytes : kSizesBytes) {
    const std::string size = size_label(bytes);
    benchmark::RegisterBenchmark(("baseline/memcpy/" + size).c_str(), bm_memcpy,
                                 bytes);
    benchmark::RegisterBenchmark(("baseline/float32_add_loop/" + size).c_str(),
                                 bm_plain_add, bytes);
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      const std::string what = std::string(dtype_name(dtype)) + "/sum/" + size;
      benchmark::RegisterBenchmark(
          ("baseline/copy_then_reduce/" + what).c_str(), bm_reduce_to, dtype,
          ReduceOp::kSum, bytes, true);
      benchmark::RegisterBenchmark(("reduce_to/" + what).c_str(), bm_reduce_to,
                                   dtype, ReduceOp::kSum, bytes, false);
    }
    for (int d = 0; d < kDTypeCount; ++d) {
      for (int o = 0; o < kReduceOpCount; ++o) {
        const auto dtype = static_cast<DType>(d);
        const auto op = static_cast<ReduceOp>(o);
        const std::string name = "reduce/" + std::string(dtype_name(dtype)) +
                                 "/" + std::string(reduce_op_name(op)) + "/" +
                                 size;
        benchmark::RegisterBenchmark(name.c_str(), bm_reduce, dtype, op, bytes);
      }
    }
  }
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
