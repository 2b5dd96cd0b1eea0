#include "fabric/errors.h"

#include <optional>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

TEST(MakeError, PrefixesPlaceAndCarriesPayload) {
  ErrorPlace place{.rank = 1,
                   .peer = 4,
                   .device = "dev|with|bars",
                   .cause = ErrorCause::kDeadline};
  absl::Status s = make_error(absl::StatusCode::kDeadlineExceeded, place,
                              "peer silent for 5 s");
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s.message(),
            "rank 1, peer 4, device dev|with|bars: peer silent for 5 s");
  std::optional<ErrorPlace> back = error_place(s);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rank, 1u);
  EXPECT_EQ(back->peer, 4u);
  EXPECT_EQ(back->device, "dev|with|bars");
  EXPECT_EQ(back->cause, ErrorCause::kDeadline);
}

TEST(MakeError, LeavesOutUnknownParts) {
  ErrorPlace place{.rank = 3};
  absl::Status s = make_error(absl::StatusCode::kInvalidArgument, place, "x");
  EXPECT_EQ(s.message(), "rank 3: x");
  EXPECT_EQ(error_place(s)->peer, kNoPeer);
}

TEST(ErrorPlace, AbsentOnPlainStatus) {
  EXPECT_FALSE(error_place(absl::InternalError("x")).has_value());
}

}  // namespace
}  // namespace weft
