#include "rendezvous/internal/message_reader.h"

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <span>

#include "absl/strings/str_format.h"
#include "net/stream.h"

namespace weft::rendezvous::internal {
namespace {

absl::StatusOr<size_t> receive_some(int fd, std::span<uint8_t> into) {
  return net::receive_some(fd, std::as_writable_bytes(into));
}

}  // namespace

absl::StatusOr<bool> MessageReader::pump_header(int fd) {
  while (header_filled_ < kWireHeaderBytes) {
    absl::StatusOr<size_t> n =
        receive_some(fd, std::span(header_bytes_).subspan(header_filled_));
    if (!n.ok()) return n.status();
    if (*n == 0) return false;
    header_filled_ += *n;
    spoke_weft_ =
        has_wire_magic(std::span(header_bytes_).first(header_filled_));
  }
  absl::StatusOr<WireHeader> header = decode_header(header_bytes_);
  if (!header.ok()) return header.status();
  header_ = *header;
  header_done_ = true;
  body_.assign(header_.body_bytes, 0);
  return true;
}

absl::StatusOr<bool> MessageReader::pump_body(int fd) {
  while (body_filled_ < body_.size()) {
    absl::StatusOr<size_t> n =
        receive_some(fd, std::span(body_).subspan(body_filled_));
    if (!n.ok()) return n.status();
    if (*n == 0) return false;
    body_filled_ += *n;
  }
  return true;
}

absl::StatusOr<bool> MessageReader::pump(int fd) {
  absl::StatusOr<bool> done = header_done_ ? true : pump_header(fd);
  if (done.ok() && *done) done = pump_body(fd);
  const size_t got = header_filled_ + body_filled_;
  if (!done.ok() && absl::IsUnavailable(done.status()) && got > 0) {
    return absl::UnavailableError(absl::StrFormat(
        "%s in the middle of a message, after %u of its %u bytes",
        done.status().message(), got,
        header_done_ ? kWireHeaderBytes + body_.size() : kWireHeaderBytes));
  }
  return done;
}

void MessageReader::reset() {
  header_filled_ = 0;
  header_done_ = false;
  body_.clear();
  body_filled_ = 0;
}

absl::Status receive_message(int fd, MessageReader& reader, TimeNs deadline_ns,
                             const Clock& clock) {
  while (true) {
    absl::StatusOr<bool> done = reader.pump(fd);
    if (!done.ok()) return done.status();
    if (*done) return absl::OkStatus();
    pollfd p{fd, POLLIN, 0};
    if (absl::Status st = net::poll_until({&p, 1}, deadline_ns, clock);
        !st.ok()) {
      return st;
    }
  }
}

}  // namespace weft::rendezvous::internal
