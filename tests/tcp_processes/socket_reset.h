// Resets a process's own TCP connections to or from given addresses, the
// way a crashing NIC driver or a middlebox does: SO_LINGER 0, then the
// socket is closed, so the kernel sends an RST instead of a FIN. The file
// descriptor stays open (on /dev/null), so the code that owned the socket
// reads an end of file instead of touching a reused descriptor. No
// LD_PRELOAD: the tcp_rank program finds the sockets by their addresses.
#ifndef WEFT_TESTS_TCP_PROCESSES_SOCKET_RESET_H_
#define WEFT_TESTS_TCP_PROCESSES_SOCKET_RESET_H_

#include <string>
#include <vector>

namespace weft::tcp_processes {

// Resets every connected TCP socket of this process whose local or remote
// address is one of `hosts` (a hostfile's "ip:port" lists, one per rank):
// the weft::tcp fabric's connections, not the side channel's. Returns how
// many.
int reset_fabric_connections(
    const std::vector<std::vector<std::string>>& hosts);

}  // namespace weft::tcp_processes

#endif  // WEFT_TESTS_TCP_PROCESSES_SOCKET_RESET_H_
