// The algorithms' plans, checked structurally for every kind, algorithm,
// rank count, striping, size and in-place choice: what each rank sends on a
// lane is exactly what its peer expects on that lane, in the same order and
// sizes; dependencies point backwards and pair equal lengths; every slice
// lies inside its buffer; every output byte is written.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "collectives/algorithms/algorithms.h"
#include "collectives/group_options.h"
#include "gtest/gtest.h"

namespace weft::collectives::internal {
namespace {

constexpr OpKind kKinds[] = {OpKind::kAllReduce,     OpKind::kAllGather,
                             OpKind::kReduceScatter, OpKind::kBroadcast,
                             OpKind::kReduce,        OpKind::kAllToAll,
                             OpKind::kBarrier};

struct Buffers {
  uint64_t in = 0;
  uint64_t out = 0;
};

Buffers buffers(const PlanInput& p) {
  const uint64_t b = p.bytes, n = p.size;
  const bool root = p.rank == p.root;
  switch (p.kind) {
    case OpKind::kAllReduce:
    case OpKind::kAllToAll:
      return {b, b};
    case OpKind::kAllGather:
      return {b, n * b};
    case OpKind::kReduceScatter:
      return {n * b, b};
    case OpKind::kBroadcast:
      return {root ? b : 0, b};
    case OpKind::kReduce:
      return {b, root ? b : 0};
    case OpKind::kSendRecv:
      return {p.sending ? b : 0, p.sending ? 0 : b};
    case OpKind::kBarrier:
      return {0, 0};
  }
  return {};
}

uint64_t bytes_of(const Item& item) {
  return item.kind == ItemKind::kRecv ? item.dst.bytes : item.src.bytes;
}

// Checks one plan on its own; adds its lane traffic to `sent`/`expected`.
using LaneKey = std::tuple<uint32_t, uint32_t, uint32_t>;  // from, to, lane
void check_plan(const PlanInput& in, Plan plan, const std::string& what,
                std::map<LaneKey, std::vector<uint64_t>>* sent,
                std::map<LaneKey, std::vector<uint64_t>>* expected) {
  const Buffers buf = buffers(in);
  const uint64_t scratch_bytes = plan.scratch_bytes;
  const std::vector<Item> items = all_items(std::move(plan));
  std::vector<bool> written(buf.out);
  auto inside = [&](const Slice& s) {
    const uint64_t size = s.buffer == BufferId::kIn    ? buf.in
                          : s.buffer == BufferId::kOut ? buf.out
                                                       : scratch_bytes;
    return s.offset + s.bytes <= size &&
           (s.bytes == 0 || s.offset % in.elem == 0);
  };
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& item = items[i];
    const std::string at =
        absl::StrFormat("%s item %u (%s)", what, i, describe_item(item));
    ASSERT_LT(item.after, static_cast<int32_t>(i)) << at;
    if (item.wait == Wait::kFrame) {
      EXPECT_EQ(bytes_of(item), bytes_of(items[item.after])) << at;
    }
    if (item.kind != ItemKind::kRecv) {
      ASSERT_TRUE(inside(item.src)) << at;
    }
    if (item.kind != ItemKind::kSend) {
      ASSERT_TRUE(inside(item.dst)) << at;
      ASSERT_NE(item.dst.buffer, BufferId::kIn)
          << at << ": plans never write the input";
      if (item.dst.buffer == BufferId::kOut) {
        for (uint64_t b = 0; b < item.dst.bytes; ++b)
          written[item.dst.offset + b] = true;
      }
    }
    if (item.kind == ItemKind::kSend) {
      (*sent)[{in.rank, item.peer, item.lane}].push_back(item.src.bytes);
    } else if (item.kind == ItemKind::kRecv) {
      (*expected)[{item.peer, in.rank, item.lane}].push_back(item.dst.bytes);
    }
  }
  const bool in_place_output_preset = in.in_place;
  for (uint64_t b = 0; b < buf.out; ++b) {
    if (written[b]) continue;
    // In place, this rank's own block is already where it belongs (and,
    // alone, its input is already the result; the root's broadcast input is
    // the output).
    const uint64_t block =
        in.kind == OpKind::kAllToAll ? in.bytes / in.size : in.bytes;
    const bool own_block =
        in_place_output_preset &&
        (((in.kind == OpKind::kAllGather || in.kind == OpKind::kAllToAll) &&
          b / block == in.rank) ||
         (in.kind == OpKind::kBroadcast && in.rank == in.root) || in.size == 1);
    ASSERT_TRUE(own_block) << what << ": output byte " << b << " of " << buf.out
                           << " is never written";
  }
}

void check_all(OpKind kind, Algorithm algorithm, uint32_t n, Striping striping,
               uint64_t count, bool in_place, uint32_t root) {
  const size_t elem = 4;
  std::map<LaneKey, std::vector<uint64_t>> sent, expected;
  for (uint32_t r = 0; r < n; ++r) {
    PlanInput in{
        .kind = kind, .rank = r, .size = n, .elem = elem, .root = root};
    in.bytes = kind == OpKind::kBarrier    ? 0
               : kind == OpKind::kAllToAll ? count * elem * n
                                           : count * elem;
    in.in_place =
        in_place && in.bytes > 0 &&
        !((kind == OpKind::kBroadcast || kind == OpKind::kReduce) && r != root);
    const std::string what = absl::StrFormat(
        "%s %s n=%u lanes=%u dirs=%u count=%u %s root=%u rank %u",
        op_kind_name(kind), algorithm_name(algorithm), n, striping.lanes,
        striping.directions, count, in_place ? "in-place" : "out-of-place",
        root, r);
    check_plan(in, build_plan(in, algorithm, striping), what, &sent, &expected);
    if (::testing::Test::HasFatalFailure()) return;
  }
  EXPECT_EQ(sent, expected)
      << op_kind_name(kind) << " " << algorithm_name(algorithm) << " n=" << n
      << ": what ranks send on each lane differs "
      << "from what their peers expect";
}

TEST(Plans, SendersAndReceiversAgreeAndOutputsAreCovered) {
  for (OpKind kind : kKinds) {
    for (Algorithm a : {Algorithm::kMeshExchange, Algorithm::kMeshScatter,
                        Algorithm::kRing}) {
      for (uint32_t n = 1; n <= 6; ++n) {
        for (Striping s :
             {Striping{1, 1}, Striping{2, 1}, Striping{1, 2}, Striping{2, 2}}) {
          if (a != Algorithm::kRing && s.directions > 1) continue;
          for (uint64_t count : {0, 1, 5, 97}) {
            for (bool in_place : {false, true}) {
              check_all(kind, a, n, s, count, in_place, n - 1);
              if (HasFatalFailure()) return;
            }
          }
        }
      }
    }
  }
}

TEST(Plans, SendRecvPairsUpOverEveryCable) {
  std::map<LaneKey, std::vector<uint64_t>> sent, expected;
  for (bool sending : {true, false}) {
    PlanInput in{.kind = OpKind::kSendRecv,
                 .rank = sending ? 0u : 2u,
                 .size = 3,
                 .elem = 8,
                 .bytes = 800,
                 .root = sending ? 2u : 0u,
                 .sending = sending};
    check_plan(in, build_plan(in, Algorithm::kMeshExchange, Striping{3, 1}),
               "p2p", &sent, &expected);
  }
  EXPECT_EQ(sent, expected);
  EXPECT_EQ(sent.size(), 3u);  // one stripe per cable
}

TEST(Plans, FrameSizeGrowsWithTheMessageWithinLimits) {
  constexpr Algorithm kRing = Algorithm::kRing;
  EXPECT_EQ(chunk_payload_bytes(0, kRing, 512 << 10), 4u << 10);
  // A 4 KiB item is one frame (its header rides beside the payload).
  EXPECT_EQ(chunk_payload_bytes(4 << 10, kRing, 512 << 10), 4u << 10);
  // A quarter of 64 KiB and a header round up to 32 KiB: two frames.
  EXPECT_EQ(chunk_payload_bytes(64 << 10, kRing, 512 << 10), 32u << 10);
  // Just under: a quarter of 64 KiB less a header fits 16 KiB frames.
  EXPECT_EQ(chunk_payload_bytes((64 << 10) - 256, kRing, 512 << 10),
            16u << 10);
  EXPECT_EQ(chunk_payload_bytes(uint64_t{1} << 40, kRing, 512 << 10),
            512u << 10);
  EXPECT_EQ(chunk_payload_bytes(uint64_t{1} << 40, kRing, 64 << 10),
            64u << 10);
  EXPECT_EQ(chunk_payload_bytes(64 << 10, Algorithm::kMeshScatter, 512 << 10),
            32u << 10);
}

// A mesh exchange forwards nothing: an item of up to 256 KiB goes in one
// frame (16 KiB and a header need a 32 KiB frame), a larger one in quarters
// as every algorithm's.
TEST(Plans, AnExchangeSendsAnItemOfUpTo256KiBWhole) {
  constexpr Algorithm kExchange = Algorithm::kMeshExchange;
  EXPECT_EQ(chunk_payload_bytes(1 << 10, kExchange, 512 << 10), 4u << 10);
  EXPECT_EQ(chunk_payload_bytes(16 << 10, kExchange, 512 << 10), 32u << 10);
  EXPECT_EQ(chunk_payload_bytes(64 << 10, kExchange, 512 << 10), 128u << 10);
  EXPECT_EQ(chunk_payload_bytes(256 << 10, kExchange, 512 << 10), 512u << 10);
  EXPECT_EQ(chunk_payload_bytes((256 << 10) + 4, kExchange, 512 << 10),
            128u << 10);
  // Never above the largest frame: a 256 KiB item in 64 KiB frames.
  EXPECT_EQ(chunk_payload_bytes(256 << 10, kExchange, 64 << 10), 64u << 10);
}

// kAuto's crossover between the mesh algorithms, worked out by hand from
// alpha + S beta = 2 alpha + 2 S beta / n with alpha / beta = 42,300 bytes.
TEST(Plans, AutoSwitchesMeshAlgorithmsWhereTheirCostsCross) {
  const GroupOptions defaults;
  EXPECT_EQ(mesh_exchange_limit(defaults, 8), 56'400u);
  EXPECT_EQ(mesh_exchange_limit(defaults, 4), 84'600u);
  EXPECT_EQ(mesh_exchange_limit(defaults, 3), 126'900u);
  EXPECT_EQ(mesh_exchange_limit(defaults, 2), UINT64_MAX);
  GroupOptions fixed;
  fixed.mesh_exchange_max_bytes = 64 << 10;
  EXPECT_EQ(mesh_exchange_limit(fixed, 8), 64u << 10);
  EXPECT_EQ(mesh_exchange_limit(fixed, 2), 64u << 10);
}

TEST(Layout, SplitsCoverEverythingOnce) {
  for (uint64_t count : {0, 1, 7, 100, 1001}) {
    for (uint64_t parts : {1, 2, 3, 8}) {
      uint64_t next = 0;
      for (uint64_t i = 0; i < parts; ++i) {
        const Range r = split_range(count, parts, i);
        EXPECT_EQ(r.begin, next);
        EXPECT_LE(r.count, count / parts + 1);
        next = r.begin + r.count;
      }
      EXPECT_EQ(next, count);
    }
  }
  // 64-bit offsets: a block far past 4 GiB.
  const StripeLayout layout(8, 1, 2);
  const Slice s = layout.block(BufferId::kOut, uint64_t{3} << 30, 2);
  EXPECT_EQ(s.offset, (uint64_t{6} << 30) + (uint64_t{3} << 29));
  EXPECT_EQ(s.bytes, uint64_t{3} << 29);
}

}  // namespace
}  // namespace weft::collectives::internal
