// RegistrationCache alone, over a fake registrar: the budget counts slabs,
// user regions register at first use, the least recently used unpinned
// region is evicted, outstanding work and holds pin a region, a budget full
// of pinned regions is ResourceExhausted, and removal waits for both.
#include "verbs/internal/registration_cache.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::verbs::internal {
namespace {

using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Return;

// Registers anything, keying region `id` as lkey 1000 + id, and records
// which ids were registered and deregistered, in order.
class FakeRegistrar final : public Registrar {
 public:
  absl::StatusOr<Registration> register_region(
      uint64_t id, std::span<std::byte> memory) override {
    (void)memory;
    registered.push_back(id);
    return Registration{reinterpret_cast<void*>(id),
                        static_cast<uint32_t>(1000 + id)};
  }
  void deregister_region(const Registration& r) override {
    deregistered.push_back(reinterpret_cast<uint64_t>(r.handle));
  }
  std::vector<uint64_t> registered;
  std::vector<uint64_t> deregistered;
};

class MockRegistrar : public Registrar {
 public:
  MOCK_METHOD(absl::StatusOr<Registration>, register_region,
              (uint64_t id, std::span<std::byte> memory), (override));
  MOCK_METHOD(void, deregister_region, (const Registration& registration),
              (override));
};

class RegistrationCacheTest : public ::testing::Test {
 protected:
  std::span<std::byte> memory(size_t i) { return {bytes_[i].data(), 64}; }

  FakeRegistrar registrar_;
  std::array<std::array<std::byte, 64>, 8> bytes_{};
};

TEST_F(RegistrationCacheTest, SlabsRegisterAtOnceUserRegionsAtFirstUse) {
  RegistrationCache cache(4, registrar_, ErrorPlace{});
  ASSERT_TRUE(cache.add_permanent(1, memory(1)).ok());
  cache.add_lazy(2, memory(2));
  EXPECT_THAT(registrar_.registered, ElementsAre(1));
  EXPECT_EQ(cache.registered(), 1u);
  absl::StatusOr<uint32_t> lkey = cache.acquire(2);
  ASSERT_TRUE(lkey.ok()) << lkey.status();
  EXPECT_EQ(*lkey, 1002u);
  EXPECT_THAT(registrar_.registered, ElementsAre(1, 2));
  cache.release_work(2);
  ASSERT_TRUE(cache.acquire(2).ok());
  cache.release_work(2);
  EXPECT_EQ(cache.counters().misses, 1u);
  EXPECT_EQ(cache.counters().hits, 1u);
  EXPECT_EQ(cache.counters().registrations, 2u);
  EXPECT_EQ(cache.counters().evictions, 0u);
}

TEST_F(RegistrationCacheTest, EvictsTheLeastRecentlyUsedWhenFull) {
  // Budget 3: one slab and two user regions fit; a third evicts.
  RegistrationCache cache(3, registrar_, ErrorPlace{});
  ASSERT_TRUE(cache.add_permanent(1, memory(1)).ok());
  for (uint64_t id : {2, 3, 4}) cache.add_lazy(id, memory(id));
  for (uint64_t id : {2, 3}) {
    ASSERT_TRUE(cache.acquire(id).ok());
    cache.release_work(id);
  }
  // 2 used again: 3 is now the least recently used.
  ASSERT_TRUE(cache.acquire(2).ok());
  cache.release_work(2);
  ASSERT_TRUE(cache.acquire(4).ok());
  cache.release_work(4);
  EXPECT_THAT(registrar_.deregistered, ElementsAre(3));
  EXPECT_TRUE(cache.is_registered(2));
  EXPECT_FALSE(cache.is_registered(3));
  EXPECT_TRUE(cache.is_registered(4));
  EXPECT_EQ(cache.registered(), 3u);
  EXPECT_EQ(cache.counters().evictions, 1u);
  // 3 comes back at its next use, evicting 2 (older than 4); the slab
  // never goes.
  ASSERT_TRUE(cache.acquire(3).ok());
  cache.release_work(3);
  EXPECT_THAT(registrar_.deregistered, ElementsAre(3, 2));
  EXPECT_TRUE(cache.is_registered(1));
  EXPECT_EQ(cache.counters().misses, 4u);
}

TEST_F(RegistrationCacheTest, OutstandingWorkAndHoldsPinARegion) {
  RegistrationCache cache(3, registrar_, ErrorPlace{});
  ASSERT_TRUE(cache.add_permanent(1, memory(1)).ok());
  for (uint64_t id : {2, 3, 4, 5}) cache.add_lazy(id, memory(id));
  ASSERT_TRUE(cache.acquire(2).ok());  // outstanding: not released
  ASSERT_TRUE(cache.acquire(3).ok());
  cache.release_work(3);
  cache.hold(3);  // held: pinned although idle
  // Slab, outstanding 2 and held 3 fill the budget: nothing to evict.
  absl::StatusOr<uint32_t> full = cache.acquire(4);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.status().message(), HasSubstr("all 3 memory regions"));
  EXPECT_THAT(full.status().message(), HasSubstr("release_memory"));
  EXPECT_TRUE(registrar_.deregistered.empty());
  // Completing 2's work frees it for eviction.
  cache.release_work(2);
  ASSERT_TRUE(cache.acquire(4).ok());
  cache.release_work(4);
  EXPECT_THAT(registrar_.deregistered, ElementsAre(2));
  // Unholding 3 makes it the least recently used candidate.
  cache.unhold(3);
  ASSERT_TRUE(cache.acquire(5).ok());
  cache.release_work(5);
  EXPECT_THAT(registrar_.deregistered, ElementsAre(2, 3));
}

