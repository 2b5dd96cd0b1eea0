#include "tcp/internal/poller.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"

#if defined(__linux__)
#include <sys/epoll.h>
#endif

namespace weft::tcp::internal {
namespace {

// poll(2) and epoll_wait(2) take milliseconds: a wait rounds up to whole
// ones, so it never returns before a timer the caller waits for is due.
int timeout_ms(TimeNs timeout_ns) {
  return static_cast<int>((std::max<TimeNs>(timeout_ns, 0) + kNsPerMs - 1) /
                          kNsPerMs);
}

// The portable baseline: the interest set is passed in on every wait.
class PollPoller final : public Poller {
 public:
  PollerKind kind() const override { return PollerKind::kPoll; }
  void want(int fd, short events, bool) override {
    fds_.push_back({fd, events, 0});
  }
  void forget(int) override {}
  std::span<const int> wait(TimeNs timeout_ns) override {
    ready_.clear();
    const int n = ::poll(fds_.data(), fds_.size(), timeout_ms(timeout_ns));
    for (size_t i = 0; n > 0 && i < fds_.size(); ++i) {
      if (fds_[i].revents != 0) ready_.push_back(fds_[i].fd);
    }
    fds_.clear();
    return ready_;
  }

 private:
  std::vector<pollfd> fds_;
  std::vector<int> ready_;
};

#if defined(__linux__)
// Linux: the interest set lives in the kernel; a wait passes nothing in,
// and only a change of a lasting socket's events costs an epoll_ctl.
class EpollPoller final : public Poller {
 public:
  explicit EpollPoller(int epoll_fd) : epoll_fd_(epoll_fd) {}
  ~EpollPoller() override { ::close(epoll_fd_); }

  PollerKind kind() const override { return PollerKind::kEpoll; }

  void want(int fd, short events, bool lasting) override {
    const uint32_t want = to_epoll(events);
    if (!lasting) {
      control(EPOLL_CTL_ADD, fd, want);
      passing_.push_back(fd);
      return;
    }
    auto [it, added] = kept_.try_emplace(fd, Kept{want, round_});
    if (added) {
      control(EPOLL_CTL_ADD, fd, want);
    } else if (it->second.events != want) {
      control(EPOLL_CTL_MOD, fd, want);
      it->second.events = want;
    }
    it->second.round = round_;
  }

  void forget(int fd) override {
    if (kept_.erase(fd) > 0) control(EPOLL_CTL_DEL, fd, 0);
  }

  std::span<const int> wait(TimeNs timeout_ns) override {
    // A lasting socket not wanted this round (its endpoint failed) must
    // not wake later waits.
    for (auto it = kept_.begin(); it != kept_.end();) {
      if (it->second.round == round_) {
        ++it;
        continue;
      }
      control(EPOLL_CTL_DEL, it->first, 0);
      it = kept_.erase(it);
    }
    ++round_;
    events_.resize(std::max<size_t>(kept_.size() + passing_.size(), 1));
    int n;
    do {
      n = ::epoll_wait(epoll_fd_, events_.data(),
                       static_cast<int>(events_.size()),
                       timeout_ms(timeout_ns));
    } while (n < 0 && errno == EINTR);
    ready_.clear();
    for (int i = 0; i < n; ++i) ready_.push_back(events_[i].data.fd);
    for (int fd : passing_) control(EPOLL_CTL_DEL, fd, 0);
    passing_.clear();
    return ready_;
  }

 private:
  struct Kept {
    uint32_t events;
    uint64_t round;  // the last wait it was wanted for
  };

  static uint32_t to_epoll(short events) {
    return ((events & POLLIN) != 0 ? uint32_t{EPOLLIN} : 0) |
           ((events & POLLOUT) != 0 ? uint32_t{EPOLLOUT} : 0);
  }
  // A failure (the socket closed under it) leaves the socket out of the
  // wait; its owner sees the error on its next read or write.
  void control(int op, int fd, uint32_t events) {
    epoll_event e{};
    e.events = events;
    e.data.fd = fd;
    (void)::epoll_ctl(epoll_fd_, op, fd, &e);
  }

  const int epoll_fd_;
  std::unordered_map<int, Kept> kept_;
  std::vector<int> passing_;
  uint64_t round_ = 0;
  std::vector<epoll_event> events_;
  std::vector<int> ready_;
};
#endif

}  // namespace

absl::StatusOr<std::unique_ptr<Poller>> Poller::create(PollerKind kind) {
  if (kind == PollerKind::kDefault) kind = kDefaultPoller;
  if (kind == PollerKind::kPoll) return std::make_unique<PollPoller>();
#if defined(__linux__)
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) {
    return absl::ResourceExhaustedError(
        "creating an epoll instance failed; raise the open file limit "
        "(ulimit -n), or choose the poll progress loop");
  }
  return std::make_unique<EpollPoller>(fd);
#else
  return absl::UnimplementedError(
      "the epoll progress loop exists on Linux only; choose poll (the "
      "default here)");
#endif
}

}  // namespace weft::tcp::internal
