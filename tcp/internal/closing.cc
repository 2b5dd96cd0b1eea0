#include "tcp/internal/closing.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <cstddef>

namespace weft::tcp::internal {

bool ClosingConnection::pump() {
  if (!socket_.valid()) return true;
  while (written_ < out_.size()) {
    const iovec part{out_.data() + written_, out_.size() - written_};
    const int64_t n = net::write_some(socket_.fd(), {&part, 1});
    if (n == 0) return false;  // the socket buffer is full
    if (n < 0) {               // reset or closed: nothing left to save
      socket_.close();
      return true;
    }
    written_ += static_cast<size_t>(n);
  }
  if (!shut_) {
    (void)::shutdown(socket_.fd(), SHUT_WR);
    shut_ = true;
  }
  std::array<std::byte, 16 * 1024> discard;
  for (;;) {
    const int64_t n = net::read_some(socket_.fd(), discard);
    if (n == -EAGAIN) return false;
    if (n <= 0) {  // the peer's end of stream (or a reset): done
      socket_.close();
      return true;
    }
  }
}

pollfd ClosingConnection::wanted() const {
  pollfd p{};
  p.fd = socket_.valid() ? socket_.fd() : -1;
  p.events = written_ < out_.size() ? POLLOUT : POLLIN;
  return p;
}

}  // namespace weft::tcp::internal
