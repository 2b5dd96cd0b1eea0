// Registered user memory and scatter/gather on the TCP fabric: the shared
// contract checks (tests/support/parts_contract.h) over loopback sockets.
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/parts_contract.h"
#include "tests/tcp/tcp_pair.h"

namespace weft::tcp {
namespace {

struct TcpPartsPair {
  std::unique_ptr<testing::Pair> pair;
  weft::testing::PartsPair parts;

  TcpPartsPair() {
    auto p = testing::Pair::create();
    EXPECT_TRUE(p.ok()) << p.status();
    pair = *std::move(p);
    parts.sender_fabric = pair->side[0].fabric.get();
    parts.receiver_fabric = pair->side[1].fabric.get();
    parts.sender = pair->side[0].endpoint.get();
    parts.receiver = pair->side[1].endpoint.get();
    parts.sender_slab = pair->side[0].slab;
    parts.receiver_slab = pair->side[1].slab;
    parts.wait = [this](int side, size_t count) {
      std::vector<Completion>& seen = pair->side[side].completions;
      EXPECT_TRUE(pair->poll_until([&] { return seen.size() >= count; }));
      return seen;
    };
  }
};

WEFT_PARTS_CONTRACT_TESTS(TcpParts, TcpPartsPair)

}  // namespace
}  // namespace weft::tcp
