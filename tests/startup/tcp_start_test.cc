// ProcessGroup::from_environment over the TCP fabric, end to end: ranks as
// threads of this process, each with its own environment naming one
// hostfile of loopback addresses whose ports the test got by binding port 0
// (and released), a side channel, the TCP fabric listening on exactly the
// rank's row, and an all_sum checked against sums computed here.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/dtype.h"
#include "collectives/group.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "startup/process_group.h"
#include "tcp/tcp_fabric.h"
#include "tests/support/ports.h"

namespace weft {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::weft::testing::free_ports;

struct RankOutcome {
  absl::Status status;
  std::vector<int32_t> sums;
  std::string fabric_kind;
  std::vector<std::string> listening;
  bool requires_secret = false;
};

class TcpStart : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!hostfile_.empty()) std::remove(hostfile_.c_str());
  }

  // Writes rows (rank r's "ip:port" strings) as the hostfile.
  void write_hostfile(const std::vector<std::vector<std::string>>& rows) {
    hostfile_ = absl::StrFormat(
        "%s/weft_tcp_start_%d_%s.json", ::testing::TempDir(), getpid(),
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::vector<std::string> json_rows;
    for (const auto& row : rows) {
      json_rows.push_back("[\"" + absl::StrJoin(row, "\", \"") + "\"]");
    }
    std::ofstream(hostfile_) << "[" << absl::StrJoin(json_rows, ",\n ") << "]";
  }

  // Runs every rank on its own thread: from_environment over its own
  // variables, then an all_sum of `count` int32 where rank r gives
  // r * 1000 + i at index i.
  std::vector<RankOutcome> run(uint32_t ranks, const std::string& coordinator,
                               size_t count) {
    std::vector<RankOutcome> out(ranks);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < ranks; ++r) {
      threads.emplace_back(
          [&, r] { out[r] = run_rank(r, coordinator, count); });
    }
    for (std::thread& t : threads) t.join();
    return out;
  }

  // Each rank's group ends as soon as its call returned, as a program's
  // would: a peer whose call still reads the last frames finishes it.
  // from_environment() for `rank`, over its own variables.
  absl::StatusOr<std::unique_ptr<ProcessGroup>> start(
      uint32_t rank, const std::string& coordinator) {
    // Every wait of the start and the call is bounded by these.
    const std::map<std::string, std::string> env = {
        {"MLX_HOSTFILE", hostfile_},       {"WEFT_RANK", std::to_string(rank)},
        {"WEFT_COORDINATOR", coordinator}, {"WEFT_TIMEOUT_S", "60"},
        {"WEFT_CONNECT_TIMEOUT_S", "60"},  {"WEFT_SECRET", secret_}};
    StartOptions options;
    options.getenv = [&env](const char* name) -> const char* {
      auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    };
    return ProcessGroup::from_environment(options);
  }

  RankOutcome run_rank(uint32_t rank, const std::string& coordinator,
                       size_t count) {
    RankOutcome outcome;
    absl::StatusOr<std::unique_ptr<ProcessGroup>> pg = start(rank, coordinator);
    if (!pg.ok()) {
      outcome.status = pg.status();
      return outcome;
    }
    outcome.fabric_kind = std::string((*pg)->fabric().kind());
    if (auto* tcp = dynamic_cast<tcp::TcpFabric*>(&(*pg)->fabric())) {
      outcome.listening = tcp->listen_addresses();
      outcome.requires_secret = tcp->requires_secret();
    }
    std::vector<int32_t> in(count);
    for (size_t i = 0; i < count; ++i) {
      in[i] = static_cast<int32_t>(rank * 1000 + i);
    }
    outcome.sums.assign(count, 0);
    outcome.status = (*pg)->group().all_sum(
        std::as_bytes(std::span(in)),
        std::as_writable_bytes(std::span(outcome.sums)), DType::kInt32);
    return outcome;
  }

  std::string hostfile_;
  std::string secret_;  // WEFT_SECRET of every rank; empty: none
};

