#include "tcp/tcp_fabric.h"

#include <poll.h>
#include <sys/uio.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <optional>
#include <random>
#include <span>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/absl_compat.h"
#include "base/logging.h"
#include "fabric/assert.h"
#include "fabric/errors.h"
#include "net/address.h"
#include "net/secret_proof.h"
#include "net/socket.h"
#include "net/stream.h"
#include "tcp/internal/closing.h"
#include "tcp/internal/endpoint_host.h"
#include "tcp/internal/poller.h"
#include "tcp/internal/tcp_endpoint.h"
#include "tcp/internal/wire.h"

namespace weft::tcp {
namespace internal {

struct Listener {
  std::string configured;  // as in TcpOptions::listen
  net::SocketAddress bound;  // the port resolved
  net::Socket socket;
};

// An accepted connection whose hello has not been read or whose endpoint
// has not connected yet.
struct PendingConnection {
  net::Socket socket;
  net::SocketAddress peer;
  std::string listener;  // the address it came in on
  // The hello, and the nonce that follows one proving a secret.
  std::array<uint8_t, Hello::kBytes + net::kSecretNonceBytes> hello_bytes{};
  size_t filled = 0;
  size_t wanted = Hello::kBytes;
  // Shared secret: set once the reply went out; the connector's proof of it
  // is read next.
  std::optional<Hello> hello;
  std::optional<net::ProofTranscript> transcript;
  net::SecretProof proof{};
  size_t proof_filled = 0;
};

}  // namespace internal

namespace {

using internal::Hello;
using internal::PendingConnection;
using net::Socket;
using net::SocketAddress;

constexpr int kBacklog = 128;
// Accepts per listener per pump, so a flood cannot hold the rank.
constexpr int kMaxAcceptsPerPump = 16;
// idle() blocks at most this long, so a caller re-checks its own state.
constexpr TimeNs kMaxIdleNs = 100 * kNsPerMs;

uint32_t random_psn() {
  std::random_device device;
  return static_cast<uint32_t>(device());
}

}  // namespace

// What the endpoints may ask of their fabric, and nothing more: a member
// of TcpFabric, it reaches the fabric's private parts so the endpoints
// need not.
class TcpFabric::Host final : public internal::EndpointHost {
 public:
  explicit Host(TcpFabric& fabric) : fabric_(fabric) {}

  bool owns(const Frame& frame) const override { return fabric_.owns(frame); }
  void accept_connections() override { fabric_.pump_accepts(); }
  void stop_watching(int fd) override { fabric_.poller_->forget(fd); }
  void close_gently(net::Socket socket, std::vector<uint8_t> out) override {
    fabric_.close_gently(std::move(socket), std::move(out));
  }
  void closed(const internal::TcpEndpoint& endpoint) override {
    fabric_.forget(endpoint);
  }
  void message_sent() override { ++fabric_.messages_sent_; }
  void message_dropped() override { ++fabric_.messages_dropped_; }
  void endpoint_failed(const absl::Status& why) override {
    fabric_.last_failure_ = why;
  }

 private:
  TcpFabric& fabric_;
};

TcpFabric::TcpFabric(uint32_t rank, TcpOptions options)
    : rank_(rank),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : &wall_clock_),
      psn_(random_psn()),
      host_(std::make_unique<Host>(*this)) {}

TcpFabric::~TcpFabric() {
  // The closing connections wait side by side, so a fabric of many waits
  // no longer than one. On the wall clock: a clock given in TcpOptions
  // (a test's) may stand still.
  const TimeNs until_ns = deadline_after(
      wall_clock_.now_ns(), internal::ClosingConnection::kClosingNs);
  for (pump_closing(); !closing_.empty(); pump_closing()) {
    const TimeNs left_ns = until_ns - wall_clock_.now_ns();
    if (left_ns <= 0) break;
    for (const auto& c : closing_) {
      const pollfd p = c->wanted();
      poller_->want(p.fd, p.events, /*lasting=*/false);
    }
    (void)poller_->wait(std::min(left_ns, kMaxIdleNs));
  }
}

void TcpFabric::close_gently(net::Socket socket, std::vector<uint8_t> out) {
  closing_.push_back(std::make_unique<internal::ClosingConnection>(
      std::move(socket), std::move(out),
      deadline_after(clock_->now_ns(),
                     internal::ClosingConnection::kClosingNs)));
  pump_closing();
}

