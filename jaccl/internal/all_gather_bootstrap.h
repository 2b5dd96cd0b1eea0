// A weft::Bootstrap over a JACCL AllGatherFn (Config::set_all_gather or a
// factory): the side channel of a program that brings its own (MPI, a
// launcher's store, threads in one process).
//
// A blob exchange is two calls of the function: every rank's length (an
// 8-byte count), then every rank's blob padded to the longest. Limits a
// user function cannot give: the timeout is not enforced (the call blocks
// for as long as the function does), and check_alive() is always OK (the
// function says nothing about which peers live); the group's own deadlines
// still end its operations.
#ifndef WEFT_JACCL_INTERNAL_ALL_GATHER_BOOTSTRAP_H_
#define WEFT_JACCL_INTERNAL_ALL_GATHER_BOOTSTRAP_H_

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/bootstrap.h"
#include "fabric/clock.h"
#include "jaccl/rdma.h"

namespace jaccl::internal {

class AllGatherBootstrap final : public weft::Bootstrap {
 public:
  // REQUIRES: rank < size, `all_gather` callable.
  AllGatherBootstrap(uint32_t rank, uint32_t size, AllGatherFn all_gather);

  uint32_t rank() const override { return rank_; }
  uint32_t size() const override { return size_; }

  // InvalidArgument when mine.size() > kMaxBlobBytes (nothing is called);
  // DataLoss when a rank's length is past kMaxBlobBytes (the ranks did not
  // call the function in the same order); Unavailable when the function
  // throws, with its message. `timeout_ns` is not enforced.
  absl::StatusOr<std::vector<std::vector<uint8_t>>> all_gather(
      std::span<const uint8_t> mine, weft::TimeNs timeout_ns) override;

  absl::Status check_alive() override { return absl::OkStatus(); }

 private:
  // The user function, its exceptions as Unavailable.
  absl::Status call(const void* src, void* dst, size_t n_bytes);

  uint32_t rank_;
  uint32_t size_;
  AllGatherFn all_gather_;
};

}  // namespace jaccl::internal

#endif  // WEFT_JACCL_INTERNAL_ALL_GATHER_BOOTSTRAP_H_
