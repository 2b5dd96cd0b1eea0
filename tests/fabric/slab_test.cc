#include "fabric/slab.h"

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

TEST(Slab, IsPageAlignedAndRoundedToPages) {
  absl::StatusOr<std::unique_ptr<Slab>> slab = Slab::create(5000);
  ASSERT_TRUE(slab.ok()) << slab.status();
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*slab)->data()) % page, 0u);
  EXPECT_EQ((*slab)->bytes() % page, 0u);
  EXPECT_GE((*slab)->bytes(), 5000u);
  EXPECT_EQ((*slab)->data()[4999], std::byte{0});
}

TEST(Slab, RejectsZeroAndHugeSizes) {
  EXPECT_EQ(Slab::create(0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Slab::create(Slab::kMaxBytes + 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Slab, FramesAreViewsInsideTheSlab) {
  auto slab = std::move(Slab::create(8192)).value();
  absl::StatusOr<Frame> f = slab->frame(4096, 1024);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->data(), slab->data() + 4096);
  EXPECT_EQ(f->bytes(), 1024u);
  EXPECT_TRUE(slab->contains(*f));
  Frame sub = f->sub(100, 24);
  EXPECT_EQ(sub.data(), slab->data() + 4196);
  EXPECT_EQ(sub.bytes(), 24u);
  EXPECT_TRUE(slab->contains(sub));
}

TEST(Slab, FrameOutsideIsAnError) {
  // The slab is whole pages: 4 KiB on x86-64 Linux, 16 KiB on Apple silicon.
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  auto slab = std::move(Slab::create(4096)).value();
  EXPECT_FALSE(slab->frame(page - 96, 200).ok());
  EXPECT_FALSE(slab->frame(UINT64_MAX, 1).ok());
  auto other = std::move(Slab::create(4096)).value();
  EXPECT_FALSE(slab->contains(*other->frame(0, 10)));
  EXPECT_NE(slab->id(), other->id());
}

}  // namespace
}  // namespace weft
