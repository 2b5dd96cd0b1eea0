#include "fabric/work_id.h"

#include <cstdint>
#include <optional>

#include "gtest/gtest.h"

namespace weft {
namespace {

TEST(WorkId, RoundTripsThroughWire) {
  for (WorkKind kind : {WorkKind::kSend, WorkKind::kRecv}) {
    for (uint32_t peer : {0u, 1u, 4095u, WorkId::kMaxPeer}) {
      for (uint32_t slot : {0u, 31u, 0xffff'ffffu}) {
        WorkId id{kind, peer, slot};
        std::optional<WorkId> back = WorkId::decode(id.encode());
        ASSERT_TRUE(back.has_value());
        EXPECT_EQ(*back, id);
      }
    }
  }
}

TEST(WorkId, ForeignWireValueIsRejected) {
  EXPECT_FALSE(WorkId::decode(0).has_value());
  EXPECT_FALSE(WorkId::decode(0xff00'0000'0000'0000ull).has_value());
}

TEST(WorkId, ReadsWell) {
  EXPECT_EQ((WorkId{WorkKind::kRecv, 3, 7}).to_string(), "recv peer 3 slot 7");
}

}  // namespace
}  // namespace weft
