// weft-bench's measuring loop (tools/weft-bench/weft_bench_run.h) in
// process, over a runner that stops the benchmark on the measurement a test
// names, as a failed group on hardware does: the result keeps the rows
// measured before it, the JSON written holds exactly those rows, and the
// line for stderr names the failed row, the cause and the file. Also the
// sizes a block measures: one row per size the op can carry.
#include "tools/weft-bench/weft_bench_run.h"

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tools/weft-bench/weft_bench_sizes.h"

namespace weft::tools::weft_bench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr uint32_t kRanks = 4;

// Every measurement takes 10 us and is right, until measurement number
// `fail_at` (from 0), which ends the benchmark with an error.
class FailingRunner : public BenchRunner {
 public:
  explicit FailingRunner(int fail_at) : fail_at_(fail_at) {}
  uint32_t ranks() const override { return kRanks; }
  bool reports() const override { return true; }
  std::string describe() const override { return "a test runner"; }
  bool virtual_time() const override { return true; }
  absl::Status check(const harness::CollectiveSpec&) const override {
    return absl::OkStatus();
  }
  Algorithm algorithm(const harness::CollectiveSpec&) const override {
    return Algorithm::kRing;
  }
  absl::StatusOr<Measurement> measure(const MeasureRequest&) override {
    if (calls_++ == fail_at_) {
      return absl::UnavailableError("rank 2's queue pair went to error");
    }
    Measurement m;
    m.ran = true;
    m.time_us = 10;
    m.checked = true;
    return m;
  }
  CostModel cost_model() const override { return {}; }

 private:
  int fail_at_;
  int calls_ = 0;
};

BenchOptions options_with_json(const std::string& json_path) {
  BenchOptions o;
  o.sizes = {1024, 2048, 4096};
  o.ops = {BenchOp{harness::CollectiveKind::kAllReduce, ReduceOp::kSum}};
  o.algorithms = {harness::AlgorithmRequest::kAuto};
  o.iters = 1;
  o.json_path = json_path;
  return o;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "/weft_bench_run_test_" + name;
}

// Each row measures out of place, then in place: measurement 5 is the
// third row's in-place one, so two rows were measured before it.
TEST(WeftBenchRun, ALaterRowFailingKeepsTheRowsBeforeItInTheJson) {
  const std::string json = temp_path("partial.json");
  std::remove(json.c_str());
  const BenchOptions options = options_with_json(json);
  FailingRunner runner(/*fail_at=*/5);
  const BenchRun run = run_blocks(runner, options);
  ASSERT_FALSE(run.status.ok());
  EXPECT_EQ(run.rows, 2u);
  EXPECT_EQ(run.failed_row, "all_reduce auto 4096 bytes");
  const std::string line = stopped_line(run, options, runner);
  EXPECT_THAT(line, HasSubstr("row all_reduce auto 4096 bytes failed: "));
  EXPECT_THAT(line, HasSubstr("rank 2's queue pair went to error"));
  EXPECT_THAT(line, HasSubstr(json + " holds the 2 row(s) measured before it"));
  std::ifstream in(json);
  ASSERT_TRUE(in.good()) << json << " was not written";
  const nlohmann::json doc = nlohmann::json::parse(in);
  ASSERT_EQ(doc["blocks"].size(), 1u);
  const nlohmann::json& results = doc["blocks"][0]["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["bytes"], 1024);
  EXPECT_EQ(results[1]["bytes"], 2048);
  EXPECT_EQ(results[1]["in_place"]["time_us"], 10.0);
}

TEST(WeftBenchRun, WithoutOutputFilesTheLineSaysOnlyWhatFailed) {
  const BenchOptions options = options_with_json("");
  FailingRunner runner(/*fail_at=*/0);
  const BenchRun run = run_blocks(runner, options);
  EXPECT_EQ(run.rows, 0u);
  EXPECT_EQ(stopped_line(run, options, runner),
            "row all_reduce auto 1024 bytes failed: UNAVAILABLE: rank 2's "
            "queue pair went to error");
}

// all_to_all over 4 ranks of 4-byte floats carries multiples of 16 bytes:
// 1, 4 and 16 bytes are all one 16-byte row, 20 is 16 again, 64 is 64.
TEST(WeftBenchSizes, SizesThatRoundAlikeGiveOneRow) {
  harness::CollectiveSpec spec;
  spec.kind = harness::CollectiveKind::kAllToAll;
  spec.dtype = DType::kFloat32;
  const std::vector<uint64_t> asked = {1, 4, 16, 20, 64};
  const BlockSizes sizes = block_sizes(spec, asked, kRanks);
  EXPECT_THAT(sizes.bytes, ElementsAre(16, 64));
  EXPECT_EQ(sizes.smallest_bytes, 16u);
  EXPECT_TRUE(sizes.raised);
  // all_reduce carries whole floats: 1 byte is raised to 4, 6 is 4 too.
  spec.kind = harness::CollectiveKind::kAllReduce;
  const std::vector<uint64_t> small = {0, 1, 6, 8};
  const BlockSizes reduce = block_sizes(spec, small, kRanks);
  EXPECT_THAT(reduce.bytes, ElementsAre(0, 4, 8));
  EXPECT_EQ(reduce.smallest_bytes, 4u);
  const std::vector<uint64_t> whole = {8, 16};
  EXPECT_FALSE(block_sizes(spec, whole, kRanks).raised);
}

}  // namespace
}  // namespace weft::tools::weft_bench
