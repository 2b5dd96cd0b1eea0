// The link model: the tb5 derivation, parsing, and that a frame takes
// exactly latency + overhead + bytes/bandwidth, queueing behind a busy link.
#include "sim/link_model.h"

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/group_options.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/world.h"
#include "tests/sim/sim_test_util.h"

namespace weft::sim {
namespace {

using ::testing::HasSubstr;
using testing::make_pair;
using testing::poll_all;
using testing::recv_id;
using testing::send_id;
using testing::two_rank_options;

TEST(LinkModel, Tb5ReproducesThePublishedFigures) {
  const LinkModel tb5 = LinkModel::tb5();
  // ib_send_lat: 4.64 us one way at 4 KiB.
  EXPECT_EQ(tb5.latency_ns + tb5.serialisation_ns(4096), 4640);
  // ib_send_bw: 75 Gbit/s streaming 64 KiB messages back to back.
  const double gbps =
      65536.0 * 8 / static_cast<double>(tb5.serialisation_ns(65536));
  EXPECT_NEAR(gbps, 75.0, 0.01);
}

// GroupOptions' crossover between the mesh algorithms is alpha / beta of
// this model: one message's fixed cost in bytes of wire time.
TEST(LinkModel, Tb5MessageCostIsAlphaOverBeta) {
  const LinkModel tb5 = LinkModel::tb5();
  const double alpha_ns =
      static_cast<double>(tb5.latency_ns + tb5.per_message_ns);
  const double beta_ns_per_byte = 1e9 / tb5.bandwidth_bytes_per_s;
  EXPECT_NEAR(static_cast<double>(kTb5MessageCostBytes),
              alpha_ns / beta_ns_per_byte, 0.5);
}

TEST(LinkModel, IdealCostsNothing) {
  const LinkModel ideal = LinkModel::ideal();
  EXPECT_EQ(ideal.latency_ns, 0);
  EXPECT_EQ(ideal.serialisation_ns(1 << 30), 0);
}

TEST(LinkModel, SerialisationRoundsUpWholeNanoseconds) {
  // 8 Gbit/s = 1 byte per ns; 80 Gbit/s = 10 bytes per ns.
  const LinkModel one{
      .latency_ns = 0, .bandwidth_bytes_per_s = 1e9, .per_message_ns = 5};
  EXPECT_EQ(one.serialisation_ns(0), 5);
  EXPECT_EQ(one.serialisation_ns(1000), 1005);
  const LinkModel ten{
      .latency_ns = 0, .bandwidth_bytes_per_s = 1e10, .per_message_ns = 0};
  EXPECT_EQ(ten.serialisation_ns(1), 1);
  EXPECT_EQ(ten.serialisation_ns(10), 1);
  EXPECT_EQ(ten.serialisation_ns(11), 2);
}

TEST(LinkModel, ParsesPresetsAndFigures) {
  EXPECT_EQ(*LinkModel::parse("tb5"), LinkModel::tb5());
  EXPECT_EQ(*LinkModel::parse("ideal"), LinkModel::ideal());
  const LinkModel m =
      *LinkModel::parse("latency_ns=1000,bandwidth_gbps=8,overhead_ns=100");
  EXPECT_EQ(m.latency_ns, 1000);
  EXPECT_EQ(m.bandwidth_bytes_per_s, 1e9);
  EXPECT_EQ(m.per_message_ns, 100);
  const LinkModel partial = *LinkModel::parse("latency_ns=7");
  EXPECT_EQ(partial.latency_ns, 7);
  EXPECT_EQ(partial.bandwidth_bytes_per_s, 0);  // ideal's, infinite
  const LinkModel over = *LinkModel::parse("tb5,latency_ns=10000");
  EXPECT_EQ(over.latency_ns, 10000);
  EXPECT_EQ(over.per_message_ns, LinkModel::tb5().per_message_ns);
  EXPECT_EQ(*LinkModel::parse(m.to_string()), m);
}

TEST(LinkModel, BadSpecsSayWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty"},
      {"fast", "neither a preset"},
      {"latency_ns=-1", "latency_ns=-1"},
      {"latency_ns=abc", "latency_ns=abc"},
      {"bandwidth_gbps=x", "bandwidth_gbps=x"},
      {"bandwidth_gbps=-3", "bandwidth_gbps=-3"},
      {"bandwidth_gbps=1e-30", "bandwidth_gbps=1e-30"},  // found by fuzzing
      {"speed=3", "unknown key \"speed\""},
      {"latency_ns=1,,overhead_ns=2", "empty item"},
      {"latency_ns=1,tb5", "neither a preset"},
  };
  for (const auto& [spec, expected] : cases) {
    absl::StatusOr<LinkModel> m = LinkModel::parse(spec);
    ASSERT_FALSE(m.ok()) << spec;
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(m.status().message()), HasSubstr(expected)) << spec;
  }
}

