// The TCP fabric's own overhead: one message of 64 KiB, 1 MiB or 64 MiB
// from one TcpFabric endpoint to another over loopback (the receiver on its
// own thread, a receive always posted), beside a plain blocking TCP stream
// moving the same bytes between two threads, in one run. Each iteration
// ends when the receiver has the whole message. Rows report bytes per
// second; the ratio fabric/plain is the fabric's efficiency.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
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
#include "benchmark/benchmark.h"
#include "fabric/clock.h"
#include "fabric/endpoint.h"
#include "tcp/tcp_fabric.h"

namespace weft::bench {
namespace {

constexpr TimeNs kWaitNs = 60 * kNsPerS;

struct Rank {
  std::unique_ptr<tcp::TcpFabric> fabric;
  Slab* slab = nullptr;
  std::unique_ptr<Endpoint> endpoint;
};

absl::Status open_pair(uint32_t bytes, std::array<Rank, 2>& ranks) {
  for (uint32_t r = 0; r < 2; ++r) {
    absl::StatusOr<std::unique_ptr<tcp::TcpFabric>> f =
        tcp::TcpFabric::open(r, tcp::TcpOptions{.listen = {"127.0.0.1:0"}});
    if (!f.ok()) return f.status();
    ranks[r].fabric = *std::move(f);
    absl::StatusOr<Slab*> slab =
        ranks[r].fabric->create_slab(2 * uint64_t{bytes});
    if (!slab.ok()) return slab.status();
    ranks[r].slab = *slab;
    absl::StatusOr<std::unique_ptr<Endpoint>> e =
        ranks[r].fabric->open(ranks[r].fabric->listen_addresses()[0], 1 - r);
    if (!e.ok()) return e.status();
    ranks[r].endpoint = *std::move(e);
  }
  for (uint32_t r = 0; r < 2; ++r) {
    absl::StatusOr<Destination> d = ranks[1 - r].endpoint->destination();
    if (!d.ok()) return d.status();
    if (absl::Status s = ranks[r].endpoint->connect(*d); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Rank 0: keeps two receives posted, counts arrivals, until `stop`.
void receive_loop(Rank& rx, uint32_t bytes, std::atomic<uint64_t>& arrived,
                  std::atomic<bool>& stop, std::atomic<bool>& failed) {
  for (uint32_t slot = 0; slot < 2; ++slot) {
    (void)rx.endpoint->post_recv(
        {WorkKind::kRecv, 1, slot},
        *rx.slab->frame(uint64_t{slot} * bytes, bytes));
  }
  arrived.store(0);
  std::array<Completion, 8> c;
  while (!stop.load(std::memory_order_relaxed)) {
    absl::StatusOr<size_t> n = rx.endpoint->poll(c);
    if (!n.ok()) return failed.store(true);
    for (size_t i = 0; i < *n; ++i) {
      if (!c[i].ok()) return failed.store(true);
      const uint32_t slot = c[i].id.slot;
      (void)rx.endpoint->post_recv(
          {WorkKind::kRecv, 1, slot},
          *rx.slab->frame(uint64_t{slot} * bytes, bytes));
      arrived.fetch_add(1);
    }
    if (*n == 0) rx.fabric->idle(rx.fabric->clock().now_ns() + kNsPerMs);
  }
}

void BM_TcpFabricSend(benchmark::State& state) {
  const auto bytes = static_cast<uint32_t>(state.range(0));
  std::array<Rank, 2> ranks;
  if (absl::Status s = open_pair(bytes, ranks); !s.ok()) {
    return fail_row(state, s);
  }
  std::atomic<uint64_t> arrived{~uint64_t{0}};
  std::atomic<bool> stop{false}, failed{false};
  std::thread receiver(receive_loop, std::ref(ranks[0]), bytes,
                       std::ref(arrived), std::ref(stop), std::ref(failed));
  Rank& tx = ranks[1];
  const Frame frame = *tx.slab->frame(0, bytes);
  WallClock clock;
  while (arrived.load() == ~uint64_t{0}) std::this_thread::yield();
  uint64_t sent = 0;
  std::array<Completion, 8> c;
  for (auto _ : state) {
    (void)tx.endpoint->post_send({WorkKind::kSend, 0, 0}, frame, bytes, 1);
    ++sent;
    const TimeNs deadline_ns = deadline_after(clock.now_ns(), kWaitNs);
    bool left = false;
    while (!left && !failed.load() && clock.now_ns() < deadline_ns) {
      absl::StatusOr<size_t> n = tx.endpoint->poll(c);
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

// A connected pair of blocking loopback TCP sockets, TCP_NODELAY.
bool plain_pair(int fds[2]) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  bool ok = ::bind(listener, reinterpret_cast<sockaddr*>(&a), len) == 0 &&
            ::listen(listener, 1) == 0 &&
            getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  fds[0] = ::socket(AF_INET, SOCK_STREAM, 0);
  ok = ok && ::connect(fds[0], reinterpret_cast<sockaddr*>(&a), len) == 0;
  fds[1] = ok ? ::accept(listener, nullptr, nullptr) : -1;
  ::close(listener);
  const int one = 1;
  for (int i = 0; i < 2; ++i) {
    setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return ok && fds[1] >= 0;
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

void sizes(benchmark::internal::Benchmark* b) {
  for (int64_t s : {int64_t{64} << 10, int64_t{1} << 20, int64_t{64} << 20}) {
    b->Arg(s);
  }
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_TcpFabricSend)->Apply(sizes);
BENCHMARK(BM_PlainTcpStream)->Apply(sizes);

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  return weft::bench::run_benchmarks(argc, argv);
}
