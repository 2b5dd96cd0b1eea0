// ProcessGroup: one process's membership of a group on hardware, from the
// environment in one call. It reads the configuration (rendezvous/config.h:
// JACCL's and MLX's variables, the launchers' rank variables, the device
// JSON or the ring hostfile), joins the side channel (TCP through the
// coordinator, or a Bootstrap the caller makes), opens the fabric, forms the
// weft::Group and keeps the three alive together, destroyed in the right
// order. The fabric is the TCP fabric when the Config has tcp_hosts (a
// hostfile: WEFT_HOSTFILE or MLX_HOSTFILE), listening on exactly this rank's
// addresses of it; otherwise the verbs fabric (librdma.dylib on macOS,
// libibverbs.so.1 on Linux, WEFT_VERBS_LIBRARY: weft's simulated provider
// under `weft-sim launch`).
//
//   absl::StatusOr<std::unique_ptr<weft::ProcessGroup>> pg =
//       weft::ProcessGroup::from_environment();
//   if (!pg.ok()) { /* says which variable to set and why */ }
//   absl::Status s = (*pg)->group().all_sum(in, out, weft::DType::kFloat32);
//
// Deadlines. Ranks of real jobs arrive late (one still loading model
// weights), so a group started here waits long: each operation's deadline
// is WEFT_TIMEOUT_S seconds (default kDefaultTimeoutNs, 600 s), and
// retransmission keeps trying that long before it calls a silent peer
// unreachable. Joining waits WEFT_CONNECT_TIMEOUT_S (default 600 s). Both
// are decimal seconds ("600", "2.5"); other text is InvalidArgument naming
// the variable. A peer whose process died is not waited for: its
// side-channel connection closes, and the group's blocking calls end at
// once with Unavailable naming it. On weft's simulated provider the
// provider says instead, at a virtual time that is the same on every run
// (verbs/departure_check.h).
//
// Wiring. With the device variable set to `auto` (JACCL_IBV_DEVICES=auto,
// and WEFT_SIZE for the group's size; rendezvous/config.h) the ranks find
// their cabling through the verbs fabric before the group forms
// (wiring/discovery.h) and run on the cables that work both ways. With
// WEFT_CHECK_WIRING=1 the device JSON's cables are probed first, and a
// file that does not match them is FailedPrecondition naming the first
// wrong entry ("rank 0's rdma_en3 reaches rank 2, not rank 1 as ...") in
// the time of a few probes instead of an operation's deadline; other text
// than 0 or 1 is InvalidArgument. Over TCP neither applies.
//
// Registered memory. On the verbs fabric, WEFT_MR_BUDGET (a whole number,
// 1 to 65536; default 96) is how many memory regions weft keeps registered
// at once on each device, its slabs included
// (VerbsFabricOptions::memory_region_budget); other text is
// InvalidArgument naming the variable, the value and the range, before the
// side channel is joined. The TCP fabric does not read it.
#ifndef WEFT_STARTUP_PROCESS_GROUP_H_
#define WEFT_STARTUP_PROCESS_GROUP_H_

#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "collectives/bootstrap.h"
#include "collectives/group.h"
#include "collectives/group_options.h"
#include "fabric/clock.h"
#include "fabric/fabric.h"
#include "rendezvous/config.h"

namespace weft {

struct StartOptions {
  static constexpr TimeNs kDefaultTimeoutNs = 600 * kNsPerS;
  static constexpr TimeNs kDefaultConnectTimeoutNs = 600 * kNsPerS;

  // The group's options; timeout_ns and the recovery limits are replaced by
  // the deadline above (WEFT_TIMEOUT_S or kDefaultTimeoutNs: max_retries,
  // and max_rto_ns where 1000 retries are too few, raised so that
  // retransmission outlasts it), and the Config's connect_timeout_ns by
  // WEFT_CONNECT_TIMEOUT_S or kDefaultConnectTimeoutNs, unless
  // keep_timeouts. A Config with `ring` set turns an algorithm of kAuto
  // into kRing. Forming the group (the exchanges of destinations) may take
  // up to the connect timeout.
  GroupOptions group;
  bool keep_timeouts = false;
  // The environment (the process's by default; tests pass their own).
  EnvLookup getenv = ::getenv;
  // The side channel. Unset: TcpBootstrap through config.coordinator. Set,
  // the Config needs no coordinator, and the Bootstrap made must have the
  // Config's rank and size.
  std::function<absl::StatusOr<std::unique_ptr<Bootstrap>>(const Config&)>
      make_bootstrap;
};

class ProcessGroup {
 public:
  // Config::from_environment(options.getenv), then start(). Errors say what
  // to set: InvalidArgument naming the variable and its value, NotFound for
  // a device JSON that cannot be opened, and the bootstrap's, fabric's and
  // group's own errors (which rank, which address, what to do).
  static absl::StatusOr<std::unique_ptr<ProcessGroup>> from_environment(
      const StartOptions& options = {});
  // As from_environment() with a Config made by the caller (validated
  // here). With WEFT_FABRIC set (weft-sim launch sets it), a Config for
  // another fabric (tcp_hosts empty under tcp, set under verbs) is
  // InvalidArgument naming the variable, and so is a value other than tcp
  // or verbs.
  static absl::StatusOr<std::unique_ptr<ProcessGroup>> start(
      const Config& config, const StartOptions& options = {});

  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  Group& group();
  // Group::shrink() (docs/fault-tolerance.md) on group(), which the
  // shrunk group then replaces: from here on group() is the group of the
  // survivors, with its own rank and size, sharing the fabric, the engine
  // and its watch. On an error group() stays as it was. The side channel
  // keeps the old ranks: after a shrink its check names only the first
  // rank whose process died (a TCP side channel fails as a whole then),
  // so a second death is found by the fabric or at the deadline.
  absl::Status shrink(CallOptions c = {});
  Fabric& fabric();
  Bootstrap& bootstrap();
  const Config& config() const;
  // True on weft's simulated provider, whose clock is virtual time.
  bool virtual_time() const;

 private:
  ProcessGroup();
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace weft

#endif  // WEFT_STARTUP_PROCESS_GROUP_H_
