// The simulation server (FabricServer) with RemoteWorld clients on threads
// of this process, each its own connection as a rank's process would be:
// bytes cross the socket intact, the trace does not depend on scheduling,
// a lost frame that leaves every rank waiting is reported as a deadlock
// naming the rank and the fault, and a rank that left is seen by the
// others just after the virtual time it left at.
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/slab.h"
#include "fabric/topology.h"
#include "fabric/work_id.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/faults.h"
#include "sim/link_model.h"
#include "sim_server/departures.h"
#include "sim_server/fabric_server.h"
#include "sim_server/protocol.h"
#include "sim_server/remote_world.h"
#include "sim_server/wire.h"

namespace weft::sim_server {
namespace {

using ::testing::HasSubstr;

constexpr uint32_t kBytes = 4096;
constexpr uint32_t kMessages = 8;
constexpr auto kWaitTimeout = std::chrono::seconds(60);

std::string private_dir() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "weft-server-test-XXXXXX")
          .string();
  EXPECT_NE(::mkdtemp(pattern.data()), nullptr);
  return pattern;
}

// What one rank's client saw.
struct RankLog {
  absl::Status status;
  std::vector<std::vector<std::byte>> received;
  std::vector<uint32_t> immediates;
  bool released = false;
};

std::byte pattern(uint32_t message, uint32_t i) {
  return static_cast<std::byte>((message * 131 + i * 7 + 3) & 0xff);
}

// Rank 0 sends kMessages messages of kBytes to rank 1, each after rank 1
// has answered the one before (a ping-pong), over the world's one cable.
RankLog play(const std::string& socket, uint32_t rank,
             std::promise<uint32_t>& mine,
             std::shared_future<uint32_t> theirs) {
  RankLog log;
  absl::StatusOr<std::unique_ptr<RemoteWorld>> world =
      RemoteWorld::connect(socket, rank, kWaitTimeout);
  if (!world.ok()) {
    log.status = world.status();
    mine.set_value(0);
    return log;
  }
  const uint32_t peer = 1 - rank;
  const std::string device = (*world)->topology().devices(rank, peer)[0];
  absl::StatusOr<std::unique_ptr<Endpoint>> ep =
      (*world)->fabric().open(device, peer);
  if (!ep.ok()) {
    log.status = ep.status();
    mine.set_value(0);
    return log;
  }
  mine.set_value((*ep)->destination()->qp_num);
  Destination far;
  far.qp_num = theirs.get();
  absl::StatusOr<Slab*> slab = (*world)->fabric().create_slab(2 * kBytes);
  Frame out = *(*slab)->frame(0, kBytes);
  Frame in = *(*slab)->frame(kBytes, kBytes);
  log.status = (*ep)->connect(far);
  uint32_t slot = 0;
  auto await = [&](WorkKind kind) -> std::optional<Completion> {
    std::array<Completion, 4> batch;
    for (;;) {
      absl::StatusOr<size_t> n = (*ep)->poll(batch);
      for (size_t i = 0; n.ok() && i < *n; ++i) {
        if (batch[i].id.kind == kind) return batch[i];
      }
      if ((*world)->released()) {
        log.released = true;
        return std::nullopt;
      }
      absl::Status s = (*world)->wait(
          kind == WorkKind::kRecv ? "a test's receive" : "a test's send",
          std::nullopt);
      if (!s.ok()) {
        log.status = s;
        return std::nullopt;
      }
    }
  };
  for (uint32_t m = 0; m < kMessages && log.status.ok(); ++m) {
    const bool sends_first = rank == 0;
    for (int turn = 0; turn < 2; ++turn) {
      const bool sending = (turn == 0) == sends_first;
      if (sending) {
        for (uint32_t i = 0; i < kBytes; ++i) out.data()[i] = pattern(m, i);
        log.status.Update((*ep)->post_send(
            WorkId{WorkKind::kSend, peer, slot++}, out, kBytes, 100 + m));
        if (!await(WorkKind::kSend)) return log;
      } else {
        log.status.Update(
            (*ep)->post_recv(WorkId{WorkKind::kRecv, peer, slot++}, in));
        std::optional<Completion> c = await(WorkKind::kRecv);
        if (!c) return log;
        log.received.emplace_back(in.data(), in.data() + c->byte_len);
        log.immediates.push_back(c->immediate);
      }
    }
  }
  return log;
}

