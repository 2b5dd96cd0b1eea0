// The UC contract of fabric/endpoint.h where the simulator shows more than
// the shared cases do (tests/conformance): completion on departure and
// arrival after the link's latency, frames on loan until polled, its
// counters of drops and posts, and connect()'s checks of the destination.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/world.h"
#include "tests/sim/sim_test_util.h"

namespace weft::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::make_pair;
using testing::poll_all;
using testing::recv_id;
using testing::send_id;
using testing::two_rank_options;

// tb5 by hand: 437 ns overhead + 4096 B at 1e10 B/s (409.6 -> 410 ns),
// 3793 ns latency.
constexpr TimeNs kDepart4KiB = 437 + 410;
constexpr TimeNs kArrive4KiB = 4640;

TEST(UcEndpoint, SendCompletesOnDepartureAndArrivesAfterLatency) {
  auto p = make_pair(two_rank_options());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 7), p.frame_b(0, 4096)).ok());
  ASSERT_TRUE(
      p.a->post_send(send_id(1, 3), p.frame_a(0, 4096), 4096, 0xabcd).ok());
  p.world->advance_to(kDepart4KiB - 1);
  EXPECT_TRUE(poll_all(*p.a).empty());
  p.world->advance_to(kDepart4KiB);
  auto sent = poll_all(*p.a);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].id, send_id(1, 3));
  EXPECT_TRUE(sent[0].ok());
  EXPECT_EQ(sent[0].byte_len, 4096u);
  EXPECT_FALSE(sent[0].has_immediate);
  p.world->advance_to(kArrive4KiB - 1);
  EXPECT_TRUE(poll_all(*p.b).empty());
  p.world->advance_to(kArrive4KiB);
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].id, recv_id(0, 7));
  EXPECT_TRUE(got[0].ok());
  EXPECT_EQ(got[0].status_name, "success");
  EXPECT_EQ(got[0].byte_len, 4096u);
  EXPECT_TRUE(got[0].has_immediate);
  EXPECT_EQ(got[0].immediate, 0xabcdu);
}

TEST(UcEndpoint, TheSenderMayReuseItsFrameOncePolled) {
  auto p = make_pair(two_rank_options());
  const Frame out = p.frame_a(0, 64);
  const Frame in = p.frame_b(0, 64);
  std::memset(out.data(), 0x11, 64);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), in).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), out, 64, 0).ok());
  p.world->advance_to(p.world->options().link.serialisation_ns(64));
  ASSERT_EQ(poll_all(*p.a).size(), 1u);
  std::memset(out.data(), 0x22, 64);  // reuse after the send completion
  p.world->run_until_idle();
  ASSERT_EQ(poll_all(*p.b).size(), 1u);
  for (uint32_t i = 0; i < 64; ++i)
    ASSERT_EQ(in.data()[i], std::byte{0x11}) << i;
}

// The bytes of a departed frame are read from the sender's frame until the
// sender polls the completion or closes the endpoint; these pin down that
// whichever comes first, the receiver gets what was posted.
TEST(UcEndpoint, AFrameArrivingBeforeThePollCarriesThePostedBytes) {
  auto p = make_pair(two_rank_options(LinkModel::ideal()));
  const Frame out = p.frame_a(0, 64);
  const Frame in = p.frame_b(0, 64);
  std::memset(out.data(), 0x33, 64);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), in).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), out, 64, 0).ok());
  p.world->run_until_idle();  // departs and lands at time 0, unpolled
  ASSERT_EQ(poll_all(*p.b).size(), 1u);
  ASSERT_EQ(poll_all(*p.a).size(), 1u);
  std::memset(out.data(), 0x44, 64);
  for (uint32_t i = 0; i < 64; ++i)
    ASSERT_EQ(in.data()[i], std::byte{0x33}) << i;
}

TEST(UcEndpoint, BothCopiesOfADuplicateKeepThePostedBytes) {
  WorldOptions options = two_rank_options();
  options.faults = *FaultPlan::parse("duplicate from=0 to=1 frame=1");
  auto p = make_pair(options);
  const Frame out = p.frame_a(0, 64);
  std::memset(out.data(), 0x55, 64);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 64)).ok());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 1), p.frame_b(64, 64)).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), out, 64, 0).ok());
  p.world->advance_to(p.world->options().link.serialisation_ns(64));
  ASSERT_EQ(poll_all(*p.a).size(), 1u);
  std::memset(out.data(), 0x66, 64);  // both copies are still in flight
  p.world->run_until_idle();
  ASSERT_EQ(poll_all(*p.b).size(), 2u);
  for (uint32_t i = 0; i < 128; ++i)
    ASSERT_EQ(p.frame_b(0, 128).data()[i], std::byte{0x55}) << i;
}

