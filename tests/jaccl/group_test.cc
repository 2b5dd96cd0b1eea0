// The jaccl::Group behind init(): its argument checks (each refused with a
// message naming what is wrong, before anything is sent) and its calls, on
// a one-rank weft group over the simulated verbs provider. JACCL itself
// refuses a one-rank world, so the group is made here directly.
#include "jaccl/group.h"

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "jaccl/internal/weft_group.h"
#include "rendezvous/config.h"
#include "startup/process_group.h"
#include "tests/jaccl/jaccl_env.h"

namespace jaccl::internal {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class OneRankGroup : public ::testing::Test {
 protected:
  void SetUp() override {
    env_.set("WEFT_VERBS_LIBRARY", WEFT_SIM_VERBS_PATH);
    absl::StatusOr<std::unique_ptr<weft::ProcessGroup>> pg =
        weft::ProcessGroup::start(weft::Config{});
    ASSERT_TRUE(pg.ok()) << pg.status();
    group_ = std::make_unique<WeftGroup>(*std::move(pg));
  }

  // The message of the exception `call` throws.
  template <typename Call>
  std::string error_of(Call call) {
    try {
      call();
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(no exception)";
  }

  testing::ScopedEnv env_;
  std::unique_ptr<Group> group_;
};

TEST_F(OneRankGroup, CallsWork) {
  EXPECT_EQ(group_->rank(), 0);
  EXPECT_EQ(group_->size(), 1);
  const std::array<float, 3> in = {1.5f, -2.0f, 3.0f};
  std::array<float, 3> out{};
  group_->all_sum(in.data(), out.data(), sizeof(in), Float32);
  EXPECT_THAT(out, ElementsAre(1.5f, -2.0f, 3.0f));
  std::array<int32_t, 2> gathered{};
  const int32_t mine = 7;
  group_->all_gather(&mine, gathered.data(), sizeof(mine));
  EXPECT_EQ(gathered[0], 7);
  group_->barrier();
  group_->all_max(in.data(), out.data(), 0, Float32);  // 0 bytes: nothing
}

TEST_F(OneRankGroup, UnknownDtypeIsRefused) {
  const int32_t in = 1;
  int32_t out = 0;
  EXPECT_THAT(error_of([&] { group_->all_sum(&in, &out, 4, 14); }),
              AllOf(HasSubstr("[jaccl] all_sum"), HasSubstr("dtype 14")));
  EXPECT_THAT(error_of([&] { group_->all_min(&in, &out, 4, -1); }),
              HasSubstr("dtype -1"));
}

TEST_F(OneRankGroup, PartialElementsAreRefused) {
  const std::array<float, 2> in{};
  std::array<float, 2> out{};
  EXPECT_THAT(
      error_of([&] { group_->all_sum(in.data(), out.data(), 6, Float32); }),
      AllOf(HasSubstr("n_bytes = 6"), HasSubstr("float32"),
            HasSubstr("4 bytes")));
  EXPECT_THAT(error_of([&] {
                group_->sum_scatter(in.data(), out.data(), 3, BFloat16);
              }),
              AllOf(HasSubstr("sum_scatter"), HasSubstr("bfloat16")));
}

TEST_F(OneRankGroup, BadPeersAreRefused) {
  const char byte = 0;
  char got = 0;
  EXPECT_THAT(error_of([&] { group_->send(&byte, 1, 0); }),
              AllOf(HasSubstr("[jaccl] send"), HasSubstr("dst = 0")));
  EXPECT_THAT(error_of([&] { group_->send(&byte, 1, 1); }),
              HasSubstr("dst = 1"));
  EXPECT_THAT(error_of([&] { group_->recv(&got, 1, -3); }),
              HasSubstr("src = -3"));
}

TEST_F(OneRankGroup, NullBuffersAreRefused) {
  float out = 0;
  EXPECT_THAT(error_of([&] { group_->all_sum(nullptr, &out, 4, Float32); }),
              AllOf(HasSubstr("input is null"), HasSubstr("n_bytes = 4")));
  EXPECT_THAT(error_of([&] { group_->all_gather(&out, nullptr, 4); }),
              HasSubstr("output is null"));
}

}  // namespace
}  // namespace jaccl::internal
