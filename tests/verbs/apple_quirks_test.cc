// Apple's RDMA quirks, switched on in the simulated provider, and what
// VerbsFabric does with each: GID tables (IPv4-mapped at any index,
// link-local only, empty), a port that is down, 10 queue pairs and ~100
// memory regions per device, the queue-depth limit, RTR's errno 22/60 for a
// bad or unreachable GID, and error completions named by the library.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "base/absl_compat.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/verbs/sim_provider.h"
#include "verbs/verbs_fabric.h"

namespace weft::verbs {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testing::poll_until;
using testing::SimProvider;

constexpr uint64_t kSlabBytes = 1 << 16;
constexpr uint32_t kBytes = 256;

// Rank 0 and rank 1 with one connected endpoint each way and a slab each.
struct Pair {
  std::unique_ptr<VerbsFabric> f0, f1;
  Slab *s0 = nullptr, *s1 = nullptr;
  std::unique_ptr<Endpoint> e0, e1;

  // Opens both sides; connects them unless `connect` is false.
  absl::Status open(SimProvider& provider, bool connect = true) {
    f0 = provider.open_rank(0);
    f1 = provider.open_rank(1);
    if (f0 == nullptr || f1 == nullptr) return absl::InternalError("open");
    s0 = *f0->create_slab(kSlabBytes);
    s1 = *f1->create_slab(kSlabBytes);
    auto a = f0->open("sim_0_1_0", 1);
    if (!a.ok()) return a.status();
    auto b = f1->open("sim_1_0_0", 0);
    if (!b.ok()) return b.status();
    e0 = *std::move(a);
    e1 = *std::move(b);
    if (!connect) return absl::OkStatus();
    if (absl::Status s = e0->connect(*e1->destination()); !s.ok()) return s;
    return e1->connect(*e0->destination());
  }

  // Sends `count` frames 0 -> 1 with immediates 0.., returns the
  // receiver's completions.
  std::vector<Completion> send(uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) {
      EXPECT_TRUE(e1->post_recv(WorkId{WorkKind::kRecv, 0, i},
                                *s1->frame(i * kBytes, kBytes))
                      .ok());
    }
    for (uint32_t i = 0; i < count; ++i) {
      EXPECT_TRUE(e0->post_send(WorkId{WorkKind::kSend, 1, i},
                                *s0->frame(i * kBytes, kBytes), kBytes, i)
                      .ok());
    }
    std::vector<Completion> received;
    uint32_t sent = 0;
    Endpoint* const endpoints[] = {e0.get(), e1.get()};
    // UC may lose frames, so wait for the sends and then a while longer.
    int settle_rounds = 200;
    poll_until(
        endpoints, [&] { return sent == count && --settle_rounds <= 0; },
        [&](size_t index, const Completion& c) {
          if (index == 0) {
            ++sent;
          } else {
            received.push_back(c);
          }
        });
    return received;
  }
};

class AppleQuirksTest : public ::testing::Test {
 protected:
  SimProvider provider_;
};

TEST_F(AppleQuirksTest, ConnectsWithTheIndexWhereTheIpv4GidWasFound) {
  for (int index : {0, 1, 3}) {
    provider_.configure(
        {{"WEFT_SIM_VERBS_GID_MODE", "ipv4_at:" + std::to_string(index)}});
    Pair pair;
    ASSERT_TRUE(pair.open(provider_).ok()) << index;
    const Destination d = *pair.e0->destination();
    EXPECT_EQ(d.gid_string(), "::ffff:169.254.0.1");
    // The provider recorded the sgid_index RTR carried.
    EXPECT_EQ(provider_.sgid_index(d.qp_num), index);
    const std::vector<Completion> got = pair.send(3);
    ASSERT_EQ(got.size(), 3u) << index;
    EXPECT_EQ(got[2].immediate, 2u);
  }
}

TEST_F(AppleQuirksTest, LinkLocalOnlyTableFallsBackToLinkLocal) {
  provider_.configure({{"WEFT_SIM_VERBS_GID_MODE", "link_local"}});
  Pair pair;
  ASSERT_TRUE(pair.open(provider_).ok());
  const Destination d = *pair.e0->destination();
  EXPECT_EQ(d.gid[0], 0xfe);
  EXPECT_EQ(d.gid[1], 0x80);
  EXPECT_TRUE(d.gid_is_global());  // so RTR carries a GRH
  EXPECT_EQ(provider_.sgid_index(d.qp_num), 0);
  EXPECT_EQ(pair.send(2).size(), 2u);
}