TEST(UcEndpoint, ClosingTheSenderKeepsTheBytesOfItsFramesInFlight) {
  auto p = make_pair(two_rank_options());
  const Frame out = p.frame_a(0, 64);
  const Frame in = p.frame_b(0, 64);
  std::memset(out.data(), 0x77, 64);
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), in).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), out, 64, 0).ok());
  p.world->advance_to(p.world->options().link.serialisation_ns(64));
  p.a.reset();  // the completion was never polled
  std::memset(out.data(), 0x88, 64);
  p.world->run_until_idle();
  ASSERT_EQ(poll_all(*p.b).size(), 1u);
  for (uint32_t i = 0; i < 64; ++i)
    ASSERT_EQ(in.data()[i], std::byte{0x77}) << i;
}

TEST(UcEndpoint, ArrivalWithoutReceiveIsDroppedSilently) {
  auto p = make_pair(two_rank_options());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), p.frame_a(0, 128), 128, 5).ok());
  p.world->run_until_idle();
  auto sent = poll_all(*p.a);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_TRUE(sent[0].ok());  // UC: the sender never learns
  EXPECT_TRUE(poll_all(*p.b).empty());
  EXPECT_EQ(p.world->counters().dropped_no_receive, 1u);
  EXPECT_EQ(p.world->counters().frames_delivered, 0u);
  // A receive posted afterwards does not get the lost frame.
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 128)).ok());
  p.world->run_until_idle();
  EXPECT_TRUE(poll_all(*p.b).empty());
}

TEST(UcEndpoint, FramesArrivingAtAQueuePairInErrorAreDropped) {
  auto p = make_pair(two_rank_options());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 16)).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), p.frame_a(0, 64), 64, 1).ok());
  p.world->run_until_idle();
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, WcStatus::kLocLenErr);
  ASSERT_TRUE(p.a->post_send(send_id(1, 1), p.frame_a(0, 8), 8, 2).ok());
  p.world->run_until_idle();
  EXPECT_TRUE(poll_all(*p.b).empty());
  EXPECT_EQ(p.world->counters().dropped_not_ready, 1u);
}

// A polled completion names its status as rdma-core's ibv_wc_status_str()
// does: a frame too long for its receive, the receive flushed behind it,
// and a send posted once the queue pair is in error.
TEST(UcEndpoint, PolledCompletionsNameTheirStatus) {
  auto p = make_pair(two_rank_options());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 16)).ok());
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 1), p.frame_b(64, 64)).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), p.frame_a(0, 64), 64, 1).ok());
  p.world->run_until_idle();
  auto sent = poll_all(*p.a);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status_name, "success");
  auto got = poll_all(*p.b);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].status, WcStatus::kLocLenErr);
  EXPECT_EQ(got[0].status_name, "local length error");
  EXPECT_EQ(got[1].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(got[1].status_name, "Work Request Flushed Error");
  ASSERT_TRUE(p.a->move_to_error().ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 1), p.frame_a(0, 8), 8, 2).ok());
  sent = poll_all(*p.a);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].status, WcStatus::kWrFlushErr);
  EXPECT_EQ(sent[0].status_name, "Work Request Flushed Error");
}

