// What a progress step reports: kWaiting means nothing more can move until
// a completion arrives or the wake-up time comes, even when the step itself
// moved frames (a scheduler then does not step the rank again for nothing);
// so stepping again at once, with no new completion, posts nothing.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/group.h"
#include "gtest/gtest.h"
#include "harness/sim_cluster.h"
#include "sim/world.h"
#include "tests/collectives_suite/cases.h"

namespace weft::testing {

using harness::SimCluster;
namespace {

constexpr uint32_t kRanks = 4;
constexpr uint32_t kCount = 64 << 10;  // several frames per ring step

uint64_t posts(const sim::World& world) {
  return world.counters().posted_sends + world.counters().posted_recvs;
}

// One all_sum. After every kWaiting step it steps again at once (the
// simulator processes no event in between, so no completion is new) and
// records whether that second step posted anything or asked to be called
// again.
class EagerSum final : public sim::RankProgram {
 public:
  EagerSum(Group& group, const sim::World& world, float value)
      : group_(group), world_(world), in_(kCount, value), out_(kCount) {}

  Progress step() override {
    if (!started_) {
      started_ = true;
      op_ = group_.all_reduce_async(std::as_bytes(std::span(in_)),
                                    std::as_writable_bytes(std::span(out_)),
                                    DType::kFloat32, ReduceOp::kSum);
    }
    const uint64_t before = posts(world_);
    const Progress p = op_.progress();
    if (op_.done()) {
      status_ = op_.status();
      return Progress::done();
    }
    if (p.state != Progress::State::kWaiting) return p;
    const uint64_t after_first = posts(world_);
    if (after_first != before) ++moved_then_waiting_;
    const Progress again = op_.progress();
    if (posts(world_) != after_first) ++posted_on_repeat_;
    if (again.state == Progress::State::kAdvanced) ++advanced_on_repeat_;
    if (op_.done()) status_ = op_.status();
    return op_.done() ? Progress::done() : again;
  }
  std::string outstanding() const override {
    return absl::StrFormat("rank %u: all_sum running", group_.rank());
  }

  Group& group_;
  const sim::World& world_;
  std::vector<float> in_, out_;
  Operation op_;
  bool started_ = false;
  absl::Status status_ = absl::UnknownError("not run");
  uint32_t moved_then_waiting_ = 0;
  uint32_t posted_on_repeat_ = 0;
  uint32_t advanced_on_repeat_ = 0;
};

TEST(EngineProgress, AStepThatMovedFramesReportsWaitingOnlyWhenNothingIsLeft) {
  sim::WorldOptions w;
  w.topology = *Topology::ring(kRanks);
  w.link = sim::LinkModel::tb5();
  GroupOptions o;
  o.algorithm = Algorithm::kRing;
  absl::StatusOr<SimCluster> c = SimCluster::create(w, o);
  ASSERT_TRUE(c.ok()) << c.status();
  std::vector<std::unique_ptr<EagerSum>> sums;
  std::vector<sim::RankProgram*> programs;
  for (uint32_t r = 0; r < kRanks; ++r) {
    sums.push_back(std::make_unique<EagerSum>(c->group(r), c->world(),
                                              static_cast<float>(r + 1)));
    programs.push_back(sums.back().get());
  }
  const sim::RunResult run = c->world().run(programs);
  ASSERT_TRUE(run.completed()) << run.report;
  const float want = kRanks * (kRanks + 1) / 2;  // 1 + 2 + ... + kRanks
  for (const auto& s : sums) {
    ASSERT_TRUE(s->status_.ok()) << s->status_;
    EXPECT_EQ(s->out_.front(), want);
    EXPECT_EQ(s->out_.back(), want);
    // Steps that posted frames and then said there was nothing left to do.
    EXPECT_GT(s->moved_then_waiting_, 0u);
    // And there was not: stepping again at once did nothing.
    EXPECT_EQ(s->posted_on_repeat_, 0u);
    EXPECT_EQ(s->advanced_on_repeat_, 0u);
  }
}

}  // namespace
}  // namespace weft::testing
