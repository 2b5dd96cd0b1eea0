// RDMA WRITE and RDMA WRITE WITH IMMEDIATE on the simulator's UC queue
// pairs (Endpoint::post_rdma_write), as verbs UC defines them: the bytes
// land in the receiving rank's memory region at the address the writer
// names, the send completes on departure, a plain write consumes no
// receive, a write with an immediate consumes the oldest one (its frame
// untouched) and completes it with the immediate and the write's length; a
// key, range or access the receiver refuses, or (with an immediate) no
// receive posted, drops the message silently, counted and traced. Also the
// world's region registry and its log of writes that landed.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/world.h"
#include "tests/sim/sim_test_util.h"

namespace weft::sim {
namespace {

using ::testing::HasSubstr;
using testing::make_pair;
using testing::Pair;
using testing::poll_all;
using testing::recv_id;
using testing::send_id;
using testing::two_rank_options;

// Rank 1's region in these tests: 8 KiB of its slab from offset 4096, which
// writers know as addresses kBase.. (an address of rank 1's own choosing,
// as a verbs program's buffer is).
constexpr uint32_t kKey = 7;
constexpr uint64_t kRegionOffset = 4096;
constexpr uint64_t kRegionBytes = 8192;
constexpr uint64_t kBase = 0x7f00'0000'1000;
// What a region's bytes hold before anything is written (slabs start
// zeroed; the tests fill them with this to see which bytes a write took).
constexpr std::byte kUntouched{0xee};

// tb5 by hand, as uc_endpoint_test.cc: 437 ns overhead + 4096 B at 1e10 B/s
// (409.6 -> 410 ns) to leave, 3793 ns more to arrive.
constexpr TimeNs kDepart4KiB = 437 + 410;
constexpr TimeNs kArrive4KiB = 4640;

MemoryRegion region_of(const Pair& p, bool remote_write = true) {
  MemoryRegion region;
  region.slab = p.slab_b;
  region.offset = kRegionOffset;
  region.bytes = kRegionBytes;
  region.address = kBase;
  region.remote_write = remote_write;
  return region;
}

// A pair whose rank 1 has region kKey, filled with kUntouched.
Pair pair_with_region(WorldOptions options = two_rank_options(),
                      bool remote_write = true) {
  Pair p = make_pair(std::move(options));
  std::memset(p.slab_b->data() + kRegionOffset, 0xee, kRegionBytes);
  EXPECT_TRUE(
      p.world->register_region(1, kKey, region_of(p, remote_write)).ok());
  return p;
}

// `length` bytes of rank 0's slab from `offset`, filled with a pattern
// that starts at `seed` (never kUntouched).
Frame source(const Pair& p, uint64_t offset, uint32_t length, uint8_t seed) {
  const Frame f = p.frame_a(offset, length);
  for (uint32_t i = 0; i < length; ++i) {
    auto b = static_cast<uint8_t>(seed + i);
    f.data()[i] = std::byte{b == 0xee ? uint8_t{0} : b};
  }
  return f;
}

// The region's bytes at writer address `address`.
const std::byte* at(const Pair& p, uint64_t address) {
  return p.slab_b->data() + kRegionOffset + (address - kBase);
}

bool same_bytes(const std::byte* a, const std::byte* b, size_t n) {
  return std::memcmp(a, b, n) == 0;
}

// Every byte of the region except [address, address + length) still holds
// kUntouched.
bool untouched_but(const Pair& p, uint64_t address, size_t length) {
  const std::byte* start = at(p, kBase);
  const size_t from = address - kBase;
  for (size_t i = 0; i < kRegionBytes; ++i) {
    if (i >= from && i < from + length) continue;
    if (start[i] != kUntouched) return false;
  }
  return true;
}

size_t trace_count(const World& world, TraceKind kind, MessageOp op,
                   DropReason drop = DropReason::kNone) {
  const std::vector<TraceEvent>& events = world.trace().events();
  return static_cast<size_t>(
      std::count_if(events.begin(), events.end(), [&](const TraceEvent& e) {
        return e.kind == kind && e.op == op && e.drop == drop;
      }));
}

TEST(RdmaWrite, LandsAtItsAddressAndCompletesOnDeparture) {
  Pair p = pair_with_region();
  const uint64_t address = kBase + 300;
  const Frame out = source(p, 0, 4096, 1);
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 4), out, 4096, address, kKey,
                                   std::nullopt)
                  .ok());
  // Like a SEND of the same length: it leaves after serialisation...
  p.world->advance_to(kDepart4KiB - 1);
  EXPECT_TRUE(poll_all(*p.a).empty());
  p.world->advance_to(kDepart4KiB);
  auto sent = poll_all(*p.a);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id, send_id(1, 4));
  EXPECT_TRUE(sent[0].ok());
  EXPECT_EQ(sent[0].byte_len, 4096u);
  // ... and lands a latency later, not before.
  p.world->advance_to(kArrive4KiB - 1);
  EXPECT_TRUE(untouched_but(p, address, 0));
  p.world->advance_to(kArrive4KiB);
  EXPECT_TRUE(same_bytes(at(p, address), out.data(), 4096));
  EXPECT_TRUE(untouched_but(p, address, 4096));
  // No receive is consumed or completed.
  EXPECT_TRUE(poll_all(*p.b).empty());
  EXPECT_EQ(p.world->counters().frames_delivered, 1u);
  EXPECT_EQ(p.world->counters().frames_dropped, 0u);
  EXPECT_EQ(trace_count(*p.world, TraceKind::kDeliver, MessageOp::kRdmaWrite),
            1u);
}

