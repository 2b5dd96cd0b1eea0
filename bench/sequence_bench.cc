// Benchmarks of the per-frame work around the fabric: sequence checking,
// CheckedPair's completion path, and the collectives engine's staging
// copies between user buffers and frames.
//
//  - sequence/<in_order|gaps|reordered>: ReceiveChecker::check on arrivals
//    in order, with one number missing out of every kGapEvery (kGap), and
//    in swapped pairs (kGap then kReordered); items/s is checks per second.
//  - endpoint/poll: a trivial in-memory Endpoint whose every poll() returns
//    a full batch of in-order receive completions (the baseline), and
//    checked_pair/poll: the same through CheckedPair::poll (status, immediate
//    and sequence checks); checked_pair/post_and_poll: CheckedPair::post_send
//    on a loopback endpoint that turns each send into a receive completion,
//    then poll. items/s is completions per second.
//  - staging/<in|out>/<frame size>: the engine has no helper of its own for
//    its staging copies: the copy into a frame is the std::memcpy inside
//    Lane::send (collectives/engine/lane_frames.cc), after the 64-byte frame
//    header, and the copy out is the std::memcpy (or reduce_into) inside
//    OpRunner::apply (collectives/engine/op_runner.cc), from the payload after
//    the header; both are tied to posting and to running an operation. These
//    rows measure the same pattern with memcpy: a 64 MiB user buffer cut
//    into payloads of (frame - 64) bytes, each copied into the next of
//    `depth` (8) frames of a Slab at offset 64 (in), or from those frames
//    into a 64 MiB user buffer (out). bytes/s counts user bytes, comparable
//    with baseline/memcpy/64MiB in the same binary.
//
//   weft_fabric_bench --benchmark_repetitions=3
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/bench_support.h"
#include "benchmark/benchmark.h"
#include "collectives/engine/frame_header.h"
#include "collectives/group_options.h"
#include "fabric/checked_pair.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/sequence.h"
#include "fabric/slab.h"

namespace weft::bench {
namespace {

using bench::fail_row;
using bench::kKiB;
using bench::kMiB;
using bench::PageBuffer;
using bench::size_label;

// Checks per benchmark iteration, so the loop's own cost is negligible.
constexpr uint32_t kChecksPerIteration = 1024;
// sequence/gaps: one number out of this many never arrives.
constexpr uint32_t kGapEvery = 16;
// Sends posted per iteration of checked_pair/post_and_poll (at most
// Endpoint::kMaxSends may be outstanding).
constexpr uint32_t kSendsPerIteration = 16;
constexpr uint64_t kUserBytes = 64 * kMiB;
constexpr uint64_t kFrameSizes[] = {4 * kKiB, 16 * kKiB, 64 * kKiB, 256 * kKiB,
                                    512 * kKiB};

// ---------------------------------------------------------------------------
// ReceiveChecker::check.

enum class Arrivals { kInOrder, kGaps, kReordered };

// The i-th number to arrive.
uint32_t arrival(Arrivals pattern, uint32_t i) {
  switch (pattern) {
    case Arrivals::kInOrder:
      return i;
    case Arrivals::kGaps:  // skips every kGapEvery-th number
      return i + i / (kGapEvery - 1);
    case Arrivals::kReordered:  // 1, 0, 3, 2, ...
      return i ^ 1u;
  }
  return i;
}

void bm_sequence(benchmark::State& state, Arrivals pattern) {
  std::array<uint32_t, kChecksPerIteration> numbers;
  for (uint32_t i = 0; i < kChecksPerIteration; ++i) {
    numbers[i] = arrival(pattern, i);
  }
  // Each batch continues past the last one's highest number, so every
  // check sees the same situation whatever the iteration.
  const uint32_t span = *std::max_element(numbers.begin(), numbers.end()) + 1;
  ReceiveChecker checker;
  uint32_t base = 0;
  uint64_t not_ok = 0;
  for (auto _ : state) {
    for (uint32_t n : numbers) {
      const SequenceCheck c = checker.check(base + n);
      not_ok += c.ok() ? 0 : 1;
    }
    base += span;
  }
  benchmark::DoNotOptimize(not_ok);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) *
                          kChecksPerIteration);
  state.counters["not_ok_per_check"] =
      static_cast<double>(not_ok) /
      (static_cast<double>(state.iterations()) * kChecksPerIteration);
}

