#include "fabric/destination.h"

#include <cstdint>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

Destination sample() {
  Destination d;
  d.lid = 0x1234;
  d.qp_num = 0x00abcdef;
  d.psn = 7;
  d.gid = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 3, 4};
  return d;
}

TEST(Destination, EncodesBigEndian) {
  const auto wire = sample().encode();
  EXPECT_EQ(wire[0], 0x12);
  EXPECT_EQ(wire[1], 0x34);
  EXPECT_EQ(wire[2], 0x00);
  EXPECT_EQ(wire[3], 0xab);
  EXPECT_EQ(wire[4], 0xcd);
  EXPECT_EQ(wire[5], 0xef);
  EXPECT_EQ(wire[9], 7);
  EXPECT_EQ(wire[10 + 12], 169);
}

TEST(Destination, RoundTrips) {
  const auto wire = sample().encode();
  absl::StatusOr<Destination> back = Destination::decode(wire);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, sample());
}

TEST(Destination, WrongSizeIsAnError) {
  const auto wire = sample().encode();
  absl::StatusOr<Destination> back = Destination::decode(
      std::span<const uint8_t>(wire.data(), wire.size() - 1));
  EXPECT_EQ(back.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(Destination, GidKindAndText) {
  Destination d = sample();
  EXPECT_TRUE(d.gid_is_global());
  EXPECT_EQ(d.gid_string(), "::ffff:169.254.3.4");
  d.gid = {};
  EXPECT_FALSE(d.gid_is_global());
  d.gid[0] = 0xfe;
  d.gid[1] = 0x80;
  d.gid[15] = 1;
  EXPECT_EQ(d.gid_string(), "fe80:0000:0000:0000:0000:0000:0000:0001");
}

}  // namespace
}  // namespace weft
