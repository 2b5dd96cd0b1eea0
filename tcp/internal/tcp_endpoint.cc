#include "tcp/internal/tcp_endpoint.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "base/logging.h"
#include "fabric/assert.h"
#include "fabric/wc_status.h"
#include "net/secret_proof.h"

namespace weft::tcp::internal {
namespace {

// Most iovec parts one write gathers (a hello, then header and payload of
// each send).
constexpr size_t kMaxWriteParts = 16;
// A poll reads at most this many messages, so it returns even when the
// peer keeps sending.
constexpr int kMaxMessagesPerPoll = 256;
constexpr size_t kDropBufferBytes = 64 * 1024;
// What to do when a peer's connection ended without its goodbye.
constexpr char kPeerGoneAdvice[] =
    "; its process may have exited or been killed, or the network cut it "
    "off: check that rank, then start the group again";
// After a failed write, the most read_available() calls spent looking for
// the peer's goodbye (each reads up to kMaxMessagesPerPoll messages).
constexpr int kMaxDrainReads = 64;

}  // namespace

TcpEndpoint::TcpEndpoint(Setup setup) : setup_(std::move(setup)) {}

TcpEndpoint::~TcpEndpoint() {
  if (state_ == State::kOpen && hello_out_left_ == 0 && !holding_sends()) {
    // A goodbye, not a bare close: the peer tells a deliberate departure
    // from a crash. It goes after the whole of the message being written
    // (a goodbye inside one would be read as payload), and the fabric
    // ends the connection without a reset (internal/closing.h).
    std::vector<uint8_t> out;
    if (front_written_ > 0) {
      const PostedSend& s = sends_.front();
      size_t skip = front_written_;
      if (skip < s.header.size()) {
        out.insert(out.end(), s.header.begin() + skip, s.header.end());
        skip = 0;
      } else {
        skip -= s.header.size();
      }
      for (std::span<const std::byte> piece : s.pieces()) {
        const size_t from = std::min(skip, piece.size());
        skip -= from;
        const auto* bytes = reinterpret_cast<const uint8_t*>(piece.data());
        out.insert(out.end(), bytes + from, bytes + piece.size());
      }
    }
    const MessageHeader bye{.has_immediate = false, .goodbye = true};
    const std::array<uint8_t, MessageHeader::kBytes> bytes = bye.encode();
    out.insert(out.end(), bytes.begin(), bytes.end());
    setup_.host->stop_watching(socket_.fd());
    setup_.host->close_gently(std::move(socket_), std::move(out));
  }
  close_socket();
  setup_.host->closed(*this);
}

uint64_t TcpEndpoint::bytes_unsent() const {
  uint64_t bytes = 0;
  for (const PostedSend& s : sends_) bytes += s.header.size() + s.length;
  return bytes - front_written_;
}

void TcpEndpoint::close_socket() {
  if (socket_.valid()) setup_.host->stop_watching(socket_.fd());
  socket_.close();
}

void TcpEndpoint::depart() {
  state_ = State::kDeparted;
  base::log(base::LogLevel::kInfo,
            "rank %u: %s closed its endpoint (its group or program ended)",
            setup_.info.rank, peer_text());
  // Nothing follows a goodbye but the end of stream: closing leaves no
  // unread input, so the peer sees no reset.
  close_socket();
  incoming_.reset();
  header_in_filled_ = 0;
  // UC: what nobody receives is dropped; the sends still complete.
  for (const PostedSend& s : sends_)
    complete(s.id, WcStatus::kSuccess, s.length);
  sends_.clear();
  front_written_ = 0;
}

ErrorPlace TcpEndpoint::place(ErrorCause cause) const {
  return ErrorPlace{setup_.info.rank, setup_.info.peer, setup_.info.device,
                    cause};
}

absl::Status TcpEndpoint::refuse(absl::StatusCode code, ErrorCause cause,
                                 std::string_view message) const {
  return make_error(code, place(cause), message);
}

std::string TcpEndpoint::peer_text() const {
  if (accepted_from_.empty()) {
    return absl::StrFormat("peer %u at %s", setup_.info.peer,
                           peer_address_.to_string());
  }
  return absl::StrFormat("peer %u at %s (connected from %s)", setup_.info.peer,
                         peer_address_.to_string(), accepted_from_);
}

absl::StatusOr<Destination> TcpEndpoint::destination() const {
  Destination d;
  d.lid = setup_.listen.port();
  d.gid = setup_.listen.gid();
  d.qp_num = setup_.qp_num;
  d.psn = setup_.psn;
  return d;
}

absl::Status TcpEndpoint::connect(const Destination& peer) {
  if (absl::Status s = contract_.check_connect(setup_.info); !s.ok()) {
    return s;
  }
  // Every way on from here leaves INIT: connecting, accepting, or failed.
  contract_.connected();
  peer_ = peer;
  peer_address_ = net::SocketAddress::from_gid(peer.gid, peer.lid);
  const uint32_t rank = setup_.info.rank;
  const uint32_t other = setup_.info.peer;
  Hello hello{.from_rank = rank,
              .to_rank = other,
              .from_qp = setup_.qp_num,
              .to_qp = peer.qp_num,
              .cable = setup_.cable,
              .to_psn = peer.psn,
              .flags = setup_.secret.empty() ? 0 : Hello::kProvesSecret};
  const std::array<uint8_t, Hello::kBytes> hello_bytes = hello.encode();
  std::copy(hello_bytes.begin(), hello_bytes.end(), hello_out_.begin());
  hello_out_bytes_ = hello_bytes.size();
  const bool connector =
      rank > other || (rank == other && setup_.qp_num > peer.qp_num);
  if (connector && !setup_.secret.empty()) {
    absl::StatusOr<net::SecretNonce> nonce = net::fresh_nonce();
    if (!nonce.ok()) {
      state_ = State::kConnecting;
      fail(WcStatus::kRetryExcErr, nonce.status());
      return absl::OkStatus();
    }
    nonce_ = *nonce;
    std::copy(nonce_.begin(), nonce_.end(),
              hello_out_.begin() + hello_out_bytes_);
    hello_out_bytes_ += nonce_.size();
  }
  hello_out_left_ = hello_out_bytes_;
  if (!connector) {
    state_ = State::kAccepting;
    WEFT_CHECK_INVARIANTS_OF(*this);
    return absl::OkStatus();
  }
  hello_in_expected_ = true;
  state_ = State::kConnecting;
  absl::StatusOr<net::Socket> s =
      net::start_connect(peer_address_, setup_.buffer_bytes);
  if (!s.ok()) {
    fail(WcStatus::kRetryExcErr, s.status());
    return absl::OkStatus();  // UC: an unreachable peer is no connect error
  }
  socket_ = *std::move(s);
  base::log(base::LogLevel::kInfo, "rank %u: connecting to %s (cable %u)", rank,
            peer_text(), setup_.cable);
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

bool TcpEndpoint::expects(const Hello& hello) const {
  return state_ == State::kAccepting && hello.from_rank == setup_.info.peer &&
         hello.to_rank == setup_.info.rank && hello.from_qp == peer_.qp_num &&
         hello.to_qp == setup_.qp_num && hello.to_psn == setup_.psn;
}

void TcpEndpoint::adopt(net::Socket socket, const net::SocketAddress& peer,
                        bool hello_sent) {
  socket_ = std::move(socket);
  if (hello_sent) hello_out_left_ = 0;
  // peer_address_ stays the peer's listening address (its destination's),
  // the one the hostfile names: messages name that first, then the
  // connection's ephemeral port.
  accepted_from_ = peer.to_string();
  state_ = State::kOpen;
  base::log(base::LogLevel::kInfo, "rank %u: accepted %s (cable %u)",
            setup_.info.rank, peer_text(), setup_.cable);
  write_pending();
  WEFT_CHECK_INVARIANTS_OF(*this);
}

absl::Status TcpEndpoint::post_recv(WorkId id, const Frame& frame) {
  if (absl::Status s = contract_.check_recv(*setup_.host, setup_.info, id, frame);
      !s.ok()) {
    return s;
  }
  return post_checked_recv({id, frame, Frame()});
}

absl::Status TcpEndpoint::post_checked_recv(const PostedRecv& recv) {
  contract_.posted(WorkKind::kRecv);
  if (state_ == State::kError) {
    complete(recv.id, unreported_.value_or(WcStatus::kWrFlushErr), 0);
    unreported_.reset();
  } else {
    recvs_.push_back(recv);
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

absl::Status TcpEndpoint::post_send(WorkId id, const Frame& frame,
                                    uint32_t length, uint32_t immediate) {
  if (absl::Status s =
          contract_.check_send(*setup_.host, setup_.info, id, frame, length);
      !s.ok()) {
    return s;
  }
  MessageHeader h{.length = length, .immediate = immediate};
  PostedSend send{id, frame.data(), length, h.encode()};
  send.slabs[0] = frame.slab();
  return post_checked_send(send);
}

absl::Status TcpEndpoint::post_send_without_immediate(WorkId id,
                                                      const Frame& frame,
                                                      uint32_t length) {
  if (absl::Status s =
          contract_.check_send(*setup_.host, setup_.info, id, frame, length);
      !s.ok()) {
    return s;
  }
  MessageHeader h{.length = length, .has_immediate = false};
  PostedSend send{id, frame.data(), length, h.encode()};
  send.slabs[0] = frame.slab();
  return post_checked_send(send);
}

absl::Status TcpEndpoint::post_checked_send(const PostedSend& send) {
  contract_.posted(WorkKind::kSend);
  if (state_ == State::kDeparted) {  // dropped, as UC drops it
    complete(send.id, WcStatus::kSuccess, send.length);
  } else if (state_ == State::kError) {
    complete(send.id, unreported_.value_or(WcStatus::kWrFlushErr), 0);
    unreported_.reset();
  } else {
    sends_.push_back(send);
    if (state_ == State::kOpen) write_pending();
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

absl::Status TcpEndpoint::move_to_error() {
  if (state_ != State::kError) {
    fail(WcStatus::kWrFlushErr,
         refuse(absl::StatusCode::kAborted, ErrorCause::kCancelled,
                "moved to the error state on request"));
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return absl::OkStatus();
}

absl::StatusOr<size_t> TcpEndpoint::poll(std::span<Completion> out) {
  pump();
  size_t n = 0;
  while (n < out.size() && !completions_.empty()) {
    const Completion& c = completions_.front();
    contract_.polled(c.id.kind);
    out[n++] = c;
    completions_.pop_front();
  }
  WEFT_CHECK_INVARIANTS_OF(*this);
  return n;
}

pollfd TcpEndpoint::wanted() const {
  pollfd p{};
  p.fd = -1;
  if (!socket_.valid() || state_ == State::kError) return p;
  p.fd = socket_.fd();
  p.events = POLLIN;
  if (state_ == State::kConnecting ||
      (state_ == State::kOpen &&
       (hello_out_left_ > 0 || (!sends_.empty() && !holding_sends())))) {
    p.events |= POLLOUT;
  }
  return p;
}

void TcpEndpoint::pump() {
  if (state_ == State::kAccepting) setup_.host->accept_connections();
  if (state_ == State::kConnecting) finish_connect();
  if (state_ == State::kOpen) write_pending();
  if (state_ == State::kOpen) read_available();
}

void TcpEndpoint::finish_connect() {
  pollfd p{socket_.fd(), POLLOUT, 0};
  if (::poll(&p, 1, 0) <= 0) return;  // still connecting
  if (const int err = net::connect_error(socket_.fd()); err != 0) {
    fail(WcStatus::kRetryExcErr,
         refuse(absl::StatusCode::kUnavailable, ErrorCause::kPeerUnavailable,
                absl::StrFormat("cannot connect to %s: %s; check that the "
                                "peer runs and listens on that address",
                                peer_text(), errno_text(err))));
    return;
  }
  state_ = State::kOpen;
}

void TcpEndpoint::write_pending() {
  while (hello_out_left_ > 0 || (!sends_.empty() && !holding_sends())) {
    std::array<iovec, kMaxWriteParts> parts;
    size_t n = 0;
    if (hello_out_left_ > 0) {
      parts[n++] = {hello_out_.data() + hello_out_bytes_ - hello_out_left_,
                    hello_out_left_};
    }
    size_t skip = front_written_;
    const size_t sendable = holding_sends() ? 0 : sends_.size();
    for (size_t i = 0; i < sendable && n + 1 + kMaxParts <= kMaxWriteParts;
         ++i) {
      PostedSend& s = sends_[i];
      if (skip < s.header.size()) {
        parts[n++] = {s.header.data() + skip, s.header.size() - skip};
        skip = 0;
      } else {
        skip -= s.header.size();
      }
      for (std::span<const std::byte> piece : s.pieces()) {
        if (piece.size() > skip) {
          parts[n++] = {const_cast<std::byte*>(piece.data()) + skip,
                        piece.size() - skip};
          skip = 0;
        } else {
          skip -= piece.size();
        }
      }
      skip = 0;
    }
    int64_t wrote = net::write_some(socket_.fd(), {parts.data(), n});
    if (wrote == 0) return;  // the socket buffer is full
    if (wrote < 0) {
      // A peer that closed on purpose said goodbye first: that is read
      // before the failed write counts as an error.
      for (int i = 0; i < kMaxDrainReads && state_ == State::kOpen; ++i) {
        read_available();
      }
      if (state_ != State::kOpen) return;
      fail(WcStatus::kRemAbortErr,
           refuse(absl::StatusCode::kUnavailable, ErrorCause::kPeerUnavailable,
                  absl::StrFormat("writing to %s failed: %s; the peer closed "
                                  "or reset the connection%s",
                                  peer_text(),
                                  errno_text(static_cast<int>(-wrote)),
                                  kPeerGoneAdvice)));
      return;
    }
    const size_t hello = std::min<size_t>(hello_out_left_, wrote);
    hello_out_left_ -= hello;
    size_t left = static_cast<size_t>(wrote) - hello;
    while (left > 0 && !sends_.empty()) {
      PostedSend& s = sends_.front();
      const size_t total = s.header.size() + s.length;
      const size_t take = std::min(left, total - front_written_);
      front_written_ += take;
      left -= take;
      if (front_written_ < total) break;
      complete(s.id, WcStatus::kSuccess, s.length);
      ++messages_sent_;
      setup_.host->message_sent();
      sends_.pop_front();
      front_written_ = 0;
    }
  }
}

void TcpEndpoint::read_available() {
  for (int messages = 0; messages < kMaxMessagesPerPoll;) {
    if (state_ != State::kOpen) return;
    if (hello_in_expected_) {
      if (!read_hello()) return;
      continue;
    }
    if (!incoming_.has_value()) {
      if (!read_header()) return;
      continue;
    }
    if (!read_payload()) return;
    if (!incoming_.has_value()) ++messages;
  }
}

bool TcpEndpoint::read_header() {
  // The payload read before may have brought this header along.
  if (header_in_filled_ < header_in_.size()) {
    const int64_t n = net::read_some(
        socket_.fd(), std::as_writable_bytes(
                          std::span(header_in_).subspan(header_in_filled_)));
    if (n <= 0) {
      if (n != -EAGAIN) {
        fail(WcStatus::kRemAbortErr,
             refuse(
                 absl::StatusCode::kUnavailable, ErrorCause::kPeerUnavailable,
                 absl::StrFormat("%s %s%s", peer_text(),
                                 n == 0 ? "closed the connection"
                                        : "reset the connection: " +
                                              errno_text(static_cast<int>(-n)),
                                 kPeerGoneAdvice)));
      }
      return false;
    }
    header_in_filled_ += static_cast<size_t>(n);
    // A short read emptied the socket: no second read to learn so.
    if (header_in_filled_ < header_in_.size()) return false;
  }
  header_in_filled_ = 0;
  absl::StatusOr<MessageHeader> h = MessageHeader::decode(header_in_);
  if (!h.ok()) {
    fail(WcStatus::kRemInvReqErr,
         refuse(absl::StatusCode::kDataLoss, ErrorCause::kFabric,
                absl::StrFormat("from %s: %s", peer_text(),
                                h.status().message())));
    return false;
  }
  if (h->goodbye) {
    depart();
    return false;
  }
  start_message(*h);
  return true;
}

void TcpEndpoint::start_message(const MessageHeader& header) {
  incoming_ = Incoming{header, nullptr, 0};
  if (recvs_.empty()) {  // UC: no receive posted, the message is dropped
    if (drop_buffer_.empty()) drop_buffer_.resize(kDropBufferBytes);
  } else if (const PostedRecv& front = recvs_.front();
             header.length > front.frame.bytes() + front.tail.bytes()) {
    const PostedRecv r = front;
    recvs_.pop_front();
    complete(r.id, WcStatus::kLocLenErr, 0);
    fail(WcStatus::kWrFlushErr,
         refuse(absl::StatusCode::kDataLoss, ErrorCause::kCompletionError,
                absl::StrFormat("a message of %u bytes from %s arrived for a "
                                "receive of %u bytes",
                                header.length, peer_text(),
                                r.frame.bytes() + r.tail.bytes())));
    return;
  } else {
    incoming_->into = front.frame.data();
    incoming_->head_room = front.frame.bytes();
    incoming_->tail = front.tail.data();
  }
  if (header.length == 0) read_payload();
}

bool TcpEndpoint::read_payload() {
  Incoming& in = *incoming_;
  const uint32_t left = in.header.length - in.read;
  bool drained = false;
  if (left > 0) {
    std::span<std::byte> into =
        in.into != nullptr
            ? in.next(left)
            : std::span<std::byte>(drop_buffer_)
                  .first(std::min<size_t>(left, drop_buffer_.size()));
    // The rest of this payload and, in the same call, the header of the
    // next message when it is there already: a stream of messages costs
    // one read each.
    std::array<iovec, 2> parts = {iovec{into.data(), into.size()},
                                  iovec{header_in_.data(), header_in_.size()}};
    const size_t count = into.size() == left ? 2 : 1;
    const int64_t n =
        net::read_parts(socket_.fd(), std::span(parts).first(count));
    if (n <= 0) {
      if (n != -EAGAIN) {
        fail(
            WcStatus::kRemAbortErr,
            refuse(absl::StatusCode::kUnavailable, ErrorCause::kPeerUnavailable,
                   absl::StrFormat("%s closed or reset the connection in the "
                                   "middle of a message%s",
                                   peer_text(), kPeerGoneAdvice)));
      }
      return false;
    }
    const size_t got = static_cast<size_t>(n);
    const size_t asked =
        count == 2 ? into.size() + header_in_.size() : into.size();
    drained = got < asked;  // a short read emptied the socket
    in.read += static_cast<uint32_t>(std::min<size_t>(got, into.size()));
    header_in_filled_ = got > into.size() ? got - into.size() : 0;
    // Within a payload, reading on: more of it is likely arriving while
    // this read ran (one more read, not a return to idle(), finds it).
    if (in.read < in.header.length) return true;
  }
  const MessageHeader header = in.header;
  const bool dropped = in.into == nullptr;
  incoming_.reset();
  if (dropped) setup_.host->message_dropped();
  if (!dropped) {
    const PostedRecv r = recvs_.front();
    recvs_.pop_front();
    complete(r.id, WcStatus::kSuccess, header.length, &header);
  }
  return !drained;
}

void TcpEndpoint::complete(WorkId id, WcStatus status, uint32_t bytes,
                           const MessageHeader* header) {
  Completion c;
  c.id = id;
  c.status = status;
  c.status_name = wc_status_name(status);
  c.byte_len = bytes;
  if (header != nullptr && header->has_immediate) {
    c.has_immediate = true;
    c.immediate = header->immediate;
  }
  completions_.push_back(c);
}

void TcpEndpoint::fail(WcStatus first, absl::Status why, base::LogLevel level) {
  if (state_ == State::kError) return;
  state_ = State::kError;
  contract_.entered_error();
  failure_ = std::move(why);
  setup_.host->endpoint_failed(failure_);
  base::log(level, "%s", failure_.message());
  close_socket();
  incoming_.reset();
  flush_all(first);
}

void TcpEndpoint::flush_all(std::optional<WcStatus> first) {
  // The oldest outstanding request carries the cause: a receive (what
  // weft always has posted) before a send.
  const bool nothing = recvs_.empty() && sends_.empty();
  for (const PostedRecv& r : recvs_) {
    complete(r.id, first.value_or(WcStatus::kWrFlushErr), 0);
    first.reset();
  }
  recvs_.clear();
  for (const PostedSend& s : sends_) {
    complete(s.id, first.value_or(WcStatus::kWrFlushErr), 0);
    first.reset();
  }
  sends_.clear();
  front_written_ = 0;
  if (nothing && first.has_value() && *first != WcStatus::kWrFlushErr) {
    unreported_ = first;
  }
}

void TcpEndpoint::check_invariants() const {
  contract_.check_invariants();
  size_t send_completions = 0;
  for (const Completion& c : completions_) {
    send_completions += c.id.kind == WorkKind::kSend ? 1 : 0;
  }
  WEFT_ASSERT(sends_.size() + send_completions == contract_.sends_outstanding(),
              "a TCP endpoint's sends outstanding miscount its posted sends "
              "and their completions");
  WEFT_ASSERT(recvs_.size() + (completions_.size() - send_completions) ==
                  contract_.recvs_outstanding(),
              "a TCP endpoint's receives outstanding miscount its posted "
              "receives and their completions");
  using Uc = UcContract::State;
  const Uc uc = state_ == State::kInit    ? Uc::kInit
                : state_ == State::kError ? Uc::kError
                                          : Uc::kRts;
  WEFT_ASSERT(contract_.state() == uc,
              "a TCP endpoint's state differs from its contract's");
  WEFT_ASSERT((state_ == State::kError) == !failure_.ok(),
              "a TCP endpoint's failure() is set outside the error state, or "
              "missing in it");
  WEFT_ASSERT(!unreported_.has_value() || state_ == State::kError,
              "an unreported failure outside the error state");
  WEFT_ASSERT(state_ != State::kError ||
                  (sends_.empty() && recvs_.empty() && !socket_.valid() &&
                   !incoming_.has_value()),
              "a TCP endpoint in error still has work posted or its "
              "connection");
  WEFT_ASSERT((state_ != State::kInit && state_ != State::kDeparted) ||
                  (sends_.empty() && !socket_.valid()),
              "a TCP endpoint not connected, or whose peer departed, has "
              "sends waiting or a socket");
  WEFT_ASSERT(front_written_ == 0 ||
                  (state_ == State::kOpen && !sends_.empty() &&
                   front_written_ < sends_.front().header.size() +
                                        sends_.front().length),
              "a send written part way outside an open connection, or past "
              "its end");
  WEFT_ASSERT(!incoming_.has_value() ||
                  (state_ == State::kOpen &&
                   incoming_->read <= incoming_->header.length &&
                   (incoming_->into == nullptr ||
                    (!recvs_.empty() &&
                     incoming_->into == recvs_.front().frame.data()))),
              "a message read outside an open connection, past its length, "
              "or into other than the oldest receive");
  WEFT_ASSERT(hello_out_left_ <= hello_out_bytes_ &&
                  hello_out_bytes_ <= hello_out_.size() &&
                  hello_in_filled_ <= hello_in_wanted_ &&
                  hello_in_wanted_ <= hello_in_.size() &&
                  header_in_filled_ <= header_in_.size(),
              "a TCP endpoint's handshake or header counts are past their "
              "buffers");
}

}  // namespace weft::tcp::internal
