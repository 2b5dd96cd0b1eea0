#include "rendezvous/internal/tcp_rendezvous.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/absl_compat.h"
#include "fabric/errors.h"
#include "net/address.h"
#include "net/secret_proof.h"
#include "net/stream.h"
#include "rendezvous/internal/tcp_membership.h"

namespace weft::rendezvous::internal {
namespace {

// Connections beyond the group's own that rank 0 will hold while waiting
// for hellos (strangers, ranks retrying); more are turned away at once.
constexpr size_t kSparePendingConnections = 16;
// Turned-away connections named in rank 0's timeout error; more are counted.
constexpr size_t kMaxTurnedAwayNotes = 4;
// Missing ranks named in a timeout error; more are counted.
constexpr size_t kMaxNamedRanks = 16;

ErrorCause cause_of(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kDeadlineExceeded:
      return ErrorCause::kDeadline;
    case absl::StatusCode::kUnavailable:
      return ErrorCause::kPeerUnavailable;
    case absl::StatusCode::kResourceExhausted:
      return ErrorCause::kResource;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kDataLoss:
      return ErrorCause::kMismatch;
    default:
      return ErrorCause::kUnknown;
  }
}

absl::Status place_error(absl::StatusCode code, uint32_t self, uint32_t peer,
                         std::string_view message) {
  return make_error(code, ErrorPlace{self, peer, "", cause_of(code)}, message);
}

std::string ms_text(TimeNs ns) {
  return absl::StrFormat("%d ms", ns / kNsPerMs);
}

// "1, 2, 5" (at most kMaxNamedRanks, then "and N more").
std::string rank_list(const std::vector<uint32_t>& ranks) {
  const size_t named = std::min(ranks.size(), kMaxNamedRanks);
  std::string text = absl::StrJoin(ranks.begin(), ranks.begin() + named, ", ");
  if (named < ranks.size()) {
    absl::StrAppendFormat(&text, " and %u more", ranks.size() - named);
  }
  return text;
}

struct Pending {
  net::Socket socket;
  std::string address;
  MessageReader reader;
  // Shared secret: the peer's secret hello, once rank 0's challenge went
  // out; what its proof must cover.
  std::optional<SecretHello> hello = std::nullopt;
  net::ProofTranscript transcript = {};
};

// Rank 0's side of forming the group.
class GroupFormation {
 public:
  GroupFormation(int listen_fd, std::string listen_address,
                 const Config& config, const Clock& clock)
      : listen_fd_(listen_fd),
        listen_address_(std::move(listen_address)),
        config_(config),
        clock_(clock),
        joined_(config.size) {}

  absl::StatusOr<std::vector<TcpChannel>> run();

 private:
  // One wait for events and the work they bring.
  absl::Status step(TimeNs deadline_ns);
  absl::Status accept_waiting();
  absl::Status check_joined(TcpChannel& channel);
  // Reads from `pending`; true when done with it (joined or dropped).
  absl::StatusOr<bool> serve(Pending& pending);
  // serve() for a whole message when rank 0 holds a secret: challenges a
  // secret hello, admits a peer whose proof holds, refuses anything else.
  absl::StatusOr<bool> serve_with_secret(Pending& pending);
  absl::StatusOr<bool> challenge(Pending& pending);
  // Turns `pending` away and tells it why (an unproven peer cannot fail
  // the group). true: done with it.
  bool refuse(Pending& pending, const std::string& why);
  absl::Status admit(Pending& pending, const Hello& hello);
  void turn_away(const Pending& pending, std::string_view why);
  absl::Status fail(absl::Status status, Pending* offender);
  absl::Status timed_out();

