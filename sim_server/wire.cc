#include "sim_server/wire.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

namespace weft::sim_server {
namespace {

using Clock = std::chrono::steady_clock;

int millis_until(WallDeadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(left.count()) + 1;
}

// Waits until `fd` is ready for `events`; false at the deadline.
bool wait_ready(int fd, short events, WallDeadline deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, millis_until(deadline));
    if (n > 0) return true;
    if (n == 0 || (n < 0 && errno != EINTR)) return false;
  }
}

bool known_type(uint32_t type) {
  return type >= static_cast<uint32_t>(MsgType::kHello) &&
         type <= static_cast<uint32_t>(MsgType::kFatal);
}

}  // namespace

const char* msg_type_name(MsgType type) {
  switch (type) {
    case MsgType::kHello:
      return "hello";
    case MsgType::kWelcome:
      return "welcome";
    case MsgType::kOpen:
      return "open";
    case MsgType::kOpened:
      return "opened";
    case MsgType::kConnect:
      return "connect";
    case MsgType::kPostSend:
      return "post_send";
    case MsgType::kPostRecv:
      return "post_recv";
    case MsgType::kClose:
      return "close";
    case MsgType::kWait:
      return "wait";
    case MsgType::kStep:
      return "step";
    case MsgType::kQuery:
      return "query";
    case MsgType::kAnswer:
      return "answer";
    case MsgType::kRegisterSlab:
      return "register_slab";
    case MsgType::kRegisterRegion:
      return "register_region";
    case MsgType::kUnregisterRegion:
      return "unregister_region";
    case MsgType::kMoveToError:
      return "move_to_error";
    case MsgType::kDrainRing:
      return "drain_ring";
    case MsgType::kFatal:
      return "fatal";
  }
  return "unknown";
}

absl::Status write_message(int fd, MsgType type,
                           std::span<const std::span<const std::byte>> parts,
                           WallDeadline deadline, int pass_fd) {
  Header header;
  header.type = static_cast<uint32_t>(type);
  for (const auto& p : parts) header.bytes += p.size();
  std::vector<iovec> iov;
  iov.reserve(parts.size() + 1);
  iov.push_back({&header, sizeof(header)});
  for (const auto& p : parts) {
    if (!p.empty()) iov.push_back({const_cast<std::byte*>(p.data()), p.size()});
  }
  size_t first = 0;
  while (first < iov.size()) {
    msghdr msg{};
    msg.msg_iov = iov.data() + first;
    msg.msg_iovlen = std::min<size_t>(iov.size() - first, IOV_MAX);
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (pass_fd >= 0) {
      msg.msg_control = control;
      msg.msg_controllen = sizeof(control);
      cmsghdr* c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int));
      std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
    }
    const ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n > 0) pass_fd = -1;  // it went with the first bytes
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        if (!wait_ready(fd, POLLOUT, deadline)) {
          return absl::DeadlineExceededError(
              "the other end of the simulation socket stopped reading");
        }
        continue;
      }
      return absl::UnavailableError(absl::StrFormat(
          "the other end of the simulation socket has gone (%s)",
          std::strerror(errno)));
    }
    size_t done = static_cast<size_t>(n);
    while (first < iov.size() && done >= iov[first].iov_len) {
      done -= iov[first].iov_len;
      ++first;
    }
    if (first < iov.size()) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
      iov[first].iov_len -= done;
    }
  }
  return absl::OkStatus();
}

