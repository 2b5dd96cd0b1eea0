// Multi-rank throughput over the TCP fabric, ranks as threads of one
// process over loopback, beside a plain-socket reference in the same run:
// - BM_TcpAllSum/<ranks>/<bytes>: a weft Group (full mesh, default
//   options) all-sums float32 buffers; every rank's thread calls all_sum,
//   an iteration ends when every rank returned (a rank done early keeps
//   serving its peers, as Group::progress() asks).
// - BM_PlainRingAllSum/<ranks>/<bytes>: the bytes a ring all-reduce must
//   move, over plain non-blocking loopback sockets (each rank sends to the
//   next and receives from the previous: a reduce-scatter of ranks-1 steps
//   with a plain float loop, then an all-gather of ranks-1 steps).
// Both report busbw, the bus bandwidth (2 (n-1)/n of the buffer per rank
// per iteration, as NCCL counts it), and bytes_per_second = buffer bytes
// per second (algbw). CPU time is the whole process's: all ranks'.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "bench/bench_support.h"
#include "bench/tcp_bench_support.h"
#include "benchmark/benchmark.h"
#include "collectives/dtype.h"
#include "collectives/group.h"
#include "collectives/inprocess_bootstrap.h"
#include "fabric/clock.h"
#include "fabric/progress.h"
#include "fabric/topology.h"
#include "tcp/tcp_fabric.h"