  int listen_fd_;
  std::string listen_address_;
  const Config& config_;
  const Clock& clock_;
  std::vector<std::optional<TcpChannel>> joined_;  // by rank
  uint32_t joined_count_ = 0;
  std::vector<Pending> pending_;
  std::vector<std::string> turned_away_;
  size_t turned_away_count_ = 0;
};

absl::StatusOr<std::vector<TcpChannel>> GroupFormation::run() {
  const TimeNs deadline_ns =
      deadline_after(clock_.now_ns(), config_.connect_timeout_ns);
  while (joined_count_ + 1 < config_.size) {
    if (absl::Status s = step(deadline_ns); !s.ok()) return s;
  }
  const std::vector<uint8_t> welcome = encode_welcome();
  for (uint32_t r = 1; r < config_.size; ++r) {
    TcpChannel& ch = *joined_[r];
    if (absl::Status s =
            net::send_all(ch.socket.fd(), welcome, deadline_ns, clock_);
        !s.ok()) {
      ch.broken = true;
      return fail(channel_error(0, ch, "welcoming", s), nullptr);
    }
  }
  std::vector<TcpChannel> channels;
  for (uint32_t r = 1; r < config_.size; ++r) {
    channels.push_back(*std::move(joined_[r]));
  }
  return channels;
}

absl::Status GroupFormation::step(TimeNs deadline_ns) {
  // The listener, the connections yet to say hello, and the ranks that have
  // joined (one that leaves before the welcome fails the group).
  std::vector<pollfd> fds{{listen_fd_, POLLIN, 0}};
  for (const Pending& p : pending_) fds.push_back({p.socket.fd(), POLLIN, 0});
  std::vector<TcpChannel*> joined;
  for (std::optional<TcpChannel>& ch : joined_) {
    if (!ch.has_value()) continue;
    joined.push_back(&*ch);
    fds.push_back({ch->socket.fd(), POLLIN, 0});
  }
  absl::Status polled = net::poll_until(fds, deadline_ns, clock_);
  if (absl::IsDeadlineExceeded(polled)) return timed_out();
  if (!polled.ok()) {
    return fail(
        place_error(polled.code(), 0, kNoPeer, base::to_std(polled.message())),
        nullptr);
  }
  for (size_t i = 0; i < joined.size(); ++i) {
    if (fds[1 + pending_.size() + i].revents == 0) continue;
    if (absl::Status s = check_joined(*joined[i]); !s.ok()) return s;
  }
  std::vector<bool> done(pending_.size(), false);
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (fds[i + 1].revents == 0) continue;
    absl::StatusOr<bool> served = serve(pending_[i]);
    if (!served.ok()) return served.status();
    done[i] = *served;
  }
  std::vector<Pending> still_pending;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (!done[i]) still_pending.push_back(std::move(pending_[i]));
  }
  pending_ = std::move(still_pending);
  if (fds[0].revents != 0) return accept_waiting();
  return absl::OkStatus();
}

absl::Status GroupFormation::check_joined(TcpChannel& channel) {
  absl::StatusOr<bool> got = channel.reader.pump(channel.socket.fd());
  absl::Status why = got.status();
  if (got.ok() && *got) {
    why = absl::InvalidArgumentError(
        absl::StrFormat("it sent a %s before the welcome",
                        message_type_name(channel.reader.header().type)));
  }
  if (why.ok()) return why;
  return fail(channel_error(0, channel, "forming the group", why), nullptr);
}

absl::Status GroupFormation::accept_waiting() {
  while (true) {
    absl::StatusOr<net::Accepted> a = net::accept_one(listen_fd_);
    if (!a.ok()) {
      return fail(
          place_error(a.status().code(), 0, kNoPeer,
                      absl::StrFormat("accepting on %s: %s", listen_address_,
                                      a.status().message())),
          nullptr);
    }
    if (!a->socket.valid()) return absl::OkStatus();
    Pending p{std::move(a->socket), a->peer.to_string(), MessageReader()};
    if (absl::Status tuned = net::tune_connection(p.socket.fd(), a->peer, 0);
        !tuned.ok()) {
      turn_away(p, base::to_std(tuned.message()));
      continue;
    }
    if (pending_.size() >= config_.size + kSparePendingConnections) {
      turn_away(p, "too many connections waiting to say hello");
      continue;
    }
    pending_.push_back(std::move(p));
  }
}

