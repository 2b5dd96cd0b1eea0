// Faults that real sockets produce, injected into a weft group over TCP
// whose ranks are real tcp_rank processes on loopback: a rank killed or
// stopped mid-operation, a reset connection, strangers at a rank's door, a
// port already taken, an address nobody answers. Each run asserts what
// every rank ended with: the right results, or a typed error whose message
// names the rank, its address and what to do; never a wrong result (exit
// code 1) and never a hang (every wait here has a deadline; the harness
// kills what is left).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tcp/internal/wire.h"
#include "tests/support/scratch.h"
#include "tests/tcp_processes/rank_processes.h"
#include "tests/tools/tool_runner.h"

namespace weft::tcp_processes {
namespace {

using ::weft::testing::ScratchDir;

using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

// Exit codes of tcp_rank.
constexpr int kExpected = 0;
constexpr int kNoGroup = 4;

// Starts `ranks` ranks looping all_sums, and waits until each has done one.
void start_looping(RankProcesses& procs, const Layout& layout, int ranks,
                   const std::string& expect) {
  for (int r = 0; r < ranks; ++r) {
    procs.start(layout, r, {"loop", "--expect_error=" + expect});
  }
  for (int r = 0; r < ranks; ++r) {
    ASSERT_TRUE(procs.wait_for(r, absl::StrCat("rank ", r, ": looping")))
        << procs.report(r);
  }
}

// Rank `survivor` ended with an expected error (one of `codes`) naming
// `peer`, and never saw a wrong result. An error that reaches a looping
// rank between two calls fails its group then, and the next call says
// FAILED_PRECONDITION quoting that first error (peer, address, advice).
void expect_ended_naming(const RankProcesses& procs, int survivor, int peer,
                         const std::vector<std::string>& codes) {
  EXPECT_EQ(procs.exit_code(survivor), kExpected) << procs.report(survivor);
  const std::string me = absl::StrCat("rank ", survivor, ": expected error: ");
  std::vector<::testing::Matcher<const std::string&>> any;
  for (const std::string& code : codes) {
    any.push_back(HasSubstr(absl::StrCat(me, code, ": ")));
  }
  EXPECT_THAT(procs.out(survivor), ::testing::AnyOfArray(any))
      << procs.report(survivor);
  EXPECT_THAT(procs.out(survivor), HasSubstr(absl::StrCat("peer ", peer)))
      << procs.report(survivor);
  EXPECT_THAT(procs.out(survivor), Not(HasSubstr("WRONG")));
}

class KilledRank : public ::testing::TestWithParam<int> {};

// SIGKILL mid-operation: the kernel resets the killed rank's connections
// at once, so a survivor's running all_sum ends with its fabric's error
// completion, Unavailable naming the peer and the peer's address (or with
// Aborted relaying that error, when a survivor told it first), or, when its
// liveness check runs first (both see the same kill, so the host's
// scheduling decides), with the side channel's word that the peer's process
// is gone, naming the peer and its side-channel address. Neither waits for
// WEFT_TIMEOUT_S, which would give DeadlineExceeded.
TEST_P(KilledRank, EverySurvivorEndsWithAnErrorNamingItAndItsAddress) {
  const int victim = GetParam();
  const ScratchDir dir;
  const Layout layout = Layout::loopback(3, dir.path());
  RankProcesses procs;
  start_looping(procs, layout, 3, "Unavailable,Aborted,FailedPrecondition");
  procs.signal(victim, SIGKILL);
  ASSERT_TRUE(procs.wait_all_exited()) << procs.report(0) << procs.report(1);
  EXPECT_EQ(procs.killed_by(victim), SIGKILL);
  for (int r = 0; r < 3; ++r) {
    if (r == victim) continue;
    expect_ended_naming(procs, r, victim,
                        {"UNAVAILABLE", "ABORTED", "FAILED_PRECONDITION"});
    const std::string said_by_fabric =
        absl::StrCat("peer ", victim, " at ", layout.addresses[victim]);
    const std::string said_by_side_channel =
        absl::StrCat("peer ", victim,
                     " is gone (its process "
                     "exited or was killed");
    if (procs.out(r).find(said_by_fabric) != std::string::npos) {
      EXPECT_THAT(procs.out(r), HasSubstr("then start the group again"))
          << procs.report(r);
    } else {
      EXPECT_THAT(procs.out(r), HasSubstr(said_by_side_channel))
          << procs.report(r);
      EXPECT_THAT(
          procs.out(r),
          ::testing::ContainsRegex(absl::StrCat(
              victim == 0 ? "the coordinator \\(rank 0\\)"
                          : absl::StrCat("rank ", victim),
              " at 127\\.0\\.0\\.1:[0-9]+ closed its bootstrap channel")))
          << procs.report(r);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Processes, KilledRank, ::testing::Values(0, 2),
                         [](const auto& info) {
                           return absl::StrCat("Rank", info.param);
                         });

// Past the failure: three ranks loop checked all_sums ("elastic"), one is
// SIGKILLed, and the other two shrink the group (ProcessGroup::shrink) and
// run 50 more all_sums over themselves, each checked. The agreement runs
// over the fabric, not the side channel, so it works when the rank killed
// is rank 0, whose process holds the side channel's coordinator.
class KilledRankSurvivors : public ::testing::TestWithParam<int> {};

TEST_P(KilledRankSurvivors, ShrinkAndCarryOn) {
  const int victim = GetParam();
  const ScratchDir dir;
  const Layout layout = Layout::loopback(3, dir.path());
  RankProcesses procs;
  for (int r = 0; r < 3; ++r) {
    procs.start(layout, r, {"elastic", "--after=50"});
  }
  for (int r = 0; r < 3; ++r) {
    ASSERT_TRUE(procs.wait_for(r, absl::StrCat("rank ", r, ": looping")))
        << procs.report(r);
  }
  procs.signal(victim, SIGKILL);
  ASSERT_TRUE(procs.wait_all_exited()) << procs.report(0) << procs.report(1);
  EXPECT_EQ(procs.killed_by(victim), SIGKILL);
  int new_rank = 0;
  for (int r = 0; r < 3; ++r) {
    if (r == victim) continue;
    EXPECT_EQ(procs.exit_code(r), kExpected) << procs.report(r);
    EXPECT_THAT(procs.out(r), HasSubstr("; shrinking")) << procs.report(r);
    EXPECT_THAT(procs.out(r),
                HasSubstr(absl::StrCat("rank ", r,
                                       ": elastic: 50 all_sums OK after the "
                                       "shrink, now rank ",
                                       new_rank++, " of 2")))
        << procs.report(r);
    EXPECT_THAT(procs.out(r), Not(HasSubstr("WRONG")));
  }
}

INSTANTIATE_TEST_SUITE_P(Processes, KilledRankSurvivors,
                         ::testing::Values(0, 2), [](const auto& info) {
                           return absl::StrCat("Rank", info.param);
                         });

// SIGSTOP longer than the deadline: the stopped rank's sockets stay open,
// so only the deadline can end the survivors' operation; then SIGCONT
// lets the stopped rank find its group failed, and it ends too: told by
// the survivor's abort (the survivor's probes, one unanswered at a time,
// left a receive for it), or at its own deadline.
TEST(StoppedRank, TheSurvivorEndsAtTheDeadlineNamingItAndTheRankEndsOnWaking) {
  const ScratchDir dir;
  const Layout layout = Layout::loopback(2, dir.path());
  RankProcesses procs;
  start_looping(procs, layout, 2, "DeadlineExceeded,Unavailable,Aborted");
  procs.signal(1, SIGSTOP);
  ASSERT_TRUE(procs.wait_exit(0)) << procs.report(0);
  expect_ended_naming(procs, 0, 1, {"DEADLINE_EXCEEDED"});
  EXPECT_THAT(procs.out(0), HasSubstr("did not finish within its 3000000000 "
                                      "ns deadline; peer 1 has been silent"));
  procs.signal(1, SIGCONT);
  ASSERT_TRUE(procs.wait_exit(1)) << procs.report(1);
  EXPECT_EQ(procs.exit_code(1), kExpected) << procs.report(1);
  EXPECT_THAT(procs.out(1), HasSubstr("rank 1: expected error: "));
  EXPECT_THAT(procs.out(1), HasSubstr("peer 0")) << procs.report(1);
}

// Rank 1 resets its fabric connection (an RST) and then holds on, its side
// channel open: rank 0 hears of it from the fabric alone, as an error
// completion naming rank 1 and its address.
TEST(ResetConnection, TheErrorCompletionNamesThePeerAndNoBytesAreWrong) {
  const ScratchDir dir;
  const Layout layout = Layout::loopback(2, dir.path());
  RankProcesses procs;
  procs.start(layout, 0,
              {"loop", "--expect_error=Unavailable,FailedPrecondition"});
  procs.start(layout, 1,
              {"reset", "--after=3", "--hold", "--expect_error=Unavailable"});
  ASSERT_TRUE(procs.wait_exit(0)) << procs.report(0) << procs.report(1);
  // Rank 1's line may still be in its pipe when rank 0 has ended.
  EXPECT_TRUE(procs.wait_for(1, "rank 1: reset 1 fabric connections"))
      << procs.report(1);
  expect_ended_naming(procs, 0, 1, {"UNAVAILABLE", "FAILED_PRECONDITION"});
  EXPECT_THAT(procs.out(0), HasSubstr("peer 1 at " + layout.addresses[1]))
      << procs.report(0);
  // Found reading ("reset the connection: ...") or writing ("writing to
  // ... failed: ..."), whichever the rank tried first; a read that meets
  // the reset after the kernel already reported the stream's end says
  // "closed the connection". Never a departure: no goodbye came.
  EXPECT_THAT(procs.out(0),
              ::testing::AnyOf(HasSubstr("Connection reset by peer"),
                               HasSubstr("closed the connection;")))
      << procs.report(0);
  EXPECT_THAT(procs.out(0), HasSubstr("check that rank, then start the group "
                                      "again"));
  procs.close_stdin(1);
  ASSERT_TRUE(procs.wait_exit(1)) << procs.report(1);
  EXPECT_EQ(procs.exit_code(1), kExpected) << procs.report(1);
  EXPECT_THAT(procs.out(1), Not(HasSubstr("WRONG")));
}

// A TCP connection from the test to `address` ("127.0.0.1:port") that
// sends `bytes` and closes. Returns the connection's own port.
uint16_t send_as_stranger(const std::string& address,
                          const std::vector<uint8_t>& bytes) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(Layout::port_of(address));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0)
      << address;
  sockaddr_in me{};
  socklen_t len = sizeof(me);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&me), &len);
  EXPECT_EQ(::send(fd, bytes.data(), bytes.size(), 0),
            static_cast<ssize_t>(bytes.size()));
  ::close(fd);
  return ntohs(me.sin_port);
}