void TcpFabric::pump_closing() {
  const TimeNs now_ns = clock_->now_ns();
  std::erase_if(closing_, [&](const auto& c) {
    if (c->pump()) return true;
    if (now_ns < c->until_ns()) return false;
    base::log(base::LogLevel::kInfo,
              "rank %u: a peer did not close its end within %d ms of this "
              "rank's goodbye; closing anyway",
              rank_, internal::ClosingConnection::kClosingNs / kNsPerMs);
    return true;
  });
}

absl::StatusOr<std::unique_ptr<TcpFabric>> TcpFabric::open(uint32_t rank,
                                                           TcpOptions options) {
  if (options.listen.empty()) {
    return make_error(absl::StatusCode::kInvalidArgument,
                      ErrorPlace{rank, kNoPeer, "", ErrorCause::kBadInput},
                      "no listening address: give the TCP fabric one "
                      "\"ip:port\" per cable");
  }
  absl::StatusOr<std::unique_ptr<internal::Poller>> poller =
      internal::Poller::create(options.poller);
  if (!poller.ok()) {
    return make_error(poller.status().code(),
                      ErrorPlace{rank, kNoPeer, "", ErrorCause::kBadInput},
                      base::message_of(poller.status()));
  }
  std::unique_ptr<TcpFabric> fabric(new TcpFabric(rank, std::move(options)));
  fabric->poller_ = *std::move(poller);
  if (absl::Status s = fabric->listen_all(); !s.ok()) return s;
  return fabric;
}

absl::Status TcpFabric::listen_all() {
  for (const std::string& text : options_.listen) {
    const ErrorPlace place{rank_, kNoPeer, text, ErrorCause::kFabric};
    absl::StatusOr<net::SocketAddress> address =
        net::SocketAddress::parse(text);
    if (!address.ok()) {
      return make_error(address.status().code(),
                        {rank_, kNoPeer, text, ErrorCause::kBadInput},
                        base::message_of(address.status()));
    }
    absl::StatusOr<net::Socket> socket = net::listen_on(*address, kBacklog);
    if (!socket.ok()) {
      return make_error(socket.status().code(), place,
                        base::message_of(socket.status()));
    }
    absl::StatusOr<net::SocketAddress> bound =
        net::SocketAddress::bound_to(socket->fd());
    if (!bound.ok()) {
      return make_error(bound.status().code(), place,
                        base::message_of(bound.status()));
    }
    auto listener = std::make_unique<internal::Listener>();
    listener->configured = text;
    listener->bound = *bound;
    listener->socket = *std::move(socket);
    listeners_.push_back(std::move(listener));
  }
  return absl::OkStatus();
}

std::vector<std::string> TcpFabric::listen_addresses() const {
  std::vector<std::string> out;
  for (const auto& l : listeners_) out.push_back(l->bound.to_string());
  return out;
}

absl::StatusOr<Slab*> TcpFabric::create_slab(uint64_t bytes) {
  if (slabs_.size() >= kMaxSlabs) {
    return make_error(
        absl::StatusCode::kResourceExhausted,
        ErrorPlace{rank_, kNoPeer, "", ErrorCause::kResource},
        absl::StrFormat("a TCP fabric maps at most %u slabs; use fewer, "
                        "larger ones",
                        kMaxSlabs));
  }
  absl::StatusOr<std::unique_ptr<Slab>> slab = Slab::create(bytes);
  if (!slab.ok()) return slab.status();
  slabs_.push_back(*std::move(slab));
  WEFT_CHECK_INVARIANTS_OF(*this);
  return slabs_.back().get();
}

absl::StatusOr<Slab*> TcpFabric::register_memory(std::span<std::byte> memory) {
  absl::StatusOr<Slab*> slab = registered_.add(
      memory, ErrorPlace{rank_, kNoPeer, "", ErrorCause::kBadInput});
  WEFT_CHECK_INVARIANTS_OF(*this);
  return slab;
}

