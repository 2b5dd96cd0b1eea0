// Bad arguments, over every fabric: InvalidArgument (cause kBadInput)
// saying what is wrong and where, nothing sent, and the group still works
// afterwards.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/collectives_suite/cases.h"
#include "tests/collectives_suite/suite.h"

namespace weft::testing {
namespace {

using ::testing::HasSubstr;

struct BadCall {
  std::string name;
  std::function<Operation(Group&, Bytes, Bytes)> start;  // (group, a, b)
  std::string says;
};

std::vector<BadCall> bad_calls() {
  const Bytes null_bytes(static_cast<std::byte*>(nullptr), 16);
  return {
      {"null input",
       [=](Group& g, Bytes, Bytes b) {
         return g.all_reduce_async(null_bytes, b.first(16), DType::kInt32,
                                   ReduceOp::kSum);
       },
       "input buffer is null but has 16 bytes"},
      {"null output",
       [=](Group& g, Bytes a, Bytes) {
         return g.all_gather_async(a.first(8),
                                   Bytes(static_cast<std::byte*>(nullptr), 24),
                                   DType::kInt32);
       },
       "output buffer is null but has 24 bytes"},
      {"size not a multiple of the dtype",
       [](Group& g, Bytes a, Bytes b) {
         return g.all_reduce_async(a.first(6), b.first(6), DType::kFloat32,
                                   ReduceOp::kSum);
       },
       "6 bytes, not a multiple of float32's 4 bytes"},
      {"unknown dtype",
       [](Group& g, Bytes a, Bytes b) {
         return g.all_reduce_async(a.first(8), b.first(8),
                                   static_cast<DType>(99), ReduceOp::kSum);
       },
       "unknown dtype 99"},
      {"unknown op",
       [](Group& g, Bytes a, Bytes b) {
         return g.all_reduce_async(a.first(8), b.first(8), DType::kInt32,
                                   static_cast<ReduceOp>(7));
       },
       "unknown reduction op 7"},
      {"root out of range",
       [](Group& g, Bytes a, Bytes b) {
         return g.broadcast_async(a.first(8), b.first(8), DType::kInt32, 3);
       },
       "root 3 is out of range: the group has ranks 0..2"},
      {"reduce root out of range",
       [](Group& g, Bytes a, Bytes b) {
         return g.reduce_async(a.first(8), b.first(8), DType::kInt32,
                               ReduceOp::kMax, 9);
       },
       "root 9 is out of range"},
      {"peer out of range",
       [](Group& g, Bytes a, Bytes) {
         return g.send_async(a.first(8), DType::kInt32, 5);
       },
       "peer 5 is out of range"},
      {"send to self",
       [](Group& g, Bytes a, Bytes) {
         return g.send_async(a.first(8), DType::kInt32, g.rank());
       },
       "cannot send to itself"},
      {"receive from self",
       [](Group& g, Bytes, Bytes b) {
         return g.recv_async(b.first(8), DType::kInt32, g.rank());
       },
       "cannot receive from itself"},
      {"all_to_all not divisible",
       [](Group& g, Bytes a, Bytes b) {
         return g.all_to_all_async(a.first(16), b.first(16), DType::kInt32);
       },
       "16 bytes do not split into 3 equal blocks"},
      {"all_reduce sizes differ",
       [](Group& g, Bytes a, Bytes b) {
         return g.all_reduce_async(a.first(8), b.first(12), DType::kInt32,
                                   ReduceOp::kSum);
       },
       "input has 8 bytes, output 12"},
      {"all_gather output size",
       [](Group& g, Bytes a, Bytes b) {
         return g.all_gather_async(a.first(8), b.first(16), DType::kInt32);
       },
       "output has 16 bytes; it must be group size 3 times the input's 8"},
      {"sum_scatter input size",
       [](Group& g, Bytes a, Bytes b) {
         return g.reduce_scatter_async(a.first(16), b.first(8), DType::kInt32,
                                       ReduceOp::kSum);
       },
       "input has 16 bytes; it must be group size 3 times the output's 8"},
      {"partial overlap",
       [](Group& g, Bytes a, Bytes) {
         return g.all_reduce_async(a.subspan(0, 16), a.subspan(8, 16),
                                   DType::kInt32, ReduceOp::kSum);
       },
       "overlap but the call is not in place"},
      {"unknown algorithm",
       [](Group& g, Bytes a, Bytes b) {
         return g.all_reduce_async(a.first(8), b.first(8), DType::kInt32,
                                   ReduceOp::kSum,
                                   {static_cast<Algorithm>(9), 0});
       },
       "unknown algorithm 9"},
      {"negative timeout",
       [](Group& g, Bytes a, Bytes b) {
         return g.all_reduce_async(a.first(8), b.first(8), DType::kInt32,
                                   ReduceOp::kSum, {Algorithm::kAuto, -5});
       },
       "timeout -5 ns"},
  };
}

TEST_P(CollectivesBadInput, RefusedWithWhatAndWhereAndGroupStaysUsable) {
  absl::StatusOr<std::unique_ptr<Cluster>> cluster =
      make_cluster(spec_of(*Topology::mesh(3)));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  const uint64_t hash_before = c.trace_hash();
  std::vector<ByteVec> a(3, ByteVec(64)), b(3, ByteVec(64));
  for (const BadCall& bad : bad_calls()) {
    for (uint32_t r = 0; r < 3; ++r) {
      Operation op = bad.start(c.group(r), a[r], b[r]);
      ASSERT_TRUE(op.done()) << bad.name;
      const absl::Status s = op.status();
      EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument)
          << bad.name << ": " << s;
      EXPECT_THAT(std::string(s.message()), HasSubstr(bad.says)) << bad.name;
      EXPECT_THAT(std::string(s.message()),
                  HasSubstr(absl::StrFormat("rank %u", r)));
      const auto place = error_place(s);
      ASSERT_TRUE(place.has_value()) << bad.name;
      EXPECT_EQ(place->cause, ErrorCause::kBadInput);
      EXPECT_EQ(place->rank, r);
    }
  }
  // Nothing was sent: the fabric saw no frame since formation.
  EXPECT_EQ(c.trace_hash(), hash_before);
  // Still usable: a real collective afterwards gives the right answer.
  std::vector<PreparedCase> cases;
  cases.emplace_back(
      Case{.kind = Kind::kAllReduce, .dtype = DType::kInt32, .count = 100}, 3);
  ScriptRun run = run_cases(c, cases);
  ASSERT_TRUE(run.run.completed()) << run.run.report;
  for (uint32_t r = 0; r < 3; ++r) {
    ASSERT_EQ(run.results[r].size(), 1u);
    EXPECT_TRUE(run.results[r][0].ok()) << run.results[r][0];
    EXPECT_EQ(cases[0].check(r), "");
    EXPECT_TRUE(c.group(r).health().ok());
  }
}

TEST_P(CollectivesBadInput, NonNeighbourSendOnARingIsRefused) {
  absl::StatusOr<std::unique_ptr<Cluster>> cluster =
      make_cluster(spec_of(*Topology::ring(4)));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster& c = **cluster;
  ByteVec buf(8);
  Operation op = c.group(0).send_async(buf, DType::kUint8, 2);
  ASSERT_TRUE(op.done());
  EXPECT_EQ(op.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(op.status().message()),
              HasSubstr("ranks 0 and 2 are not joined by a cable"));
  // A mesh algorithm on a ring topology is refused the same way.
  Operation mesh = c.group(1).all_reduce_async(
      buf, buf, DType::kUint8, ReduceOp::kSum, {Algorithm::kMeshExchange, 0});
  ASSERT_TRUE(mesh.done());
  EXPECT_THAT(std::string(mesh.status().message()),
              HasSubstr("needs a cable between every pair of ranks"));
  EXPECT_TRUE(c.group(1).health().ok());
}

TEST_P(CollectivesBadInput, BadGroupOptionsAreRefused) {
  for (auto [field, options] :
       std::vector<std::pair<std::string, GroupOptions>>{
           {"depth", GroupOptions{.depth = 2}},
           {"max_frame_bytes", GroupOptions{.max_frame_bytes = 5000}},
           {"ring_directions", GroupOptions{.ring_directions = 3}},
           {"send_queue_bytes", GroupOptions{.send_queue_bytes = 100}},
           {"timeout_ns", GroupOptions{.timeout_ns = 0}}}) {
    absl::StatusOr<std::unique_ptr<Cluster>> cluster =
        make_cluster(spec_of(*Topology::mesh(2)), options);
    ASSERT_FALSE(cluster.ok()) << field;
    EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(cluster.status().message()), HasSubstr(field));
  }
}

}  // namespace
}  // namespace weft::testing
