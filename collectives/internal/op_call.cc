#include "collectives/internal/op_call.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"

namespace weft::collectives::internal {
namespace {

class Checker {
 public:
  Checker(const OpCall& call, uint32_t world_rank)
      : call_(call), world_rank_(world_rank) {}

  absl::Status fail(const std::string& what) const {
    return make_error(
        absl::StatusCode::kInvalidArgument,
        ErrorPlace{world_rank_, kNoPeer, "", ErrorCause::kBadInput},
        absl::StrFormat("%s: %s; nothing was sent and the group is still "
                        "usable",
                        op_kind_name(call_.kind, call_.op), what));
  }

  absl::Status buffer(const char* name, const void* data, size_t bytes,
                      size_t elem) const {
    if (data == nullptr && bytes > 0) {
      return fail(absl::StrFormat("the %s buffer is null but has %u bytes",
                                  name, bytes));
    }
    if (bytes % elem != 0) {
      return fail(absl::StrFormat(
          "the %s buffer has %u bytes, not a multiple of %s's %u bytes", name,
          bytes, dtype_name(call_.dtype), elem));
    }
    return absl::OkStatus();
  }

  // OK when in and out do not overlap, or when `exact` says the input sits
  // exactly where an in-place call keeps it (then *in_place).
  absl::Status overlap(bool exact, bool* in_place) const {
    const auto* in = call_.in.data();
    const auto* out = call_.out.data();
    *in_place = exact && !call_.in.empty() && !call_.out.empty();
    if (*in_place || call_.in.empty() || call_.out.empty())
      return absl::OkStatus();
    const bool disjoint =
        in + call_.in.size() <= out || out + call_.out.size() <= in;
    if (disjoint) return absl::OkStatus();
    return fail(
        "the input and output buffers overlap but the call is not "
        "in place (see Group's header for where an in-place input "
        "must sit)");
  }

 private:
  const OpCall& call_;
  uint32_t world_rank_;
};

absl::Status check_sizes(const Checker& c, const OpCall& call, uint32_t rank,
                         uint32_t size, PlanInput* p) {
  const uint64_t in = call.in.size();
  const uint64_t out = call.out.size();
  const bool root = rank == call.root;
  switch (call.kind) {
    case OpKind::kAllReduce:
    case OpKind::kAllToAll:
      if (in != out) {
        return c.fail(
            absl::StrFormat("input has %u bytes, output %u; they must "
                            "be equal",
                            in, out));
      }
      if (call.kind == OpKind::kAllToAll &&
          in % (uint64_t{size} * p->elem) != 0) {
        return c.fail(absl::StrFormat(
            "%u bytes do not split into %u equal blocks of whole %s elements",
            in, size, dtype_name(call.dtype)));
      }
      p->bytes = in;
      return c.overlap(call.in.data() == call.out.data(), &p->in_place);
    case OpKind::kAllGather:
      if (out != uint64_t{size} * in) {
        return c.fail(
            absl::StrFormat("output has %u bytes; it must be group "
                            "size %u times the input's %u",
                            out, size, in));
      }
      p->bytes = in;
      return c.overlap(call.in.data() == call.out.data() + rank * in,
                       &p->in_place);
    case OpKind::kReduceScatter: {
      if (in != uint64_t{size} * out) {
        return c.fail(
            absl::StrFormat("input has %u bytes; it must be group "
                            "size %u times the output's %u",
                            in, size, out));
      }
      p->bytes = out;
      return c.overlap(call.out.data() == call.in.data() + rank * out,
                       &p->in_place);
    }
    case OpKind::kBroadcast:
    case OpKind::kReduce: {
      const bool bcast = call.kind == OpKind::kBroadcast;
      p->bytes = bcast ? out : in;
      if (!root) return absl::OkStatus();
      if (in != out) {
        return c.fail(
            absl::StrFormat("on the root, input has %u bytes and "
                            "output %u; they must be equal",
                            in, out));
      }
      return c.overlap(call.in.data() == call.out.data(), &p->in_place);
    }
    case OpKind::kSendRecv:
      p->bytes = call.sending ? in : out;
      return absl::OkStatus();
    case OpKind::kBarrier:
      p->bytes = 0;
      return absl::OkStatus();
  }
  return c.fail("unknown collective");
}

}  // namespace

absl::StatusOr<PlanInput> check_call(const OpCall& call, uint32_t rank,
                                     uint32_t size, uint32_t world_rank) {
  const Checker c(call, world_rank);
  if (!is_valid(call.dtype)) {
    return c.fail(
        absl::StrFormat("unknown dtype %d", static_cast<int>(call.dtype)));
  }
  if (op_kind_reduces(call.kind) && !is_valid(call.op)) {
    return c.fail(
        absl::StrFormat("unknown reduction op %d", static_cast<int>(call.op)));
  }
  if (static_cast<size_t>(call.options.algorithm) >= kAlgorithmCount) {
    return c.fail(absl::StrFormat("unknown algorithm %d",
                                  static_cast<int>(call.options.algorithm)));
  }
  if (call.options.timeout_ns < 0 ||
      call.options.timeout_ns > GroupOptions::kMaxTimeoutNs) {
    return c.fail(absl::StrFormat("timeout %d ns is outside 0..%d",
                                  call.options.timeout_ns,
                                  GroupOptions::kMaxTimeoutNs));
  }
  const bool rooted = call.kind == OpKind::kBroadcast ||
                      call.kind == OpKind::kReduce ||
                      call.kind == OpKind::kSendRecv;
  if (rooted && call.root >= size) {
    return c.fail(absl::StrFormat(
        "%s %u is out of range: the group has ranks "
        "0..%u",
        call.kind == OpKind::kSendRecv ? "peer" : "root", call.root, size - 1));
  }
  if (call.kind == OpKind::kSendRecv && call.root == rank) {
    return c.fail(absl::StrFormat("rank %u cannot %s itself", rank,
                                  call.sending ? "send to" : "receive from"));
  }
  PlanInput p;
  p.kind = call.kind;
  p.rank = rank;
  p.size = size;
  p.elem = dtype_size(call.dtype);
  p.root = call.root;
  p.sending = call.sending;
  absl::Status s = c.buffer("input", call.in.data(), call.in.size(), p.elem);
  if (s.ok()) s = c.buffer("output", call.out.data(), call.out.size(), p.elem);
  if (s.ok()) s = check_sizes(c, call, rank, size, &p);
  if (!s.ok()) return s;
  return p;
}

}  // namespace weft::collectives::internal
