#include "jaccl/internal/weft_group.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "collectives/dtype.h"
#include "collectives/group.h"
#include "jaccl/weft.h"

namespace jaccl::internal {
namespace {

// JACCL's Dtype values are weft's DType values.
static_assert(static_cast<int>(weft::DType::kBool) == Bool);
static_assert(static_cast<int>(weft::DType::kInt8) == Int8);
static_assert(static_cast<int>(weft::DType::kInt16) == Int16);
static_assert(static_cast<int>(weft::DType::kInt32) == Int32);
static_assert(static_cast<int>(weft::DType::kInt64) == Int64);
static_assert(static_cast<int>(weft::DType::kUint8) == UInt8);
static_assert(static_cast<int>(weft::DType::kUint16) == UInt16);
static_assert(static_cast<int>(weft::DType::kUint32) == UInt32);
static_assert(static_cast<int>(weft::DType::kUint64) == UInt64);
static_assert(static_cast<int>(weft::DType::kFloat16) == Float16);
static_assert(static_cast<int>(weft::DType::kBFloat16) == BFloat16);
static_assert(static_cast<int>(weft::DType::kFloat32) == Float32);
static_assert(static_cast<int>(weft::DType::kFloat64) == Float64);
static_assert(static_cast<int>(weft::DType::kComplex64) == Complex64);
static_assert(weft::kDTypeCount == Complex64 + 1);

// A bad argument: nothing was sent and the group stays usable.
[[noreturn]] void refuse(const char* op_name, int rank,
                         const std::string& why) {
  throw std::runtime_error(absl::StrFormat(
      "[jaccl] %s on rank %d: %s; nothing was sent and the group is still "
      "usable",
      op_name, rank, why));
}

void raise_if_failed(const char* op_name, const absl::Status& status) {
  if (status.ok()) return;
  throw std::runtime_error(
      absl::StrFormat("[jaccl] %s failed: %s (%s)", op_name, status.message(),
                      absl::StatusCodeToString(status.code())));
}

// `dtype` as weft's, checked to be one and to divide `n_bytes`.
weft::DType checked_dtype(const char* op_name, int rank, int dtype,
                          size_t n_bytes) {
  if (dtype < 0 || dtype >= weft::kDTypeCount) {
    refuse(op_name, rank,
           absl::StrFormat("dtype %d is not a jaccl::Dtype (0 to %d)", dtype,
                           weft::kDTypeCount - 1));
  }
  const auto type = static_cast<weft::DType>(dtype);
  const size_t element = weft::dtype_size(type);
  if (n_bytes % element != 0) {
    refuse(op_name, rank,
           absl::StrFormat("n_bytes = %u is not a whole number of %s "
                           "elements (%u bytes each); pass a multiple of %u",
                           n_bytes, weft::dtype_name(type), element, element));
  }
  return type;
}

void check_buffer(const char* op_name, int rank, const char* which,
                  const void* p, size_t n_bytes) {
  if (p == nullptr && n_bytes > 0) {
    refuse(op_name, rank,
           absl::StrFormat("%s is null but n_bytes = %u", which, n_bytes));
  }
}

weft::ConstBytes in_bytes(const void* p, size_t n) {
  return {static_cast<const std::byte*>(p), p == nullptr ? 0 : n};
}
weft::Bytes out_bytes(void* p, size_t n) {
  return {static_cast<std::byte*>(p), p == nullptr ? 0 : n};
}

}  // namespace

WeftGroup::WeftGroup(std::unique_ptr<weft::ProcessGroup> process_group)
    : process_group_(std::move(process_group)) {}

WeftGroup::~WeftGroup() = default;

int WeftGroup::rank() {
  return static_cast<int>(process_group_->group().rank());
}

int WeftGroup::size() {
  return static_cast<int>(process_group_->group().size());
}

void WeftGroup::all_reduce(const char* op_name, const void* input, void* output,
                           size_t n_bytes, int dtype, weft::ReduceOp op) {
  const weft::DType type = checked_dtype(op_name, rank(), dtype, n_bytes);
  check_buffer(op_name, rank(), "input", input, n_bytes);
  check_buffer(op_name, rank(), "output", output, n_bytes);
  raise_if_failed(op_name, process_group_->group().all_reduce(
                               in_bytes(input, n_bytes),
                               out_bytes(output, n_bytes), type, op));
}

void WeftGroup::all_sum(const void* input, void* output, size_t n_bytes,
                        int dtype) {
  all_reduce("all_sum", input, output, n_bytes, dtype, weft::ReduceOp::kSum);
}

void WeftGroup::all_max(const void* input, void* output, size_t n_bytes,
                        int dtype) {
  all_reduce("all_max", input, output, n_bytes, dtype, weft::ReduceOp::kMax);
}

void WeftGroup::all_min(const void* input, void* output, size_t n_bytes,
                        int dtype) {
  all_reduce("all_min", input, output, n_bytes, dtype, weft::ReduceOp::kMin);
}

void WeftGroup::all_gather(const void* input, void* output, size_t n_bytes) {
  const auto n = static_cast<size_t>(size());
  if (n_bytes > std::numeric_limits<size_t>::max() / n) {
    refuse("all_gather", rank(),
           absl::StrFormat("n_bytes = %u times %u ranks does "
                           "not fit in memory",
                           n_bytes, n));
  }
  check_buffer("all_gather", rank(), "input", input, n_bytes);
  check_buffer("all_gather", rank(), "output", output, n * n_bytes);
  raise_if_failed("all_gather",
                  process_group_->group().all_gather(
                      in_bytes(input, n_bytes), out_bytes(output, n * n_bytes),
                      weft::DType::kUint8));
}

void WeftGroup::sum_scatter(const void* input, void* output, size_t n_bytes,
                            int dtype) {
  const weft::DType type = checked_dtype("sum_scatter", rank(), dtype, n_bytes);
  const auto n = static_cast<size_t>(size());
  if (n_bytes > std::numeric_limits<size_t>::max() / n) {
    refuse("sum_scatter", rank(),
           absl::StrFormat("n_bytes = %u times %u ranks does "
                           "not fit in memory",
                           n_bytes, n));
  }
  check_buffer("sum_scatter", rank(), "input", input, n * n_bytes);
  check_buffer("sum_scatter", rank(), "output", output, n_bytes);
  raise_if_failed("sum_scatter", process_group_->group().sum_scatter(
                                     in_bytes(input, n * n_bytes),
                                     out_bytes(output, n_bytes), type));
}

void WeftGroup::check_peer(const char* op_name, const char* role, int peer) {
  if (peer < 0 || peer >= size() || peer == rank()) {
    refuse(op_name, rank(),
           absl::StrFormat("%s = %d is not another rank of this group of %d",
                           role, peer, size()));
  }
}

void WeftGroup::send(const void* input, size_t n_bytes, int dst) {
  check_peer("send", "dst", dst);
  check_buffer("send", rank(), "input", input, n_bytes);
  raise_if_failed("send", process_group_->group().send(
                              in_bytes(input, n_bytes), weft::DType::kUint8,
                              static_cast<uint32_t>(dst)));
}

void WeftGroup::recv(void* output, size_t n_bytes, int src) {
  check_peer("recv", "src", src);
  check_buffer("recv", rank(), "output", output, n_bytes);
  raise_if_failed("recv", process_group_->group().recv(
                              out_bytes(output, n_bytes), weft::DType::kUint8,
                              static_cast<uint32_t>(src)));
}

void WeftGroup::barrier() {
  raise_if_failed("barrier", process_group_->group().barrier());
}

}  // namespace jaccl::internal

namespace jaccl {

weft::ProcessGroup* weft_process_group(Group& group) {
  auto* weft_group = dynamic_cast<internal::WeftGroup*>(&group);
  return weft_group == nullptr ? nullptr : &weft_group->process_group();
}

}  // namespace jaccl
