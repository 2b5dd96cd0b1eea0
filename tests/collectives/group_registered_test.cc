// Registered user memory under loss, duplication and reordering in the
// simulator: a caller may change a registered buffer the moment a call on
// it returned (its input, and its output, which an all-sum's second phase
// sends from), although frames sent straight from it may not be
// acknowledged yet and may be resent afterwards. Every rank's results, of
// that call and of the next, must still be exact (the engine copies
// unacknowledged frames of user memory aside when a call ends). Out of
// place, frames are also received straight into the registered output,
// and frames of other numbers that take such a receive (behind a loss, a
// duplicate, an acknowledgement) are moved aside: results stay exact,
// and nothing is written into a call's buffers after it returned.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/registered_memory.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"

namespace weft::testing {
namespace {

using harness::ScriptRun;
using harness::SimCluster;
using harness::Starter;

constexpr uint32_t kCount = 40000;  // int32 elements: many small frames

// Rank r's input of call `call`: element i is call * 1'000'000 + r * 1000 +
// i, so the sum over n ranks is n * (call * 1'000'000 + i) + 1000 * n(n-1)/2.
int32_t input(uint32_t call, uint32_t rank, uint32_t i) {
  return static_cast<int32_t>(call * 1'000'000 + rank * 1000 + i);
}
int32_t sum(uint32_t call, uint32_t n, uint32_t i) {
  return static_cast<int32_t>(n * (call * 1'000'000 + i) +
                              1000 * n * (n - 1) / 2);
}

// "" when `out` holds call `call`'s sum over n ranks.
std::string wrong(const std::vector<int32_t>& out, uint32_t call, uint32_t n) {
  for (uint32_t i = 0; i < out.size(); ++i) {
    if (out[i] != sum(call, n, i)) {
      return absl::StrFormat("call %u element %u is %d, want %d", call, i,
                             out[i], sum(call, n, i));
    }
  }
  return "";
}

struct Totals {
  uint64_t resent = 0;
  uint64_t zero_copy = 0;
  uint64_t in_place = 0;
  uint64_t moved_aside = 0;
};

// Two all-sums per rank on registered buffers; each call's buffers are
// overwritten with garbage as soon as the call returned (its result kept
// first). Checks every result; adds to *totals.
void run_seed(uint64_t seed, const Topology& topology, Algorithm algorithm,
              bool in_place, Totals* totals) {
  sim::WorldOptions w;
  w.topology = topology;
  w.seed = seed;
  w.faults.rates.loss = 0.01 + 0.04 * static_cast<double>(seed % 5) / 4;
  w.faults.rates.reorder = 0.02;
  w.faults.rates.duplicate = 0.01;
  w.time_limit_ns = 20 * kNsPerS;
  GroupOptions o;
  o.max_frame_bytes = GroupOptions::kMinFrameBytes;
  absl::StatusOr<SimCluster> cluster = SimCluster::create(w, o);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const uint32_t n = cluster->size();
  // [rank][call]: inputs, outputs (in place: the input is the output).
  std::vector<std::vector<std::vector<int32_t>>> in(n), out(n), kept(n);
  std::vector<RegisteredMemory> handles;
  std::vector<std::vector<Starter>> scripts(n);
  for (uint32_t r = 0; r < n; ++r) {
    for (uint32_t call = 0; call < 2; ++call) {
      in[r].emplace_back(kCount);
      out[r].emplace_back(kCount, -1);
      for (uint32_t i = 0; i < kCount; ++i) in[r][call][i] = input(call, r, i);
      for (auto* v : {&in[r][call], &out[r][call]}) {
        auto h = cluster->group(r).register_memory(std::span(*v));
        ASSERT_TRUE(h.ok()) << h.status();
        handles.push_back(*std::move(h));
      }
    }
    kept[r].resize(2);
    for (uint32_t call = 0; call < 2; ++call) {
      scripts[r].push_back([&, r, call](Group& g) {
        if (call > 0) {
          // The previous call returned: keep its result, then scribble
          // over everything it sent from (the input, and the output its
          // all-gather phase sent its reduced chunk from).
          const uint32_t prev = call - 1;
          kept[r][prev] = in_place ? in[r][prev] : out[r][prev];
          std::memset(in[r][prev].data(), 0xab, kCount * sizeof(int32_t));
          std::memset(out[r][prev].data(), 0xcd, kCount * sizeof(int32_t));
        }
        std::vector<int32_t>& dst = in_place ? in[r][call] : out[r][call];
        return g.all_reduce_async(std::as_bytes(std::span(in[r][call])),
                                  std::as_writable_bytes(std::span(dst)),
                                  DType::kInt32, ReduceOp::kSum,
                                  CallOptions{algorithm, 0});
      });
    }
  }
  ScriptRun run = cluster->run_scripts(std::move(scripts));
  ASSERT_TRUE(run.run.completed()) << "seed " << seed << ": " << run.run.report;
  for (uint32_t r = 0; r < n; ++r) {
    ASSERT_EQ(run.results[r].size(), 2u);
    for (const absl::Status& s : run.results[r]) {
      ASSERT_TRUE(s.ok()) << "seed " << seed << " rank " << r << ": " << s;
    }
    EXPECT_EQ(wrong(kept[r][0], 0, n), "") << "seed " << seed << " rank " << r;
    EXPECT_EQ(wrong(in_place ? in[r][1] : out[r][1], 1, n), "")
        << "seed " << seed << " rank " << r;
    // Nothing wrote into the first call's buffers after it returned (no
    // receive posted into them outlived the call).
    for (const auto* v : {&in[r][0], &out[r][0]}) {
      const int32_t fill =
          v == &in[r][0] ? int32_t(0xabababab) : int32_t(0xcdcdcdcd);
      if (in_place && v == &out[r][0]) continue;  // never used
      EXPECT_EQ(std::count(v->begin(), v->end(), fill), kCount)
          << "seed " << seed << " rank " << r;
    }
    const GroupCounters counters = cluster->group(r).counters();
    totals->resent += counters.total.frames_resent;
    totals->zero_copy += counters.payload_bytes_zero_copy;
    totals->in_place += counters.payload_bytes_received_in_place;
    totals->moved_aside += counters.payload_bytes_moved_aside;
  }
}

void run_seeds(const Topology& topology, Algorithm algorithm, bool in_place) {
  Totals totals;
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    run_seed(seed, topology, algorithm, in_place, &totals);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The faults happened and the payload went straight from user memory.
  EXPECT_GT(totals.resent, 0u);
  EXPECT_GT(totals.zero_copy, 0u);
  // Frames landed straight in the output, and other frames (behind a
  // loss, a duplicate, an acknowledgement) took receives posted there and
  // were moved aside. In place too: the all-gather's chunks land where
  // the partial sums were, once those were reduced and sent on.
  EXPECT_GT(totals.in_place, 0u);
  EXPECT_GT(totals.moved_aside, 0u);
}

TEST(RegisteredUnderLoss, ChangingTheInputAfterReturnKeepsMeshResultsExact) {
  run_seeds(*Topology::mesh(3), Algorithm::kMeshScatter, false);
}

TEST(RegisteredUnderLoss, ChangingTheInputAfterReturnKeepsRingResultsExact) {
  run_seeds(*Topology::ring(4), Algorithm::kRing, false);
}

TEST(RegisteredUnderLoss, ChangingAnInPlaceBufferAfterReturnIsSafeToo) {
  run_seeds(*Topology::mesh(3), Algorithm::kMeshScatter, true);
}

TEST(RegisteredUnderLoss, ChangingAnInPlaceRingBufferAfterReturnIsSafeToo) {
  run_seeds(*Topology::ring(4), Algorithm::kRing, true);
}

// A handle kept after its group is gone: the registration ended with the
// group (after its endpoints closed), and the handle does nothing more.
// Under ASan, a handle that still reached the freed fabric would fail here.
TEST(RegisteredLifetime, AHandleOutlivingItsGroupIsInert) {
  std::vector<int32_t> buffer(1024, 7);
  RegisteredMemory handle;
  {
    sim::WorldOptions w;
    w.topology = *Topology::mesh(2);
    absl::StatusOr<SimCluster> cluster = SimCluster::create(w);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    absl::StatusOr<RegisteredMemory> h =
        cluster->group(0).register_memory(std::span(buffer));
    ASSERT_TRUE(h.ok()) << h.status();
    handle = *std::move(h);
    EXPECT_TRUE(handle.registered());
  }
  EXPECT_FALSE(handle.registered());
  handle.reset();
  EXPECT_FALSE(handle.registered());
  EXPECT_EQ(buffer.front(), 7);
}

// The ranks disagree on the dtype, so the all-sum fails on both, with
// receives and sends still posted on the registered buffers. Dropping the
// handles then cannot end the registrations at once; registering the same
// memory again says why and what to do, and destroying the group ends
// them without a warning (its endpoints close first).
TEST(RegisteredLifetime,
     AFailedOperationsMemoryIsRefusedWithAReasonUntilTheGroupCloses) {
  constexpr size_t kElements = 1 << 18;
  std::vector<std::vector<int32_t>> in(2, std::vector<int32_t>(kElements, 1));
  std::vector<std::vector<int32_t>> out(2, std::vector<int32_t>(kElements));
  std::string logged;
  {
    sim::WorldOptions w;
    w.topology = *Topology::mesh(2);
    absl::StatusOr<SimCluster> cluster = SimCluster::create(w);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    std::vector<RegisteredMemory> handles;
    std::vector<std::vector<Starter>> scripts(2);
    for (uint32_t r = 0; r < 2; ++r) {
      for (auto* v : {&in[r], &out[r]}) {
        absl::StatusOr<RegisteredMemory> h =
            cluster->group(r).register_memory(std::span(*v));
        ASSERT_TRUE(h.ok()) << h.status();
        handles.push_back(*std::move(h));
      }
      scripts[r].push_back([&, r](Group& g) {
        return g.all_reduce_async(std::as_bytes(std::span(in[r])),
                                  std::as_writable_bytes(std::span(out[r])),
                                  r == 0 ? DType::kInt32 : DType::kFloat32,
                                  ReduceOp::kSum);
      });
    }
    ScriptRun run = cluster->run_scripts(std::move(scripts));
    for (uint32_t r = 0; r < 2; ++r) {
      ASSERT_EQ(run.results[r].size(), 1u);
      ASSERT_FALSE(run.results[r][0].ok()) << "rank " << r;
    }
    handles.clear();
    int refused = 0;
    for (uint32_t r = 0; r < 2; ++r) {
      for (auto* v : {&in[r], &out[r]}) {
        absl::StatusOr<RegisteredMemory> again =
            cluster->group(r).register_memory(std::span(*v));
        if (again.ok()) continue;
        ++refused;
        EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition)
            << again.status();
        EXPECT_NE(again.status().message().find("destroy the group"),
                  std::string::npos)
            << again.status();
      }
    }
    // Both ranks' inputs had sends of the failed all-sum posted.
    EXPECT_GE(refused, 2);
    ::testing::internal::CaptureStderr();
  }
  logged = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(logged.find("registered memory"), std::string::npos) << logged;
}

}  // namespace
}  // namespace weft::testing
