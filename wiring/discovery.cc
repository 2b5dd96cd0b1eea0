#include "wiring/discovery.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/absl_compat.h"
#include "fabric/errors.h"
#include "wiring/internal/session.h"

namespace weft::wiring {
namespace {

absl::Status bad_option(std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("wiring discovery options: ", base::to_absl(what)));
}

}  // namespace

absl::Status validate(const DiscoveryOptions& o) {
  if (o.qps_per_device == 0) {
    return bad_option("qps_per_device is 0; a round needs at least 1");
  }
  if (o.attempts == 0 || o.attempts > 1024) {
    return bad_option(absl::StrFormat(
        "attempts is %u; give 1..1024 probes per pair", o.attempts));
  }
  if (o.probe_interval_ns <= 0 || o.settle_ns < 0) {
    return bad_option(
        "probe_interval_ns must be positive, settle_ns not "
        "negative");
  }
  if (o.addresses.size() > kMaxAddresses) {
    return bad_option(absl::StrFormat("%u addresses; give at most %u",
                                      o.addresses.size(), kMaxAddresses));
  }
  for (const std::string& a : o.addresses) {
    if (a.empty() || a.size() > kMaxNameBytes) {
      return bad_option(absl::StrFormat(
          "address \"%s\" is empty or longer than %u bytes", a,
          kMaxNameBytes));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DiscoverySession>> DiscoverySession::start(
    Fabric& fabric, uint32_t ranks, std::vector<std::string> devices,
    DiscoveryOptions options) {
  if (absl::Status s = validate(options); !s.ok()) return s;
  if (ranks == 0 || fabric.rank() >= ranks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "wiring discovery: rank %u is not in a group of %u ranks",
        fabric.rank(), ranks));
  }
  if (options.declared.has_value() && options.declared->ranks() != ranks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "wiring check: the device file has %u ranks but the group %u; give "
        "a file with a row per rank",
        options.declared->ranks(), ranks));
  }
  std::sort(devices.begin(), devices.end(), [](const auto& x, const auto& y) {
    return device_name_less(x, y);
  });
  for (size_t k = 0; k < devices.size(); ++k) {
    if (devices[k].empty() || devices[k].size() > kMaxNameBytes ||
        (k > 0 && devices[k] == devices[k - 1])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "wiring discovery: rank %u lists a device named \"%s\" (empty, "
          "longer than %u bytes or twice)",
          fabric.rank(), devices[k], kMaxNameBytes));
    }
  }
  return std::unique_ptr<DiscoverySession>(new internal::Session(
      fabric, ranks, std::move(devices), std::move(options)));
}

absl::StatusOr<Discovery> discover(Fabric& fabric, Bootstrap& bootstrap,
                                   std::vector<std::string> devices,
                                   const DiscoveryOptions& options,
                                   TimeNs exchange_timeout_ns,
                                   TimeNs deadline_ns) {
  if (bootstrap.rank() != fabric.rank()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "wiring discovery: the side channel's rank %u is not the fabric's %u",
        bootstrap.rank(), fabric.rank()));
  }
  absl::StatusOr<std::unique_ptr<DiscoverySession>> session =
      DiscoverySession::start(fabric, bootstrap.size(), std::move(devices),
                              options);
  if (!session.ok()) return session.status();
  DiscoverySession& s = **session;
  const TimeNs deadline = deadline_after(fabric.clock().now_ns(), deadline_ns);
  for (;;) {
    switch (s.need()) {
      case DiscoverySession::Need::kDone:
        return s.result();
      case DiscoverySession::Need::kExchange: {
        absl::StatusOr<std::vector<std::vector<uint8_t>>> blobs =
            bootstrap.all_gather(s.blob(), exchange_timeout_ns);
        if (!blobs.ok()) return blobs.status();
        if (absl::Status st = s.exchanged(*blobs); !st.ok()) return st;
        break;
      }
      case DiscoverySession::Need::kStep: {
        const Progress p = s.step();
        if (p.state == Progress::State::kWaiting) fabric.idle(p.wake_at_ns);
        break;
      }
    }
    if (fabric.clock().now_ns() >= deadline) {
      return make_error(
          absl::StatusCode::kDeadlineExceeded,
          ErrorPlace{fabric.rank(), kNoPeer, "", ErrorCause::kDeadline},
          absl::StrCat("wiring discovery did not end in time: ",
                       s.outstanding()));
    }
  }
}

}  // namespace weft::wiring