// ---------------------------------------------------------------------------
// CheckedPair over trivial in-memory endpoints.

Completion receive_completion(uint32_t sequence) {
  Completion c;
  c.id = WorkId{WorkKind::kRecv, 1, sequence % Endpoint::kMaxRecvs};
  c.byte_len = static_cast<uint32_t>(collectives::internal::kHeaderBytes);
  c.has_immediate = true;
  c.immediate = sequence;
  return c;
}

// Connects to nothing and accepts every post; subclasses decide what poll()
// returns.
class MemoryEndpoint : public Endpoint {
 public:
  MemoryEndpoint() { info_.device = "memory"; }
  const EndpointInfo& info() const override { return info_; }
  absl::StatusOr<Destination> destination() const override {
    return absl::UnimplementedError("a memory endpoint has no destination");
  }
  absl::Status connect(const Destination&) override { return absl::OkStatus(); }
  absl::Status post_recv(WorkId, const Frame&) override {
    return absl::OkStatus();
  }
  absl::Status post_send(WorkId, const Frame&, uint32_t, uint32_t) override {
    return absl::OkStatus();
  }

 private:
  EndpointInfo info_;
};

// Every poll() fills the whole batch with in-order receive completions.
class StreamEndpoint final : public MemoryEndpoint {
 public:
  absl::StatusOr<size_t> poll(std::span<Completion> out) override {
    for (Completion& c : out) c = receive_completion(next_++);
    return out.size();
  }

 private:
  uint32_t next_ = 0;
};

// Each send comes back as a receive of its immediate (the peer is itself).
class LoopbackEndpoint final : public MemoryEndpoint {
 public:
  absl::Status post_send(WorkId, const Frame&, uint32_t,
                         uint32_t immediate) override {
    if (count_ == ring_.size()) {
      return absl::ResourceExhaustedError("loopback queue full");
    }
    ring_[(head_ + count_++) % ring_.size()] = immediate;
    return absl::OkStatus();
  }
  absl::StatusOr<size_t> poll(std::span<Completion> out) override {
    size_t n = 0;
    for (; n < out.size() && count_ > 0; ++n, --count_) {
      out[n] = receive_completion(ring_[head_]);
      head_ = (head_ + 1) % ring_.size();
    }
    return n;
  }

 private:
  std::array<uint32_t, Endpoint::kMaxSends> ring_{};
  size_t head_ = 0;
  size_t count_ = 0;
};

void bm_endpoint_poll(benchmark::State& state) {
  StreamEndpoint endpoint;
  std::array<Completion, Endpoint::kMaxPollBatch> batch;
  uint64_t completions = 0;
  for (auto _ : state) {
    absl::StatusOr<size_t> n = endpoint.poll(batch);
    benchmark::DoNotOptimize(batch);
    completions += n.ok() ? *n : 0;
  }
  state.SetItemsProcessed(static_cast<int64_t>(completions));
}

void bm_checked_poll(benchmark::State& state) {
  StreamEndpoint endpoint;
  CheckedPair pair(endpoint);
  std::array<Completion, Endpoint::kMaxPollBatch> batch;
  uint64_t completions = 0;
  for (auto _ : state) {
    size_t good = 0;
    if (absl::Status s = pair.poll(batch, &good); !s.ok()) {
      return fail_row(state, s);
    }
    benchmark::DoNotOptimize(batch);
    completions += good;
  }
  state.SetItemsProcessed(static_cast<int64_t>(completions));
}

