// Fuzzes the simulator's link model spec (sim/link_model.h, the --link
// flag): any text must give a model within the documented limits or an
// InvalidArgument naming it; a parsed model must read back from
// to_string() (bandwidth to the 6 significant digits it prints), and its
// serialisation time must be defined for every frame size the fabric sends.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/link_model.h"
#include "tests/fuzz/fuzz_check.h"

namespace weft::sim {
namespace {

// to_string() prints the bandwidth with %g: 6 significant digits.
constexpr double kPrintedRelativeError = 5e-6;
constexpr double kMaxBandwidthBytesPerS =
    LinkModel::kMaxBandwidthGbps * 1e9 / 8;
// Frame sizes to time, up to a gibibyte (no frame is larger).
constexpr uint64_t kFrameBytes[] = {0, 1, 64, 4096, 65536, 1u << 20, 1u << 30};

bool close(double a, double b) {
  return std::fabs(a - b) <= kPrintedRelativeError * std::fabs(b);
}

void check_model(const LinkModel& m) {
  WEFT_FUZZ_CHECK(m.latency_ns >= 0 &&
                  m.latency_ns <= LinkModel::kMaxLatencyNs);
  WEFT_FUZZ_CHECK(m.per_message_ns >= 0 &&
                  m.per_message_ns <= LinkModel::kMaxOverheadNs);
  WEFT_FUZZ_CHECK(m.bandwidth_bytes_per_s >= 0 &&
                  m.bandwidth_bytes_per_s <= kMaxBandwidthBytesPerS);
  TimeNs previous = m.per_message_ns;
  for (uint64_t bytes : kFrameBytes) {
    const TimeNs ns = m.serialisation_ns(bytes);
    WEFT_FUZZ_CHECK(ns >= previous);
    previous = ns;
  }
  absl::StatusOr<LinkModel> back = LinkModel::parse(m.to_string());
  WEFT_FUZZ_CHECK(back.ok());
  WEFT_FUZZ_CHECK(back->latency_ns == m.latency_ns);
  WEFT_FUZZ_CHECK(back->per_message_ns == m.per_message_ns);
  WEFT_FUZZ_CHECK(close(back->bandwidth_bytes_per_s, m.bandwidth_bytes_per_s));
}

}  // namespace
}  // namespace weft::sim

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace weft::sim;
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<LinkModel> model = LinkModel::parse(spec);
  if (!model.ok()) {
    weft::fuzz::check_error(model.status(), absl::StatusCode::kInvalidArgument,
                            "link model");
    return 0;
  }
  check_model(*model);
  return 0;
}