absl::StatusOr<bool> GroupFormation::serve(Pending& pending) {
  absl::StatusOr<bool> got = pending.reader.pump(pending.socket.fd());
  if (!got.ok() && pending.hello.has_value()) {
    turn_away(pending, net::secret_mismatch_text(
                           net::SecretMismatch::kClosedBeforeProof,
                           absl::StrFormat("the peer at %s", pending.address)));
    return true;
  }
  if (!got.ok()) {
    // A weft peer that speaks another version or sends a bad header fails
    // the group: it meant to join (unless a secret is required: only a
    // proven peer may). Strangers and early closes only leave a note, as
    // the real rank may still come.
    if (pending.reader.spoke_weft() && !absl::IsUnavailable(got.status()) &&
        config_.secret.empty()) {
      return fail(
          place_error(got.status().code(), 0, kNoPeer,
                      absl::StrFormat("the peer at %s: %s", pending.address,
                                      got.status().message())),
          &pending);
    }
    turn_away(pending, base::to_std(got.status().message()));
    return true;
  }
  if (!*got) return false;
  if (!config_.secret.empty()) return serve_with_secret(pending);
  if (pending.reader.header().type == MessageType::kSecretHello) {
    return fail(
        place_error(absl::StatusCode::kPermissionDenied, 0, kNoPeer,
                    net::secret_mismatch_text(
                        net::SecretMismatch::kOnlyPeerHasOne,
                        absl::StrFormat("the peer at %s", pending.address))),
        &pending);
  }
  if (pending.reader.header().type != MessageType::kHello) {
    return fail(
        place_error(
            absl::StatusCode::kInvalidArgument, 0, kNoPeer,
            absl::StrFormat("the peer at %s sent a %s before "
                            "its hello",
                            pending.address,
                            message_type_name(pending.reader.header().type))),
        &pending);
  }
  absl::StatusOr<Hello> hello = decode_hello(pending.reader.body());
  if (!hello.ok()) {
    return fail(
        place_error(hello.status().code(), 0, kNoPeer,
                    absl::StrFormat("the peer at %s: %s", pending.address,
                                    hello.status().message())),
        &pending);
  }
  if (absl::Status s = admit(pending, *hello); !s.ok()) return s;
  return true;
}

absl::StatusOr<bool> GroupFormation::serve_with_secret(Pending& pending) {
  const MessageType type = pending.reader.header().type;
  const std::string who = absl::StrFormat("the peer at %s", pending.address);
  if (!pending.hello.has_value()) {
    if (type == MessageType::kHello) {
      return refuse(pending, net::secret_mismatch_text(
                                 net::SecretMismatch::kPeerHasNone, who));
    }
    if (type != MessageType::kSecretHello) {
      return refuse(pending, absl::StrFormat("%s sent a %s before its hello",
                                             who, message_type_name(type)));
    }
    return challenge(pending);
  }
  if (type != MessageType::kProof) {
    return refuse(pending, absl::StrFormat("%s sent a %s instead of its proof",
                                           who, message_type_name(type)));
  }
  absl::StatusOr<net::SecretProof> proof = decode_proof(pending.reader.body());
  if (!proof.ok()) {
    return refuse(pending,
                  absl::StrFormat("%s: %s", who, proof.status().message()));
  }
  if (!net::proof_holds(config_.secret, pending.transcript,
                        net::Prover::kInitiator, *proof)) {
    return refuse(pending, net::secret_mismatch_text(
                               net::SecretMismatch::kWrongProof, who));
  }
  if (absl::Status s =
          admit(pending, Hello{pending.hello->rank, pending.hello->size});
      !s.ok()) {
    return s;
  }
  return true;
}

