// VerbsFabric's registered user memory over weft's simulated verbs provider:
// a message of two parts (a header from weft's slab, the payload from a user
// buffer at an odd address) arrives scattered into a header frame and a user
// buffer; more user buffers than the memory-region budget cycle through
// evictions with every byte right and never more regions than the budget;
// a budget full of pinned regions refuses the post; release waits for work
// and holds.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/endpoint.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/verbs/sim_provider.h"
#include "verbs/verbs_fabric.h"

namespace weft::verbs {
namespace {

using ::testing::HasSubstr;
using testing::poll_until;
using testing::SimProvider;

constexpr uint64_t kSlabBytes = 1 << 16;
constexpr uint32_t kHeaderBytes = 64;
constexpr uint32_t kPayloadBytes = 3000;
// User buffers start this far into their allocation: not page or even
// word aligned, as a user's tensor slice may be.
constexpr size_t kMisalignment = 3;

uint8_t pattern(uint32_t message, uint32_t k) {
  return static_cast<uint8_t>(message * 29 + k * 7 + 1);
}

// A user buffer of `bytes` at an odd address inside its allocation.
struct UserBuffer {
  explicit UserBuffer(size_t bytes) : storage(bytes + kMisalignment) {}
  std::span<std::byte> span() {
    return {storage.data() + kMisalignment, storage.size() - kMisalignment};
  }
  std::vector<std::byte> storage;
};

// Rank 0 sends to rank 1 over one cable; each has a slab for headers.
class RegisteredMemoryTest : public ::testing::Test {
 protected:
  void build(size_t budget) {
    provider_.configure({});
    for (uint32_t r = 0; r < 2; ++r) {
      ASSERT_EQ(provider_.set_rank(r), 0);
      VerbsFabric::Options options = SimProvider::options();
      options.memory_region_budget = budget;
      auto fabric = VerbsFabric::open(r, options);
      ASSERT_TRUE(fabric.ok()) << fabric.status();
      fabrics_[r] = *std::move(fabric);
      slabs_[r] = *fabrics_[r]->create_slab(kSlabBytes);
    }
    auto send = fabrics_[0]->open("sim_0_1_0", 1);
    auto recv = fabrics_[1]->open("sim_1_0_0", 0);
    ASSERT_TRUE(send.ok() && recv.ok());
    send_ = *std::move(send);
    recv_ = *std::move(recv);
    ASSERT_TRUE(send_->connect(*recv_->destination()).ok());
    ASSERT_TRUE(recv_->connect(*send_->destination()).ok());
  }

  Frame header(uint32_t rank) const {
    return *slabs_[rank]->frame(0, kHeaderBytes);
  }
  // Rank 0 writes message `m` (header and payload), rank 1 receives it into
  // its header frame and `into`; every byte and the immediate are checked.
  void send_one(uint32_t m, Slab* from, Slab* into) {
    const Frame payload = *from->frame(1, kPayloadBytes);  // odd offset
    for (uint32_t k = 0; k < kHeaderBytes; ++k) {
      header(0).span()[k] = std::byte{pattern(m + 100, k)};
    }
    for (uint32_t k = 0; k < kPayloadBytes; ++k) {
      payload.span()[k] = std::byte{pattern(m, k)};
    }
    const Frame in_parts[] = {header(1), *into->frame(0, kPayloadBytes)};
    ASSERT_TRUE(
        recv_->post_recv_parts(WorkId{WorkKind::kRecv, 0, m}, in_parts).ok());
    const Frame out_parts[] = {header(0), payload};
    const uint32_t lengths[] = {kHeaderBytes, kPayloadBytes};
    absl::Status posted = send_->post_send_parts(WorkId{WorkKind::kSend, 1, m},
                                                 out_parts, lengths, m);
    ASSERT_TRUE(posted.ok()) << posted;
    bool sent = false, arrived = false;
    Endpoint* endpoints[] = {send_.get(), recv_.get()};
    auto sink = [&](size_t, const Completion& c) {
      ASSERT_TRUE(c.ok()) << c.to_string();
      EXPECT_EQ(c.byte_len, kHeaderBytes + kPayloadBytes);
      if (c.id.kind == WorkKind::kSend) {
        sent = true;
        return;
      }
      arrived = true;
      ASSERT_TRUE(c.has_immediate);
      EXPECT_EQ(c.immediate, m);
    };
    ASSERT_TRUE(poll_until(
        endpoints, [&] { return sent && arrived; }, sink));
    for (uint32_t k = 0; k < kHeaderBytes; ++k) {
      ASSERT_EQ(header(1).span()[k], std::byte{pattern(m + 100, k)}) << k;
    }
    for (uint32_t k = 0; k < kPayloadBytes; ++k) {
      ASSERT_EQ(into->data()[k], std::byte{pattern(m, k)})
          << "message " << m << " byte " << k;
    }
  }

