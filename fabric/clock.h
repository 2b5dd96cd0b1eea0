// Time as the fabric sees it. Deadlines, back-off and timestamps go through a
// Clock, never std::chrono directly: on hardware it is the wall clock, in the
// simulator it is virtual time that only the scheduler advances.
#ifndef WEFT_FABRIC_CLOCK_H_
#define WEFT_FABRIC_CLOCK_H_

#include <cstdint>
#include <limits>

namespace weft {

// Nanoseconds since an arbitrary, clock-specific origin.
using TimeNs = int64_t;
inline constexpr TimeNs kNeverNs = std::numeric_limits<TimeNs>::max();

inline constexpr TimeNs kNsPerUs = 1'000;
inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNsPerS = 1'000'000'000;

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic: never returns less than an earlier call did.
  virtual TimeNs now_ns() const = 0;
};

// std::chrono::steady_clock.
class WallClock final : public Clock {
 public:
  TimeNs now_ns() const override;
};

// A clock that moves only when told to: the simulator's virtual time, and
// tests that need to step time by hand.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimeNs start_ns = 0) : now_ns_(start_ns) {}
  TimeNs now_ns() const override { return now_ns_; }
  // REQUIRES: t_ns >= now_ns() (time never runs backwards).
  void advance_to(TimeNs t_ns);

 private:
  TimeNs now_ns_;
};

// `now + delta` without overflow: saturates at kNeverNs.
TimeNs deadline_after(TimeNs now_ns, TimeNs delta_ns);

}  // namespace weft

#endif  // WEFT_FABRIC_CLOCK_H_