TEST(RdmaWrite, AWriteLeavesThePostedReceivesForTheNextSend) {
  Pair p = pair_with_region();
  const Frame in = p.frame_b(0, 64);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 1), in).ok());
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 32, 3), 32,
                                   kBase, kKey, std::nullopt)
                  .ok());
  const Frame message = source(p, 64, 16, 9);
  ASSERT_TRUE(p.a->post_send(send_id(1, 1), message, 16, 77).ok());
  p.world->run_until_idle();
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, recv_id(0, 1));
  EXPECT_EQ(got[0].byte_len, 16u);
  EXPECT_EQ(got[0].immediate, 77u);
  EXPECT_FALSE(got[0].from_rdma_write);
  EXPECT_TRUE(same_bytes(in.data(), message.data(), 16));
}

TEST(RdmaWrite, TheWorldLogsWhatLandedForItsRank) {
  Pair p = pair_with_region();
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 100, 1), 100,
                                   kBase + 1000, kKey, std::nullopt)
                  .ok());
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 1), source(p, 128, 50, 2), 50,
                                   kBase + 10, kKey, std::nullopt)
                  .ok());
  p.world->run_until_idle();
  EXPECT_TRUE(p.world->take_writes(0).empty());
  const std::vector<WrittenRange> writes = p.world->take_writes(1);
  ASSERT_EQ(writes.size(), 2u);
  EXPECT_EQ(writes[0].rkey, kKey);
  EXPECT_EQ(writes[0].address, kBase + 1000);
  EXPECT_EQ(writes[0].bytes.data(), at(p, kBase + 1000));
  EXPECT_EQ(writes[0].bytes.bytes(), 100u);
  EXPECT_EQ(writes[1].address, kBase + 10);
  EXPECT_EQ(writes[1].bytes.data(), at(p, kBase + 10));
  EXPECT_EQ(writes[1].bytes.bytes(), 50u);
  // Taken once.
  EXPECT_TRUE(p.world->take_writes(1).empty());
}

TEST(RdmaWrite, WritesThatContinueEachOtherAreLoggedAsOneRange) {
  Pair p = pair_with_region();
  for (uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(p.a->post_rdma_write(send_id(1, i), source(p, 64 * i, 64, 1),
                                     64, kBase + 256 + 64 * i, kKey,
                                     std::nullopt)
                    .ok());
  }
  p.world->run_until_idle();
  const std::vector<WrittenRange> writes = p.world->take_writes(1);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].address, kBase + 256);
  EXPECT_EQ(writes[0].bytes.data(), at(p, kBase + 256));
  EXPECT_EQ(writes[0].bytes.bytes(), 256u);
}