namespace weft::bench {
namespace {

void report_bus(benchmark::State& state, uint32_t ranks, uint64_t bytes) {
  const double iterations = static_cast<double>(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["busbw"] = benchmark::Counter(
      iterations * static_cast<double>(bytes) * 2.0 * (ranks - 1) / ranks,
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
}

// A full mesh of TcpFabrics over 127.0.0.1 and a Group on each.
struct TcpGroups {
  std::vector<std::unique_ptr<tcp::TcpFabric>> fabrics;
  std::vector<std::unique_ptr<Group>> groups;

  absl::Status open(uint32_t ranks) {
    std::vector<std::string> rows;
    std::vector<Fabric*> raw;
    for (uint32_t r = 0; r < ranks; ++r) {
      absl::StatusOr<std::unique_ptr<tcp::TcpFabric>> f =
          tcp::TcpFabric::open(r, tcp::TcpOptions{.listen = {"127.0.0.1:0"}});
      if (!f.ok()) return f.status();
      fabrics.push_back(*std::move(f));
      raw.push_back(fabrics.back().get());
    }
    for (uint32_t i = 0; i < ranks; ++i) {
      std::vector<std::string> cells;
      for (uint32_t j = 0; j < ranks; ++j) {
        cells.push_back(
            i == j ? "null" : "\"" + fabrics[i]->listen_addresses()[0] + "\"");
      }
      rows.push_back("[" + absl::StrJoin(cells, ",") + "]");
    }
    absl::StatusOr<Topology> topology =
        Topology::parse_json("[" + absl::StrJoin(rows, ",") + "]");
    if (!topology.ok()) return topology.status();
    absl::StatusOr<std::vector<std::unique_ptr<Group>>> g =
        form_groups_in_process(raw, *topology, GroupOptions{});
    if (!g.ok()) return g.status();
    groups = *std::move(g);
    return absl::OkStatus();
  }

  // Groups linger until their last frames are acknowledged: destroyed on
  // their own threads at once, so they answer one another.
  ~TcpGroups() {
    std::vector<std::thread> threads;
    for (auto& g : groups) threads.emplace_back([&g] { g.reset(); });
    for (std::thread& t : threads) t.join();
  }
};

// Drives `r`'s group (its engine serves the peers: an all_sum returns
// before its last frames left or were acknowledged) until `until` holds.
template <typename Until>
void serve(TcpGroups& g, uint32_t r, Until until) {
  const Clock& clock = g.fabrics[r]->clock();
  while (!until()) {
    const Progress p = g.groups[r]->progress();
    if (p.state == Progress::State::kAdvanced) continue;
    const TimeNs soon_ns = deadline_after(clock.now_ns(), 200 * kNsPerUs);
    g.fabrics[r]->idle(p.state == Progress::State::kWaiting
                           ? std::min(p.wake_at_ns, soon_ns)
                           : soon_ns);
  }
}

void BM_TcpAllSum(benchmark::State& state) {
  const auto ranks = static_cast<uint32_t>(state.range(0));
  const auto bytes = static_cast<uint64_t>(state.range(1));
  TcpGroups g;
  if (absl::Status s = g.open(ranks); !s.ok()) return fail_row(state, s);
  std::vector<std::unique_ptr<PageBuffer>> in, out;
  for (uint32_t r = 0; r < ranks; ++r) {
    in.push_back(std::make_unique<PageBuffer>(bytes));
    out.push_back(std::make_unique<PageBuffer>(bytes));
  }
  // Iteration i starts when `started` reaches i + 1 and ends when every
  // rank added itself to `finished`; a rank waiting serves its peers.
  std::atomic<uint64_t> started{0}, finished{0};
  std::atomic<bool> running{true}, failed{false};
  auto one = [&](uint32_t r) {
    const absl::Status s = g.groups[r]->all_sum(
        {in[r]->data(), bytes}, {out[r]->data(), bytes}, DType::kFloat32);
    if (!s.ok()) failed.store(true);
    finished.fetch_add(1);
  };
  std::vector<std::thread> others;
  for (uint32_t r = 1; r < ranks; ++r) {
    others.emplace_back([&, r] {
      for (uint64_t i = 1;; ++i) {
        serve(g, r, [&] { return started.load() >= i || !running.load(); });
        if (!running.load()) return;
        one(r);
      }
    });
  }
  uint64_t iterations = 0;
  for (auto _ : state) {
    ++iterations;
    started.store(iterations);
    one(0);
    serve(g, 0, [&] { return finished.load() == iterations * ranks; });
    if (failed.load()) {
      fail_row(state, "an all_sum failed");
      break;
    }
  }
  running.store(false);
  for (std::thread& t : others) t.join();
  report_bus(state, ranks, bytes);
}

// Rank r of the plain ring: `next` is its socket to rank r+1, `prev` from
// rank r-1, both non-blocking. Sends `out` and receives `in` at once.
bool exchange(int next, int prev, std::span<const std::byte> out,
              std::span<std::byte> in) {
  while (!out.empty() || !in.empty()) {
    pollfd p[2] = {{next, static_cast<short>(out.empty() ? 0 : POLLOUT), 0},
                   {prev, static_cast<short>(in.empty() ? 0 : POLLIN), 0}};
    if (::poll(p, 2, 60'000) <= 0) return false;
    if (!out.empty() && (p[0].revents & (POLLOUT | POLLERR)) != 0) {
      const ssize_t n = ::send(next, out.data(), out.size(), kSendFlags);
      if (n < 0 && errno != EAGAIN) return false;
      if (n > 0) out = out.subspan(static_cast<size_t>(n));
    }
    if (!in.empty() && (p[1].revents & (POLLIN | POLLERR | POLLHUP)) != 0) {
      const ssize_t n = ::recv(prev, in.data(), in.size(), 0);
      if (n == 0 || (n < 0 && errno != EAGAIN)) return false;
      if (n > 0) in = in.subspan(static_cast<size_t>(n));
    }
  }
  return true;
}

// A ring all-reduce (float32 sum) of `data` in place; `scratch` holds one
// chunk. Reduce-scatter step s: rank r sends chunk r-s and adds the chunk
// r-s-1 it receives into its own, so after ranks-1 steps it holds chunk
// r+1 fully reduced; all-gather step s: it sends chunk r+1-s and receives
// chunk r-s (all mod ranks).
bool plain_ring_all_sum(uint32_t r, uint32_t ranks, int next, int prev,
                        std::span<std::byte> data, std::byte* scratch) {
  const size_t chunk = data.size() / ranks;
  auto part = [&](uint32_t c) {
    return data.subspan(size_t{c} * chunk, chunk);
  };
  for (uint32_t step = 0; step + 1 < ranks; ++step) {
    const uint32_t send_c = (r + ranks - step) % ranks;
    const uint32_t recv_c = (r + ranks - step - 1) % ranks;
    if (!exchange(next, prev, part(send_c), {scratch, chunk})) return false;
    auto* acc = reinterpret_cast<float*>(part(recv_c).data());
    const auto* add = reinterpret_cast<const float*>(scratch);
    for (size_t i = 0; i < chunk / sizeof(float); ++i) acc[i] += add[i];
  }
  for (uint32_t step = 0; step + 1 < ranks; ++step) {
    const uint32_t send_c = (r + 1 + ranks - step) % ranks;
    const uint32_t recv_c = (r + ranks - step) % ranks;
    if (!exchange(next, prev, part(send_c), part(recv_c))) return false;
  }
  return true;
}

void BM_PlainRingAllSum(benchmark::State& state) {
  const auto ranks = static_cast<uint32_t>(state.range(0));
  const auto bytes = static_cast<uint64_t>(state.range(1));
  // pairs[r]: [0] rank r's end towards r+1, [1] rank r+1's end from r.
  std::vector<std::array<int, 2>> pairs(ranks, {-1, -1});
  bool ok = true;
  for (auto& p : pairs) ok = ok && plain_pair(p.data());
  for (auto& p : pairs) {
    for (int fd : p) ok = ok && fcntl(fd, F_SETFL, O_NONBLOCK) == 0;
  }
  std::vector<std::unique_ptr<PageBuffer>> data, scratch;
  for (uint32_t r = 0; r < ranks; ++r) {
    data.push_back(std::make_unique<PageBuffer>(bytes));
    scratch.push_back(std::make_unique<PageBuffer>(bytes / ranks));
  }
  std::atomic<bool> running{ok}, failed{false};
  std::barrier sync(ranks);
  auto one = [&](uint32_t r) {
    const int next = pairs[r][0];
    const int prev = pairs[(r + ranks - 1) % ranks][1];
    if (!plain_ring_all_sum(r, ranks, next, prev, {data[r]->data(), bytes},
                            scratch[r]->data())) {
      failed.store(true);
    }
  };
  std::vector<std::thread> others;
  for (uint32_t r = 1; r < ranks; ++r) {
    others.emplace_back([&, r] {
      for (;;) {
        sync.arrive_and_wait();
        if (!running.load()) return;
        one(r);
        sync.arrive_and_wait();
      }
    });
  }
  for (auto _ : state) {
    if (!ok) {
      fail_row(state, "loopback sockets failed");
      break;
    }
    sync.arrive_and_wait();
    one(0);
    sync.arrive_and_wait();
    if (failed.load()) {
      fail_row(state, "the plain ring failed");
      break;
    }
  }
  running.store(false);
  sync.arrive_and_wait();
  for (std::thread& t : others) t.join();
  for (auto& p : pairs) {
    for (int fd : p) ::close(fd);
  }
  report_bus(state, ranks, bytes);
}

void all_sum_sizes(benchmark::internal::Benchmark* b) {
  for (int64_t bytes : {int64_t{16} << 20, int64_t{64} << 20}) {
    b->Args({4, bytes});
  }
  // CPU: every thread's, so spinning shows.
  b->UseRealTime()->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_TcpAllSum)->Apply(all_sum_sizes);
BENCHMARK(BM_PlainRingAllSum)->Apply(all_sum_sizes);

}  // namespace
}  // namespace weft::bench