// Garbage, then a hello of another protocol version, at rank 0's fabric
// address once the group formed: both refused (logged naming the
// stranger's address, counted), and the group computes every call right.
TEST(Stranger, GarbageAndAnotherVersionAreRefusedAndTheGroupComputes) {
  const ScratchDir dir;
  const Layout layout = Layout::loopback(2, dir.path());
  RankProcesses procs;
  for (int r = 0; r < 2; ++r) {
    const int refusals = r == 0 ? 2 : 0;
    procs.start(layout, r,
                {"stranger", "--wait_for_go", "--count=5000",
                 absl::StrCat("--refusals=", refusals)});
  }
  for (int r = 0; r < 2; ++r) {
    ASSERT_TRUE(procs.wait_for(r, absl::StrCat("rank ", r, ": formed")))
        << procs.report(r);
  }
  const std::string http = "GET / HTTP/1.1\r\nHost: weft\r\n\r\n....";
  const uint16_t garbage_port = send_as_stranger(
      layout.addresses[0], std::vector<uint8_t>(http.begin(), http.end()));
  tcp::internal::Hello hello;
  hello.version = tcp::internal::kProtocolVersion + 1;
  hello.from_rank = 1;
  const auto encoded = hello.encode();
  const uint16_t version_port =
      send_as_stranger(layout.addresses[0],
                       std::vector<uint8_t>(encoded.begin(), encoded.end()));
  for (int r = 0; r < 2; ++r) procs.write_stdin(r, "go\n");
  ASSERT_TRUE(procs.wait_all_exited()) << procs.report(0) << procs.report(1);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(procs.exit_code(r), kExpected) << procs.report(r);
    EXPECT_THAT(procs.out(r), HasSubstr("results, all OK")) << procs.report(r);
  }
  EXPECT_THAT(procs.out(0), HasSubstr("rank 0: refused 2 connections"));
  const std::string prefix = absl::StrCat("device ", layout.addresses[0],
                                          ": refused the connection from ");
  EXPECT_THAT(procs.err(0),
              HasSubstr(absl::StrCat(prefix, "127.0.0.1:", garbage_port)))
      << procs.report(0);
  EXPECT_THAT(procs.err(0),
              HasSubstr(absl::StrCat(prefix, "127.0.0.1:", version_port)))
      << procs.report(0);
  EXPECT_THAT(procs.err(0),
              HasSubstr(absl::StrCat("protocol version ",
                                     tcp::internal::kProtocolVersion + 1)));
  EXPECT_THAT(procs.err(0), HasSubstr("run the same weft release"));
}