absl::StatusOr<bool> GroupFormation::challenge(Pending& pending) {
  absl::StatusOr<SecretHello> hello =
      decode_secret_hello(pending.reader.body());
  if (!hello.ok()) {
    return refuse(pending,
                  absl::StrFormat("the peer at %s: %s", pending.address,
                                  hello.status().message()));
  }
  absl::StatusOr<net::SecretNonce> nonce = net::fresh_nonce();
  if (!nonce.ok()) {
    return fail(place_error(nonce.status().code(), 0, kNoPeer,
                            base::to_std(nonce.status().message())),
                &pending);
  }
  pending.transcript = net::ProofTranscript{kSecretProofContext, hello->rank, 0,
                                            hello->nonce, *nonce};
  const Challenge challenge{
      *nonce,
      net::prove(config_.secret, pending.transcript, net::Prover::kResponder)};
  if (absl::Status s = net::send_all(
          pending.socket.fd(), encode_challenge(challenge),
          deadline_after(clock_.now_ns(), kAbortSendTimeoutNs), clock_);
      !s.ok()) {
    turn_away(pending, base::to_std(s.message()));
    return true;
  }
  pending.hello = *hello;
  pending.reader.reset();
  return false;
}

bool GroupFormation::refuse(Pending& pending, const std::string& why) {
  turn_away(pending, why);
  TcpChannel told{kNoPeer, std::move(pending.socket), pending.address,
                  MessageReader(), false};
  send_abort(told,
             place_error(absl::StatusCode::kPermissionDenied, 0, kNoPeer, why),
             clock_);
  return true;
}

absl::Status GroupFormation::admit(Pending& pending, const Hello& hello) {
  const uint32_t size = config_.size;
  if (hello.size != size) {
    return fail(place_error(absl::StatusCode::kFailedPrecondition, 0,
                            hello.rank < size ? hello.rank : kNoPeer,
                            absl::StrFormat(
                                "rank %u at %s has a group of %u ranks, rank "
                                "0 has %u; give every rank the same device "
                                "JSON",
                                hello.rank, pending.address, hello.size, size)),
                &pending);
  }
  if (hello.rank == 0 || hello.rank >= size) {
    return fail(place_error(absl::StatusCode::kInvalidArgument, 0, kNoPeer,
                            absl::StrFormat(
                                "the peer at %s says it is rank %u, but only "
                                "ranks 1 to %u join rank 0; check its "
                                "JACCL_RANK",
                                pending.address, hello.rank, size - 1)),
                &pending);
  }
  if (joined_[hello.rank].has_value()) {
    return fail(place_error(absl::StatusCode::kInvalidArgument, 0, hello.rank,
                            absl::StrFormat(
                                "rank %u joined twice, from %s and from %s; "
                                "give every process its own rank",
                                hello.rank, joined_[hello.rank]->address,
                                pending.address)),
                &pending);
  }
  joined_[hello.rank] = TcpChannel{hello.rank, std::move(pending.socket),
                                   pending.address, MessageReader(), false};
  ++joined_count_;
  return absl::OkStatus();
}

void GroupFormation::turn_away(const Pending& pending, std::string_view why) {
  if (turned_away_.size() < kMaxTurnedAwayNotes) {
    turned_away_.push_back(absl::StrFormat("%s: %s", pending.address, why));
  }
  ++turned_away_count_;
}

absl::Status GroupFormation::fail(absl::Status status, Pending* offender) {
  if (offender != nullptr) {
    TcpChannel told{kNoPeer, std::move(offender->socket), offender->address,
                    MessageReader(), false};
    send_abort(told, status, clock_);
  }
  for (std::optional<TcpChannel>& ch : joined_) {
    if (ch.has_value()) send_abort(*ch, status, clock_);
  }
  // Ranks that have connected but whose hello we have not read yet.
  for (Pending& p : pending_) {
    if (&p == offender) continue;
    TcpChannel waiting{kNoPeer, std::move(p.socket), p.address, MessageReader(),
                       false};
    send_abort(waiting, status, clock_);
  }
  return status;
}

