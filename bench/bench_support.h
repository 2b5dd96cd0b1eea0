// What the Google Benchmark suites share: row-name size labels, page-aligned
// buffers, and a main() body that fails the process when any row failed
// (Google Benchmark alone exits 0 after SkipWithError, which a smoke run in
// CI would not notice).
#ifndef WEFT_BENCH_BENCH_SUPPORT_H_
#define WEFT_BENCH_BENCH_SUPPORT_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "base/absl_compat.h"
#include "benchmark/benchmark.h"

namespace weft::bench {

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;

// This system's page size, asked of the system (4 KiB on x86-64 Linux,
// 16 KiB on Apple silicon).
inline size_t page_bytes() {
  static const size_t bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return bytes;
}

// At least `bytes` of page-aligned memory (rounded up to whole pages, as
// aligned_alloc requires); free it with std::free.
inline void* allocate_pages(size_t bytes) {
  const size_t page = page_bytes();
  return std::aligned_alloc(page, (bytes + page - 1) / page * page);
}

// "64KiB", "64MiB".
inline std::string size_label(uint64_t bytes) {
  return bytes >= kMiB ? std::to_string(bytes / kMiB) + "MiB"
                       : std::to_string(bytes / kKiB) + "KiB";
}

// `bytes` of page-aligned memory, every page written once so no timed loop
// takes its page faults.
class PageBuffer {
 public:
  explicit PageBuffer(size_t bytes, unsigned char fill = 0)
      : data_(static_cast<std::byte*>(allocate_pages(bytes))) {
    std::memset(data_, fill, bytes);
  }
  ~PageBuffer() { std::free(data_); }
  PageBuffer(const PageBuffer&) = delete;
  PageBuffer& operator=(const PageBuffer&) = delete;

  std::byte* data() const { return data_; }

 private:
  std::byte* data_;
};

inline bool& any_row_failed() {
  static bool failed = false;
  return failed;
}

// Skips the row with `why` and makes run_benchmarks() return 1.
inline void fail_row(benchmark::State& state, std::string_view why) {
  any_row_failed() = true;
  state.SkipWithError(std::string(why).c_str());
}

inline void fail_row(benchmark::State& state, const absl::Status& status) {
  fail_row(state, base::to_std(status.message()));
}

// main()'s body once the rows are registered: 1 for unrecognised arguments
// or any failed row, else 0.
inline int run_benchmarks(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return any_row_failed() ? 1 : 0;
}

}  // namespace weft::bench

#endif  // WEFT_BENCH_BENCH_SUPPORT_H_
