// RegisteredMemory: a caller's buffer registered with a group's fabric
// (Group::register_memory; NCCL's ncclCommRegister is the model), after
// which operations whose input or output lies wholly inside it send their
// payload straight from it, with no copy into weft's own frames. The
// caller owns the handle: destroying it (or reset()) ends the
// registration, at once or, while an operation using the memory is still
// queued or running, when that operation ends. The memory must stay valid
// until then; after a blocking call returns it is the caller's to change
// (frames still unacknowledged were copied aside when the call ended).
// When the group is destroyed, every registration still held ends with it
// and the handles left do nothing more. After a failed operation, memory
// whose handle is gone may stay registered until the group is destroyed
// (its sends or receives are still posted); registering it again before
// then is refused with FailedPrecondition.
//
// Move-only.
#ifndef WEFT_COLLECTIVES_REGISTERED_MEMORY_H_
#define WEFT_COLLECTIVES_REGISTERED_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace weft {

namespace collectives::internal {
class UserMemory;
}  // namespace collectives::internal

class RegisteredMemory {
 public:
  RegisteredMemory() = default;  // registers nothing
  RegisteredMemory(RegisteredMemory&& other) noexcept;
  RegisteredMemory& operator=(RegisteredMemory&& other) noexcept;
  RegisteredMemory(const RegisteredMemory&) = delete;
  RegisteredMemory& operator=(const RegisteredMemory&) = delete;
  ~RegisteredMemory() { reset(); }

  // The registered bytes (empty once reset or moved from).
  std::span<std::byte> bytes() const { return bytes_; }
  // False once reset, moved from, or the group is destroyed.
  bool registered() const;
  // Ends the registration (see above).
  void reset();

 private:
  friend class Group;
  RegisteredMemory(std::shared_ptr<collectives::internal::UserMemory> memory,
                   uint64_t id, std::span<std::byte> bytes);

  std::shared_ptr<collectives::internal::UserMemory> memory_;
  uint64_t id_ = 0;
  std::span<std::byte> bytes_;
};

}  // namespace weft

#endif  // WEFT_COLLECTIVES_REGISTERED_MEMORY_H_
