// GID classification and choice, device-listing names, and how failed verbs
// calls become statuses.
#include "verbs/gid.h"

#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "base/absl_compat.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "verbs/device_info.h"
#include "verbs/internal/verbs_error.h"

namespace weft::verbs {
namespace {

using ::testing::HasSubstr;

Gid ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return Gid{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d};
}
Gid link_local(uint8_t last) {
  return Gid{0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, last};
}

GidEntry entry(int index, const Gid& gid) {
  return GidEntry{index, gid, gid_kind(gid)};
}

TEST(GidTest, Kinds) {
  EXPECT_EQ(gid_kind(Gid{}), GidKind::kEmpty);
  EXPECT_EQ(gid_kind(ipv4(169, 254, 3, 1)), GidKind::kIpv4Mapped);
  EXPECT_EQ(gid_kind(link_local(1)), GidKind::kLinkLocal);
  Gid feb = link_local(1);
  feb[1] = 0xbf;  // fe80::/10 includes febf::
  EXPECT_EQ(gid_kind(feb), GidKind::kLinkLocal);
  Gid global{0x20, 0x01, 0x0d, 0xb8};
  EXPECT_EQ(gid_kind(global), GidKind::kOther);
  EXPECT_EQ(gid_kind_name(GidKind::kIpv4Mapped), "IPv4-mapped");
}

TEST(GidTest, Text) {
  EXPECT_EQ(gid_text(ipv4(169, 254, 3, 1)), "::ffff:169.254.3.1");
  EXPECT_EQ(gid_ipv4_text(ipv4(10, 0, 0, 7)), "10.0.0.7");
  EXPECT_EQ(gid_text(link_local(9)), "fe80:0000:0000:0000:0200:0000:0000:0009");
}

TEST(GidTest, PrefersIpv4MappedAtWhateverIndex) {
  const std::vector<GidEntry> table = {entry(0, link_local(1)),
                                       entry(2, link_local(2)),
                                       entry(3, ipv4(169, 254, 0, 1))};
  auto chosen = choose_gid(table);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->index, 3);
  EXPECT_EQ(chosen->kind, GidKind::kIpv4Mapped);
}

TEST(GidTest, FallsBackToTheFirstLinkLocal) {
  const std::vector<GidEntry> table = {entry(1, link_local(5)),
                                       entry(4, link_local(6))};
  auto chosen = choose_gid(table);
  ASSERT_TRUE(chosen.has_value());
  EXPECT_EQ(chosen->index, 1);
}

TEST(GidTest, NothingUsable) {
  Gid global{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_FALSE(choose_gid(std::vector<GidEntry>{entry(0, global)}));
  EXPECT_FALSE(choose_gid({}));
  EXPECT_THAT(std::string(no_usable_gid_remedy()), HasSubstr("ifconfig"));
}

TEST(DeviceNamesTest, PortStatesMtusAndLinkLayers) {
  EXPECT_EQ(port_state_name(abi::IBV_PORT_ACTIVE), "PORT_ACTIVE");
  EXPECT_EQ(port_state_name(abi::IBV_PORT_DOWN), "PORT_DOWN");
  EXPECT_EQ(port_state_name(42), "invalid state");
  EXPECT_EQ(mtu_bytes(abi::IBV_MTU_256), 256);
  EXPECT_EQ(mtu_bytes(abi::IBV_MTU_1024), 1024);
  EXPECT_EQ(mtu_bytes(abi::IBV_MTU_4096), 4096);
  EXPECT_EQ(mtu_bytes(0), 0);
  EXPECT_EQ(mtu_bytes(6), 0);
  EXPECT_EQ(link_layer_name(abi::IBV_LINK_LAYER_ETHERNET), "Ethernet");
  EXPECT_EQ(link_layer_name(abi::IBV_LINK_LAYER_INFINIBAND), "InfiniBand");
}

TEST(VerbsErrorTest, ErrnoFromEveryReturnConvention) {
  using internal::errno_of;
  EXPECT_EQ(errno_of(ENOMEM, 0), ENOMEM);   // rdma-core returns it
  EXPECT_EQ(errno_of(-ENOMEM, 0), ENOMEM);  // Apple returns it negated
  EXPECT_EQ(errno_of(-1, EINVAL), EINVAL);  // -1 and errno
  EXPECT_EQ(errno_of(-ETIMEDOUT, EINVAL), ETIMEDOUT);
}

TEST(VerbsErrorTest, CodeFollowsTheErrno) {
  ErrorPlace place;
  place.rank = 2;
  place.peer = 3;
  place.device = "rdma_en5";
  auto status = internal::verbs_error(place, "doing it", ENOMEM, "try less");
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(base::message_of(status),
            "rank 2, peer 3, device rdma_en5: doing it failed: Cannot "
            "allocate memory (errno 12); try less");
  EXPECT_EQ(error_place(status)->cause, ErrorCause::kResource);
  EXPECT_EQ(internal::verbs_error(place, "x", EINVAL).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(internal::verbs_error(place, "x", ETIMEDOUT).code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(internal::verbs_error(place, "x", EIO).code(),
            absl::StatusCode::kInternal);
  EXPECT_THAT(base::message_of(internal::verbs_error(place, "x", 0)),
              HasSubstr("no errno"));
}

}  // namespace
}  // namespace weft::verbs