struct PingpongRun {
  ServeResult result;
  uint64_t trace_hash = 0;
  std::array<RankLog, 2> logs;
};

PingpongRun run_pingpong(sim::FaultPlan faults,
                         ServerOptions::OnDeadlock on_deadlock) {
  ServerOptions options;
  options.world.topology = *Topology::mesh(2);
  options.world.link = sim::LinkModel::tb5();
  options.world.faults = std::move(faults);
  options.world.seed = 7;
  options.socket_path = private_dir() + "/socket";
  options.on_deadlock = on_deadlock;
  absl::StatusOr<std::unique_ptr<FabricServer>> server =
      FabricServer::create(options);
  EXPECT_TRUE(server.ok()) << server.status();
  PingpongRun run;
  std::thread serving([&] { run.result = (*server)->serve(); });
  std::array<std::promise<uint32_t>, 2> qps;
  std::array<std::shared_future<uint32_t>, 2> futures = {
      qps[0].get_future().share(), qps[1].get_future().share()};
  std::thread r1([&] {
    run.logs[1] = play(options.socket_path, 1, qps[1], futures[0]);
  });
  run.logs[0] = play(options.socket_path, 0, qps[0], futures[1]);
  r1.join();
  serving.join();
  run.trace_hash = (*server)->world().trace().hash();
  std::filesystem::remove_all(
      std::filesystem::path(options.socket_path).parent_path());
  return run;
}

TEST(FabricServer, BytesAndImmediatesCrossTheSocketIntact) {
  const PingpongRun run = run_pingpong({}, ServerOptions::OnDeadlock::kEnd);
  EXPECT_EQ(run.result.outcome, ServeResult::Outcome::kFinished);
  for (uint32_t rank = 0; rank < 2; ++rank) {
    const RankLog& log = run.logs[rank];
    ASSERT_TRUE(log.status.ok()) << "rank " << rank << ": " << log.status;
    ASSERT_EQ(log.received.size(), kMessages) << "rank " << rank;
    for (uint32_t m = 0; m < kMessages; ++m) {
      ASSERT_EQ(log.received[m].size(), kBytes);
      for (uint32_t i = 0; i < kBytes; ++i) {
        ASSERT_EQ(log.received[m][i], pattern(m, i))
            << "rank " << rank << " message " << m << " byte " << i;
      }
      EXPECT_EQ(log.immediates[m], 100 + m);
    }
  }
  // 2 * kMessages one-way trips of the tb5 link at least.
  EXPECT_GE(run.result.end_ns,
            2 * kMessages * sim::LinkModel::tb5().latency_ns);
}

TEST(FabricServer, TheTraceDoesNotDependOnHowThreadsAreScheduled) {
  const PingpongRun a = run_pingpong({}, ServerOptions::OnDeadlock::kEnd);
  const PingpongRun b = run_pingpong({}, ServerOptions::OnDeadlock::kEnd);
  EXPECT_NE(a.trace_hash, 0u);
  EXPECT_EQ(a.trace_hash, b.trace_hash);
  EXPECT_EQ(a.result.end_ns, b.result.end_ns);
}

TEST(FabricServer, AStallHoldsTheRanksWaitsUntilItEnds) {
  // Rank 1 has answered message 0 (its send departs at about 5 us) when a
  // 100 us stall begins: its wait for that send's completion returns only
  // at 105 us. Meanwhile rank 0 got the answer and sent message 1, which
  // found no receive posted at rank 1 and was dropped, as UC drops it; so
  // once rank 1 resumes, both wait for ever: a deadlock at exactly 105 us.
  absl::StatusOr<sim::FaultPlan> plan =
      sim::FaultPlan::parse("stall rank=1 at_ns=5000 for_ns=100000");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PingpongRun run = run_pingpong(*plan, ServerOptions::OnDeadlock::kLeave);
  EXPECT_EQ(run.result.outcome, ServeResult::Outcome::kDeadlock);
  EXPECT_EQ(run.result.end_ns, 105 * kNsPerUs);
  EXPECT_EQ(run.logs[1].received.size(), 1u);
  EXPECT_THAT(run.result.report, HasSubstr("stall rank=1"));
}