// Rank 1's hostfile address is taken by another program: rank 1 cannot
// start and says which address and what to do; rank 0 is not left waiting.
TEST(PortInUse, TheRankNamesTheAddressAndTheOtherEndsTyped) {
  const ScratchDir dir;
  const Layout layout = Layout::loopback(2, dir.path());
  const int squatter = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_port = htons(Layout::port_of(layout.addresses[1]));
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(squatter, reinterpret_cast<sockaddr*>(&at), sizeof(at)), 0);
  ASSERT_EQ(::listen(squatter, 1), 0);
  RankProcesses procs;
  for (int r = 0; r < 2; ++r) {
    procs.start(layout, r, {"every-op"}, {{"WEFT_CONNECT_TIMEOUT_S", "3"}});
  }
  ASSERT_TRUE(procs.wait_all_exited()) << procs.report(0) << procs.report(1);
  ::close(squatter);
  EXPECT_EQ(procs.exit_code(1), kNoGroup) << procs.report(1);
  EXPECT_THAT(procs.out(1), HasSubstr("rank 1: start failed: UNAVAILABLE: "));
  EXPECT_THAT(procs.out(1), HasSubstr(layout.addresses[1])) << procs.report(1);
  EXPECT_THAT(procs.out(1), HasSubstr("in use")) << procs.report(1);
  EXPECT_THAT(procs.out(1), HasSubstr("configure a free port"));
  // Rank 0 started or not, it ends with a typed error naming rank 1.
  EXPECT_THAT(procs.exit_code(0), AnyOf(3, kNoGroup)) << procs.report(0);
  EXPECT_THAT(procs.out(0), HasSubstr("rank 1")) << procs.report(0);
}