TEST_F(RegistrationCacheTest, SlabsBeyondTheBudgetAreRefused) {
  RegistrationCache cache(2, registrar_, ErrorPlace{});
  ASSERT_TRUE(cache.add_permanent(1, memory(1)).ok());
  cache.add_lazy(2, memory(2));
  ASSERT_TRUE(cache.acquire(2).ok());
  cache.release_work(2);
  // A second slab evicts the idle user region; a third has no room.
  ASSERT_TRUE(cache.add_permanent(3, memory(3)).ok());
  EXPECT_THAT(registrar_.deregistered, ElementsAre(2));
  absl::Status third = cache.add_permanent(4, memory(4));
  EXPECT_EQ(third.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(cache.contains(4));
  EXPECT_EQ(cache.registered(), 2u);
}

TEST_F(RegistrationCacheTest, RemovalWaitsForWorkAndHolds) {
  RegistrationCache cache(4, registrar_, ErrorPlace{});
  cache.add_lazy(2, memory(2));
  ASSERT_TRUE(cache.acquire(2).ok());
  cache.hold(2);
  absl::Status busy = cache.remove(2);
  EXPECT_EQ(busy.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(busy.message(), HasSubstr("1 work requests outstanding"));
  EXPECT_THAT(busy.message(), HasSubstr("1 holds"));
  cache.release_work(2);
  EXPECT_EQ(cache.remove(2).code(), absl::StatusCode::kFailedPrecondition);
  cache.unhold(2);
  ASSERT_TRUE(cache.remove(2).ok());
  EXPECT_FALSE(cache.contains(2));
  EXPECT_THAT(registrar_.deregistered, ElementsAre(2));
  EXPECT_EQ(cache.registered(), 0u);
  // Never registered: removal needs no deregistration.
  cache.add_lazy(3, memory(3));
  ASSERT_TRUE(cache.remove(3).ok());
  EXPECT_THAT(registrar_.deregistered, ElementsAre(2));
  EXPECT_EQ(cache.acquire(3).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(RegistrationCacheTest, ARegistrarFailureLeavesTheRegionUnregistered) {
  MockRegistrar registrar;
  RegistrationCache cache(4, registrar, ErrorPlace{});
  cache.add_lazy(2, memory(2));
  EXPECT_CALL(registrar, register_region(2, _))
      .WillOnce(Return(absl::ResourceExhaustedError("ibv_reg_mr: ENOMEM")))
      .WillOnce(Return(Registration{nullptr, 7}));
  EXPECT_EQ(cache.acquire(2).status().code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_FALSE(cache.is_registered(2));
  EXPECT_EQ(cache.registered(), 0u);
  // The failed acquire counted no work: the next one registers it, and
  // once that work completes the region can be removed.
  absl::StatusOr<uint32_t> lkey = cache.acquire(2);
  ASSERT_TRUE(lkey.ok());
  EXPECT_EQ(*lkey, 7u);
  cache.release_work(2);
  EXPECT_CALL(registrar, deregister_region(_)).Times(1);
  ASSERT_TRUE(cache.remove(2).ok());
}

TEST_F(RegistrationCacheTest, ClearDeregistersEverythingNewestFirst) {
  {
    RegistrationCache cache(4, registrar_, ErrorPlace{});
    ASSERT_TRUE(cache.add_permanent(1, memory(1)).ok());
    cache.add_lazy(2, memory(2));
    cache.add_lazy(3, memory(3));
    ASSERT_TRUE(cache.acquire(3).ok());  // outstanding at teardown
  }
  EXPECT_THAT(registrar_.deregistered, ElementsAre(3, 1));
}

}  // namespace
}  // namespace weft::verbs::internal
