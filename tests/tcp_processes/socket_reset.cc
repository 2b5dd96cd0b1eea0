#include "tests/tcp_processes/socket_reset.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace weft::tcp_processes {
namespace {

// Descriptors looked at: far more than a rank of a small group holds.
constexpr int kMaxFd = 4096;

// "127.0.0.1:5000" or "[::1]:5000", as hostfiles write them; "" for other
// families.
std::string text_of(const sockaddr_storage& a) {
  char ip[INET6_ADDRSTRLEN] = {};
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    ::inet_ntop(AF_INET, &v4.sin_addr, ip, sizeof(ip));
    return absl::StrCat(ip, ":", ntohs(v4.sin_port));
  }
  if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    ::inet_ntop(AF_INET6, &v6.sin6_addr, ip, sizeof(ip));
    return absl::StrCat("[", ip, "]:", ntohs(v6.sin6_port));
  }
  return "";
}

bool is_stream(int fd) {
  int type = 0;
  socklen_t len = sizeof(type);
  return ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
         type == SOCK_STREAM;
}

}  // namespace

int reset_fabric_connections(
    const std::vector<std::vector<std::string>>& hosts) {
  std::set<std::string> fabric;
  for (const auto& rank : hosts) fabric.insert(rank.begin(), rank.end());
  const int null_fd = ::open("/dev/null", O_RDWR);
  if (null_fd < 0) return 0;
  int reset = 0;
  for (int fd = 0; fd < kMaxFd; ++fd) {
    if (fd == null_fd || !is_stream(fd)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) !=
            0 ||
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) {
      continue;  // not connected: a listener, or not a socket
    }
    if (fabric.count(text_of(local)) == 0 && fabric.count(text_of(peer)) == 0) {
      continue;  // the side channel, or another program's connection
    }
    const linger abort_on_close{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &abort_on_close,
                 sizeof(abort_on_close));
    // Closes the socket (sending the RST) and leaves /dev/null in its place.
    if (::dup2(null_fd, fd) == fd) ++reset;
  }
  ::close(null_fd);
  return reset;
}

}  // namespace weft::tcp_processes
