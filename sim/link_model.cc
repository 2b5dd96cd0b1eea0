#include "sim/link_model.h"

#include <cmath>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "base/absl_compat.h"

namespace weft::sim {
namespace {

// Thunderbolt 5's wire rate (80 Gbit/s) and the derived figures.
constexpr double kTb5WireBytesPerS = 80e9 / 8;
constexpr TimeNs kTb5OverheadNs = 437;
constexpr TimeNs kTb5LatencyNs = 3793;
constexpr double kBitsPerByte = 8;
constexpr double kNsPerSecond = 1e9;

absl::Status bad_spec(std::string_view spec, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "link model \"", base::to_absl(spec), "\": ", base::to_absl(what),
      "; expected tb5, ideal, or latency_ns=N,bandwidth_gbps=X,overhead_ns=M "
      "(any subset, optionally after a preset)"));
}

absl::Status parse_time(std::string_view spec, absl::string_view key,
                        absl::string_view value, TimeNs max, TimeNs* out) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(value, &v) || v < 0 || v > max) {
    return bad_spec(spec, absl::StrFormat("%s=%s is not a whole number of "
                                          "nanoseconds in 0..%d",
                                          key, value, max));
  }
  *out = v;
  return absl::OkStatus();
}

absl::Status parse_item(std::string_view spec, absl::string_view item,
                        bool first, LinkModel* model) {
  if (first && item == "tb5") {
    *model = LinkModel::tb5();
    return absl::OkStatus();
  }
  if (first && item == "ideal") {
    *model = LinkModel::ideal();
    return absl::OkStatus();
  }
  std::vector<absl::string_view> kv =
      absl::StrSplit(item, absl::MaxSplits('=', 1));
  if (kv.size() != 2) {
    return bad_spec(spec, absl::StrCat("\"", item,
                                       "\" is neither a preset (first item "
                                       "only) nor key=value"));
  }
  const absl::string_view key = kv[0];
  const absl::string_view value = kv[1];
  if (key == "latency_ns") {
    return parse_time(spec, key, value, LinkModel::kMaxLatencyNs,
                      &model->latency_ns);
  }
  if (key == "overhead_ns") {
    return parse_time(spec, key, value, LinkModel::kMaxOverheadNs,
                      &model->per_message_ns);
  }
  if (key == "bandwidth_gbps") {
    double gbps = 0;
    if (!absl::SimpleAtod(value, &gbps) || !std::isfinite(gbps) ||
        (gbps != 0 && (gbps < LinkModel::kMinBandwidthGbps ||
                       gbps > LinkModel::kMaxBandwidthGbps))) {
      return bad_spec(
          spec, absl::StrFormat("bandwidth_gbps=%s is not 0 (infinite) or a "
                                "number in %g..%g",
                                value, LinkModel::kMinBandwidthGbps,
                                LinkModel::kMaxBandwidthGbps));
    }
    model->bandwidth_bytes_per_s = gbps * 1e9 / kBitsPerByte;
    return absl::OkStatus();
  }
  return bad_spec(spec, absl::StrCat("unknown key \"", key, "\""));
}

}  // namespace

LinkModel LinkModel::tb5() {
  return LinkModel{.latency_ns = kTb5LatencyNs,
                   .bandwidth_bytes_per_s = kTb5WireBytesPerS,
                   .per_message_ns = kTb5OverheadNs};
}

LinkModel LinkModel::ideal() { return LinkModel{}; }

absl::StatusOr<LinkModel> LinkModel::parse(std::string_view spec) {
  if (spec.empty()) return bad_spec(spec, "empty");
  LinkModel model = ideal();
  bool first = true;
  for (absl::string_view item : absl::StrSplit(base::to_absl(spec), ',')) {
    item = absl::StripAsciiWhitespace(item);
    if (item.empty()) return bad_spec(spec, "an empty item");
    if (absl::Status s = parse_item(spec, item, first, &model); !s.ok()) {
      return s;
    }
    first = false;
  }
  return model;
}

TimeNs LinkModel::serialisation_ns(uint64_t bytes) const {
  if (bandwidth_bytes_per_s <= 0 || bytes == 0) return per_message_ns;
  // IEEE-754 multiply and divide are correctly rounded on every platform we
  // build for, so this is the same everywhere.
  const double wire_ns = std::ceil(static_cast<double>(bytes) * kNsPerSecond /
                                   bandwidth_bytes_per_s);
  // Saturate rather than overflow for a model built by hand (parse() keeps
  // bandwidth above kMinBandwidthGbps).
  const double limit = static_cast<double>(kNeverNs - per_message_ns);
  if (!(wire_ns < limit)) return kNeverNs;
  return per_message_ns + static_cast<TimeNs>(wire_ns);
}

std::string LinkModel::to_string() const {
  return absl::StrFormat("latency_ns=%d,bandwidth_gbps=%g,overhead_ns=%d",
                         latency_ns, bandwidth_bytes_per_s * kBitsPerByte / 1e9,
                         per_message_ns);
}

}  // namespace weft::sim