// sum over ranks r < n of (r * 1000 + i).
std::vector<int32_t> expected_sums(uint32_t n, size_t count) {
  std::vector<int32_t> sums(count);
  for (size_t i = 0; i < count; ++i) {
    sums[i] = static_cast<int32_t>(n * i + 1000 * (n * (n - 1) / 2));
  }
  return sums;
}

TEST_F(TcpStart, ThreeRanksTwoCablesSumOverLoopback) {
  constexpr uint32_t kRanks = 3;
  constexpr size_t kCables = 2;
  const std::vector<uint16_t> ports =
      free_ports("127.0.0.1", kRanks * kCables + 1);
  ASSERT_EQ(ports.size(), kRanks * kCables + 1);
  std::vector<std::vector<std::string>> rows(kRanks);
  for (uint32_t r = 0; r < kRanks; ++r) {
    for (size_t c = 0; c < kCables; ++c) {
      rows[r].push_back(
          absl::StrFormat("127.0.0.1:%u", ports[r * kCables + c]));
    }
  }
  write_hostfile(rows);
  constexpr size_t kCount = 70000;  // several frames per cable
  const std::vector<RankOutcome> out =
      run(kRanks, absl::StrFormat("127.0.0.1:%u", ports.back()), kCount);
  const std::vector<int32_t> expected = expected_sums(kRanks, kCount);
  for (uint32_t r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(out[r].status.ok()) << "rank " << r << ": " << out[r].status;
    EXPECT_EQ(out[r].fabric_kind, "tcp");
    // Listening on exactly its row of the hostfile.
    EXPECT_THAT(out[r].listening, ElementsAreArray(rows[r]));
    EXPECT_TRUE(out[r].sums == expected) << "rank " << r;
  }
}

// An IPv6 hostfile, with the side channel on ::1 as well (the coordinator
// the hostfile implies) or on 127.0.0.1.
TEST_F(TcpStart, Ipv6LoopbackWithAnIpv6OrIpv4SideChannel) {
  const std::vector<uint16_t> v6 = free_ports("::1", 3);
  if (v6.empty()) GTEST_SKIP() << "this machine has no IPv6 loopback";
  const std::vector<uint16_t> v4 = free_ports("127.0.0.1", 1);
  ASSERT_EQ(v4.size(), 1u);
  const std::vector<std::vector<std::string>> rows = {
      {absl::StrFormat("[::1]:%u", v6[0])},
      {absl::StrFormat("[::1]:%u", v6[1])}};
  write_hostfile(rows);
  for (const std::string& coordinator :
       {absl::StrFormat("[::1]:%u", v6[2]),
        absl::StrFormat("127.0.0.1:%u", v4[0])}) {
    const std::vector<RankOutcome> out = run(2, coordinator, 100);
    const std::vector<int32_t> expected = expected_sums(2, 100);
    for (uint32_t r = 0; r < 2; ++r) {
      ASSERT_TRUE(out[r].status.ok())
          << coordinator << ", rank " << r << ": " << out[r].status;
      EXPECT_THAT(out[r].listening, ElementsAreArray(rows[r]));
      EXPECT_TRUE(out[r].sums == expected) << coordinator << ", rank " << r;
    }
  }
}

// WEFT_SECRET reaches the TCP fabric as well as the side channel: every
// rank's fabric then refuses connections that do not prove it.
TEST_F(TcpStart, TheSharedSecretGuardsTheFabricToo) {
  constexpr uint32_t kRanks = 2;
  const std::vector<uint16_t> ports = free_ports("127.0.0.1", kRanks + 1);
  ASSERT_EQ(ports.size(), kRanks + 1);
  write_hostfile({{absl::StrFormat("127.0.0.1:%u", ports[0])},
                  {absl::StrFormat("127.0.0.1:%u", ports[1])}});
  secret_ = "3f1c9a7e5b2d4f60a8e1c3b5d7f9a0b2";
  constexpr size_t kCount = 1000;
  const std::vector<RankOutcome> out =
      run(kRanks, absl::StrFormat("127.0.0.1:%u", ports.back()), kCount);
  const std::vector<int32_t> expected = expected_sums(kRanks, kCount);
  for (uint32_t r = 0; r < kRanks; ++r) {
    ASSERT_TRUE(out[r].status.ok()) << "rank " << r << ": " << out[r].status;
    EXPECT_TRUE(out[r].requires_secret) << "rank " << r;
    EXPECT_TRUE(out[r].sums == expected) << "rank " << r;
  }
}