void bm_checked_post_and_poll(benchmark::State& state) {
  LoopbackEndpoint endpoint;
  CheckedPair pair(endpoint);
  std::array<Completion, Endpoint::kMaxPollBatch> batch;
  const WorkId id{WorkKind::kSend, 1, 0};
  uint64_t completions = 0;
  for (auto _ : state) {
    for (uint32_t i = 0; i < kSendsPerIteration; ++i) {
      if (absl::Status s = pair.post_send(id, Frame(), 0); !s.ok()) {
        return fail_row(state, s);
      }
    }
    size_t good = 0;
    if (absl::Status s = pair.poll(batch, &good); !s.ok()) {
      return fail_row(state, s);
    }
    benchmark::DoNotOptimize(batch);
    completions += good;
  }
  if (completions !=
      static_cast<uint64_t>(state.iterations()) * kSendsPerIteration) {
    return fail_row(state, "a loopback send did not come back");
  }
  state.SetItemsProcessed(static_cast<int64_t>(completions));
}

// ---------------------------------------------------------------------------
// Staging copies.

struct UserBuffers {
  PageBuffer in{kUserBytes, 1};
  PageBuffer out{kUserBytes, 0};
};

UserBuffers& user_buffers() {
  static auto* b = new UserBuffers();
  return *b;
}

void bm_memcpy(benchmark::State& state) {
  UserBuffers& b = user_buffers();
  for (auto _ : state) {
    std::memcpy(b.out.data(), b.in.data(), kUserBytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kUserBytes));
}

enum class Direction { kIn, kOut };

void bm_staging(benchmark::State& state, Direction direction,
                uint32_t frame_bytes) {
  const uint32_t depth = GroupOptions().depth;
  absl::StatusOr<std::unique_ptr<Slab>> slab =
      Slab::create(uint64_t{depth} * frame_bytes);
  if (!slab.ok()) return fail_row(state, slab.status());
  std::vector<std::byte*> payloads;
  for (uint32_t i = 0; i < depth; ++i) {
    absl::StatusOr<Frame> f =
        (*slab)->frame(uint64_t{i} * frame_bytes, frame_bytes);
    if (!f.ok()) return fail_row(state, f.status());
    payloads.push_back(f->data() + collectives::internal::kHeaderBytes);
  }
  const uint64_t chunk = frame_bytes - collectives::internal::kHeaderBytes;
  UserBuffers& b = user_buffers();
  for (auto _ : state) {
    uint32_t slot = 0;
    for (uint64_t at = 0; at < kUserBytes; at += chunk) {
      const size_t n = static_cast<size_t>(std::min(chunk, kUserBytes - at));
      if (direction == Direction::kIn) {
        std::memcpy(payloads[slot], b.in.data() + at, n);
      } else {
        std::memcpy(b.out.data() + at, payloads[slot], n);
      }
      slot = slot + 1 == depth ? 0 : slot + 1;
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(kUserBytes));
}

void register_all() {
  benchmark::RegisterBenchmark("sequence/in_order", bm_sequence,
                               Arrivals::kInOrder);
  benchmark::RegisterBenchmark("sequence/gaps", bm_sequence, Arrivals::kGaps);
  benchmark::RegisterBenchmark("sequence/reordered", bm_sequence,
                               Arrivals::kReordered);
  benchmark::RegisterBenchmark("endpoint/poll", bm_endpoint_poll);
  benchmark::RegisterBenchmark("checked_pair/poll", bm_checked_poll);
  benchmark::RegisterBenchmark("checked_pair/post_and_poll",
                               bm_checked_post_and_poll);
  benchmark::RegisterBenchmark(
      ("baseline/memcpy/" + size_label(kUserBytes)).c_str(), bm_memcpy);
  for (uint64_t bytes : kFrameSizes) {
    const auto frame_bytes = static_cast<uint32_t>(bytes);
    const std::string size = size_label(frame_bytes);
    benchmark::RegisterBenchmark(("staging/in/" + size).c_str(), bm_staging,
                                 Direction::kIn, frame_bytes);
    benchmark::RegisterBenchmark(("staging/out/" + size).c_str(), bm_staging,
                                 Direction::kOut, frame_bytes);
  }
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::register_all();
  return weft::bench::run_benchmarks(argc, argv);
}