TEST_F(AppleQuirksTest, EmptyGidTableGivesTheRemedyAndAllocatesNothing) {
  provider_.configure({{"WEFT_SIM_VERBS_GID_MODE", "empty"}});
  auto fabric = provider_.open_rank(0);
  auto ep = fabric->open("sim_0_1_0", 1);
  ASSERT_EQ(ep.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(base::message_of(ep.status()),
              AllOf(HasSubstr("rank 0"), HasSubstr("device sim_0_1_0"),
                    HasSubstr("no usable GID"),
                    HasSubstr("sudo ifconfig enX inet 169.254.x.y netmask "
                              "255.255.0.0")));
  for (const char* kind : {"contexts", "pds", "cqs", "qps"}) {
    EXPECT_EQ(provider_.live(kind, 0), 0) << kind;
  }
}

TEST_F(AppleQuirksTest, PortDownIsReportedBeforeAnythingIsAllocated) {
  provider_.configure({{"WEFT_SIM_VERBS_PORT", "down"}});
  auto fabric = provider_.open_rank(0);
  ASSERT_TRUE(fabric->create_slab(kSlabBytes).ok());
  auto ep = fabric->open("sim_0_1_0", 1);
  ASSERT_EQ(ep.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(
      base::message_of(ep.status()),
      AllOf(HasSubstr("rank 0, peer 1, device sim_0_1_0"),
            HasSubstr("port 1 is PORT_DOWN"), HasSubstr("cable is unplugged"),
            HasSubstr("Thunderbolt Bridge"), HasSubstr("rdma_ctl enable")));
  auto place = error_place(ep.status());
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ(place->cause, ErrorCause::kFabric);
  // Not even a protection domain: Apple's ibv_alloc_pd fails on a down
  // port, so the port is checked first.
  for (const char* kind : {"contexts", "pds", "mrs", "cqs", "qps"}) {
    EXPECT_EQ(provider_.live(kind, 0), 0) << kind;
  }
}

TEST_F(AppleQuirksTest, OnlyTheDownDeviceFails) {
  provider_.configure({{"WEFT_SIM_VERBS_RANKS", "3"},
                       {"WEFT_SIM_VERBS_PORT", "down:sim_0_1_0"}});
  auto fabric = provider_.open_rank(0);
  EXPECT_EQ(fabric->open("sim_0_1_0", 1).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_TRUE(fabric->open("sim_0_2_0", 2).ok());
}

TEST_F(AppleQuirksTest, TenQueuePairsPerDevice) {
  provider_.configure({{"WEFT_SIM_VERBS_APPLE_LIMITS", "1"}});
  auto fabric = provider_.open_rank(0);
  std::vector<std::unique_ptr<Endpoint>> endpoints;
  for (int i = 0; i < 10; ++i) {
    auto ep = fabric->open("sim_0_1_0", 1);
    ASSERT_TRUE(ep.ok()) << i << ": " << ep.status();
    endpoints.push_back(*std::move(ep));
  }
  auto eleventh = fabric->open("sim_0_1_0", 1);
  ASSERT_EQ(eleventh.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(base::message_of(eleventh.status()),
              AllOf(HasSubstr("creating a UC queue pair"),
                    HasSubstr("Cannot allocate memory (errno 12)"),
                    HasSubstr("Apple allows 10 queue pairs per device")));
  EXPECT_EQ(error_place(eleventh.status())->cause, ErrorCause::kResource);
  // The failed attempt left no completion queue behind.
  EXPECT_EQ(provider_.live("cqs", 0), 10);
  endpoints.pop_back();
  EXPECT_TRUE(fabric->open("sim_0_1_0", 1).ok());
}

TEST_F(AppleQuirksTest, SlabsStayUnderTheMemoryRegionLimit) {
  provider_.configure({{"WEFT_SIM_VERBS_APPLE_LIMITS", "1"}});
  auto fabric = provider_.open_rank(0);
  auto ep = fabric->open("sim_0_1_0", 1);
  ASSERT_TRUE(ep.ok());
  constexpr uint64_t kSmall = 4096;
  for (size_t i = 0; i < VerbsFabric::kMaxSlabs; ++i) {
    ASSERT_TRUE(fabric->create_slab(kSmall).ok()) << i;
  }
  EXPECT_EQ(provider_.live("mrs", 0, "sim_0_1_0"),
            static_cast<int>(VerbsFabric::kMaxSlabs));
  auto over = fabric->create_slab(kSmall);
  ASSERT_EQ(over.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(base::message_of(over.status()),
              AllOf(HasSubstr("at most 64 slabs"),
                    HasSubstr("Apple allows about 100")));
}

TEST_F(AppleQuirksTest, FullLibraryQueueIsResourceExhaustedWithErrno12) {
  // Apple's library refuses past its queue depth with -12; a depth of 4
  // makes the provider do that before weft's own limit of 32.
  provider_.configure({{"WEFT_SIM_VERBS_APPLE_LIMITS", "1"},
                       {"WEFT_SIM_VERBS_QUEUE_DEPTH", "4"}});
  Pair pair;
  ASSERT_TRUE(pair.open(provider_).ok());
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(pair.e1
                    ->post_recv(WorkId{WorkKind::kRecv, 0, i},
                                *pair.s1->frame(i * kBytes, kBytes))
                    .ok());
  }
  absl::Status full = pair.e1->post_recv(WorkId{WorkKind::kRecv, 0, 4},
                                         *pair.s1->frame(0, kBytes));
  ASSERT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(base::message_of(full),
              AllOf(HasSubstr("rank 1, peer 0, device sim_1_0_0"),
                    HasSubstr("posting a receive (post_recv)"),
                    HasSubstr("errno 12"), HasSubstr("queue is full")));
}

TEST_F(AppleQuirksTest, RtrWithAnUnreachableGidSaysSo) {
  provider_.configure({});
  Pair pair;
  ASSERT_TRUE(pair.open(provider_, /*connect=*/false).ok());
  Destination wrong = *pair.e1->destination();
  wrong.gid[15] = 99;  // ::ffff:169.254.1.99 is nobody's
  absl::Status s = pair.e0->connect(wrong);
  ASSERT_EQ(s.code(), absl::StatusCode::kUnavailable);  // ETIMEDOUT (60)
  EXPECT_THAT(base::message_of(s),
              AllOf(HasSubstr("to RTR"), HasSubstr("Connection timed out"),
                    HasSubstr("bad or unreachable GID"),
                    HasSubstr("::ffff:169.254.1.99"), HasSubstr("at index 1")));
}

TEST_F(AppleQuirksTest, RtrWithAnUnknownQueuePairIsInvalid) {
  provider_.configure({});
  Pair pair;
  ASSERT_TRUE(pair.open(provider_, /*connect=*/false).ok());
  Destination wrong = *pair.e1->destination();
  wrong.qp_num += 1000;
  absl::Status s = pair.e0->connect(wrong);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);  // EINVAL (22)
  EXPECT_THAT(base::message_of(s),
              AllOf(HasSubstr("Invalid argument (errno 22)"),
                    HasSubstr("bad or unreachable GID")));
  // A correct destination still connects afterwards (the pair stayed in
  // INIT).
  EXPECT_TRUE(pair.e0->connect(*pair.e1->destination()).ok());
}

TEST_F(AppleQuirksTest, ErrorCompletionsCarryTheLibrarysStatusName) {
  provider_.configure(
      {{"WEFT_SIM_VERBS_FAULTS",
        "error from=0 to=1 frame=2 status=IBV_WC_REM_OP_ERR side=recv"}});
  Pair pair;
  ASSERT_TRUE(pair.open(provider_).ok());
  const std::vector<Completion> got = pair.send(3);
  ASSERT_GE(got.size(), 2u);
  EXPECT_TRUE(got[0].ok());
  EXPECT_EQ(got[1].status, WcStatus::kRemOpErr);
  EXPECT_EQ(got[1].status_name, "remote operation error");
  EXPECT_EQ(got[1].id, (WorkId{WorkKind::kRecv, 0, 1}));
}

TEST_F(AppleQuirksTest, LostFrameShowsAsASequenceGap) {
  provider_.configure({{"WEFT_SIM_VERBS_FAULTS", "drop from=0 to=1 frame=2"}});
  Pair pair;
  ASSERT_TRUE(pair.open(provider_).ok());
  const std::vector<Completion> got = pair.send(3);
  // UC: the second frame is gone; its receive takes the third frame.
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].immediate, 0u);
  EXPECT_EQ(got[1].immediate, 2u);
  EXPECT_EQ(got[1].id.slot, 1u);
}

}  // namespace
}  // namespace weft::verbs
