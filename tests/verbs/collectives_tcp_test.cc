// The hardware path end to end, minus the hardware: each rank, on its own
// thread as it would be its own process on a Mac, opens a VerbsFabric (the
// simulated verbs provider, on the wall clock), joins a TcpBootstrap over
// real loopback sockets, forms its group with create_group(), and calls the
// blocking all_sum. The provider takes one lock around every verbs entry
// point, so ranks on several threads are safe; the ranks' fabrics are
// opened one after another on the main thread, because the rank whose
// devices the provider lists is process-wide.
#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "collectives/group_builder.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rendezvous/tcp_bootstrap.h"
#include "tests/collectives_suite/case_inputs.h"
#include "tests/verbs/sim_provider.h"

namespace weft::verbs::testing {
namespace {

using weft::testing::ByteVec;

constexpr uint32_t kRanks = 3;
constexpr uint64_t kCount = 10007;
// Bounds on waits that succeed (loopback and a simulated fabric take
// milliseconds; these are for a loaded CI machine).
constexpr TimeNs kLongNs = 30 * kNsPerS;
constexpr auto kLongWait = std::chrono::seconds(60);

Config config_for(uint32_t rank, uint16_t port) {
  Config c;
  c.rank = rank;
  c.size = kRanks;
  c.devices = *Topology::mesh(kRanks);
  c.coordinator = absl::StrFormat("127.0.0.1:%u", port);
  c.connect_timeout_ns = kLongNs;
  c.exchange_timeout_ns = kLongNs;
  return c;
}

struct RankRun {
  absl::Status status;  // of the first step that failed
  std::unique_ptr<TcpBootstrap> bootstrap;
  std::unique_ptr<Group> group;  // destroyed before the bootstrap
};

// What one rank's process does on a Mac: bootstrap, form, all_sum.
RankRun run_rank(VerbsFabric& fabric, const Config& config,
                 absl::StatusOr<TcpBootstrap::Listener>* listener,
                 ConstBytes in, Bytes out) {
  RankRun run;
  absl::StatusOr<std::unique_ptr<TcpBootstrap>> bootstrap =
      config.rank == 0 ? TcpBootstrap::accept(*std::move(*listener), config)
                       : TcpBootstrap::connect(config);
  if (!bootstrap.ok()) {
    run.status = bootstrap.status();
    return run;
  }
  run.bootstrap = *std::move(bootstrap);
  GroupOptions options;
  options.timeout_ns = kLongNs;
  absl::StatusOr<std::unique_ptr<Group>> group =
      create_group(fabric, *run.bootstrap, config.devices, options,
                   config.exchange_timeout_ns);
  if (!group.ok()) {
    run.status = group.status();
    return run;
  }
  run.group = *std::move(group);
  run.status = run.group->all_sum(in, out, DType::kInt32);
  return run;
}

TEST(VerbsTcpGroup, FormsOverLoopbackTcpAndAllSums) {
  SimProvider provider;
  provider.configure({{"WEFT_SIM_VERBS_RANKS", std::to_string(kRanks)}});
  std::vector<std::unique_ptr<VerbsFabric>> fabrics;
  for (uint32_t r = 0; r < kRanks; ++r) {
    fabrics.push_back(provider.open_rank(r));
    ASSERT_NE(fabrics.back(), nullptr);
  }
  std::vector<ByteVec> in, out(kRanks, ByteVec(kCount * 4));
  for (uint32_t r = 0; r < kRanks; ++r) {
    in.push_back(weft::testing::exact_input(DType::kInt32, kCount, r, 1));
  }
  const ByteVec want =
      weft::testing::reference_reduce(DType::kInt32, ReduceOp::kSum, in);

  absl::StatusOr<TcpBootstrap::Listener> listener =
      TcpBootstrap::listen(config_for(0, 0));
  ASSERT_TRUE(listener.ok()) << listener.status();
  const uint16_t port = listener->port();
  std::vector<std::future<RankRun>> ranks;
  for (uint32_t r = 0; r < kRanks; ++r) {
    ranks.push_back(std::async(std::launch::async, [&, r] {
      return run_rank(*fabrics[r], config_for(r, port), &listener, in[r],
                      out[r]);
    }));
  }
  std::vector<RankRun> runs;
  for (auto& f : ranks) {
    ASSERT_EQ(f.wait_for(kLongWait), std::future_status::ready);
    runs.push_back(f.get());
  }
  for (uint32_t r = 0; r < kRanks; ++r) {
    EXPECT_TRUE(runs[r].status.ok()) << "rank " << r << ": " << runs[r].status;
    EXPECT_EQ(out[r], want) << "rank " << r;
    // Two queue pairs per rank (one per peer), connected through TCP.
    EXPECT_EQ(provider.live("qps", r), static_cast<int>(kRanks - 1));
    if (runs[r].bootstrap != nullptr) {
      EXPECT_TRUE(runs[r].bootstrap->check_alive().ok());
    }
  }
  runs.clear();  // groups (and their queue pairs) before the fabrics
}

}  // namespace
}  // namespace weft::verbs::testing
