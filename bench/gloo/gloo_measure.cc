#include "bench/gloo/gloo_measure.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "bench/gloo/check/all_reduce_check.h"
#include "gloo/allreduce.h"
#include "gloo/barrier.h"
#include "gloo/math.h"
#include "gloo/rendezvous/context.h"
#include "gloo/rendezvous/file_store.h"
#include "gloo/transport/tcp/device.h"
#include "harness/collective_spec.h"
#include "nlohmann/json.hpp"
#include "tools/cli/output_file.h"
#include "tools/weft-bench/weft_bench_json.h"

namespace weft::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNsPerUs = 1e3;
class GlooRank {
 public:
  explicit GlooRank(const GlooRun& run) : run_(run) {}

  // Throws what Gloo throws.
  void connect() {
    gloo::transport::tcp::attr attr;
    attr.hostname = run_.address;
    std::shared_ptr<gloo::transport::Device> device =
        gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore store(run_.store_dir);
    auto context = std::make_shared<gloo::rendezvous::Context>(
        static_cast<int>(run_.rank), static_cast<int>(run_.ranks));
    context->setTimeout(run_.timeout);
    context->connectFullMesh(store, device);
    context_ = std::move(context);
  }

  void barrier() {
    gloo::BarrierOptions options(context_);
    options.setTimeout(run_.timeout);
    gloo::barrier(options);
  }

  // Gloo's ring all-reduce, float32 sum; in place when `in` is empty.
  void all_reduce(std::span<const float> in, std::span<float> out) {
    gloo::AllreduceOptions options(context_);
    options.setAlgorithm(gloo::AllreduceOptions::Algorithm::RING);
    if (!in.empty()) {
      options.setInput(const_cast<float*>(in.data()), in.size());
    }
    options.setOutput(out.data(), out.size());
    void (*sum)(void*, const void*, const void*, size_t) = &gloo::sum<float>;
    options.setReduceFunction(sum);
    options.setTimeout(run_.timeout);
    gloo::allreduce(options);
  }

  // Every rank's elapsed time and #wrong, added up; through Gloo, as
  // weft-bench adds up its own through weft.
  std::array<double, 2> sum_over_ranks(std::array<double, 2> mine) {
    std::array<double, 2> sums{};
    gloo::AllreduceOptions options(context_);
    options.setInput(mine.data(), mine.size());
    options.setOutput(sums.data(), sums.size());
    void (*sum)(void*, const void*, const void*, size_t) = &gloo::sum<double>;
    options.setReduceFunction(sum);
    options.setTimeout(run_.timeout);
    gloo::allreduce(options);
    return sums;
  }

  Measurement measure(uint64_t bytes, bool in_place);

 private:
  const GlooRun& run_;
  std::shared_ptr<gloo::Context> context_;
};

// Warm-up then timed iterations, each: fresh input, a barrier, the timed
// call, the check. Out of place, the output starts as NaN so a stale
// element cannot pass.
Measurement GlooRank::measure(uint64_t bytes, bool in_place) {
  const uint64_t count = bytes / sizeof(float);
  std::vector<float> in(in_place ? 0 : count);
  std::vector<float> out(count);
  Clock::duration elapsed{0};
  uint64_t wrong = 0;
  for (uint32_t it = 0; it < run_.warmup_iters + run_.iters; ++it) {
    if (in_place) {
      fill_input(run_.rank, it, out);
    } else {
      fill_input(run_.rank, it, in);
      std::fill(out.begin(), out.end(),
                std::numeric_limits<float>::quiet_NaN());
    }
    barrier();
    const Clock::time_point start = Clock::now();
    all_reduce(in, out);
    if (it >= run_.warmup_iters) elapsed += Clock::now() - start;
    wrong += wrong_elements(run_.ranks, it, out);
  }
  const double elapsed_ns = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count());
  const std::array<double, 2> sums =
      sum_over_ranks({elapsed_ns, static_cast<double>(wrong)});
  Measurement m;
  m.ran = true;
  m.time_us = sums[0] / run_.ranks / run_.iters / kNsPerUs;
  m.checked = true;
  m.wrong = static_cast<uint64_t>(sums[1]);
  return m;
}

absl::StatusOr<BenchRow> row_for(uint64_t bytes, uint32_t ranks) {
  const harness::CollectiveSpec spec{.bytes = bytes};
  absl::StatusOr<harness::CollectiveShape> shape =
      harness::shape_of(spec, ranks);
  if (!shape.ok()) return shape.status();
  BenchRow row;
  row.size_bytes = shape->size_bytes;
  row.count = shape->count;
  row.type = "float";
  row.redop = "sum";
  row.bus_factor = shape->bus_factor;
  row.algorithm = "ring";
  return row;
}

}  // namespace

absl::StatusOr<BenchBlock> measure_all_reduce(const GlooRun& run) {
  BenchBlock block{.op = "all_reduce", .algorithm = "ring"};
  GlooRank rank(run);
  try {
    rank.connect();
    for (uint64_t bytes : run.sizes_bytes) {
      absl::StatusOr<BenchRow> row = row_for(bytes, run.ranks);
      if (!row.ok()) return row.status();
      row->out_of_place = rank.measure(bytes, false);
      row->in_place = rank.measure(bytes, true);
      block.rows.push_back(*std::move(row));
    }
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrFormat(
        "Gloo failed (store %s, address %s): %s; check that all %u ranks "
        "started with the same --store and --size",
        run.store_dir, run.address, e.what(), run.ranks));
  }
  return block;
}

absl::Status write_gloo_json(const std::string& path, const BenchBlock& block,
                             const BenchOptions& options, const GlooRun& run) {
  const JsonContext context{
      .fabric = "gloo-tcp",
      .time = "wall",
      .ranks = run.ranks,
      .where = absl::StrFormat("Gloo ring all-reduce, tcp on %s", run.address)};
  // weft-bench's document (docs/json.md), under this tool's name.
  nlohmann::ordered_json doc =
      nlohmann::ordered_json::parse(results_json({block}, options, context));
  doc["tool"] = "gloo_allreduce";
  return tools::cli::write_text_file(path, doc.dump(1) + "\n");
}

}  // namespace weft::bench
