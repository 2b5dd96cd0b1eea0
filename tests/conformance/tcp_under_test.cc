// The TCP fabric in the conformance suite: two fabrics in this process over
// real loopback sockets (127.0.0.1), each polled and then idled on its
// sockets for up to a millisecond between polls, a wait bounded on the
// wall clock.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "gtest/gtest.h"
#include "tcp/tcp_fabric.h"
#include "tests/conformance/fabric_under_test.h"

namespace weft::testing {
namespace {

// Bound on waits that succeed in milliseconds (for a loaded CI machine).
constexpr TimeNs kWaitNs = 20 * kNsPerS;

class TcpPair final : public ConformancePair {
 public:
  bool open() {
    for (uint32_t r = 0; r < 2; ++r) {
      absl::StatusOr<std::unique_ptr<tcp::TcpFabric>> fabric =
          tcp::TcpFabric::open(r, tcp::TcpOptions{.listen = {"127.0.0.1:0"}});
      EXPECT_TRUE(fabric.ok()) << fabric.status();
      if (!fabric.ok()) return false;
      fabrics_[r] = *std::move(fabric);
      absl::StatusOr<Slab*> slab =
          fabrics_[r]->create_slab(kConformanceSlabBytes);
      absl::StatusOr<std::unique_ptr<Endpoint>> endpoint =
          fabrics_[r]->open(fabrics_[r]->listen_addresses()[0], 1 - r);
      EXPECT_TRUE(slab.ok() && endpoint.ok());
      if (!slab.ok() || !endpoint.ok()) return false;
      side[r].fabric = fabrics_[r].get();
      side[r].slab = *slab;
      side[r].endpoint = *std::move(endpoint);
    }
    return true;
  }
  // Endpoints go before their fabrics.
  ~TcpPair() override {
    for (ConformanceSide& s : side) s.endpoint.reset();
  }

  bool advance(int round) override {
    if (round == 0) deadline_ns_ = deadline_after(clock_.now_ns(), kWaitNs);
    if (clock_.now_ns() >= deadline_ns_) return false;
    for (const auto& f : fabrics_) {
      f->idle(deadline_after(clock_.now_ns(), kNsPerMs));
    }
    return true;
  }
  // Every message a fabric wrote was read by the other: received, or
  // dropped for want of a receive.
  void settle() override {
    EXPECT_TRUE(poll_until([&] {
      for (int r = 0; r < 2; ++r) {
        if (fabrics_[r]->messages_dropped() + side[r].count(WorkKind::kRecv) <
            fabrics_[1 - r]->messages_sent()) {
          return false;
        }
      }
      return true;
    }));
  }

 private:
  std::array<std::unique_ptr<tcp::TcpFabric>, 2> fabrics_;
  WallClock clock_;
  TimeNs deadline_ns_ = 0;
};

class TcpUnderTest final : public FabricUnderTest {
 public:
  std::string name() const override { return "tcp"; }
  Offers offers() const override {
    return {.send_without_immediate = true,
            .move_to_error = true,
            .tells_departures = true};
  }
  std::unique_ptr<ConformancePair> make() const override {
    auto pair = std::make_unique<TcpPair>();
    return pair->open() ? std::move(pair) : nullptr;
  }
};

const TcpUnderTest kTcpUnderTest;

INSTANTIATE_TEST_SUITE_P(Tcp, EndpointConformance,
                         ::testing::Values(&kTcpUnderTest), fabric_name);

}  // namespace
}  // namespace weft::testing