absl::Status GroupFormation::timed_out() {
  std::vector<uint32_t> missing;
  for (uint32_t r = 1; r < config_.size; ++r) {
    if (!joined_[r].has_value()) missing.push_back(r);
  }
  std::string message = absl::StrFormat(
      "rank%s %s did not join within %s (rank 0 listens at %s): start %s, or "
      "check %s JACCL_COORDINATOR and that the port is reachable",
      missing.size() == 1 ? "" : "s", rank_list(missing),
      ms_text(config_.connect_timeout_ns), listen_address_,
      missing.size() == 1 ? "it" : "them",
      missing.size() == 1 ? "its" : "their");
  if (turned_away_count_ > 0) {
    absl::StrAppendFormat(&message, "; turned away %u connection(s): %s",
                          turned_away_count_,
                          absl::StrJoin(turned_away_, "; "));
  }
  return fail(place_error(absl::StatusCode::kDeadlineExceeded, 0,
                          missing.size() == 1 ? missing[0] : kNoPeer, message),
              nullptr);
}

// Waits for the welcome (or rank 0's abort) on a fresh connection.
absl::Status await_welcome(uint32_t self, TcpChannel& ch, TimeNs deadline_ns,
                           const Config& config, const Clock& clock) {
  absl::Status got =
      receive_message(ch.socket.fd(), ch.reader, deadline_ns, clock);
  if (absl::IsDeadlineExceeded(got)) {
    return place_error(
        got.code(), self, 0,
        absl::StrFormat("connected to %s, but the group did not form within "
                        "%s; rank 0's error names the ranks that did not join",
                        describe(ch), ms_text(config.connect_timeout_ns)));
  }
  if (!got.ok()) return channel_error(self, ch, "joining", got);
  const WireHeader header = ch.reader.header();
  if (header.type == MessageType::kAbort) {
    return abort_from(self, ch, "joining");
  }
  absl::Status welcome = header.type == MessageType::kWelcome
                             ? decode_welcome(ch.reader.body())
                             : absl::InvalidArgumentError(absl::StrFormat(
                                   "expected a welcome, got a %s",
                                   message_type_name(header.type)));
  ch.reader.reset();
  if (!welcome.ok()) return channel_error(self, ch, "joining", welcome);
  return absl::OkStatus();
}

// Connects to `address` with back-off until `deadline_ns`.
absl::StatusOr<net::Socket> reach(uint32_t self,
                                  const net::SocketAddress& address,
                                  TimeNs deadline_ns, const Config& config,
                                  const TcpConnectOptions& options,
                                  const Clock& clock) {
  TimeNs backoff_ns = std::max<TimeNs>(options.first_backoff_ns, 1);
  for (uint32_t attempt = 1;; ++attempt) {
    absl::StatusOr<net::Socket> s =
        net::connect_once(address, 0, deadline_ns, clock);
    if (s.ok()) return s;
    if (clock.now_ns() >= deadline_ns) {
      return place_error(
          absl::StatusCode::kDeadlineExceeded, self, 0,
          absl::StrFormat(
              "could not reach the coordinator (rank 0) at %s within %s "
              "(%u attempts, the last: %s); start rank 0, or check "
              "JACCL_COORDINATOR and that the port is reachable",
              address.to_string(), ms_text(config.connect_timeout_ns), attempt,
              s.status().message()));
    }
    if (options.on_retry) options.on_retry(attempt, s.status());
    const TimeNs wake_ns =
        std::min(deadline_after(clock.now_ns(), backoff_ns), deadline_ns);
    (void)net::poll_until({}, wake_ns, clock);  // the back-off pause
    backoff_ns =
        std::min(2 * backoff_ns, std::max<TimeNs>(options.max_backoff_ns, 1));
  }
}

}  // namespace

