// TcpEndpoint: the Endpoint over one TCP connection, with verbs UC's
// semantics (fabric/endpoint.h). connect() only starts things: the higher
// rank connects to the lower rank's listening address, the lower rank's
// fabric accepts and hands the connection over (TcpFabric::pump_accepts),
// and both sides exchange hellos. Sends posted meanwhile wait and leave
// once the connection is up. All input and output happens in poll() (and
// eagerly in post_send()); nothing runs in the background.
//
// Closing: the destructor finishes the message being written, sends a
// goodbye and hands the socket to the fabric, which ends the connection
// without a reset (internal/closing.h). A goodbye is no error at the
// peer: everything sent before it is delivered, then the endpoint reports
// peer_departed(); later sends complete and are dropped, as UC drops
// what nobody receives, and posted receives stay posted.
//
// Work completes as on UC: a send once its last byte is in the kernel's
// socket buffer; an arriving message consumes the oldest posted receive
// and is read straight into its frame, or is read and dropped when no
// receive is posted; a message longer than the frame completes the receive
// with IBV_WC_LOC_LEN_ERR. Any error (that one, a closed or reset
// connection, a protocol violation, a failed connect) completes the oldest
// outstanding request with an error status and flushes the rest; failure()
// says what happened, naming the peer's address.
//
// Every post and connect() is first the UcContract's to refuse
// (fabric/uc_contract.h); the endpoint asks its fabric only through
// EndpointHost (endpoint_host.h).
//
// Invariants (check_invariants()): the contract's work outstanding equals
// what is posted plus the completions not yet polled, of each kind; the
// contract's state follows the endpoint's (INIT before connect(), ERROR
// exactly when failure() says why, RTS otherwise); in the error state
// nothing is posted, no socket is open and nothing is being read; once
// the peer departed no send waits; only an open connection is written or
// read part way (the message being written has bytes left; a message
// being read lands in the oldest posted receive, or nowhere when dropped);
// the handshake's counts lie within its buffers.
#ifndef WEFT_TCP_INTERNAL_TCP_ENDPOINT_H_
#define WEFT_TCP_INTERNAL_TCP_ENDPOINT_H_

#include <poll.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/logging.h"
#include "fabric/endpoint.h"
#include "fabric/errors.h"
#include "fabric/uc_contract.h"
#include "net/address.h"
#include "net/socket.h"
#include "net/stream.h"
#include "tcp/internal/endpoint_host.h"
#include "tcp/internal/wire.h"

namespace weft::tcp::internal {

class TcpEndpoint final : public Endpoint {
 public:
  struct Setup {
    EndpointHost* host = nullptr;  // the fabric that opened it
    EndpointInfo info;        // device: this rank's listening address
    net::SocketAddress listen;  // where the peer connects, when it is higher
    uint32_t qp_num = 0;      // this endpoint's identity within the fabric
    uint32_t psn = 0;         // the fabric's incarnation
    uint32_t cable = 0;       // which cable to the peer
    int buffer_bytes = 0;     // socket buffers (0: the kernel's)
    std::string_view secret;  // the fabric's shared secret; empty: none
  };

  explicit TcpEndpoint(Setup setup);
  ~TcpEndpoint() override;

  const EndpointInfo& info() const override { return setup_.info; }
  absl::StatusOr<Destination> destination() const override;
  absl::Status connect(const Destination& peer) override;
  absl::Status post_recv(WorkId id, const Frame& frame) override;
  absl::Status post_send(WorkId id, const Frame& frame, uint32_t length,
                         uint32_t immediate) override;
  absl::Status post_send_without_immediate(WorkId id, const Frame& frame,
                                           uint32_t length) override;
  // Gathered into one writev() with the message header; a received
  // payload is read across the parts in order.
  absl::Status post_send_parts(WorkId id, std::span<const Frame> parts,
                               std::span<const uint32_t> lengths,
                               uint32_t immediate) override;
  size_t max_parts() const override { return kMaxParts; }
  absl::Status post_recv_parts(WorkId id,
                               std::span<const Frame> parts) override;
  absl::Status move_to_error() override;
  absl::StatusOr<size_t> poll(std::span<Completion> out) override;
  bool peer_departed() const override { return state_ == State::kDeparted; }

  // What put the endpoint in the error state (OK while it is not).
  absl::Status failure() const override { return failure_; }
  uint64_t messages_sent() const { return messages_sent_; }
  // Bytes of posted sends, headers included, not written yet. O(sends).
  uint64_t bytes_unsent() const;
  uint32_t qp_num() const { return setup_.qp_num; }
  // Whether a send or receive posted on a frame of `slab` is not complete
  // yet (its bytes are still to be written from or read into it).
  bool uses_slab(const Slab* slab) const;

  // For the fabric. poll() would make progress without the socket:
  // completions wait, or a whole header was read along with the last
  // payload (so idle() must not wait for the socket).
  bool can_move() const {
    return !completions_.empty() || header_in_filled_ == header_in_.size();
  }
  // The socket and the events that would let poll() move; fd -1: none.
  pollfd wanted() const;
  // Connected and waiting for the peer's connection to be accepted.
  bool awaits_accept() const { return state_ == State::kAccepting; }
  // What a hello naming this endpoint must say, once connect() ran.
  bool expects(const Hello& hello) const;
  // This endpoint's hello (flags included), once connect() ran: with a
  // shared secret the fabric sends it in its handshake reply.
  std::span<const uint8_t> own_hello() const {
    return std::span(hello_out_).first(Hello::kBytes);
  }
  // Takes the accepted connection whose hello expects() approved (and,
  // with a shared secret, whose proof held). `hello_sent`: the fabric has
  // already sent own_hello().
  void adopt(net::Socket socket, const net::SocketAddress& peer,
             bool hello_sent);

