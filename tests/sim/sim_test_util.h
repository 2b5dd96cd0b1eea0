// Helpers for the simulator tests: a world of two connected ranks with a
// slab each, and a RankProgram made of a lambda.
#ifndef WEFT_TESTS_SIM_SIM_TEST_UTIL_H_
#define WEFT_TESTS_SIM_SIM_TEST_UTIL_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "gtest/gtest.h"
#include "sim/world.h"

namespace weft::sim::testing {

inline constexpr uint64_t kSlabBytes = 1 << 20;

// Two ranks, endpoints connected over one of their cables.
struct Pair {
  std::unique_ptr<World> world;
  std::unique_ptr<Endpoint> a;  // rank 0 -> 1
  std::unique_ptr<Endpoint> b;  // rank 1 -> 0
  Slab* slab_a = nullptr;
  Slab* slab_b = nullptr;

  Frame frame_a(uint64_t offset, uint32_t bytes) const {
    return *slab_a->frame(offset, bytes);
  }
  Frame frame_b(uint64_t offset, uint32_t bytes) const {
    return *slab_b->frame(offset, bytes);
  }
};

inline WorldOptions two_rank_options(LinkModel link = LinkModel::tb5()) {
  WorldOptions options;
  options.topology = *Topology::mesh(2);
  options.link = link;
  return options;
}

inline Pair make_pair(WorldOptions options, uint32_t cable = 0) {
  Pair p;
  auto world = World::create(std::move(options));
  EXPECT_TRUE(world.ok()) << world.status();
  p.world = *std::move(world);
  const Topology& topo = p.world->options().topology;
  auto a = p.world->fabric(0).open(topo.devices(0, 1)[cable], 1);
  auto b = p.world->fabric(1).open(topo.devices(1, 0)[cable], 0);
  EXPECT_TRUE(a.ok() && b.ok());
  p.a = *std::move(a);
  p.b = *std::move(b);
  EXPECT_TRUE(p.a->connect(*p.b->destination()).ok());
  EXPECT_TRUE(p.b->connect(*p.a->destination()).ok());
  p.slab_a = *p.world->fabric(0).create_slab(kSlabBytes);
  p.slab_b = *p.world->fabric(1).create_slab(kSlabBytes);
  return p;
}

inline WorkId send_id(uint32_t peer, uint32_t slot) {
  return WorkId{WorkKind::kSend, peer, slot};
}
inline WorkId recv_id(uint32_t peer, uint32_t slot) {
  return WorkId{WorkKind::kRecv, peer, slot};
}

inline std::vector<Completion> poll_all(Endpoint& ep) {
  std::vector<Completion> out(Endpoint::kMaxPollBatch);
  auto n = ep.poll(out);
  EXPECT_TRUE(n.ok());
  out.resize(n.ok() ? *n : 0);
  return out;
}

class FnProgram : public RankProgram {
 public:
  explicit FnProgram(std::function<Progress()> step,
                     std::string outstanding = "")
      : step_(std::move(step)), outstanding_(std::move(outstanding)) {}
  Progress step() override { return step_(); }
  std::string outstanding() const override { return outstanding_; }

 private:
  std::function<Progress()> step_;
  std::string outstanding_;
};

}  // namespace weft::sim::testing

#endif  // WEFT_TESTS_SIM_SIM_TEST_UTIL_H_