TEST(FabricServer, ALostFrameWithEveryRankWaitingIsReportedAsADeadlock) {
  absl::StatusOr<sim::FaultPlan> plan =
      sim::FaultPlan::parse("drop from=0 to=1 frame=3");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const PingpongRun run = run_pingpong(*plan, ServerOptions::OnDeadlock::kLeave);
  EXPECT_EQ(run.result.outcome, ServeResult::Outcome::kDeadlock);
  // Rank 1 got two messages and waits for the third; rank 0 waits for the
  // answer to it.
  EXPECT_EQ(run.logs[1].received.size(), 2u);
  EXPECT_TRUE(run.logs[0].released);
  EXPECT_TRUE(run.logs[1].released);
  EXPECT_THAT(run.result.report, HasSubstr("deadlock"));
  EXPECT_THAT(run.result.report, HasSubstr("rank 1 ("));
  EXPECT_THAT(run.result.report, HasSubstr("waits in a test's receive"));
  EXPECT_THAT(run.result.report, HasSubstr("1 receives and 0 sends posted"));
  EXPECT_THAT(run.result.report, HasSubstr("drop from=0 to=1 frame=3"));
}

TEST(DepartureLog, ADepartureIsVisibleOnlyStrictlyAfterItsTime) {
  DepartureLog log;
  log.record(3, 5000);
  log.record(1, 5000);
  log.record(2, 4000);
  log.record(1, 9000);  // a rank leaves once: ignored
  EXPECT_TRUE(log.visible_at(4000).empty());
  EXPECT_THAT(log.visible_at(4001), ::testing::ElementsAre(Departure{2, 4000}));
  EXPECT_THAT(log.visible_at(5000), ::testing::ElementsAre(Departure{2, 4000}));
  // One instant's departures read in rank order, whichever came first.
  EXPECT_THAT(log.visible_at(5001),
              ::testing::ElementsAre(Departure{2, 4000}, Departure{1, 5000},
                                     Departure{3, 5000}));
}

// Rank 1 leaves at 1 us, while rank 0 waits: rank 0 learns it with its
// first answer past 1 us, never at 1 us itself, whether the server read
// rank 1's socket closing before or after rank 0's next wait.
TEST(FabricServer, ARankThatLeftIsSeenByTheOthersJustAfterItLeft) {
  ServerOptions options;
  options.world.topology = *Topology::mesh(2);
  options.socket_path = private_dir() + "/socket";
  absl::StatusOr<std::unique_ptr<FabricServer>> server =
      FabricServer::create(options);
  ASSERT_TRUE(server.ok()) << server.status();
  ServeResult result;
  std::thread serving([&] { result = (*server)->serve(); });
  std::thread leaver([&] {
    absl::StatusOr<std::unique_ptr<RemoteWorld>> world =
        RemoteWorld::connect(options.socket_path, 1, kWaitTimeout);
    ASSERT_TRUE(world.ok()) << world.status();
    EXPECT_TRUE((*world)->wait("a test's wait", 1000).ok());
    // Destroying it closes the connection, as the process's exit would.
  });
  absl::StatusOr<std::unique_ptr<RemoteWorld>> world =
      RemoteWorld::connect(options.socket_path, 0, kWaitTimeout);
  ASSERT_TRUE(world.ok()) << world.status();
  RemoteWorld& stays = **world;
  EXPECT_TRUE(stays.wait("a test's wait", 1000).ok());
  leaver.join();
  // Answered at once, at 1 us: a departure stamped 1 us is not visible.
  EXPECT_TRUE(stays.wait("a test's wait", 1000).ok());
  EXPECT_EQ(stays.clock().now_ns(), 1000);
  EXPECT_TRUE(stays.departed().empty());
  EXPECT_TRUE(stays.wait("a test's wait", 2000).ok());
  EXPECT_EQ(stays.clock().now_ns(), 2000);
  EXPECT_THAT(stays.departed(), ::testing::ElementsAre(Departure{1, 1000}));
  world->reset();
  serving.join();
  EXPECT_EQ(result.outcome, ServeResult::Outcome::kFinished);
  std::filesystem::remove_all(
      std::filesystem::path(options.socket_path).parent_path());
}