// One rank of two, alone: nothing answers at the coordinator address
// (127.0.0.1 on a port nobody listens on, or a TEST-NET address that does
// not route), or the other rank never comes. Each gives up after
// WEFT_CONNECT_TIMEOUT_S naming the address, the missing rank and what to
// do.
TEST(Unreachable, ALoneRankNamesTheAddressAndTheRankItMisses) {
  const ScratchDir loopback_dir, testnet_dir, alone_dir;
  const Layout loopback = Layout::loopback(2, loopback_dir.path());
  // No coordinator given: rank 0's address, the port above its highest.
  const Layout testnet =
      Layout::of({"192.0.2.1:41000",
                  absl::StrCat("127.0.0.1:", weft::testing::free_port())},
                 testnet_dir.path());
  const Layout alone = Layout::loopback(2, alone_dir.path());
  const std::map<std::string, std::string> quick = {
      {"WEFT_CONNECT_TIMEOUT_S", "1"}};
  RankProcesses procs;
  procs.start(loopback, 1, {"every-op"}, quick);
  procs.start(testnet, 1, {"every-op"}, quick);
  procs.start(alone, 0, {"every-op"}, quick);
  ASSERT_TRUE(procs.wait_all_exited()) << procs.report(0) << procs.report(1);
  const std::vector<std::string> unreached = {loopback.coordinator,
                                              "192.0.2.1:41001"};
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(procs.exit_code(i), kNoGroup) << procs.report(i);
    EXPECT_THAT(procs.out(i), HasSubstr(absl::StrCat(
                                  "rank 1: start failed: DEADLINE_EXCEEDED: "
                                  "rank 1, peer 0: could not reach the "
                                  "coordinator (rank 0) at ",
                                  unreached[i])))
        << procs.report(i);
    EXPECT_THAT(procs.out(i), HasSubstr("start rank 0"));
  }
  EXPECT_EQ(procs.exit_code(2), kNoGroup) << procs.report(2);
  EXPECT_THAT(procs.out(2),
              HasSubstr(absl::StrCat("rank 0: start failed: DEADLINE_EXCEEDED: "
                                     "rank 0, peer 1: rank 1 did not join",
                                     " within 1000 ms (rank 0 listens at ",
                                     alone.coordinator, "): start it")))
      << procs.report(2);
}

}  // namespace
}  // namespace weft::tcp_processes
