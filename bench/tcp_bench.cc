// The TCP fabric's own overhead, each row beside its plain-socket
// reference in one run:
// - BM_TcpFabricSend vs BM_PlainTcpStream: one message of 64 KiB, 1 MiB or
//   64 MiB from one TcpFabric endpoint to another over loopback (the
//   receiver on its own thread, a receive always posted) vs a plain
//   blocking TCP stream moving the same bytes between two threads. Each
//   iteration ends when the receiver has the whole message. Rows report
//   bytes per second; the ratio fabric/plain is the fabric's efficiency.
// - BM_TcpFabricPingPong vs BM_PlainTcpPingPong: one round trip of an
//   8-byte message between two threads (the time per iteration).
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/bench_support.h"
#include "bench/tcp_bench_support.h"
#include "benchmark/benchmark.h"
#include "fabric/clock.h"
#include "fabric/endpoint.h"
#include "tcp/tcp_fabric.h"

namespace weft::bench {
namespace {

absl::Status open_pair(uint32_t bytes, std::array<TcpRank, 2>& ranks) {
  for (uint32_t r = 0; r < 2; ++r) {
    absl::StatusOr<TcpRank> rank = open_tcp_rank(r, 2 * uint64_t{bytes});
    if (!rank.ok()) return rank.status();
    ranks[r] = *std::move(rank);
  }
  return join_tcp_ranks(0, ranks[0], 1, ranks[1]);
}

// Rank 0: keeps two receives posted, counts arrivals, until `stop`.
void receive_loop(TcpRank& rx, uint32_t bytes, std::atomic<uint64_t>& arrived,
                  std::atomic<bool>& stop, std::atomic<bool>& failed) {
  for (uint32_t slot = 0; slot < 2; ++slot) {
    (void)rx.endpoints[0]->post_recv(
        {WorkKind::kRecv, 1, slot},
        *rx.slab->frame(uint64_t{slot} * bytes, bytes));
  }
  arrived.store(0);
  std::array<Completion, 8> c;
  while (!stop.load(std::memory_order_relaxed)) {
    absl::StatusOr<size_t> n = rx.endpoints[0]->poll(c);
    if (!n.ok()) return failed.store(true);
    for (size_t i = 0; i < *n; ++i) {
      if (!c[i].ok()) return failed.store(true);
      const uint32_t slot = c[i].id.slot;
      (void)rx.endpoints[0]->post_recv(
          {WorkKind::kRecv, 1, slot},
          *rx.slab->frame(uint64_t{slot} * bytes, bytes));
      arrived.fetch_add(1);
    }
    if (*n == 0) rx.fabric->idle(rx.fabric->clock().now_ns() + kNsPerMs);
  }
}

void BM_TcpFabricSend(benchmark::State& state) {
  const auto bytes = static_cast<uint32_t>(state.range(0));
  std::array<TcpRank, 2> ranks;
  if (absl::Status s = open_pair(bytes, ranks); !s.ok()) {
    return fail_row(state, s);
  }
  std::atomic<uint64_t> arrived{~uint64_t{0}};
  std::atomic<bool> stop{false}, failed{false};
  std::thread receiver(receive_loop, std::ref(ranks[0]), bytes,
                       std::ref(arrived), std::ref(stop), std::ref(failed));
  TcpRank& tx = ranks[1];
  const Frame frame = *tx.slab->frame(0, bytes);
  WallClock clock;
  while (arrived.load() == ~uint64_t{0}) std::this_thread::yield();
  uint64_t sent = 0;
  std::array<Completion, 8> c;
  for (auto _ : state) {
    (void)tx.endpoints[0]->post_send({WorkKind::kSend, 0, 0}, frame, bytes, 1);
    ++sent;
    const TimeNs deadline_ns = deadline_after(clock.now_ns(), kTcpWaitNs);
    bool left = false;
    while (!left && !failed.load() && clock.now_ns() < deadline_ns) {
      absl::StatusOr<size_t> n = tx.endpoints[0]->poll(c);
      left = n.ok() && *n > 0;
      if (!left) tx.fabric->idle(clock.now_ns() + kNsPerMs);
    }
    // Then waits as the plain stream's sender does.
    while (arrived.load() < sent && !failed.load() &&
           clock.now_ns() < deadline_ns) {
      std::this_thread::yield();
    }
    if (arrived.load() < sent) {
      fail_row(state, "the message did not arrive within the deadline");
      break;
    }
  }
  stop.store(true);
  receiver.join();
  state.SetBytesProcessed(static_cast<int64_t>(sent) * bytes);
}

void BM_PlainTcpStream(benchmark::State& state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  int fds[2] = {-1, -1};
  if (!plain_pair(fds)) return fail_row(state, "loopback sockets failed");
  PageBuffer out(bytes, 1), in(bytes);
  std::atomic<uint64_t> arrived{0};
  std::thread receiver([&] {
    for (;;) {
      size_t got = 0;
      while (got < bytes) {
        const ssize_t n = ::recv(fds[1], in.data() + got, bytes - got, 0);
        if (n <= 0) return;
        got += static_cast<size_t>(n);
      }
      arrived.fetch_add(1);
    }
  });
  uint64_t sent = 0;
  for (auto _ : state) {
    for (size_t put = 0; put < bytes;) {
      const ssize_t n = ::send(fds[0], out.data() + put, bytes - put, 0);
      if (n <= 0) break;
      put += static_cast<size_t>(n);
    }
    ++sent;
    while (arrived.load() < sent) std::this_thread::yield();
  }
  ::shutdown(fds[0], SHUT_RDWR);
  receiver.join();
  ::close(fds[0]);
  ::close(fds[1]);
  state.SetBytesProcessed(static_cast<int64_t>(sent * bytes));
}

constexpr uint32_t kPingBytes = 8;

// Rank 1 of the ping-pong: sends back every message until `stop`.
void echo_loop(TcpRank& echo, std::atomic<bool>& stop,
               std::atomic<bool>& failed) {
  Endpoint& e = *echo.endpoints[0];
  const Frame in = *echo.slab->frame(0, kPingBytes);
  const Frame out = *echo.slab->frame(kPingBytes, kPingBytes);
  (void)e.post_recv({WorkKind::kRecv, 1, 0}, in);
  std::array<Completion, 4> c;
  while (!stop.load(std::memory_order_relaxed)) {
    absl::StatusOr<size_t> n = e.poll(c);
    if (!n.ok()) return failed.store(true);
    for (size_t i = 0; i < *n; ++i) {
      if (!c[i].ok()) return failed.store(true);
      if (c[i].id.kind != WorkKind::kRecv) continue;
      (void)e.post_recv({WorkKind::kRecv, 1, 0}, in);
      (void)e.post_send({WorkKind::kSend, 0, 0}, out, kPingBytes, 0);
    }
    if (*n == 0) {
      echo.fabric->idle(
          deadline_after(echo.fabric->clock().now_ns(), 100 * kNsPerMs));
    }
  }
}

void BM_TcpFabricPingPong(benchmark::State& state) {
  std::array<TcpRank, 2> ranks;
  if (absl::Status s = open_pair(2 * kPingBytes, ranks); !s.ok()) {
    return fail_row(state, s);
  }
  std::atomic<bool> stop{false}, failed{false};
  std::thread echo(echo_loop, std::ref(ranks[1]), std::ref(stop),
                   std::ref(failed));
  TcpRank& ping = ranks[0];
  Endpoint& e = *ping.endpoints[0];
  const Frame in = *ping.slab->frame(0, kPingBytes);
  const Frame out = *ping.slab->frame(kPingBytes, kPingBytes);
  Completion c;
  for (auto _ : state) {
    (void)e.post_recv({WorkKind::kRecv, 1, 0}, in);
    (void)e.post_send({WorkKind::kSend, 0, 0}, out, kPingBytes, 0);
    // The send's completion, then the reply's.
    if (!await_one(ping, e, c) || !await_one(ping, e, c) || failed.load()) {
      fail_row(state, "the reply did not arrive within the deadline");
      break;
    }
  }
  stop.store(true);
  echo.join();
}

void BM_PlainTcpPingPong(benchmark::State& state) {
  int fds[2] = {-1, -1};
  if (!plain_pair(fds)) return fail_row(state, "loopback sockets failed");
  std::thread echo([&] {
    std::array<std::byte, kPingBytes> b{};
    while (recv_all(fds[1], b) && send_all(fds[1], b)) {
    }
  });
  std::array<std::byte, kPingBytes> b{};
  for (auto _ : state) {
    if (!send_all(fds[0], b) || !recv_all(fds[0], b)) {
      fail_row(state, "the plain ping-pong failed");
      break;
    }
  }
  ::shutdown(fds[0], SHUT_RDWR);
  echo.join();
  ::close(fds[0]);
  ::close(fds[1]);
}

// Fan-in over one progress loop: `peers` senders (threads, each its own
// fabric) each send one message per iteration to one receiver whose single
// thread drives all its endpoints (poll() each, idle() when none moved),
// the receiver's fabric waiting with poll(2) or epoll(7) (args: poller,
// peers, bytes). The iteration ends when every message arrived.
void BM_TcpFanIn(benchmark::State& state) {
  const auto poller = static_cast<tcp::PollerKind>(state.range(0));
  const auto peers = static_cast<uint32_t>(state.range(1));
  const auto bytes = static_cast<uint32_t>(state.range(2));
  state.SetLabel(poller == tcp::PollerKind::kEpoll ? "epoll" : "poll");
  std::vector<TcpRank> ranks;
  for (uint32_t r = 0; r <= peers; ++r) {
    absl::StatusOr<TcpRank> rank = open_tcp_rank(
        r, (r == 0 ? 2 * peers : 1) * uint64_t{bytes}, {.poller = poller});
    if (!rank.ok()) return fail_row(state, rank.status());
    ranks.push_back(*std::move(rank));
  }
  for (uint32_t r = 1; r <= peers; ++r) {
    if (absl::Status s = join_tcp_ranks(0, ranks[0], r, ranks[r]); !s.ok()) {
      return fail_row(state, s);
    }
  }
  TcpRank& rx = ranks[0];
  auto recv_frame = [&](uint32_t peer, uint32_t slot) {
    return *rx.slab->frame((uint64_t{peer} * 2 + slot) * bytes, bytes);
  };
  for (uint32_t p = 0; p < peers; ++p) {
    for (uint32_t slot = 0; slot < 2; ++slot) {
      (void)rx.endpoints[p]->post_recv({WorkKind::kRecv, p, slot},
                                       recv_frame(p, slot));
    }
  }
  std::atomic<uint64_t> go{0};
  std::atomic<bool> stop{false}, failed{false};
  std::vector<std::thread> senders;
  for (uint32_t r = 1; r <= peers; ++r) {
    senders.emplace_back([&, r] {
      TcpRank& tx = ranks[r];
      const Frame frame = *tx.slab->frame(0, bytes);
      Completion c;
      for (uint64_t sent = 0;; ++sent) {
        while (go.load() <= sent && !stop.load()) std::this_thread::yield();
        if (stop.load()) return;
        (void)tx.endpoints[0]->post_send({WorkKind::kSend, 0, 0}, frame, bytes,
                                         1);
        if (!await_one(tx, *tx.endpoints[0], c)) return failed.store(true);
      }
    });
  }
  WallClock clock;
  std::array<Completion, 8> c;
  for (auto _ : state) {
    go.fetch_add(1);
    const TimeNs deadline_ns = deadline_after(clock.now_ns(), kTcpWaitNs);
    for (uint32_t arrived = 0; arrived < peers && !failed.load();) {
      bool moved = false;
      for (uint32_t p = 0; p < peers; ++p) {
        absl::StatusOr<size_t> n = rx.endpoints[p]->poll(c);
        for (size_t i = 0; n.ok() && i < *n; ++i) {
          if (!c[i].ok()) failed.store(true);
          (void)rx.endpoints[p]->post_recv(c[i].id,
                                           recv_frame(p, c[i].id.slot));
          ++arrived;
          moved = true;
        }
      }
      if (clock.now_ns() >= deadline_ns) failed.store(true);
      if (!moved) rx.fabric->idle(deadline_ns);
    }
    if (failed.load()) {
      fail_row(state, "a message did not arrive within the deadline");
      break;
    }
  }
  stop.store(true);
  for (std::thread& t : senders) t.join();
  state.SetBytesProcessed(state.iterations() * peers * int64_t{bytes});
}

void fan_in_args(benchmark::internal::Benchmark* b) {
  std::vector<tcp::PollerKind> pollers = {tcp::PollerKind::kPoll};
#if defined(__linux__)
  pollers.push_back(tcp::PollerKind::kEpoll);
#endif
  for (int64_t bytes :
       {int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20}) {
    for (int64_t peers : {1, 2, 4}) {
      for (tcp::PollerKind p : pollers) {
        b->Args({static_cast<int64_t>(p), peers, bytes});
      }
    }
  }
  b->ArgNames({"poller", "peers", "bytes"});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t s : {int64_t{64} << 10, int64_t{1} << 20, int64_t{64} << 20}) {
    b->Arg(s);
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_TcpFabricSend)->Apply(sizes);
BENCHMARK(BM_PlainTcpStream)->Apply(sizes);
BENCHMARK(BM_TcpFanIn)->Apply(fan_in_args);
BENCHMARK(BM_TcpFabricPingPong)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlainTcpPingPong)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  return weft::bench::run_benchmarks(argc, argv);
}