// ProcessGroup::shrink(): one rank of four leaves (its ProcessGroup
// closes: side channel and sockets), the three others' next all-sum ends
// naming it, they shrink, and the group they hold from then on sums over
// the three.
TEST_F(TcpStart, TheSurvivorsShrinkAfterARankLeaves) {
  constexpr uint32_t kRanks = 4;
  constexpr uint32_t kLeaver = 3;
  const std::vector<uint16_t> ports = free_ports("127.0.0.1", kRanks + 1);
  ASSERT_EQ(ports.size(), kRanks + 1);
  std::vector<std::vector<std::string>> rows;
  for (uint32_t r = 0; r < kRanks; ++r) {
    rows.push_back({absl::StrFormat("127.0.0.1:%u", ports[r])});
  }
  write_hostfile(rows);
  const std::string coordinator = absl::StrFormat("127.0.0.1:%u", ports.back());
  constexpr size_t kCount = 5000;
  struct Outcome {
    absl::Status first, after_leave, shrink, last;
    uint32_t size = 0;
    uint32_t rank = 0;
    std::vector<int32_t> sums;
  };
  std::vector<Outcome> out(kRanks);
  std::vector<std::thread> threads;
  for (uint32_t r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      absl::StatusOr<std::unique_ptr<ProcessGroup>> pg = start(r, coordinator);
      if (!pg.ok()) {
        out[r].first = pg.status();
        return;
      }
      auto sum = [&](std::vector<int32_t>* sums) {
        const uint32_t world = (*pg)->group().world_rank((*pg)->group().rank());
        std::vector<int32_t> in(kCount);
        for (size_t i = 0; i < kCount; ++i) {
          in[i] = static_cast<int32_t>(world * 1000 + i);
        }
        sums->assign(kCount, 0);
        return (*pg)->group().all_sum(std::as_bytes(std::span(in)),
                                      std::as_writable_bytes(std::span(*sums)),
                                      DType::kInt32);
      };
      std::vector<int32_t> sums;
      out[r].first = sum(&sums);
      if (r == kLeaver) return;  // its ProcessGroup closes here
      out[r].after_leave = sum(&sums);
      out[r].shrink = (*pg)->shrink();
      if (!out[r].shrink.ok()) return;
      out[r].size = (*pg)->group().size();
      out[r].rank = (*pg)->group().rank();
      out[r].last = sum(&out[r].sums);
    });
  }
  for (std::thread& t : threads) t.join();
  const std::vector<int32_t> expected = expected_sums(kRanks - 1, kCount);
  ASSERT_TRUE(out[kLeaver].first.ok()) << out[kLeaver].first;
  for (uint32_t r = 0; r < kRanks; ++r) {
    if (r == kLeaver) continue;
    SCOPED_TRACE(::testing::Message() << "rank " << r);
    // A survivor still finishing the first all-sum when another survivor
    // found the leaver gone has that one end with the news; otherwise
    // the second does.
    const absl::Status& told =
        out[r].first.ok() ? out[r].after_leave : out[r].first;
    // (or a refusal quoting it, when the news came between the calls).
    ASSERT_FALSE(told.ok());
    EXPECT_THAT(std::string(told.message()), HasSubstr("peer 3 closed"));
    ASSERT_TRUE(out[r].shrink.ok()) << out[r].shrink;
    EXPECT_EQ(out[r].size, kRanks - 1);
    EXPECT_EQ(out[r].rank, r);
    ASSERT_TRUE(out[r].last.ok()) << out[r].last;
    EXPECT_TRUE(out[r].sums == expected);
  }
}

}  // namespace
}  // namespace weft
