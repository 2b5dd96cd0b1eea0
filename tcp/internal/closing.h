// Internal to weft::tcp: the end of a connection whose endpoint closed on
// purpose (its group or program ended). It finishes the message the
// endpoint was writing, sends the goodbye, shuts down its writing half and
// reads, discarding, until the peer's end of stream; only then does it
// close. Closing with unread input would make the kernel reset the
// connection, and a reset can overtake bytes the peer has not read yet;
// this way the peer reads every byte sent before the goodbye, then the
// goodbye, and never a reset. TcpFabric drives these (idle() and its
// destructor) and gives up on one after kClosingNs, when the peer does
// not read (a process that computes for long, or a stopped one).
#ifndef WEFT_TCP_INTERNAL_CLOSING_H_
#define WEFT_TCP_INTERNAL_CLOSING_H_

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "fabric/clock.h"
#include "net/socket.h"
#include "net/stream.h"

namespace weft::tcp::internal {

class ClosingConnection {
 public:
  // How long a closing connection waits for the peer's end of stream.
  static constexpr TimeNs kClosingNs = 1000 * kNsPerMs;

  // `out`: the bytes still to write before the end of stream (the rest
  // of a message the endpoint was writing, then its goodbye).
  ClosingConnection(net::Socket socket, std::vector<uint8_t> out,
                    TimeNs until_ns)
      : socket_(std::move(socket)), out_(std::move(out)), until_ns_(until_ns) {}

  // Writes and reads what it can now, without blocking; true once it has
  // closed (the peer's end of stream or an error). Past until_ns() the
  // caller closes it anyway.
  bool pump();
  // The socket and the events that would let pump() move.
  pollfd wanted() const;
  TimeNs until_ns() const { return until_ns_; }

 private:
  net::Socket socket_;
  std::vector<uint8_t> out_;
  size_t written_ = 0;
  bool shut_ = false;  // the writing half is shut down
  TimeNs until_ns_;
};

}  // namespace weft::tcp::internal

#endif  // WEFT_TCP_INTERNAL_CLOSING_H_