std::string describe(const TcpChannel& channel) {
  if (channel.rank == 0) {
    return absl::StrFormat("the coordinator (rank 0) at %s", channel.address);
  }
  if (channel.rank == kNoPeer) {
    return absl::StrFormat("the peer at %s", channel.address);
  }
  return absl::StrFormat("rank %u at %s", channel.rank, channel.address);
}

absl::Status channel_error(uint32_t self, const TcpChannel& channel,
                           std::string_view doing, const absl::Status& cause) {
  if (absl::IsUnavailable(cause)) {
    return place_error(
        cause.code(), self, channel.rank,
        absl::StrFormat(
            "%s closed its bootstrap channel while we were %s (%s): "
            "the process exited or left the group",
            describe(channel), doing, cause.message()));
  }
  return place_error(cause.code(), self, channel.rank,
                     absl::StrFormat("%s with %s: %s", doing, describe(channel),
                                     cause.message()));
}

absl::Status abort_from(uint32_t self, TcpChannel& coordinator,
                        std::string_view doing) {
  absl::StatusOr<Abort> abort = decode_abort(coordinator.reader.body());
  coordinator.reader.reset();
  if (!abort.ok()) {
    return channel_error(self, coordinator, doing, abort.status());
  }
  return place_error(
      abort->code, self, abort->culprit,
      absl::StrFormat("%s reports: %s", describe(coordinator), abort->reason));
}

void send_abort(TcpChannel& channel, const absl::Status& status,
                const Clock& clock) {
  if (channel.broken || !channel.socket.valid()) return;
  channel.broken = true;
  std::optional<ErrorPlace> place = error_place(status);
  const Abort abort{status.code(), place ? place->peer : kNoPeer,
                    std::string(status.message())};
  (void)net::send_all(channel.socket.fd(), encode_abort(abort),
                      deadline_after(clock.now_ns(), kAbortSendTimeoutNs),
                      clock);
}

absl::StatusOr<std::vector<TcpChannel>> form_group(
    int listen_fd, const std::string& listen_address, const Config& config,
    const Clock& clock) {
  return GroupFormation(listen_fd, listen_address, config, clock).run();
}

absl::StatusOr<TcpChannel> join_group(const Config& config,
                                      const TcpConnectOptions& options,
                                      const Clock& clock) {
  const uint32_t self = config.rank;
  absl::StatusOr<HostPort> host_port = parse_host_port(config.coordinator);
  if (host_port.ok() && host_port->port == 0) {
    host_port = absl::InvalidArgumentError(absl::StrFormat(
        "'%s' has port 0, where nothing can be reached: set the port rank 0 "
        "listens on",
        config.coordinator));
  }
  if (!host_port.ok()) {
    return place_error(
        absl::StatusCode::kInvalidArgument, self, 0,
        absl::StrFormat("coordinator: %s", host_port.status().message()));
  }
  absl::StatusOr<net::SocketAddress> address =
      net::SocketAddress::resolve(*host_port);
  if (!address.ok()) {
    return place_error(
        address.status().code(), self, 0,
        absl::StrFormat("coordinator: %s", address.status().message()));
  }
  const TimeNs deadline_ns =
      deadline_after(clock.now_ns(), config.connect_timeout_ns);
  absl::StatusOr<net::Socket> socket =
      reach(self, *address, deadline_ns, config, options, clock);
  if (!socket.ok()) return socket.status();
  TcpChannel ch{0, *std::move(socket), address->to_string(), MessageReader(),
                false};
  if (!config.secret.empty()) {
    if (absl::Status s = prove_membership(self, ch, config, deadline_ns, clock);
        !s.ok()) {
      return s;
    }
  } else if (absl::Status said = net::send_all(
                 ch.socket.fd(), encode_hello({self, config.size}), deadline_ns,
                 clock);
             !said.ok()) {
    return channel_error(self, ch, "saying hello", said);
  }
  if (absl::Status s = await_welcome(self, ch, deadline_ns, config, clock);
      !s.ok()) {
    return s;
  }
  return ch;
}

}  // namespace weft::rendezvous::internal
