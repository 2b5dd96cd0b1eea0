// The liveness check over the simulated provider's departures
// (verbs/departure_check.h), against a stand-in for
// weft_sim_verbs_departed: it names a rank that left, with when, attaches
// the peer for the group, names several in turn, and says when the
// provider cannot answer.
#include "verbs/departure_check.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft::verbs {
namespace {

using ::testing::HasSubstr;

struct Left {
  uint32_t rank;
  int64_t at_ns;
};
// What the stand-in reports; -1 in `answer` makes it fail.
std::vector<Left> g_left;
int g_answer = 0;

int stand_in(uint32_t* ranks, int64_t* left_at_ns, int capacity) {
  if (g_answer < 0) return g_answer;
  for (int i = 0; i < capacity && i < static_cast<int>(g_left.size()); ++i) {
    ranks[i] = g_left[i].rank;
    left_at_ns[i] = g_left[i].at_ns;
  }
  return static_cast<int>(g_left.size());
}

class DepartureCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    g_left.clear();
    g_answer = 0;
  }
};

TEST_F(DepartureCheck, IsOkWhileNoOtherRankHasLeft) {
  std::function<absl::Status()> check = departure_check(stand_in, 0);
  EXPECT_TRUE(check().ok());
  g_left = {{0, 7000}};  // this rank itself: not a peer gone
  EXPECT_TRUE(check().ok());
}

TEST_F(DepartureCheck, NamesTheRankThatLeftAndWhen) {
  std::function<absl::Status()> check = departure_check(stand_in, 0);
  g_left = {{1, 5000}};
  const absl::Status s = check();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(),
              HasSubstr("rank 1 left the simulated world at 5.000 us (its "
                        "process exited or was killed)"));
  const std::optional<ErrorPlace> place = error_place(s);
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ(place->rank, 0u);
  EXPECT_EQ(place->peer, 1u);
  EXPECT_EQ(place->cause, ErrorCause::kPeerUnavailable);
}

TEST_F(DepartureCheck, NamesSeveralInTurnFirstToLeaveFirst) {
  std::function<absl::Status()> check = departure_check(stand_in, 2);
  g_left = {{3, 1000}, {2, 1500}, {1, 2000}};
  std::vector<uint32_t> named;
  for (int i = 0; i < 4; ++i) named.push_back(error_place(check())->peer);
  EXPECT_THAT(named, ::testing::ElementsAre(3u, 1u, 3u, 1u));
}

TEST_F(DepartureCheck, AProviderThatCannotAnswerIsAnError) {
  std::function<absl::Status()> check = departure_check(stand_in, 0);
  g_answer = -1;
  const absl::Status s = check();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("weft_sim_verbs_departed returned -1"));
}

}  // namespace
}  // namespace weft::verbs
