// Test harness: two TcpFabrics in one process (ranks 0 and 1) over real
// loopback sockets, one endpoint each towards the other, connected through
// their destinations as a bootstrap would, and a bounded loop that polls
// both until a condition holds or a deadline passes.
#ifndef WEFT_TESTS_TCP_TCP_PAIR_H_
#define WEFT_TESTS_TCP_TCP_PAIR_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/clock.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/slab.h"
#include "gtest/gtest.h"
#include "tcp/tcp_fabric.h"

namespace weft::tcp::testing {

// Bound on waits that succeed in milliseconds (for a loaded CI machine).
inline constexpr TimeNs kWaitNs = 20 * kNsPerS;

struct Side {
  std::unique_ptr<TcpFabric> fabric;
  Slab* slab = nullptr;
  std::unique_ptr<Endpoint> endpoint;
  std::vector<Completion> completions;

  // The frame [offset, offset + bytes) of this side's slab.
  Frame frame(uint64_t offset, uint32_t bytes) const {
    return *slab->frame(offset, bytes);
  }
  size_t count(WorkKind kind) const {
    size_t n = 0;
    for (const Completion& c : completions) n += c.id.kind == kind ? 1 : 0;
    return n;
  }
};

class Pair {
 public:
  // Listens on `host`:0 for both ranks, rank r with shared secret
  // secrets[r]; connects both endpoints. Both fabrics wait with `poller`.
  static absl::StatusOr<std::unique_ptr<Pair>> create(
      const std::string& host = "127.0.0.1",
      uint64_t slab_bytes = uint64_t{1} << 20,
      const std::array<std::string, 2>& secrets = {},
      PollerKind poller = PollerKind::kDefault) {
    std::unique_ptr<Pair> p(new Pair);
    for (uint32_t r = 0; r < 2; ++r) {
      absl::StatusOr<std::unique_ptr<TcpFabric>> f =
          TcpFabric::open(r, TcpOptions{.listen = {host + ":0"},
                                        .secret = secrets[r],
                                        .poller = poller});
      if (!f.ok()) return f.status();
      p->side[r].fabric = *std::move(f);
      absl::StatusOr<Slab*> slab = p->side[r].fabric->create_slab(slab_bytes);
      if (!slab.ok()) return slab.status();
      p->side[r].slab = *slab;
      absl::StatusOr<std::unique_ptr<Endpoint>> e = p->side[r].fabric->open(
          p->side[r].fabric->listen_addresses()[0], 1 - r);
      if (!e.ok()) return e.status();
      p->side[r].endpoint = *std::move(e);
    }
    for (uint32_t r = 0; r < 2; ++r) {
      absl::StatusOr<Destination> d = p->side[1 - r].endpoint->destination();
      if (!d.ok()) return d.status();
      if (absl::Status s = p->side[r].endpoint->connect(*d); !s.ok()) return s;
    }
    return p;
  }

  // Polls both live endpoints (collecting completions) and idles their
  // fabrics until `done()` or kWaitNs pass; false on the deadline.
  bool poll_until(const std::function<bool()>& done) {
    const TimeNs deadline_ns = deadline_after(clock_.now_ns(), kWaitNs);
    while (!done()) {
      if (clock_.now_ns() >= deadline_ns) return false;
      for (Side& s : side) poll_once(s);
      if (done()) return true;
      for (Side& s : side) {
        s.fabric->idle(deadline_after(clock_.now_ns(), kNsPerMs));
      }
    }
    return true;
  }

  static void poll_once(Side& s) {
    if (s.endpoint == nullptr) return;
    std::array<Completion, Endpoint::kMaxPollBatch> batch;
    absl::StatusOr<size_t> n = s.endpoint->poll(batch);
    ASSERT_TRUE(n.ok()) << n.status();
    s.completions.insert(s.completions.end(), batch.begin(),
                         batch.begin() + *n);
  }

  std::array<Side, 2> side;

 private:
  Pair() = default;
  WallClock clock_;
};

// Fills `frame` with bytes that depend on `seed` and the position.
inline void fill(const Frame& frame, uint32_t seed) {
  std::byte* d = frame.data();
  for (uint32_t i = 0; i < frame.bytes(); ++i) {
    d[i] = static_cast<std::byte>((i * 131u + seed * 7u + (i >> 8)) & 0xff);
  }
}

}  // namespace weft::tcp::testing

#endif  // WEFT_TESTS_TCP_TCP_PAIR_H_
