// TcpBootstrap: the Bootstrap used on hardware. Rank 0 listens on the
// coordinator address; every other rank connects to it (retrying with
// exponential back-off until the connect timeout) and says hello (rank, size,
// wire version). Once all ranks have joined, rank 0 welcomes them. An
// all_gather sends each blob to rank 0, which sends every rank all blobs.
//
// The connections stay open for the group's life: a closed one means a rank
// is gone. check_alive() reports it; rank 0 relays what it sees to the other
// ranks, so every survivor can name the rank that left. Any failure (a
// timeout, a closed peer, a peer that speaks garbage or another version)
// fails the whole bootstrap: later calls return the same error, and rank 0
// tells the other ranks why.
//
// Every wait has a deadline on the wall clock; sockets are non-blocking and
// never raise SIGPIPE. Not thread-safe: call one method at a time.
#ifndef WEFT_RENDEZVOUS_TCP_BOOTSTRAP_H_
#define WEFT_RENDEZVOUS_TCP_BOOTSTRAP_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/bootstrap.h"
#include "fabric/clock.h"
#include "rendezvous/config.h"

namespace weft {
// An exchange's answer on the wire (rendezvous/internal/wire.h, private:
// this header is installed, the wire format is not).
namespace rendezvous::internal {
struct Gathered;
struct TcpChannel;  // one TCP connection to a peer rank
}  // namespace rendezvous::internal

// How a rank other than 0 retries reaching the coordinator.
struct TcpConnectOptions {
  // The first wait after a failed attempt; each later one doubles, up to
  // max_backoff_ns, and none runs past the connect deadline.
  TimeNs first_backoff_ns = 10 * kNsPerMs;
  TimeNs max_backoff_ns = 1 * kNsPerS;
  // Called after every failed attempt (1, 2, ...) with why it failed, before
  // waiting: for progress messages ("waiting for rank 0...").
  std::function<void(uint32_t attempt, const absl::Status& why)> on_retry;
};

class TcpBootstrap final : public Bootstrap {
 public:
  // Rank 0's listening socket, bound before the group forms so its port is
  // known first (a coordinator port of 0 lets the system pick a free one).
  class Listener {
   public:
    Listener(Listener&& other) noexcept;
    Listener& operator=(Listener&& other) noexcept;
    Listener(const Listener&) = delete;
    Listener& operator=(const Listener&) = delete;
    ~Listener();

    uint16_t port() const { return port_; }
    // "127.0.0.1:40123": the bound address, port included.
    const std::string& address() const { return address_; }

   private:
    friend class TcpBootstrap;
    Listener(int fd, std::string address, uint16_t port)
        : fd_(fd), address_(std::move(address)), port_(port) {}

    int fd_ = -1;
    std::string address_;
    uint16_t port_ = 0;
  };

  // Binds and listens on config.coordinator.
  // REQUIRES: config.rank == 0 (else InvalidArgument).
  static absl::StatusOr<Listener> listen(const Config& config);

  // Rank 0: waits up to config.connect_timeout_ns for ranks 1..size-1 to
  // connect to `listener` and say hello, then welcomes them.
  // DeadlineExceeded names the ranks that never joined (and any connection
  // turned away meanwhile). A weft peer with another version, another size,
  // a rank out of range or a rank that has already joined fails the group at
  // once, and is told why.
  static absl::StatusOr<std::unique_ptr<TcpBootstrap>> accept(
      Listener listener, const Config& config);

  // Any rank: rank 0 listens and accepts; the others connect to
  // config.coordinator, retrying per `options`, and wait to be welcomed.
  // A group of one needs no sockets.
  static absl::StatusOr<std::unique_ptr<TcpBootstrap>> connect(
      const Config& config, const TcpConnectOptions& options = {});

  ~TcpBootstrap() override;

  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }

  // InvalidArgument (and nothing sent) when mine.size() > kMaxBlobBytes.
  absl::StatusOr<std::vector<std::vector<uint8_t>>> all_gather(
      std::span<const uint8_t> mine, TimeNs timeout_ns) override;

  // Non-blocking. Rank 0 checks every rank's connection; the others check
  // theirs to rank 0 and read what rank 0 relayed. Unavailable names the
  // rank that left and its address.
  absl::Status check_alive() override;

 private:
  TcpBootstrap(uint32_t rank, uint32_t size,
               std::vector<rendezvous::internal::TcpChannel> channels);

  absl::StatusOr<std::vector<std::vector<uint8_t>>> gather_at_coordinator(
      std::span<const uint8_t> mine, TimeNs deadline_ns);
  absl::StatusOr<std::vector<std::vector<uint8_t>>> gather_at_peer(
      std::span<const uint8_t> mine, TimeNs deadline_ns);
  // true once `channel`'s contribution is in `blob`.
  absl::StatusOr<bool> collect_contribution(
      rendezvous::internal::TcpChannel& channel, std::vector<uint8_t>* blob);
  // OK when `gathered` answers this exchange: our round, a blob per rank,
  // ours as we sent it.
  absl::Status check_gathered(const rendezvous::internal::Gathered& gathered,
                              std::span<const uint8_t> mine) const;
  absl::Status check_coordinator_alive();
  // Latches `status` as the bootstrap's failure; rank 0 also sends it to
  // every other rank. Returns it.
  absl::Status fail(absl::Status status);

  uint32_t rank_;
  uint32_t size_;
  // Rank 0: to ranks 1..size-1 in rank order; the others: to rank 0.
  std::vector<rendezvous::internal::TcpChannel> channels_;
  uint64_t round_ = 0;  // exchanges completed
  absl::Status failure_;
  WallClock clock_;
};

}  // namespace weft

#endif  // WEFT_RENDEZVOUS_TCP_BOOTSTRAP_H_
