#include "rendezvous/tcp_bootstrap.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/absl_compat.h"
#include "fabric/errors.h"
#include "net/address.h"
#include "net/socket.h"
#include "net/stream.h"
#include "rendezvous/internal/tcp_rendezvous.h"
#include "rendezvous/internal/wire.h"

namespace weft {
namespace {

using rendezvous::internal::TcpChannel;

// Room for every rank's connection at once, plus a few strangers.
constexpr int kListenBacklog = SOMAXCONN;

absl::Status rank_error(absl::StatusCode code, uint32_t self, uint32_t peer,
                        ErrorCause cause, std::string_view message) {
  return make_error(code, ErrorPlace{self, peer, "", cause}, message);
}

}  // namespace

TcpBootstrap::Listener::Listener(Listener&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      address_(std::move(other.address_)),
      port_(other.port_) {}

TcpBootstrap::Listener& TcpBootstrap::Listener::operator=(
    Listener&& other) noexcept {
  if (this != &other) {
    net::Socket(fd_).close();
    fd_ = std::exchange(other.fd_, -1);
    address_ = std::move(other.address_);
    port_ = other.port_;
  }
  return *this;
}

TcpBootstrap::Listener::~Listener() { net::Socket(fd_).close(); }

absl::StatusOr<TcpBootstrap::Listener> TcpBootstrap::listen(
    const Config& config) {
  if (absl::Status s = config.validate(); !s.ok()) return s;
  if (config.rank != 0) {
    return rank_error(absl::StatusCode::kInvalidArgument, config.rank, kNoPeer,
                      ErrorCause::kBadInput,
                      "only rank 0 listens; the other ranks connect");
  }
  absl::StatusOr<HostPort> host_port = parse_host_port(config.coordinator);
  if (!host_port.ok()) return host_port.status();
  // The net module's errors name the address and what to do.
  auto cannot_listen = [&config](const absl::Status& why) {
    return rank_error(why.code(), 0, kNoPeer, ErrorCause::kFabric,
                      absl::StrFormat("the coordinator %s: %s",
                                      config.coordinator, why.message()));
  };
  absl::StatusOr<net::SocketAddress> address =
      net::SocketAddress::resolve(*host_port);
  if (!address.ok()) return cannot_listen(address.status());
  absl::StatusOr<net::Socket> socket = net::listen_on(*address, kListenBacklog);
  if (!socket.ok()) return cannot_listen(socket.status());
  absl::StatusOr<net::SocketAddress> bound =
      net::SocketAddress::bound_to(socket->fd());
  if (!bound.ok()) return cannot_listen(bound.status());
  return Listener(socket->release(), bound->to_string(), bound->port());
}

absl::StatusOr<std::unique_ptr<TcpBootstrap>> TcpBootstrap::accept(
    Listener listener, const Config& config) {
  if (absl::Status s = config.validate(); !s.ok()) return s;
  if (config.rank != 0 || listener.fd_ < 0) {
    return rank_error(absl::StatusCode::kInvalidArgument, config.rank, kNoPeer,
                      ErrorCause::kBadInput,
                      "accept() needs rank 0 and a listener from listen()");
  }
  WallClock clock;
  absl::StatusOr<std::vector<rendezvous::internal::TcpChannel>> channels =
      rendezvous::internal::form_group(listener.fd_, listener.address_, config,
                                       clock);
  if (!channels.ok()) return channels.status();
  return std::unique_ptr<TcpBootstrap>(
      new TcpBootstrap(0, config.size, *std::move(channels)));
}

absl::StatusOr<std::unique_ptr<TcpBootstrap>> TcpBootstrap::connect(
    const Config& config, const TcpConnectOptions& options) {
  if (absl::Status s = config.validate(); !s.ok()) return s;
  if (config.size == 1) {
    return std::unique_ptr<TcpBootstrap>(new TcpBootstrap(0, 1, {}));
  }
  if (config.rank == 0) {
    if (absl::StatusOr<HostPort> hp = parse_host_port(config.coordinator);
        hp.ok() && hp->port == 0) {
      return rank_error(absl::StatusCode::kInvalidArgument, 0, kNoPeer,
                        ErrorCause::kBadInput,
                        "coordinator port 0 would leave the other ranks "
                        "unable to find rank 0: choose a port, or call "
                        "listen() and tell them the port it picked");
    }
    absl::StatusOr<Listener> listener = listen(config);
    if (!listener.ok()) return listener.status();
    return accept(*std::move(listener), config);
  }
  WallClock clock;
  absl::StatusOr<rendezvous::internal::TcpChannel> channel =
      rendezvous::internal::join_group(config, options, clock);
  if (!channel.ok()) return channel.status();
  std::vector<TcpChannel> channels;
  channels.push_back(*std::move(channel));
  return std::unique_ptr<TcpBootstrap>(
      new TcpBootstrap(config.rank, config.size, std::move(channels)));
}

TcpBootstrap::TcpBootstrap(
    uint32_t rank, uint32_t size,
    std::vector<rendezvous::internal::TcpChannel> channels)
    : rank_(rank), size_(size), channels_(std::move(channels)) {}

TcpBootstrap::~TcpBootstrap() = default;

absl::StatusOr<std::vector<std::vector<uint8_t>>> TcpBootstrap::all_gather(
    std::span<const uint8_t> mine, TimeNs timeout_ns) {
  if (!failure_.ok()) return failure_;
  if (mine.size() > kMaxBlobBytes) {
    return rank_error(absl::StatusCode::kInvalidArgument, rank_, kNoPeer,
                      ErrorCause::kBadInput,
                      absl::StrFormat("all_gather of %u bytes, more than the "
                                      "bootstrap's limit of %u per rank",
                                      mine.size(), kMaxBlobBytes));
  }
  const TimeNs deadline_ns = deadline_after(clock_.now_ns(), timeout_ns);
  absl::StatusOr<std::vector<std::vector<uint8_t>>> blobs;
  if (size_ == 1) {
    blobs = std::vector<std::vector<uint8_t>>(1);
    (*blobs)[0].assign(mine.begin(), mine.end());
  } else if (rank_ == 0) {
    blobs = gather_at_coordinator(mine, deadline_ns);
  } else {
    blobs = gather_at_peer(mine, deadline_ns);
  }
  if (blobs.ok()) ++round_;
  return blobs;
}

absl::StatusOr<std::vector<std::vector<uint8_t>>>
TcpBootstrap::gather_at_coordinator(std::span<const uint8_t> mine,
                                    TimeNs deadline_ns) {
  std::vector<std::vector<uint8_t>> blobs(size_);
  blobs[0].assign(mine.begin(), mine.end());
  std::vector<rendezvous::internal::TcpChannel*> waiting;
  for (TcpChannel& ch : channels_) waiting.push_back(&ch);
  while (!waiting.empty()) {
    std::vector<pollfd> fds;
    for (TcpChannel* ch : waiting) fds.push_back({ch->socket.fd(), POLLIN, 0});
    absl::Status polled = net::poll_until(fds, deadline_ns, clock_);
    if (absl::IsDeadlineExceeded(polled)) {
      std::vector<uint32_t> missing;
      for (TcpChannel* ch : waiting) missing.push_back(ch->rank);
      return fail(rank_error(
          polled.code(), 0, missing.size() == 1 ? missing[0] : kNoPeer,
          ErrorCause::kDeadline,
          absl::StrFormat("rank(s) %s did not contribute to exchange %u in "
                          "time; they may be stuck or slower than the "
                          "exchange timeout",
                          absl::StrJoin(missing, ", "), round_)));
    }
    if (!polled.ok()) {
      return fail(rank_error(polled.code(), 0, kNoPeer, ErrorCause::kUnknown,
                             base::to_std(polled.message())));
    }
    std::vector<TcpChannel*> still_waiting;
    for (size_t i = 0; i < waiting.size(); ++i) {
      bool done = false;
      if (fds[i].revents != 0) {
        absl::StatusOr<bool> got =
            collect_contribution(*waiting[i], &blobs[waiting[i]->rank]);
        if (!got.ok()) return fail(got.status());
        done = *got;
      }
      if (!done) still_waiting.push_back(waiting[i]);
    }
    waiting = std::move(still_waiting);
  }
  absl::StatusOr<std::vector<uint8_t>> gathered =
      rendezvous::internal::encode_gathered(round_, blobs);
  if (!gathered.ok()) {
    return fail(rank_error(gathered.status().code(), 0, kNoPeer,
                           ErrorCause::kResource,
                           base::to_std(gathered.status().message())));
  }
  for (TcpChannel& ch : channels_) {
    absl::Status sent =
        net::send_all(ch.socket.fd(), *gathered, deadline_ns, clock_);
    if (!sent.ok()) {
      ch.broken = true;
      return fail(rendezvous::internal::channel_error(
          0, ch, "sending the gathered blobs", sent));
    }
  }
  return blobs;
}

absl::StatusOr<bool> TcpBootstrap::collect_contribution(
    rendezvous::internal::TcpChannel& channel, std::vector<uint8_t>* blob) {
  absl::StatusOr<bool> got = channel.reader.pump(channel.socket.fd());
  if (!got.ok()) {
    return rendezvous::internal::channel_error(0, channel, "gathering",
                                               got.status());
  }
  if (!*got) return false;
  const rendezvous::internal::WireHeader header = channel.reader.header();
  absl::StatusOr<rendezvous::internal::Contribution> c =
      header.type == rendezvous::internal::MessageType::kContribute
          ? rendezvous::internal::decode_contribution(channel.reader.body())
          : absl::StatusOr<rendezvous::internal::Contribution>(
                absl::InvalidArgumentError(absl::StrFormat(
                    "expected a contribution, got a %s",
                    rendezvous::internal::message_type_name(header.type))));
  channel.reader.reset();
  if (!c.ok()) {
    return rendezvous::internal::channel_error(0, channel, "gathering",
                                               c.status());
  }
  if (c->round != round_) {
    return rendezvous::internal::channel_error(
        0, channel, "gathering",
        absl::FailedPreconditionError(absl::StrFormat(
            "it is at exchange %u, rank 0 at %u: the ranks called all_gather "
            "a different number of times",
            c->round, round_)));
  }
  *blob = std::move(c->blob);
  return true;
}

absl::StatusOr<std::vector<std::vector<uint8_t>>> TcpBootstrap::gather_at_peer(
    std::span<const uint8_t> mine, TimeNs deadline_ns) {
  rendezvous::internal::TcpChannel& ch = channels_[0];
  absl::Status sent = net::send_all(
      ch.socket.fd(), rendezvous::internal::encode_contribution(round_, mine),
      deadline_ns, clock_);
  if (!sent.ok()) {
    ch.broken = true;
    return fail(
        rendezvous::internal::channel_error(rank_, ch, "contributing", sent));
  }
  absl::Status got = rendezvous::internal::receive_message(
      ch.socket.fd(), ch.reader, deadline_ns, clock_);
  if (absl::IsDeadlineExceeded(got)) {
    return fail(rank_error(
        got.code(), rank_, 0, ErrorCause::kDeadline,
        absl::StrFormat("%s did not answer exchange %u in time; rank 0's own "
                        "error names the ranks that did not contribute",
                        rendezvous::internal::describe(ch), round_)));
  }
  if (!got.ok()) {
    return fail(
        rendezvous::internal::channel_error(rank_, ch, "gathering", got));
  }
  const rendezvous::internal::WireHeader header = ch.reader.header();
  if (header.type == rendezvous::internal::MessageType::kAbort) {
    return fail(rendezvous::internal::abort_from(rank_, ch, "gathering"));
  }
  absl::StatusOr<rendezvous::internal::Gathered> gathered =
      header.type == rendezvous::internal::MessageType::kGathered
          ? rendezvous::internal::decode_gathered(ch.reader.body())
          : absl::StatusOr<rendezvous::internal::Gathered>(
                absl::InvalidArgumentError(absl::StrFormat(
                    "expected the gathered blobs, got a %s",
                    rendezvous::internal::message_type_name(header.type))));
  ch.reader.reset();
  absl::Status checked =
      gathered.ok() ? check_gathered(*gathered, mine) : gathered.status();
  if (!checked.ok()) {
    return fail(
        rendezvous::internal::channel_error(rank_, ch, "gathering", checked));
  }
  return std::move(gathered->blobs);
}

absl::Status TcpBootstrap::check_gathered(
    const rendezvous::internal::Gathered& gathered,
    std::span<const uint8_t> mine) const {
  if (gathered.round != round_) {
    return absl::DataLossError(
        absl::StrFormat("the answer to exchange %u is for exchange %u", round_,
                        gathered.round));
  }
  if (gathered.blobs.size() != size_) {
    return absl::DataLossError(
        absl::StrFormat("the answer holds %u blobs for a group of %u",
                        gathered.blobs.size(), size_));
  }
  const std::vector<uint8_t>& echoed = gathered.blobs[rank_];
  if (!std::equal(mine.begin(), mine.end(), echoed.begin(), echoed.end())) {
    return absl::DataLossError(
        "the answer does not hold our own blob as we sent it");
  }
  return absl::OkStatus();
}

absl::Status TcpBootstrap::check_alive() {
  if (!failure_.ok()) return failure_;
  if (rank_ != 0) return check_coordinator_alive();
  for (rendezvous::internal::TcpChannel& ch : channels_) {
    if (net::peer_closed(ch.socket.fd())) {
      return fail(rendezvous::internal::channel_error(
          0, ch, "checking liveness",
          absl::UnavailableError("the peer closed the connection")));
    }
  }
  return absl::OkStatus();
}

absl::Status TcpBootstrap::check_coordinator_alive() {
  rendezvous::internal::TcpChannel& ch = channels_[0];
  absl::StatusOr<bool> got = ch.reader.pump(ch.socket.fd());
  if (!got.ok()) {
    return fail(rendezvous::internal::channel_error(
        rank_, ch, "checking liveness", got.status()));
  }
  if (!*got) return absl::OkStatus();
  // Between exchanges rank 0 sends only aborts.
  const rendezvous::internal::WireHeader header = ch.reader.header();
  if (header.type == rendezvous::internal::MessageType::kAbort) {
    return fail(
        rendezvous::internal::abort_from(rank_, ch, "checking liveness"));
  }
  ch.reader.reset();
  return fail(rendezvous::internal::channel_error(
      rank_, ch, "checking liveness",
      absl::InvalidArgumentError(absl::StrFormat(
          "unexpected %s between exchanges",
          rendezvous::internal::message_type_name(header.type)))));
}

absl::Status TcpBootstrap::fail(absl::Status status) {
  failure_ = status;
  if (rank_ == 0) {
    // The culprit too: a slow rank is alive and should stop waiting.
    for (rendezvous::internal::TcpChannel& ch : channels_)
      rendezvous::internal::send_abort(ch, status, clock_);
  }
  return status;
}

}  // namespace weft