absl::Status TcpFabric::release_memory(Slab* slab) {
  const ErrorPlace place{rank_, kNoPeer, "", ErrorCause::kBadInput};
  if (absl::Status s = registered_.check_release(slab, place); !s.ok()) {
    return s;
  }
  for (const auto& [qp, endpoint] : endpoints_) {
    if (!endpoint->uses_slab(slab)) continue;
    return make_error(
        absl::StatusCode::kFailedPrecondition, place,
        absl::StrFormat("release_memory: sends or receives posted on the "
                        "region at %p are not complete yet (to rank %u); "
                        "poll their completions first",
                        static_cast<const void*>(slab->data()),
                        endpoint->info().peer));
  }
  registered_.remove(slab);
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

bool TcpFabric::owns(const Frame& frame) const {
  const Slab* slab = frame.slab();
  if (slab == nullptr || !slab->contains(frame)) return false;
  if (!slab->owns_memory()) return registered_.contains(slab);
  return std::any_of(slabs_.begin(), slabs_.end(),
                     [&](const auto& s) { return s.get() == slab; });
}

absl::StatusOr<std::unique_ptr<Endpoint>> TcpFabric::open(
    std::string_view device, uint32_t peer) {
  auto it =
      std::find_if(listeners_.begin(), listeners_.end(), [&](const auto& l) {
        return l->configured == device || l->bound.to_string() == device;
      });
  if (it == listeners_.end()) {
    return make_error(
        absl::StatusCode::kInvalidArgument,
        ErrorPlace{rank_, peer, std::string(device), ErrorCause::kBadInput},
        absl::StrFormat("\"%s\" is not an address this rank listens on "
                        "(%s); a TCP topology names, for each rank, its own "
                        "listening addresses",
                        device, absl::StrJoin(listen_addresses(), ", ")));
  }
  if (peer > WorkId::kMaxPeer) {
    return make_error(
        absl::StatusCode::kInvalidArgument,
        ErrorPlace{rank_, peer, std::string(device), ErrorCause::kBadInput},
        absl::StrFormat("peer %u is above the largest rank %u", peer,
                        WorkId::kMaxPeer));
  }
  internal::TcpEndpoint::Setup setup;
  setup.host = host_.get();
  setup.info = {rank_, peer, std::string(device)};
  setup.listen = (*it)->bound;
  setup.qp_num = next_qp_num_++;
  setup.psn = psn_;
  setup.cable = cables_opened_[peer]++;
  setup.buffer_bytes = options_.socket_buffer_bytes;
  setup.secret = options_.secret;
  auto endpoint = std::make_unique<internal::TcpEndpoint>(std::move(setup));
  endpoints_[endpoint->qp_num()] = endpoint.get();
  WEFT_CHECK_INVARIANTS_OF(*this);
  return std::unique_ptr<Endpoint>(std::move(endpoint));
}

uint64_t TcpFabric::bytes_unsent() const {
  uint64_t bytes = 0;
  for (const auto& [qp, endpoint] : endpoints_)
    bytes += endpoint->bytes_unsent();
  return bytes;
}

void TcpFabric::forget(const internal::TcpEndpoint& endpoint) {
  endpoints_.erase(endpoint.qp_num());
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void TcpFabric::idle(TimeNs wake_at_ns) {
  for (const auto& [qp, endpoint] : endpoints_) {
    if (endpoint->can_move()) return;
  }
  accepting_fds_.clear();
  for (const auto& l : listeners_) {
    poller_->want(l->socket.fd(), POLLIN, /*lasting=*/true);
    accepting_fds_.push_back(l->socket.fd());
  }
  // A pending connection may be refused and closed without the poller
  // hearing of it: wanted for one wait at a time.
  for (const auto& p : pending_) {
    poller_->want(p->socket.fd(), POLLIN, /*lasting=*/false);
    accepting_fds_.push_back(p->socket.fd());
  }
  for (const auto& [qp, endpoint] : endpoints_) {
    const pollfd p = endpoint->wanted();
    if (p.fd >= 0) poller_->want(p.fd, p.events, /*lasting=*/true);
  }
  // A closing connection may close at any pump: wanted one wait at a time.
  for (const auto& c : closing_) {
    const pollfd p = c->wanted();
    if (p.fd >= 0) poller_->want(p.fd, p.events, /*lasting=*/false);
  }
  const TimeNs now_ns = clock_->now_ns();
  const TimeNs wait_ns = std::clamp<TimeNs>(
      wake_at_ns == kNeverNs ? kMaxIdleNs : wake_at_ns - now_ns, 0, kMaxIdleNs);
  const std::span<const int> ready = poller_->wait(wait_ns);
  // Accepting only when a listener or a pending connection is ready: the
  // common wake-up, data on an endpoint, costs no accept(2).
  if (std::any_of(ready.begin(), ready.end(), [&](int fd) {
        return std::find(accepting_fds_.begin(), accepting_fds_.end(), fd) !=
               accepting_fds_.end();
      })) {
    pump_accepts();
  }
  if (!closing_.empty()) pump_closing();
  WEFT_CHECK_INVARIANTS_OF(*this);
}

void TcpFabric::pump_accepts() {
  for (const auto& l : listeners_) {
    for (int i = 0; i < kMaxAcceptsPerPump; ++i) {
      absl::StatusOr<net::Accepted> a = net::accept_one(l->socket.fd());
      if (!a.ok()) {
        base::log(base::LogLevel::kWarning, "rank %u: listening on %s: %s",
                  rank_, l->configured, a.status().message());
        break;
      }
      if (!a->socket.valid()) break;
      // A connection whose options cannot be set (its peer already gone,
      // usually) is dropped: it could raise SIGPIPE or stall on Nagle.
      if (absl::Status st = net::tune_connection(a->socket.fd(), a->peer,
                                                 options_.socket_buffer_bytes);
          !st.ok()) {
        base::log(base::LogLevel::kWarning, "rank %u: listening on %s: %s",
                  rank_, l->configured, st.message());
        continue;
      }
      auto p = std::make_unique<PendingConnection>();
      p->peer = a->peer;
      p->listener = l->bound.to_string();
      p->socket = std::move(a->socket);
      if (pending_.size() >= kMaxPending) {
        refuse(*pending_.front(),
               absl::ResourceExhaustedError(absl::StrFormat(
                   "more than %u connections waited for their hello",
                   kMaxPending)));
        pending_.erase(pending_.begin());
      }
      pending_.push_back(std::move(p));
    }
  }
  std::erase_if(pending_, [&](const auto& p) { return settle(*p); });
  WEFT_CHECK_INVARIANTS_OF(*this);
}

bool TcpFabric::settle(PendingConnection& p) {
  if (p.transcript.has_value()) return settle_proof(p);
  while (p.filled < p.wanted) {
    const int64_t n = net::read_some(
        p.socket.fd(), std::as_writable_bytes(std::span(p.hello_bytes)
                                                  .subspan(p.filled)
                                                  .first(p.wanted - p.filled)));
    if (n == -EAGAIN) return false;
    if (n <= 0) {
      refuse(p, absl::UnavailableError(
                    "the connection closed before a whole hello arrived"));
      return true;
    }
    p.filled += static_cast<size_t>(n);
    if (p.filled == Hello::kBytes && p.wanted == Hello::kBytes) {
      // A hello proving a secret is followed by the connector's nonce.
      absl::StatusOr<Hello> first =
          Hello::decode(std::span(p.hello_bytes).first(Hello::kBytes));
      if (first.ok() && first->proves_secret())
        p.wanted += net::kSecretNonceBytes;
    }
  }
  absl::StatusOr<Hello> hello =
      Hello::decode(std::span(p.hello_bytes).first(Hello::kBytes));
  if (!hello.ok()) {
    refuse(p, hello.status());
    return true;
  }
  auto it = endpoints_.find(hello->to_qp);
  if (hello->to_rank != rank_ || hello->to_psn != psn_ ||
      it == endpoints_.end()) {
    refuse(p, absl::NotFoundError(absl::StrFormat(
                  "its hello names rank %u endpoint %u of incarnation %u, "
                  "which this rank (%u, incarnation %u) does not have; a "
                  "rank of another group or an earlier run",
                  hello->to_rank, hello->to_qp, hello->to_psn, rank_, psn_)));
    return true;
  }
  if (absl::Status s = internal::check_secret_flag(
          *hello, !options_.secret.empty(),
          absl::StrFormat("rank %u", hello->from_rank));
      !s.ok()) {
    // Our flags back, best effort, so the connector can say the same.
    const Hello ours{
        .from_rank = rank_,
        .flags = options_.secret.empty() ? 0 : Hello::kProvesSecret};
    const std::array<uint8_t, Hello::kBytes> reply = ours.encode();
    const iovec part{const_cast<uint8_t*>(reply.data()), reply.size()};
    (void)net::write_some(p.socket.fd(), {&part, 1});
    // Reads what the connector sent after its hello, so closing sends a
    // FIN, not a reset that could overtake the reply.
    std::array<std::byte, 4096> unread;
    (void)net::read_some(p.socket.fd(), unread);
    refuse(p, s);
    return true;
  }
  internal::TcpEndpoint& endpoint = *it->second;
  if (!endpoint.awaits_accept()) return false;  // not connected yet
  if (!endpoint.expects(*hello)) {
    refuse(p, absl::PermissionDeniedError(absl::StrFormat(
                  "its hello is from rank %u endpoint %u, not the peer "
                  "endpoint %u was connected to",
                  hello->from_rank, hello->from_qp, hello->to_qp)));
    return true;
  }
  p.hello = *hello;
  if (!options_.secret.empty()) return start_proof(p, endpoint);
  endpoint.adopt(std::move(p.socket), p.peer, /*hello_sent=*/false);
  return true;
}

bool TcpFabric::start_proof(PendingConnection& p,
                            internal::TcpEndpoint& endpoint) {
  absl::StatusOr<net::SecretNonce> nonce = net::fresh_nonce();
  if (!nonce.ok()) {
    refuse(p, nonce.status());
    return true;
  }
  p.transcript = internal::fabric_transcript(
      p.hello->from_rank, rank_,
      std::span(p.hello_bytes).subspan(Hello::kBytes), *nonce);
  const net::SecretProof proof =
      net::prove(options_.secret, *p.transcript, net::Prover::kResponder);
  const std::span<const uint8_t> hello = endpoint.own_hello();
  const iovec parts[] = {{const_cast<uint8_t*>(hello.data()), hello.size()},
                         {nonce->data(), nonce->size()},
                         {const_cast<uint8_t*>(proof.data()), proof.size()}};
  const size_t reply_bytes = hello.size() + nonce->size() + proof.size();
  // A fresh connection's socket buffer takes these 100 bytes at once; were
  // it not to, the handshake is refused rather than half sent.
  if (net::write_some(p.socket.fd(), parts) !=
      static_cast<int64_t>(reply_bytes)) {
    refuse(p, absl::UnavailableError(
                  "the handshake reply could not be sent at once"));
    return true;
  }
  return settle_proof(p);
}

bool TcpFabric::settle_proof(PendingConnection& p) {
  const int64_t n = net::read_some(
      p.socket.fd(),
      std::as_writable_bytes(std::span(p.proof).subspan(p.proof_filled)));
  if (n == -EAGAIN) return false;
  const std::string who = absl::StrFormat("rank %u", p.hello->from_rank);
  if (n <= 0) {
    refuse(p, absl::PermissionDeniedError(net::secret_mismatch_text(
                  net::SecretMismatch::kClosedBeforeProof, who)));
    return true;
  }
  p.proof_filled += static_cast<size_t>(n);
  if (p.proof_filled < p.proof.size()) return false;
  if (!net::proof_holds(options_.secret, *p.transcript, net::Prover::kInitiator,
                        p.proof)) {
    refuse(p, absl::PermissionDeniedError(net::secret_mismatch_text(
                  net::SecretMismatch::kWrongProof, who)));
    return true;
  }
  auto it = endpoints_.find(p.hello->to_qp);
  if (it == endpoints_.end() || !it->second->awaits_accept() ||
      !it->second->expects(*p.hello)) {
    refuse(p, absl::FailedPreconditionError(absl::StrFormat(
                  "endpoint %u was closed or connected meanwhile",
                  p.hello->to_qp)));
    return true;
  }
  it->second->adopt(std::move(p.socket), p.peer, /*hello_sent=*/true);
  return true;
}

void TcpFabric::refuse(PendingConnection& p, const absl::Status& why) {
  ++refused_;
  last_refusal_ =
      make_error(absl::StatusCode::kPermissionDenied,
                 ErrorPlace{rank_, kNoPeer, p.listener, ErrorCause::kFabric},
                 absl::StrFormat("refused the connection from %s: %s",
                                 p.peer.to_string(), why.message()));
  base::log(base::LogLevel::kWarning, "%s", last_refusal_.message());
  p.socket.close();
}

void TcpFabric::check_invariants() const {
  registered_.check_invariants();
  WEFT_ASSERT(slabs_.size() <= kMaxSlabs, "a TCP fabric maps too many slabs");
  WEFT_ASSERT(pending_.size() <= kMaxPending,
              "more connections wait for their hello than a fabric keeps");
  for (const auto& [qp, endpoint] : endpoints_) {
    WEFT_ASSERT(endpoint != nullptr && endpoint->qp_num() == qp,
                "a TCP endpoint listed under another queue pair number");
    WEFT_ASSERT(qp < next_qp_num_,
                "a TCP endpoint's queue pair number was never given");
    const uint32_t peer = endpoint->info().peer;
    WEFT_ASSERT(cables_opened_.contains(peer) && cables_opened_.at(peer) > 0,
                "a TCP endpoint towards a peer no cable was opened to");
  }
}

}  // namespace weft::tcp
