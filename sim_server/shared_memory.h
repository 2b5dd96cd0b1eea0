// Shared memory between a rank's process and the simulation server: the
// mappings (memfds passed over the socket) and the ring that carries a
// rank's posts to the server without a system call.
//
// A rank's slabs (where the simulated provider keeps its copies of
// registered memory) live in shared memory, so the server's world moves
// message bytes straight from the sender's slab into the receiver's: each
// side copies a payload once (user memory to its slab when it posts, slab
// to user memory when its receive completes), the server once (the wire).
#ifndef WEFT_SIM_SERVER_SHARED_MEMORY_H_
#define WEFT_SIM_SERVER_SHARED_MEMORY_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/slab.h"
#include "sim_server/protocol.h"
#include "sim_server/wire.h"

namespace weft::sim_server {

// A memfd of `bytes` (rounded up to whole pages, sealed at that size)
// mapped shared, as a slab that owns the mapping; *fd is the memfd (the
// caller closes it once it has passed it on).
absl::StatusOr<std::unique_ptr<Slab>> create_shared_slab(uint64_t bytes,
                                                         int* fd);
// Maps `bytes` of the memfd `fd` (another process's) shared. Checks that
// the file is that long and sealed against shrinking, so a client cannot
// make the server fault.
absl::StatusOr<std::unique_ptr<Slab>> map_shared_slab(int fd, uint64_t bytes);

// One producer, one consumer, in shared memory: protocol messages (Header
// and body, as on the socket) in a byte ring. The producer never blocks:
// when the ring is full it sends on the socket instead, which the consumer
// reads only after draining the ring, so order is kept.
class MessageRing {
 public:
  static constexpr uint64_t kDataBytes = uint64_t{1} << 20;
  // What a channel's memory holds: the indices, then the data.
  static constexpr uint64_t kMappingBytes = 2 * 64 + kDataBytes;

  // Over memory of kMappingBytes. `initialise`: the creator zeroes the
  // indices; the other side maps what the creator set up.
  MessageRing(std::byte* memory, bool initialise);

  // Producer: writes one message; false when it does not fit now.
  bool try_write(MsgType type,
                 std::span<const std::span<const std::byte>> parts);
  // Consumer: the next message, nullopt when none is complete; an error
  // for bytes that are no message (the producer broke the protocol).
  absl::StatusOr<std::optional<Message>> read();

 private:
  struct alignas(64) Index {
    std::atomic<uint64_t> value{0};
  };
  void copy_in(uint64_t at, std::span<const std::byte> bytes);
  void copy_out(uint64_t at, std::byte* out, uint64_t n) const;

  Index* head_;  // bytes written so far (the producer's)
  Index* tail_;  // bytes consumed so far (the consumer's)
  std::byte* data_;
};

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_SHARED_MEMORY_H_