  // WEFT_ASSERTs the invariants above. O(sends + receives + completions).
  void check_invariants() const;

 private:
  // kDeparted: the peer said goodbye (see above).
  enum class State { kInit, kConnecting, kAccepting, kOpen, kDeparted, kError };
  struct PostedSend {
    WorkId id;
    const std::byte* data;
    uint32_t length;  // of the whole payload, `tail` included
    std::array<uint8_t, MessageHeader::kBytes> header;
    // Two parts (post_send_parts): the first head_length bytes of the
    // payload at `data`, the rest at `tail` (nullptr: one part).
    const std::byte* tail = nullptr;
    uint32_t head_length = 0;
    std::array<const Slab*, kMaxParts> slabs{};
    // The payload as up to two runs of bytes, in order.
    std::array<std::span<const std::byte>, kMaxParts> pieces() const;
  };
  struct PostedRecv {
    WorkId id;
    Frame frame;
    Frame tail;  // post_recv_parts(): the second part (empty: none)
  };
  // The message being read.
  struct Incoming {
    MessageHeader header;
    std::byte* into = nullptr;  // the receive's frame; nullptr: dropped
    uint32_t head_room = 0;     // bytes of that frame, then into `tail`
    std::byte* tail = nullptr;
    uint32_t read = 0;
    // Where the payload's next bytes go: at most `left` of them, within
    // one part of the receive.
    std::span<std::byte> next(uint32_t left) const;
  };

  ErrorPlace place(ErrorCause cause) const;
  absl::Status refuse(absl::StatusCode code, ErrorCause cause,
                      std::string_view message) const;
  // Posts a send or receive the contract took.
  absl::Status post_checked_send(const PostedSend& send);
  absl::Status post_checked_recv(const PostedRecv& recv);
  // Advances the connection: finishes a connect, writes, reads.
  void pump();
  void finish_connect();
  void write_pending();
  void read_available();
  // One read step; false when nothing more can be read now.
  bool read_hello();
  // The listener's hello arrived whole: checks it; with a secret, asks
  // for the nonce and proof that follow it.
  bool check_hello();
  // The listener's nonce and proof arrived: checks the proof, queues ours.
  bool check_listener_proof();
  // With a shared secret the connector sends nothing but its handshake
  // until the listener proved it.
  bool holding_sends() const {
    return hello_in_expected_ && !setup_.secret.empty();
  }
  bool read_header();
  bool read_payload();
  void start_message(const MessageHeader& header);
  void complete(WorkId id, WcStatus status, uint32_t bytes,
                const MessageHeader* header = nullptr);
  // Enters the error state: the oldest outstanding request completes with
  // `first`, the others with IBV_WC_WR_FLUSH_ERR; the socket is closed.
  void fail(WcStatus first, absl::Status why,
            base::LogLevel level = base::LogLevel::kWarning);
  // Closes the socket, first taking it out of the fabric's poller.
  void close_socket();
  // The peer's goodbye arrived: see "Closing" above.
  void depart();
  void flush_all(std::optional<WcStatus> first);
  std::string peer_text() const;

  Setup setup_;
  State state_ = State::kInit;
  net::Socket socket_;
  net::SocketAddress peer_address_;
  // Where an accepted connection came from (an ephemeral port); "" when
  // this endpoint connected.
  std::string accepted_from_;
  Destination peer_{};
  absl::Status failure_;
  // Set when the connection failed with nothing outstanding: the next
  // request posted gets it.
  std::optional<WcStatus> unreported_ = std::nullopt;

  // The handshake's bytes out: the hello (and the connector's nonce), then
  // with a secret the connector's proof.
  std::array<uint8_t, Hello::kMaxHandshakeBytes> hello_out_{};
  size_t hello_out_bytes_ = 0;
  size_t hello_out_left_ = 0;
  bool hello_in_expected_ = false;
  std::array<uint8_t, Hello::kMaxHandshakeBytes> hello_in_{};
  size_t hello_in_filled_ = 0;
  size_t hello_in_wanted_ = Hello::kBytes;
  net::SecretNonce nonce_{};  // the connector's, with a secret

  std::deque<PostedSend> sends_;
  size_t front_written_ = 0;  // bytes of sends_.front() (header + payload)
  std::deque<PostedRecv> recvs_;
  std::array<uint8_t, MessageHeader::kBytes> header_in_{};
  size_t header_in_filled_ = 0;
  std::optional<Incoming> incoming_;
  std::vector<std::byte> drop_buffer_;  // where dropped payloads go

  std::deque<Completion> completions_;
  UcContract contract_;  // the work outstanding; INIT, RTS or ERROR
  uint64_t messages_sent_ = 0;
};

}  // namespace weft::tcp::internal

#endif  // WEFT_TCP_INTERNAL_TCP_ENDPOINT_H_