TEST(FabricServer, AnRdmaWriteLandsInTheTargetsSharedRegion) {
  // Rank 1 registers a region open to writes (mirroring program memory at
  // kAddress) and posts an empty receive; rank 0 writes 64 bytes 16 bytes
  // into it with an immediate. Rank 1 sees the receive complete as taken
  // by a write, and the write's range, whose bytes are in its region.
  constexpr uint64_t kAddress = 0x7f0000001000;
  constexpr uint32_t kRkey = 77;
  ServerOptions options;
  options.world.topology = *Topology::mesh(2);
  options.world.link = sim::LinkModel::tb5();
  options.socket_path = private_dir() + "/socket";
  absl::StatusOr<std::unique_ptr<FabricServer>> server =
      FabricServer::create(options);
  ASSERT_TRUE(server.ok()) << server.status();
  std::thread serving([&] { (*server)->serve(); });
  std::array<std::promise<uint32_t>, 2> qps;
  std::shared_future<uint32_t> qp0 = qps[0].get_future().share();
  std::shared_future<uint32_t> qp1 = qps[1].get_future().share();
  std::promise<void> region_ready;
  std::shared_future<void> ready = region_ready.get_future().share();
  std::optional<Completion> got;
  std::vector<sim::WrittenRange> writes;
  std::vector<std::byte> region_bytes;
  std::thread target([&] {
    auto w = RemoteWorld::connect(options.socket_path, 1, kWaitTimeout);
    ASSERT_TRUE(w.ok()) << w.status();
    auto ep = (*w)->fabric().open((*w)->topology().devices(1, 0)[0], 0);
    ASSERT_TRUE(ep.ok()) << ep.status();
    qps[1].set_value((*ep)->destination()->qp_num);
    Slab* slab = *(*w)->fabric().create_slab(4096);
    const Frame region = *slab->frame(0, 1024);
    ASSERT_TRUE((*w)->register_region(kRkey, region, kAddress, true).ok());
    Destination far;
    far.qp_num = qp0.get();
    ASSERT_TRUE((*ep)->connect(far).ok());
    ASSERT_TRUE(
        (*ep)->post_recv(WorkId{WorkKind::kRecv, 0, 1}, *slab->frame(2048, 0))
            .ok());
    region_ready.set_value();
    std::array<Completion, 4> batch;
    for (int waits = 0; !got && waits < 1000; ++waits) {
      absl::StatusOr<size_t> n = (*ep)->poll(batch);
      if (n.ok() && *n > 0) {
        got = batch[0];
        break;
      }
      ASSERT_TRUE((*w)->wait("a test's receive", std::nullopt).ok());
    }
    writes = (*w)->take_writes();
    region_bytes.assign(region.data(), region.data() + region.bytes());
  });
  {
    auto w = RemoteWorld::connect(options.socket_path, 0, kWaitTimeout);
    ASSERT_TRUE(w.ok()) << w.status();
    auto ep = (*w)->fabric().open((*w)->topology().devices(0, 1)[0], 1);
    ASSERT_TRUE(ep.ok()) << ep.status();
    qps[0].set_value((*ep)->destination()->qp_num);
    Destination far;
    far.qp_num = qp1.get();
    ASSERT_TRUE((*ep)->connect(far).ok());
    ready.get();
    Slab* slab = *(*w)->fabric().create_slab(4096);
    const Frame out = *slab->frame(0, 64);
    for (uint32_t i = 0; i < 64; ++i) out.data()[i] = pattern(9, i);
    ASSERT_TRUE((*ep)->post_rdma_write(WorkId{WorkKind::kSend, 1, 1}, out, 64,
                                       kAddress + 16, kRkey, 0xabcu)
                    .ok());
    std::array<Completion, 4> batch;
    bool sent = false;
    for (int waits = 0; !sent && waits < 1000; ++waits) {
      absl::StatusOr<size_t> n = (*ep)->poll(batch);
      if (n.ok() && *n > 0) {
        sent = true;
        EXPECT_TRUE(batch[0].ok());
        break;
      }
      ASSERT_TRUE((*w)->wait("a test's write", std::nullopt).ok());
    }
  }  // rank 0 leaves, so time can move on without it
  target.join();
  serving.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->ok());
  EXPECT_TRUE(got->from_rdma_write);
  EXPECT_TRUE(got->has_immediate);
  EXPECT_EQ(got->immediate, 0xabcu);
  EXPECT_EQ(got->byte_len, 64u);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0].rkey, kRkey);
  EXPECT_EQ(writes[0].address, kAddress + 16);
  EXPECT_EQ(writes[0].bytes.bytes(), 64u);
  ASSERT_EQ(region_bytes.size(), 1024u);
  for (uint32_t i = 0; i < 64; ++i) {
    ASSERT_EQ(region_bytes[16 + i], pattern(9, i)) << i;
  }
  EXPECT_EQ(region_bytes[15], std::byte{0});
  EXPECT_EQ(region_bytes[80], std::byte{0});
  std::filesystem::remove_all(
      std::filesystem::path(options.socket_path).parent_path());
}

