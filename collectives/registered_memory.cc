#include "collectives/registered_memory.h"

#include <utility>

#include "collectives/engine/user_memory.h"

namespace weft {

RegisteredMemory::RegisteredMemory(
    std::shared_ptr<collectives::internal::UserMemory> memory, uint64_t id,
    std::span<std::byte> bytes)
    : memory_(std::move(memory)), id_(id), bytes_(bytes) {}

RegisteredMemory::RegisteredMemory(RegisteredMemory&& other) noexcept
    : memory_(std::move(other.memory_)),
      id_(other.id_),
      bytes_(std::exchange(other.bytes_, {})) {}

RegisteredMemory& RegisteredMemory::operator=(
    RegisteredMemory&& other) noexcept {
  if (this != &other) {
    reset();
    memory_ = std::move(other.memory_);
    id_ = other.id_;
    bytes_ = std::exchange(other.bytes_, {});
  }
  return *this;
}

bool RegisteredMemory::registered() const {
  return memory_ != nullptr && memory_->holds(id_);
}

void RegisteredMemory::reset() {
  if (memory_ != nullptr) memory_->release(id_);
  memory_.reset();
  bytes_ = {};
}

}  // namespace weft
