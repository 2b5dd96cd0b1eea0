#include "tools/weft-bench/weft_bench_model.h"

namespace weft::tools::weft_bench {

RingModel RingModel::of(const sim::LinkModel& link, uint32_t ranks,
                        uint32_t parallel_paths) {
  RingModel m;
  m.alpha_ns = static_cast<double>(link.latency_ns + link.per_message_ns);
  m.beta_ns_per_byte =
      link.bandwidth_bytes_per_s > 0
          ? static_cast<double>(kNsPerS) / link.bandwidth_bytes_per_s
          : 0;
  m.ranks = ranks;
  m.parallel_paths = parallel_paths == 0 ? 1 : parallel_paths;
  return m;
}

std::optional<double> RingModel::cost_ns(harness::CollectiveKind kind,
                                         uint64_t bytes) const {
  if (ranks < 2) return std::nullopt;
  double steps = 0;  // multiples of (p-1) alpha and n(p-1)/p beta
  switch (kind) {
    case harness::CollectiveKind::kAllGather:
    case harness::CollectiveKind::kReduceScatter:
      steps = 1;
      break;
    case harness::CollectiveKind::kAllReduce:
      steps = 2;
      break;
    default:
      return std::nullopt;
  }
  const double p = ranks;
  const double n = static_cast<double>(bytes);
  return steps * ((p - 1) * alpha_ns +
                  n * (p - 1) / p * beta_ns_per_byte / parallel_paths);
}

}  // namespace weft::tools::weft_bench