TEST(UcEndpoint, CompletedWorkCountsAsOutstandingUntilPolled) {
  auto p = make_pair(two_rank_options());
  for (uint32_t i = 0; i < Endpoint::kMaxSends; ++i) {
    ASSERT_TRUE(
        p.a->post_send(send_id(1, i), p.frame_a(i * 64, 64), 64, i).ok())
        << i;
  }
  p.world->run_until_idle();  // every send departed, none polled
  EXPECT_EQ(p.a->post_send(send_id(1, 99), p.frame_a(0, 64), 64, 0).code(),
            absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(poll_all(*p.a).size(), 32u);
  EXPECT_TRUE(p.a->post_send(send_id(1, 99), p.frame_a(0, 64), 64, 0).ok());
}

TEST(UcEndpoint, RefusedPostsLeaveNoTrace) {
  auto p = make_pair(two_rank_options());
  // rank 1's slab is not registered with rank 0's fabric.
  EXPECT_EQ(p.a->post_send(send_id(1, 0), p.frame_b(0, 64), 64, 0).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.a->post_recv(recv_id(1, 0), Frame()).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.a->post_send(send_id(1, 0), p.frame_a(0, 64), 65, 0).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.world->counters().posted_sends, 0u);
  EXPECT_EQ(p.world->counters().posted_recvs, 0u);
}

TEST(UcEndpoint, ConnectValidatesTheDestination) {
  auto world = *World::create(two_rank_options());
  auto a = *world->fabric(0).open("sim_0_1_0", 1);
  auto b = *world->fabric(1).open("sim_1_0_0", 0);
  Slab* slab = *world->fabric(0).create_slab(4096);
  // Not connected yet: no sends.
  EXPECT_EQ(a->post_send(send_id(1, 0), *slab->frame(0, 8), 8, 0).code(),
            absl::StatusCode::kFailedPrecondition);
  Destination bogus = *b->destination();
  bogus.qp_num = 4242;
  absl::Status s = a->connect(bogus);
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("qpn 4242"));
  s = a->connect(*a->destination());  // our own queue pair
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr("belongs to rank 0"));
  Destination wrong_gid = *b->destination();
  wrong_gid.gid[15] ^= 1;
  EXPECT_EQ(a->connect(wrong_gid).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(a->connect(*b->destination()).ok());
  EXPECT_EQ(a->connect(*b->destination()).code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(UcEndpoint, DestinationsAreDistinctWithMappedGids) {
  auto world = *World::create(two_rank_options());
  auto a = *world->fabric(0).open("sim_0_1_0", 1);
  auto b = *world->fabric(1).open("sim_1_0_0", 0);
  const Destination da = *a->destination();
  const Destination db = *b->destination();
  EXPECT_NE(da.qp_num, db.qp_num);
  EXPECT_NE(da.gid, db.gid);
  EXPECT_EQ(da.gid_string().rfind("::ffff:10.", 0), 0u) << da.gid_string();
  EXPECT_EQ(a->info().rank, 0u);
  EXPECT_EQ(a->info().peer, 1u);
  EXPECT_EQ(a->info().device, "sim_0_1_0");
}

TEST(UcEndpoint, OpenRefusesADeviceTheRankDoesNotHave) {
  WorldOptions options;
  options.topology = *Topology::ring(4);
  auto world = *World::create(options);
  auto ep = world->fabric(0).open("sim_0_2_0", 1);
  ASSERT_FALSE(ep.ok());
  EXPECT_EQ(ep.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(ep.status().message()),
              HasSubstr("rank 0 has no device sim_0_2_0; its devices: "
                        "sim_0_1_0, sim_0_3_0"));
  EXPECT_FALSE(world->fabric(0).open("sim_0_1_0", 0).ok());  // itself
  EXPECT_FALSE(world->fabric(0).open("sim_0_1_0", 9).ok());  // no such rank
  EXPECT_THAT(world->fabric(2).devices(),
              ElementsAre("sim_2_1_0", "sim_2_3_0"));
}

// A device file that names the wrong port: rank 0's sim_0_3_0 is cabled to
// rank 3, yet opened toward rank 1. As on a Mac the queue pair opens and
// connects; what it sends is lost on the wire, and so is what rank 1 sends
// it, while the right port still works.
TEST(UcEndpoint, AQueuePairOnAPortCabledElsewhereLosesItsFrames) {
  WorldOptions options;
  options.topology = *Topology::ring(4);
  auto world = *World::create(options);
  auto wrong = *world->fabric(0).open("sim_0_3_0", 1);
  auto right = *world->fabric(0).open("sim_0_1_0", 1);
  auto b_wrong = *world->fabric(1).open("sim_1_0_0", 0);
  auto b_right = *world->fabric(1).open("sim_1_0_0", 0);
  ASSERT_TRUE(wrong->connect(*b_wrong->destination()).ok());
  ASSERT_TRUE(b_wrong->connect(*wrong->destination()).ok());
  ASSERT_TRUE(right->connect(*b_right->destination()).ok());
  ASSERT_TRUE(b_right->connect(*right->destination()).ok());
  Slab* a = *world->fabric(0).create_slab(4096);
  Slab* b = *world->fabric(1).create_slab(4096);
  for (Endpoint* ep : {wrong.get(), right.get()}) {
    ASSERT_TRUE(ep->post_recv(recv_id(1, 0),
                              *a->frame(ep == right.get() ? 0 : 1024, 64))
                    .ok());
  }
  for (Endpoint* ep : {b_wrong.get(), b_right.get()}) {
    ASSERT_TRUE(ep->post_recv(recv_id(0, 0),
                              *b->frame(ep == b_right.get() ? 0 : 1024, 64))
                    .ok());
  }
  ASSERT_TRUE(wrong->post_send(send_id(1, 0), *a->frame(2048, 64), 64, 1).ok());
  ASSERT_TRUE(
      b_wrong->post_send(send_id(0, 0), *b->frame(2048, 64), 64, 2).ok());
  ASSERT_TRUE(right->post_send(send_id(1, 1), *a->frame(3072, 64), 64, 3).ok());
  world->advance_to(1'000'000);
  // UC: every send succeeds; only the right port's frame arrives.
  EXPECT_EQ(poll_all(*wrong).size(), 1u);
  EXPECT_EQ(poll_all(*b_wrong).size(), 1u);
  EXPECT_EQ(poll_all(*right).size(), 1u);
  auto got = poll_all(*b_right);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].immediate, 3u);
  EXPECT_EQ(world->counters().frames_delivered, 1u);
  EXPECT_EQ(world->counters().dropped_miscabled, 2u);
  EXPECT_EQ(world->counters().frames_dropped, 2u);
}

TEST(UcEndpoint, FabricBasics) {
  auto world = *World::create(two_rank_options());
  Fabric& f = world->fabric(1);
  EXPECT_EQ(f.kind(), "sim");
  EXPECT_EQ(f.rank(), 1u);
  EXPECT_EQ(&f.clock(), &world->clock());
  EXPECT_EQ(f.clock().now_ns(), 0);
}

}  // namespace
}  // namespace weft::sim