// A raw connection to the server, speaking whatever the test writes.
int connect_raw(const std::string& socket) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket.data(), socket.size());
  EXPECT_EQ(::connect(fd, reinterpret_cast<const sockaddr*>(&addr),
                      sizeof(addr)),
            0);
  return fd;
}

// What the server answered before it closed the connection: the text of a
// refusal (a kWelcome with ok = 0) or of a kFatal.
std::string refusal(int fd) {
  MessageReader reader;
  absl::StatusOr<Message> m = read_message(
      fd, reader, std::chrono::steady_clock::now() + std::chrono::seconds(30));
  if (!m.ok()) return std::string(m.status().message());
  if (m->type == MsgType::kWelcome) {
    std::span<const std::byte> t = m->tail<Welcome>();
    return std::string(reinterpret_cast<const char*>(t.data()), t.size());
  }
  return std::string(reinterpret_cast<const char*>(m->body.data()),
                     m->body.size());
}

TEST(FabricServer, GarbageAndOtherVersionsAreRefusedAndServingGoesOn) {
  ServerOptions options;
  options.world.topology = *Topology::mesh(2);
  options.socket_path = private_dir() + "/socket";
  options.connect_timeout = std::chrono::seconds(60);
  absl::StatusOr<std::unique_ptr<FabricServer>> server =
      FabricServer::create(options);
  ASSERT_TRUE(server.ok()) << server.status();
  std::thread serving([&] { (*server)->serve(); });

  // Bytes that are no protocol at all.
  const int garbage = connect_raw(options.socket_path);
  const std::string junk(64, 'x');
  ASSERT_EQ(::write(garbage, junk.data(), junk.size()),
            static_cast<ssize_t>(junk.size()));
  EXPECT_THAT(refusal(garbage), HasSubstr("not a weft simulation client"));
  ::close(garbage);

  // A hello of another protocol version.
  const int old = connect_raw(options.socket_path);
  Hello hello;
  hello.version = kProtocolVersion + 1;
  const std::array<std::span<const std::byte>, 1> parts = {bytes_of(hello)};
  ASSERT_TRUE(write_message(old, MsgType::kHello, parts,
                            std::chrono::steady_clock::now() +
                                std::chrono::seconds(30))
                  .ok());
  EXPECT_THAT(refusal(old), HasSubstr("protocol version"));
  ::close(old);

  // A rank outside the world.
  absl::StatusOr<std::unique_ptr<RemoteWorld>> stranger =
      RemoteWorld::connect(options.socket_path, 5, kWaitTimeout);
  ASSERT_FALSE(stranger.ok());
  EXPECT_THAT(stranger.status().message(),
              HasSubstr("outside this world's 2 ranks"));

  // The server still serves both ranks.
  {
    absl::StatusOr<std::unique_ptr<RemoteWorld>> r0 =
        RemoteWorld::connect(options.socket_path, 0, kWaitTimeout);
    absl::StatusOr<std::unique_ptr<RemoteWorld>> r1 =
        RemoteWorld::connect(options.socket_path, 1, kWaitTimeout);
    ASSERT_TRUE(r0.ok()) << r0.status();
    ASSERT_TRUE(r1.ok()) << r1.status();
    EXPECT_EQ((*r0)->ranks(), 2u);
    // A second process claiming rank 0 is refused.
    absl::StatusOr<std::unique_ptr<RemoteWorld>> twin =
        RemoteWorld::connect(options.socket_path, 0, kWaitTimeout);
    ASSERT_FALSE(twin.ok());
    EXPECT_THAT(twin.status().message(), HasSubstr("already connected"));
  }
  serving.join();  // both ranks came and went: the run is finished
  std::filesystem::remove_all(
      std::filesystem::path(options.socket_path).parent_path());
}

TEST(FabricServer, RefusesASocketInADirectoryOthersCanOpen) {
  const std::string dir = private_dir();
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
  ServerOptions options;
  options.world.topology = *Topology::mesh(2);
  options.socket_path = dir + "/socket";
  absl::StatusOr<std::unique_ptr<FabricServer>> server =
      FabricServer::create(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(server.status().message(), HasSubstr("mode 0700"));
  EXPECT_FALSE(std::filesystem::exists(options.socket_path));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace weft::sim_server