// rxe's responder, UC without a shared receive queue: an R_Key violation
// is dropped (class E) and the requester, with no acknowledgement to wait
// for, completes successfully.
TEST(RdmaWrite, RefusedWritesAreDroppedSilentlyAndCounted) {
  struct Case {
    const char* what;
    uint64_t address;
    uint32_t length;
    uint32_t rkey;
  };
  const Case cases[] = {
      {"a key rank 1 never registered", kBase, 16, kKey + 1},
      {"an address below the region", kBase - 1, 16, kKey},
      {"a range past the region's end", kBase + kRegionBytes - 15, 16, kKey},
      {"a range starting at the region's end", kBase + kRegionBytes, 1, kKey},
      {"a range that wraps the address space", ~uint64_t{0} - 3, 16, kKey},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Pair p = pair_with_region();
    ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 64)).ok());
    ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, c.length, 5),
                                     c.length, c.address, c.rkey, std::nullopt)
                    .ok());
    p.world->run_until_idle();
    auto sent = poll_all(*p.a);
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_TRUE(sent[0].ok());
    EXPECT_TRUE(untouched_but(p, kBase, 0));
    EXPECT_TRUE(poll_all(*p.b).empty());
    EXPECT_TRUE(p.world->take_writes(1).empty());
    EXPECT_EQ(p.world->counters().dropped_remote_access, 1u);
    EXPECT_EQ(p.world->counters().frames_dropped, 1u);
    EXPECT_EQ(p.world->counters().frames_delivered, 0u);
    EXPECT_EQ(trace_count(*p.world, TraceKind::kDrop, MessageOp::kRdmaWrite,
                          DropReason::kRemoteAccess),
              1u);
    // The receiving queue pair is not harmed: the next SEND lands in the
    // receive the write left.
    ASSERT_TRUE(p.a->post_send(send_id(1, 1), p.frame_a(0, 8), 8, 1).ok());
    p.world->run_until_idle();
    auto got = poll_all(*p.b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(got[0].ok());
    EXPECT_EQ(got[0].id, recv_id(0, 0));
  }
}

TEST(RdmaWrite, ARegionWithoutRemoteWriteAccessRefusesWrites) {
  Pair p = pair_with_region(two_rank_options(), /*remote_write=*/false);
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 16, 5), 16,
                                   kBase, kKey, std::nullopt)
                  .ok());
  p.world->run_until_idle();
  ASSERT_EQ(poll_all(*p.a).size(), 1u);
  EXPECT_TRUE(untouched_but(p, kBase, 0));
  EXPECT_EQ(p.world->counters().dropped_remote_access, 1u);
}

TEST(RdmaWrite, WithImmediateConsumesAReceiveAndLeavesItsFrameUntouched) {
  Pair p = pair_with_region();
  // The receive is shorter than the write: that is no error, its frame is
  // not where the bytes go.
  const Frame in = p.frame_b(0, 16);
  std::memset(in.data(), 0xee, 16);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 3), in).ok());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 4), p.frame_b(16, 16)).ok());
  const Frame out = source(p, 0, 64, 11);
  ASSERT_TRUE(
      p.a->post_rdma_write(send_id(1, 0), out, 64, kBase + 8, kKey, 0xabcd1234)
          .ok());
  p.world->run_until_idle();
  auto sent = poll_all(*p.a);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].ok());
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, recv_id(0, 3));  // the oldest receive
  EXPECT_TRUE(got[0].ok());
  EXPECT_TRUE(got[0].from_rdma_write);
  EXPECT_TRUE(got[0].has_immediate);
  EXPECT_EQ(got[0].immediate, 0xabcd1234u);
  EXPECT_EQ(got[0].byte_len, 64u);
  EXPECT_THAT(got[0].to_string(), HasSubstr("from an RDMA write"));
  for (uint32_t i = 0; i < 16; ++i) ASSERT_EQ(in.data()[i], kUntouched) << i;
  EXPECT_TRUE(same_bytes(at(p, kBase + 8), out.data(), 64));
  EXPECT_TRUE(untouched_but(p, kBase + 8, 64));
  EXPECT_EQ(trace_count(*p.world, TraceKind::kCompletion,
                        MessageOp::kRdmaWriteWithImmediate),
            1u);
}

TEST(RdmaWrite, WithImmediateTakesAReceiveOfNoBytes) {
  Pair p = pair_with_region();
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 0)).ok());
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 40, 1), 40,
                                   kBase, kKey, 5)
                  .ok());
  p.world->run_until_idle();
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].ok());
  EXPECT_TRUE(got[0].from_rdma_write);
  EXPECT_EQ(got[0].byte_len, 40u);
}