  SimProvider provider_;
  std::unique_ptr<VerbsFabric> fabrics_[2];
  Slab* slabs_[2] = {nullptr, nullptr};
  std::unique_ptr<Endpoint> send_;
  std::unique_ptr<Endpoint> recv_;
};

TEST_F(RegisteredMemoryTest, TwoPartsFromAndIntoUserMemory) {
  build(kDefaultMemoryRegionBudget);
  UserBuffer out(kPayloadBytes + 1), in(kPayloadBytes);
  absl::StatusOr<Slab*> from = fabrics_[0]->register_memory(out.span());
  absl::StatusOr<Slab*> into = fabrics_[1]->register_memory(in.span());
  ASSERT_TRUE(from.ok() && into.ok());
  EXPECT_FALSE((*from)->owns_memory());
  EXPECT_EQ((*into)->data(), in.span().data());
  // Registered lazily: only the slab is a region until the first post.
  EXPECT_EQ(fabrics_[0]->memory_regions("sim_0_1_0"), 1u);
  send_one(0, *from, *into);
  send_one(1, *from, *into);
  EXPECT_EQ(fabrics_[0]->memory_regions("sim_0_1_0"), 2u);
  EXPECT_EQ(provider_.live("mrs", 0, "sim_0_1_0"), 2);
  const RegistrationCounters sender =
      fabrics_[0]->registration_counters("sim_0_1_0");
  EXPECT_EQ(sender.misses, 1u);  // the user buffer's first post
  EXPECT_EQ(sender.hits, 3u);    // the header twice, the buffer once more
  EXPECT_EQ(sender.evictions, 0u);
  ASSERT_TRUE(fabrics_[0]->release_memory(*from).ok());
  ASSERT_TRUE(fabrics_[1]->release_memory(*into).ok());
  EXPECT_EQ(provider_.live("mrs", 0, "sim_0_1_0"), 1);
  EXPECT_EQ(provider_.live("mrs", 1, "sim_1_0_0"), 1);
}

TEST_F(RegisteredMemoryTest, MoreBuffersThanTheBudgetCycleThroughEvictions) {
  // One slab and two user regions per device; six buffers on each side.
  constexpr size_t kBudget = 3;
  constexpr uint32_t kBuffers = 6;
  build(kBudget);
  std::vector<UserBuffer> outs, ins;
  std::vector<Slab*> from, into;
  for (uint32_t b = 0; b < kBuffers; ++b) {
    outs.emplace_back(kPayloadBytes + 1);
    ins.emplace_back(kPayloadBytes);
  }
  for (uint32_t b = 0; b < kBuffers; ++b) {
    from.push_back(*fabrics_[0]->register_memory(outs[b].span()));
    into.push_back(*fabrics_[1]->register_memory(ins[b].span()));
  }
  for (uint32_t m = 0; m < 3 * kBuffers; ++m) {
    // Receiving buffers in another order than sending ones, so the two
    // sides evict differently.
    send_one(m, from[m % kBuffers], into[(m * 5 + 1) % kBuffers]);
    ASSERT_LE(provider_.live("mrs", 0, "sim_0_1_0"), static_cast<int>(kBudget));
    ASSERT_LE(provider_.live("mrs", 1, "sim_1_0_0"), static_cast<int>(kBudget));
  }
  for (uint32_t r = 0; r < 2; ++r) {
    const RegistrationCounters c =
        fabrics_[r]->registration_counters(r == 0 ? "sim_0_1_0" : "sim_1_0_0");
    // Two user regions fit, so every post of a buffer misses once the
    // cycle is longer than that, and each miss past the first two evicts.
    EXPECT_EQ(c.misses, 3u * kBuffers) << "rank " << r;
    EXPECT_EQ(c.evictions, 3u * kBuffers - 2) << "rank " << r;
  }
  for (uint32_t b = 0; b < kBuffers; ++b) {
    ASSERT_TRUE(fabrics_[0]->release_memory(from[b]).ok());
    ASSERT_TRUE(fabrics_[1]->release_memory(into[b]).ok());
  }
  EXPECT_EQ(provider_.live("mrs", 0, "sim_0_1_0"), 1);
}

TEST_F(RegisteredMemoryTest, PinnedRegionsFillingTheBudgetRefuseThePost) {
  build(/*budget=*/2);  // the slab and one user region
  UserBuffer a(kPayloadBytes), b(kPayloadBytes);
  Slab* first = *fabrics_[1]->register_memory(a.span());
  Slab* second = *fabrics_[1]->register_memory(b.span());
  const Frame into_first = *first->frame(0, kPayloadBytes);
  const Frame into_second = *second->frame(0, kPayloadBytes);
  // A receive outstanding on `first` pins it.
  ASSERT_TRUE(recv_->post_recv(WorkId{WorkKind::kRecv, 0, 1}, into_first).ok());
  absl::Status full =
      recv_->post_recv(WorkId{WorkKind::kRecv, 0, 2}, into_second);
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.message(), HasSubstr("all 2 memory regions"));
  EXPECT_THAT(full.message(), HasSubstr("memory_region_budget"));
  absl::Status busy = fabrics_[1]->release_memory(first);
  EXPECT_EQ(busy.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(busy.message(), HasSubstr("1 work requests outstanding"));
  // Destroying the endpoint ends its outstanding receive, which unpinned
  // the region, but a hold keeps it pinned.
  fabrics_[1]->hold_memory(first);
  recv_.reset();  // its queue pair and outstanding receive are gone
  EXPECT_EQ(fabrics_[1]->release_memory(first).code(),
            absl::StatusCode::kFailedPrecondition);
  auto again = fabrics_[1]->open("sim_1_0_0", 0);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(
      (*again)->post_recv(WorkId{WorkKind::kRecv, 0, 3}, into_second).code(),
      absl::StatusCode::kResourceExhausted);
  fabrics_[1]->unhold_memory(first);
  EXPECT_TRUE(
      (*again)->post_recv(WorkId{WorkKind::kRecv, 0, 3}, into_second).ok());
  EXPECT_EQ(fabrics_[1]->registration_counters("sim_1_0_0").evictions, 1u);
  EXPECT_TRUE(fabrics_[1]->release_memory(first).ok());
  EXPECT_EQ(fabrics_[1]->release_memory(first).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(RegisteredMemoryTest, BadRegistrationsAreRefused) {
  build(kDefaultMemoryRegionBudget);
  UserBuffer buffer(4096);
  EXPECT_EQ(fabrics_[0]->register_memory({}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Slab* whole = *fabrics_[0]->register_memory(buffer.span());
  absl::StatusOr<Slab*> inside =
      fabrics_[0]->register_memory(buffer.span().subspan(100, 10));
  EXPECT_EQ(inside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(inside.status().message(), HasSubstr("overlapping"));
  absl::StatusOr<Slab*> on_slab =
      fabrics_[0]->register_memory({slabs_[0]->data() + 8, 16});
  EXPECT_EQ(on_slab.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(fabrics_[0]->release_memory(slabs_[0]).code(),
            absl::StatusCode::kInvalidArgument);
  // Three parts are more than a work request takes.
  const Frame f = header(1);
  const Frame parts[] = {f, f, f};
  absl::Status three =
      recv_->post_recv_parts(WorkId{WorkKind::kRecv, 0, 0}, parts);
  EXPECT_EQ(three.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(three.message(), HasSubstr("give 1 to 2 parts"));
  // A frame of memory registered with another fabric is no frame of this
  // one.
  const Frame foreign[] = {header(1), *whole->frame(0, 8)};
  EXPECT_EQ(
      recv_->post_recv_parts(WorkId{WorkKind::kRecv, 0, 0}, foreign).code(),
      absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(fabrics_[0]->release_memory(whole).ok());
  VerbsFabric::Options options = SimProvider::options();
  options.memory_region_budget = 0;
  EXPECT_EQ(VerbsFabric::open(0, options).status().code(),
            absl::StatusCode::kInvalidArgument);
  options.memory_region_budget = kMaxMemoryRegionBudget + 1;
  const absl::Status above = VerbsFabric::open(0, options).status();
  EXPECT_EQ(above.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(above.message(), HasSubstr("outside 1..65536"));
}

}  // namespace
}  // namespace weft::verbs
