// Socket: a file descriptor (a socket's, usually) owned once and closed
// once, for every part of weft that speaks TCP: the side channel, the TCP
// fabric and the benchmarks (net/stream.h makes and uses them).
#ifndef WEFT_NET_SOCKET_H_
#define WEFT_NET_SOCKET_H_

#include <utility>

namespace weft::net {

class Socket {
 public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept : fd_(other.release()) {}
  Socket& operator=(Socket&& other) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() { close(); }

  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void close();
  // Gives up ownership: the caller closes the descriptor.
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

}  // namespace weft::net

#endif  // WEFT_NET_SOCKET_H_