// UC class D: nothing to complete, so the whole message is dropped and
// nothing is written.
TEST(RdmaWrite, WithImmediateAndNoReceivePostedWritesNothing) {
  Pair p = pair_with_region();
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 32, 1), 32,
                                   kBase, kKey, 9)
                  .ok());
  p.world->run_until_idle();
  ASSERT_EQ(poll_all(*p.a).size(), 1u);
  EXPECT_TRUE(untouched_but(p, kBase, 0));
  EXPECT_TRUE(p.world->take_writes(1).empty());
  EXPECT_EQ(p.world->counters().dropped_no_receive, 1u);
  EXPECT_EQ(p.world->counters().dropped_remote_access, 0u);
  EXPECT_EQ(
      trace_count(*p.world, TraceKind::kDrop,
                  MessageOp::kRdmaWriteWithImmediate, DropReason::kNoReceive),
      1u);
}

// rxe checks the receive before the key: a refused write with an immediate
// leaves the receive posted.
TEST(RdmaWrite, ARefusedWriteWithImmediateLeavesTheReceivePosted) {
  Pair p = pair_with_region();
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 64)).ok());
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 32, 1), 32,
                                   kBase, kKey + 5, 9)
                  .ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 1), p.frame_a(0, 8), 8, 10).ok());
  p.world->run_until_idle();
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, recv_id(0, 0));
  EXPECT_FALSE(got[0].from_rdma_write);
  EXPECT_EQ(got[0].immediate, 10u);
  EXPECT_EQ(p.world->counters().dropped_remote_access, 1u);
}

// A write of no bytes names no memory (rxe does not check its key).
TEST(RdmaWrite, AWriteOfNoBytesNeedsNoRegion) {
  Pair p = pair_with_region();
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 8)).ok());
  ASSERT_TRUE(
      p.a->post_rdma_write(send_id(1, 0), p.frame_a(0, 0), 0, 0, kKey + 99, 21)
          .ok());
  p.world->run_until_idle();
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].ok());
  EXPECT_TRUE(got[0].from_rdma_write);
  EXPECT_EQ(got[0].immediate, 21u);
  EXPECT_EQ(got[0].byte_len, 0u);
  EXPECT_EQ(p.world->counters().frames_dropped, 0u);
  EXPECT_TRUE(p.world->take_writes(1).empty());
}

TEST(RdmaWrite, ADuplicatedWriteWritesTheSameBytesTwice) {
  WorldOptions options = two_rank_options();
  options.faults = *FaultPlan::parse("duplicate from=0 to=1 frame=1");
  Pair p = pair_with_region(options);
  const Frame out = source(p, 0, 128, 7);
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), out, 128, kBase + 64, kKey,
                                   std::nullopt)
                  .ok());
  p.world->run_until_idle();
  EXPECT_EQ(poll_all(*p.a).size(), 1u);
  EXPECT_EQ(p.world->counters().frames_delivered, 2u);
  EXPECT_EQ(trace_count(*p.world, TraceKind::kDeliver, MessageOp::kRdmaWrite),
            2u);
  EXPECT_TRUE(same_bytes(at(p, kBase + 64), out.data(), 128));
  EXPECT_TRUE(untouched_but(p, kBase + 64, 128));
  const std::vector<WrittenRange> writes = p.world->take_writes(1);
  ASSERT_EQ(writes.size(), 1u);  // the same range, once
  EXPECT_EQ(writes[0].bytes.bytes(), 128u);
}

TEST(RdmaWrite, ADuplicatedWriteWithImmediateConsumesTwoReceives) {
  WorldOptions options = two_rank_options();
  options.faults = *FaultPlan::parse("duplicate from=0 to=1 frame=1");
  Pair p = pair_with_region(options);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 8)).ok());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 1), p.frame_b(8, 8)).ok());
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 32, 1), 32,
                                   kBase, kKey, 3)
                  .ok());
  p.world->run_until_idle();
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 2u);
  for (const Completion& c : got) {
    EXPECT_TRUE(c.ok());
    EXPECT_TRUE(c.from_rdma_write);
    EXPECT_EQ(c.immediate, 3u);
  }
}

