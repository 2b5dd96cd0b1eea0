#include "net/socket.h"

#include <unistd.h>

namespace weft::net {

Socket& Socket::operator=(Socket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.release();
  }
  return *this;
}

void Socket::close() {
  // No retry on EINTR: the descriptor is released either way.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace weft::net
