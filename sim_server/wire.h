// Moving protocol messages (protocol.h) over a stream socket: writing one
// message as one gathered write, reading them back whole, with deadlines.
// Both the server and its clients use it.
#ifndef WEFT_SIM_SERVER_WIRE_H_
#define WEFT_SIM_SERVER_WIRE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim_server/protocol.h"

namespace weft::sim_server {

using WallDeadline = std::chrono::steady_clock::time_point;

struct Message {
  MsgType type = MsgType::kHello;
  std::vector<std::byte> body;

  // The body's fixed structure, and what follows it; nullopt/empty when
  // the body is too short for it.
  template <typename T>
  std::optional<T> fixed() const {
    static_assert(std::is_trivially_copyable_v<T>);
    if (body.size() < sizeof(T)) return std::nullopt;
    T out;
    std::memcpy(&out, body.data(), sizeof(T));
    return out;
  }
  template <typename T>
  std::span<const std::byte> tail() const {
    if (body.size() < sizeof(T)) return {};
    return std::span<const std::byte>(body).subspan(sizeof(T));
  }
};

// The bytes of a trivially copyable structure.
template <typename T>
std::span<const std::byte> bytes_of(const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  return {reinterpret_cast<const std::byte*>(&value), sizeof(T)};
}

// Writes one message whose body is `parts` in order, all of it, waiting for
// room until `deadline`; with `pass_fd` >= 0, that file descriptor travels
// with it (SCM_RIGHTS). Unavailable when the peer has gone,
// DeadlineExceeded when it stopped reading.
absl::Status write_message(int fd, MsgType type,
                           std::span<const std::span<const std::byte>> parts,
                           WallDeadline deadline, int pass_fd = -1);

// Accumulates bytes read from a non-blocking socket and cuts them into
// messages.
class MessageReader {
 public:
  MessageReader() = default;
  MessageReader(MessageReader&& other) noexcept;
  MessageReader& operator=(MessageReader&& other) noexcept;
  ~MessageReader();

  // Reads what the socket has. OK with *closed set when the peer closed;
  // an error for a malformed header (bad magic, an unknown type, a body
  // over kMaxBodyBytes).
  absl::Status fill(int fd, bool* closed);
  // The next whole message, if one has arrived.
  std::optional<Message> next();
  // Bytes held that do not yet make a message.
  size_t pending() const { return buffer_.size() - start_; }
  // The oldest file descriptor that arrived with the bytes read, or -1;
  // the caller owns it.
  int take_fd();
  // Closes the file descriptors received and not taken.
  void close_fds();

 private:
  absl::Status check_header();
  std::vector<std::byte> buffer_;
  size_t start_ = 0;
  std::vector<int> fds_;  // received, not yet taken
};

// The next message on socket `fd` (read through `reader`, which keeps what
// arrived after it), waiting until `deadline`.
absl::StatusOr<Message> read_message(int fd, MessageReader& reader,
                                     WallDeadline deadline);

// "kStep" etc., for errors.
const char* msg_type_name(MsgType type);

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_WIRE_H_