TEST(RdmaWrite, ALostWriteStillCompletesAtTheSender) {
  WorldOptions options = two_rank_options();
  options.faults = *FaultPlan::parse("drop from=0 to=1 frame=1");
  Pair p = pair_with_region(options);
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 32, 1), 32,
                                   kBase, kKey, std::nullopt)
                  .ok());
  p.world->run_until_idle();
  auto sent = poll_all(*p.a);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].ok());
  EXPECT_TRUE(untouched_but(p, kBase, 0));
  EXPECT_EQ(p.world->counters().dropped_loss, 1u);
  EXPECT_EQ(trace_count(*p.world, TraceKind::kDrop, MessageOp::kRdmaWrite,
                        DropReason::kLoss),
            1u);
}

TEST(RdmaWrite, AReceiveErrorOnAWriteWithImmediateFailsItsReceive) {
  WorldOptions options = two_rank_options();
  options.faults = *FaultPlan::parse(
      "error from=0 to=1 frame=1 status=IBV_WC_REM_OP_ERR side=recv");
  Pair p = pair_with_region(options);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 8)).ok());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 1), p.frame_b(8, 8)).ok());
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 32, 1), 32,
                                   kBase, kKey, 3)
                  .ok());
  p.world->run_until_idle();
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id, recv_id(0, 0));
  EXPECT_EQ(got[0].status, WcStatus::kRemOpErr);
  EXPECT_TRUE(got[0].from_rdma_write);
  EXPECT_EQ(got[1].status, WcStatus::kWrFlushErr);
  EXPECT_TRUE(untouched_but(p, kBase, 0));
}

TEST(RdmaWrite, AReceiveErrorOnAPlainWriteFlushesTheReceiver) {
  WorldOptions options = two_rank_options();
  options.faults = *FaultPlan::parse(
      "error from=0 to=1 frame=1 status=IBV_WC_REM_OP_ERR side=recv");
  Pair p = pair_with_region(options);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 8)).ok());
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 32, 1), 32,
                                   kBase, kKey, std::nullopt)
                  .ok());
  p.world->run_until_idle();
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, WcStatus::kWrFlushErr);
  EXPECT_FALSE(got[0].from_rdma_write);
  EXPECT_TRUE(untouched_but(p, kBase, 0));
}

// A queue pair's messages arrive in the order they were posted, writes and
// sends alike: when the SEND posted after a write completes its receive,
// the write's bytes are in place.
TEST(RdmaWrite, ASendPostedAfterAWriteFindsItsBytesInPlace) {
  Pair p = pair_with_region();
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 8)).ok());
  const Frame out = source(p, 0, 4096, 2);
  ASSERT_TRUE(
      p.a->post_rdma_write(send_id(1, 0), out, 4096, kBase, kKey, std::nullopt)
          .ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 1), p.frame_a(8192, 8), 8, 1).ok());
  std::vector<Completion> got;
  TimeNs t = 0;
  while (got.empty()) {
    ASSERT_LT(t, kArrive4KiB * 4) << "the SEND never arrived";
    p.world->advance_to(++t);
    got = poll_all(*p.b);
  }
  EXPECT_TRUE(got[0].ok());
  EXPECT_TRUE(same_bytes(at(p, kBase), out.data(), 4096));
  const std::vector<TraceEvent>& events = p.world->trace().events();
  std::vector<MessageOp> delivered;
  for (const TraceEvent& e : events) {
    if (e.kind == TraceKind::kDeliver) delivered.push_back(e.op);
  }
  EXPECT_EQ(delivered,
            (std::vector<MessageOp>{MessageOp::kRdmaWrite, MessageOp::kSend}));
}

TEST(RdmaWrite, TracesNameTheOperationAndKey) {
  Pair p = pair_with_region();
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 16, 1), 16,
                                   kBase, kKey, std::nullopt)
                  .ok());
  p.world->run_until_idle();
  const std::vector<TraceEvent>& events = p.world->trace().events();
  auto post = std::find_if(events.begin(), events.end(), [](const auto& e) {
    return e.kind == TraceKind::kPostSend;
  });
  ASSERT_NE(post, events.end());
  EXPECT_EQ(post->op, MessageOp::kRdmaWrite);
  EXPECT_EQ(post->rkey, kKey);
  EXPECT_THAT(post->to_string(), HasSubstr("op rdma write rkey 7"));
  auto json = p.world->trace().perfetto_json();
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("rdma write frame 1"));
}

