// jaccl_allsum_bench: an all-sum benchmark as JACCL users write them (in
// the manner of JACCL's examples/allreduce_bench.cpp): a sweep of sizes,
// warm-up and timed iterations of Group::all_sum, the bandwidths, and the
// result of every iteration checked on every rank.
//
//   jaccl_allsum_bench [-b MIN] [-e MAX] [-f FACTOR] [-w WARMUP] [-n ITERS]
//                      [-d float32|float16|bfloat16|int32|float64]
//
// Sizes take K and M suffixes. The group comes from the environment
// (jaccl::init(strict)). Rank 0 prints one line per size, ending in OK or
// FAIL for the whole group's check; every rank prints a line for each wrong
// value it saw and a last line "rank R: <N> sizes, all OK" or "... FAIL".
// Exit codes: 0 all correct, 1 a wrong value, 3 a call threw.
#include <jaccl/jaccl.h>
#include <jaccl/types.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "program_start.h"

namespace {

struct Options {
  size_t min_bytes = 1024;
  size_t max_bytes = 1 << 20;
  size_t factor = 4;
  int warmup = 2;
  int iters = 5;
  std::string dtype = "float32";
};

size_t parse_size(const std::string& text) {
  size_t end = 0;
  const unsigned long long value = std::stoull(text, &end);
  const std::string suffix = text.substr(end);
  if (suffix.empty()) return value;
  if (suffix == "K" || suffix == "k") return value << 10;
  if (suffix == "M" || suffix == "m") return value << 20;
  throw std::invalid_argument("bad size '" + text + "': use N, NK or NM");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "-b")
      o.min_bytes = parse_size(value);
    else if (flag == "-e")
      o.max_bytes = parse_size(value);
    else if (flag == "-f")
      o.factor = parse_size(value);
    else if (flag == "-w")
      o.warmup = std::stoi(value);
    else if (flag == "-n")
      o.iters = std::stoi(value);
    else if (flag == "-d")
      o.dtype = value;
    else
      throw std::invalid_argument("unknown option " + flag);
  }
  if (o.factor < 2) throw std::invalid_argument("-f must be 2 or more");
  return o;
}

// The element type's arithmetic on small integers, which are exact in each.
template <typename T>
struct Sweep {
  jaccl::Group& group;
  const Options& o;
  int dtype;

  static T value(int rank, size_t i) {
    return T(static_cast<float>((rank + 1) * int(i % 7 + 1)));
  }

  // Every element of `out` against the sum over ranks, computed here.
  size_t wrong(const std::vector<T>& out) const {
    const int size = group.size();
    for (size_t i = 0; i < out.size(); ++i) {
      float want = 0;
      for (int r = 0; r < size; ++r) want += static_cast<float>(value(r, i));
      if (static_cast<float>(out[i]) != want) {
        std::cout << "rank " << group.rank() << ": all_sum of " << out.size()
                  << " x " << o.dtype << ": element " << i << " is "
                  << static_cast<float>(out[i]) << ", expected " << want
                  << std::endl;
        return 1;
      }
    }
    return 0;
  }

  // One size: warm-up, timed iterations (each result checked), an in-place
  // run. Returns the number of wrong results on this rank.
  size_t run_size(size_t count, double* us) {
    std::vector<T> in(count), out(count);
    for (size_t i = 0; i < count; ++i) in[i] = value(group.rank(), i);
    const size_t n_bytes = count * sizeof(T);
    size_t bad = 0;
    for (int i = 0; i < o.warmup; ++i) {
      group.all_sum(in.data(), out.data(), n_bytes, dtype);
      bad += wrong(out);
    }
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < o.iters; ++i) {
      group.all_sum(in.data(), out.data(), n_bytes, dtype);
      bad += wrong(out);
    }
    const auto end = std::chrono::steady_clock::now();
    *us = std::chrono::duration<double, std::micro>(end - start).count() /
          (o.iters > 0 ? o.iters : 1);
    group.all_sum(in.data(), in.data(), n_bytes, dtype);
    return bad + wrong(in);
  }

  int run() {
    const int rank = group.rank(), size = group.size();
    if (rank == 0) {
      std::printf("# jaccl all_sum: %d ranks, %s, %d warm-up + %d timed\n",
                  size, o.dtype.c_str(), o.warmup, o.iters);
      std::printf("# %10s %10s %10s %12s %10s %10s %6s\n", "bytes", "count",
                  "type", "time(us)", "algbw", "busbw", "check");
    }
    int sizes = 0;
    size_t bad_total = 0;
    for (size_t bytes = o.min_bytes; bytes <= o.max_bytes; bytes *= o.factor) {
      const size_t count = bytes / sizeof(T) > 0 ? bytes / sizeof(T) : 1;
      double us = 0;
      const size_t bad = run_size(count, &us);
      bad_total += bad;
      ++sizes;
      // The group's verdict: any rank's wrong value fails the size.
      const int32_t mine = bad > 0 ? 1 : 0;
      int32_t any = 0;
      group.all_sum(&mine, &any, sizeof(mine), jaccl::Int32);
      const double gbps = double(count * sizeof(T)) / (us * 1e3);
      if (rank == 0) {
        std::printf("  %10zu %10zu %10s %12.1f %10.2f %10.2f %6s\n",
                    count * sizeof(T), count, o.dtype.c_str(), us, gbps,
                    gbps * 2.0 * (size - 1) / size, any == 0 ? "OK" : "FAIL");
        std::fflush(stdout);
      }
    }
    std::cout << "rank " << rank << ": " << sizes << " sizes, "
              << (bad_total == 0 ? "all OK" : "FAIL") << std::endl;
    return bad_total == 0 ? 0 : 1;
  }
};

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const std::shared_ptr<jaccl::Group> group = jaccl::init(/*strict=*/true);
  if (!group) throw std::runtime_error("jaccl::init returned no group");
  if (o.dtype == "float32")
    return Sweep<float>{*group, o, jaccl::Float32}.run();
  if (o.dtype == "float64")
    return Sweep<double>{*group, o, jaccl::Float64}.run();
  if (o.dtype == "int32") return Sweep<int32_t>{*group, o, jaccl::Int32}.run();
  if (o.dtype == "float16") {
    return Sweep<jaccl::float16_t>{*group, o, jaccl::Float16}.run();
  }
  if (o.dtype == "bfloat16") {
    return Sweep<jaccl::bfloat16_t>{*group, o, jaccl::BFloat16}.run();
  }
  throw std::invalid_argument("unknown dtype " + o.dtype);
}

}  // namespace

int main(int argc, char** argv) {
  return conformance::run_main("jaccl_allsum_bench",
                               [&] { return run(argc, argv); });
}