absl::Status MessageReader::fill(int fd, bool* closed) {
  *closed = false;
  constexpr size_t kChunk = 1 << 16;
  // Drop what has been consumed, so a client that keeps a message pending
  // cannot make the buffer grow for ever.
  if (start_ > 0) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + start_);
    start_ = 0;
  }
  for (;;) {
    const size_t old = buffer_.size();
    // Read a whole announced body at once when one is pending.
    size_t want = kChunk;
    if (pending() >= sizeof(Header)) {
      Header h;
      std::memcpy(&h, buffer_.data() + start_, sizeof(h));
      const size_t whole = sizeof(Header) + h.bytes;
      if (h.bytes <= kMaxBodyBytes && whole > pending()) {
        want = std::max(kChunk, whole - pending());
      }
    }
    buffer_.resize(old + want);
    iovec iov{buffer_.data() + old, want};
    alignas(cmsghdr) char control[CMSG_SPACE(4 * sizeof(int))];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    const ssize_t n = ::recvmsg(fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n > 0 && (msg.msg_flags & MSG_CTRUNC) != 0) {
      return absl::InvalidArgumentError(
          "more file descriptors with one message than the protocol passes");
    }
    for (cmsghdr* c = n > 0 ? CMSG_FIRSTHDR(&msg) : nullptr; c != nullptr;
         c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int received = -1;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        fds_.push_back(received);
      }
    }
    if (n <= 0) {
      buffer_.resize(old);
      if (n == 0) {
        *closed = true;
        return check_header();
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return check_header();
      *closed = true;
      return absl::OkStatus();
    }
    buffer_.resize(old + static_cast<size_t>(n));
    if (static_cast<size_t>(n) < want) return check_header();
  }
}

MessageReader::MessageReader(MessageReader&& other) noexcept
    : buffer_(std::move(other.buffer_)),
      start_(other.start_),
      fds_(std::move(other.fds_)) {
  other.fds_.clear();
  other.start_ = 0;
}

MessageReader& MessageReader::operator=(MessageReader&& other) noexcept {
  if (this != &other) {
    for (int f : fds_) ::close(f);
    buffer_ = std::move(other.buffer_);
    start_ = other.start_;
    fds_ = std::move(other.fds_);
    other.fds_.clear();
    other.start_ = 0;
  }
  return *this;
}

MessageReader::~MessageReader() {
  for (int f : fds_) ::close(f);
}

void MessageReader::close_fds() {
  for (int f : fds_) ::close(f);
  fds_.clear();
}

int MessageReader::take_fd() {
  if (fds_.empty()) return -1;
  const int f = fds_.front();
  fds_.erase(fds_.begin());
  return f;
}

absl::Status MessageReader::check_header() {
  if (pending() < sizeof(Header)) return absl::OkStatus();
  Header h;
  std::memcpy(&h, buffer_.data() + start_, sizeof(h));
  if (h.magic != kMagic) {
    return absl::InvalidArgumentError(
        "not a weft simulation client (bad magic number)");
  }
  if (!known_type(h.type)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown message type %u", h.type));
  }
  if (h.bytes > kMaxBodyBytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a message of %u bytes is longer than the protocol allows", h.bytes));
  }
  return absl::OkStatus();
}

std::optional<Message> MessageReader::next() {
  if (pending() < sizeof(Header)) return std::nullopt;
  Header h;
  std::memcpy(&h, buffer_.data() + start_, sizeof(h));
  if (h.magic != kMagic || !known_type(h.type) || h.bytes > kMaxBodyBytes ||
      pending() - sizeof(Header) < h.bytes) {
    return std::nullopt;
  }
  Message m;
  m.type = static_cast<MsgType>(h.type);
  const std::byte* body = buffer_.data() + start_ + sizeof(Header);
  m.body.assign(body, body + h.bytes);
  start_ += sizeof(Header) + h.bytes;
  return m;
}

absl::StatusOr<Message> read_message(int fd, MessageReader& reader,
                                     WallDeadline deadline) {
  for (;;) {
    if (std::optional<Message> m = reader.next()) return *std::move(m);
    if (!wait_ready(fd, POLLIN, deadline)) {
      return absl::DeadlineExceededError(
          "no answer from the simulation server before the deadline");
    }
    bool closed = false;
    if (absl::Status s = reader.fill(fd, &closed); !s.ok()) return s;
    if (std::optional<Message> m = reader.next()) return *std::move(m);
    if (closed) {
      return absl::UnavailableError(
          "the simulation server closed the connection");
    }
  }
}

}  // namespace weft::sim_server