// The same messages as SENDs and as writes hash differently, and a write
// run is as deterministic as any.
TEST(RdmaWrite, TheTraceHashTellsWritesFromSendsAndRepeats) {
  auto run = [](bool write) {
    Pair p = pair_with_region();
    EXPECT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 64)).ok());
    const Frame out = source(p, 0, 16, 1);
    EXPECT_TRUE(
        (write ? p.a->post_rdma_write(send_id(1, 0), out, 16, kBase, kKey, 4)
               : p.a->post_send(send_id(1, 0), out, 16, 4))
            .ok());
    p.world->run_until_idle();
    return p.world->trace().hash();
  };
  EXPECT_EQ(run(true), run(true));
  EXPECT_NE(run(true), run(false));
}

TEST(RdmaWrite, RegionsAreCheckedWhenRegistered) {
  Pair p = make_pair(two_rank_options());
  MemoryRegion region = region_of(p);
  EXPECT_EQ(p.world->register_region(2, kKey, region).code(),
            absl::StatusCode::kInvalidArgument);
  // Rank 0 did not create rank 1's slab.
  absl::Status other = p.world->register_region(0, kKey, region);
  EXPECT_EQ(other.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(other.message(), HasSubstr("did not create"));
  MemoryRegion bad = region;
  bad.slab = nullptr;
  EXPECT_EQ(p.world->register_region(1, kKey, bad).code(),
            absl::StatusCode::kInvalidArgument);
  bad = region;
  bad.bytes = 0;
  EXPECT_EQ(p.world->register_region(1, kKey, bad).code(),
            absl::StatusCode::kInvalidArgument);
  bad = region;
  bad.offset = p.slab_b->bytes() - 8;
  bad.bytes = 16;
  EXPECT_THAT(p.world->register_region(1, kKey, bad).message(),
              HasSubstr("do not fit"));
  bad = region;
  bad.address = ~uint64_t{0} - 8;
  EXPECT_THAT(p.world->register_region(1, kKey, bad).message(),
              HasSubstr("wrap"));
  ASSERT_TRUE(p.world->register_region(1, kKey, region).ok());
  EXPECT_EQ(p.world->register_region(1, kKey, region).code(),
            absl::StatusCode::kAlreadyExists);
  // Keys are per rank.
  MemoryRegion mine = region;
  mine.slab = p.slab_a;
  EXPECT_TRUE(p.world->register_region(0, kKey, mine).ok());
  EXPECT_EQ(p.world->unregister_region(1, kKey + 1).code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(p.world->unregister_region(5, kKey).code(),
            absl::StatusCode::kNotFound);
}

TEST(RdmaWrite, AnUnregisteredRegionTakesNoMoreWrites) {
  Pair p = pair_with_region();
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 0), source(p, 0, 16, 1), 16,
                                   kBase, kKey, std::nullopt)
                  .ok());
  p.world->run_until_idle();
  ASSERT_TRUE(p.world->unregister_region(1, kKey).ok());
  // Its writes not yet taken go with it.
  EXPECT_TRUE(p.world->take_writes(1).empty());
  ASSERT_TRUE(p.a->post_rdma_write(send_id(1, 1), source(p, 0, 16, 1), 16,
                                   kBase + 100, kKey, std::nullopt)
                  .ok());
  p.world->run_until_idle();
  EXPECT_TRUE(untouched_but(p, kBase, 16));
  EXPECT_EQ(p.world->counters().dropped_remote_access, 1u);
}

TEST(RdmaWrite, PostingChecksTheFrameAsASendDoes) {
  Pair p = pair_with_region();
  EXPECT_EQ(p.a->post_rdma_write(send_id(1, 0), p.frame_a(0, 8), 16, kBase,
                                 kKey, std::nullopt)
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.a->post_rdma_write(send_id(1, 0), p.frame_b(0, 8), 8, kBase, kKey,
                                 std::nullopt)
                .code(),
            absl::StatusCode::kInvalidArgument);
  for (uint32_t i = 0; i < Endpoint::kMaxSends; ++i) {
    ASSERT_TRUE(p.a->post_rdma_write(send_id(1, i), p.frame_a(0, 8), 8, kBase,
                                     kKey, std::nullopt)
                    .ok());
  }
  EXPECT_EQ(p.a->post_rdma_write(send_id(1, 99), p.frame_a(0, 8), 8, kBase,
                                 kKey, std::nullopt)
                .code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace weft::sim
