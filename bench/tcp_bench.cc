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
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>

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

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t s : {int64_t{64} << 10, int64_t{1} << 20, int64_t{64} << 20}) {
    b->Arg(s);
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_TcpFabricSend)->Apply(sizes);
BENCHMARK(BM_PlainTcpStream)->Apply(sizes);
BENCHMARK(BM_TcpFabricPingPong)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PlainTcpPingPong)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  return weft::bench::run_benchmarks(argc, argv);
}
