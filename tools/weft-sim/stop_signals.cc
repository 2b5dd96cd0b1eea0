#include "tools/weft-sim/stop_signals.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include "fabric/assert.h"

namespace weft::tools::weft_sim {
namespace {

// What the handler may touch: a sig_atomic_t and a file descriptor.
volatile std::sig_atomic_t g_received = 0;
volatile std::sig_atomic_t g_write_fd = -1;
bool g_installed = false;

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGPIPE};
struct sigaction g_previous[sizeof(kSignals) / sizeof(kSignals[0])];

void on_signal(int signal) {
  if (g_received == 0) g_received = signal;
  const int saved = errno;
  const char byte = 1;
  // Full or closed: the loop wakes either way (the flag is what counts).
  if (g_write_fd >= 0) (void)!::write(g_write_fd, &byte, 1);
  errno = saved;
}

void set_flags(int fd, int fd_flags, int status_flags) {
  ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | fd_flags);
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | status_flags);
}

}  // namespace

StopSignals::StopSignals() {
  WEFT_ASSERT(!g_installed, "one StopSignals at a time");
  g_installed = true;
  g_received = 0;
  int fds[2] = {-1, -1};
  if (::pipe(fds) == 0) {
    // The ranks a launcher starts must not inherit it.
    set_flags(fds[0], FD_CLOEXEC, O_NONBLOCK);
    set_flags(fds[1], FD_CLOEXEC, O_NONBLOCK);
    read_fd_ = fds[0];
    write_fd_ = fds[1];
  }
  g_write_fd = write_fd_;
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    // A second interrupt or termination request acts as usual; every
    // write to a closed stdout raises SIGPIPE again, which must not kill.
    action.sa_flags = kSignals[i] == SIGPIPE ? 0 : SA_RESETHAND;
    ::sigaction(kSignals[i], &action, &g_previous[i]);
  }
}

StopSignals::~StopSignals() {
  for (size_t i = 0; i < sizeof(kSignals) / sizeof(kSignals[0]); ++i) {
    ::sigaction(kSignals[i], &g_previous[i], nullptr);
  }
  g_write_fd = -1;
  if (read_fd_ >= 0) ::close(read_fd_);
  if (write_fd_ >= 0) ::close(write_fd_);
  g_installed = false;
}

int StopSignals::received() { return g_received; }

int StopSignals::exit_code() { return 128 + g_received; }

bool StopSignals::quiet() { return g_received == SIGPIPE; }

const char* StopSignals::name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return "a signal";
  }
}

}  // namespace weft::tools::weft_sim