TEST(LinkModel, SerialisationSaturatesInsteadOfOverflowing) {
  const LinkModel crawl{
      .latency_ns = 0, .bandwidth_bytes_per_s = 1e-20, .per_message_ns = 5};
  EXPECT_EQ(crawl.serialisation_ns(uint64_t{1} << 30), kNeverNs);
}

// 1000 ns latency, 1 byte per ns, 100 ns per message.
LinkModel simple_link() {
  return LinkModel{
      .latency_ns = 1000, .bandwidth_bytes_per_s = 1e9, .per_message_ns = 100};
}

TimeNs arrival_of_next(World& world, Endpoint& ep) {
  while (poll_all(ep).empty()) {
    world.advance_to(world.clock().now_ns() + 1);
  }
  return world.clock().now_ns();
}

TEST(LinkModel, OneSendArrivesAtLatencyPlusOverheadPlusBytesOverBandwidth) {
  auto p = make_pair(two_rank_options(simple_link()));
  ASSERT_TRUE(p.b->post_recv(recv_id(0, 0), p.frame_b(0, 4096)).ok());
  ASSERT_TRUE(p.a->post_send(send_id(1, 0), p.frame_a(0, 4096), 500, 0).ok());
  EXPECT_EQ(arrival_of_next(*p.world, *p.b), 1000 + 100 + 500);
}

TEST(LinkModel, ABusyLinkQueues) {
  auto p = make_pair(two_rank_options(simple_link()));
  for (uint32_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(p.b->post_recv(recv_id(0, i), p.frame_b(i * 1024, 1024)).ok());
    ASSERT_TRUE(
        p.a->post_send(send_id(1, i), p.frame_a(i * 1024, 1024), 500, i).ok());
  }
  EXPECT_EQ(arrival_of_next(*p.world, *p.a), 600);   // first departs
  EXPECT_EQ(arrival_of_next(*p.world, *p.a), 1200);  // second waited for it
  EXPECT_EQ(arrival_of_next(*p.world, *p.b), 1600);
  EXPECT_EQ(arrival_of_next(*p.world, *p.b), 2200);
}

TEST(LinkModel, QueuePairsOnOneCableShareItAndOtherCablesDoNot) {
  WorldOptions options = two_rank_options(simple_link());
  options.topology = *Topology::mesh(2, 2);
  auto world = *World::create(options);
  Slab* slab = *world->fabric(0).create_slab(1 << 16);
  auto open = [&](uint32_t rank, const char* device) {
    return *world->fabric(rank).open(device, 1 - rank);
  };
  auto a0 = open(0, "sim_0_1_0"), a0_again = open(0, "sim_0_1_0"),
       a1 = open(0, "sim_0_1_1");
  auto b0 = open(1, "sim_1_0_0"), b0_again = open(1, "sim_1_0_0"),
       b1 = open(1, "sim_1_0_1");
  ASSERT_TRUE(a0->connect(*b0->destination()).ok());
  ASSERT_TRUE(a0_again->connect(*b0_again->destination()).ok());
  ASSERT_TRUE(a1->connect(*b1->destination()).ok());
  const Frame f = *slab->frame(0, 1024);
  ASSERT_TRUE(a0->post_send(send_id(1, 0), f, 500, 0).ok());
  ASSERT_TRUE(a0_again->post_send(send_id(1, 1), f, 500, 0).ok());
  ASSERT_TRUE(a1->post_send(send_id(1, 2), f, 500, 0).ok());
  world->advance_to(600);
  EXPECT_EQ(poll_all(*a0).size(), 1u);
  EXPECT_EQ(poll_all(*a1).size(), 1u);       // its own cable: not queued
  EXPECT_TRUE(poll_all(*a0_again).empty());  // behind a0 on cable 0
  world->advance_to(1200);
  EXPECT_EQ(poll_all(*a0_again).size(), 1u);
}

}  // namespace
}  // namespace weft::sim
