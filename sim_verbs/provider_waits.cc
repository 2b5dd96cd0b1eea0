// Client mode: how the threads of a rank's process wait at the simulation
// server. A rank is a process with any number of threads (JACCL's ring
// drives each cable from a thread of its own and waits for them on
// std::futures), so:
//
// - No lock is held while a thread waits: one thread's wait never blocks
//   another thread's post or poll.
// - The rank waits only when none of its threads can make progress: each
//   is in a verbs wait, or blocked on another thread of the process (a
//   lock, a condition variable, a future, a join), as the kernel tells
//   (sim_server/thread_census.h). A thread that runs, sleeps, or is blocked
//   on anything else (a socket, a pipe, a file) may still act on its own,
//   so it holds virtual time still, as a single-threaded rank that
//   computes does.
// - The first thread to wait (the leader) takes the census, tells the
//   server that the rank waits, and blocks until it answers; threads that
//   wait meanwhile (followers) wait for that answer, and their wake-up
//   times go with the leader's. Followers are known to wait, so only the
//   threads outside verbs cost the census a look at the kernel.
//
// So the requests a rank has queued when it waits are those its threads'
// own logic made since the last answer, whatever the host's scheduling;
// the server applies them in an order that does not depend on it either
// (sim_server/internal/apply_order.h).
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/assert.h"
#include "sim_server/thread_census.h"
#include "sim_verbs/provider.h"

namespace weft::sim_verbs {
namespace {

using SteadyClock = std::chrono::steady_clock;
using sim_server::ThreadCensus;

// How long the leader lets a thread outside verbs run before it looks
// again: from kFirstLook, doubling up to kLongestLook. A thread that joins
// the wait wakes it at once; a thread that blocks outside verbs (on a
// future) is seen at the next look.
constexpr auto kFirstLook = std::chrono::microseconds(20);
constexpr auto kLongestLook = std::chrono::milliseconds(1);
// When the leader says, once, which thread holds the rank's wait back.
constexpr auto kNoticeAfter = std::chrono::seconds(10);

}  // namespace

int Provider::wait_error(const absl::Status& status) {
  if (!reported_wait_error_) {
    std::fprintf(stderr, "weft simulated verbs provider: %s\n",
                 std::string(status.message()).c_str());
    reported_wait_error_ = true;
  }
  return status.code() == absl::StatusCode::kDeadlineExceeded ? ETIMEDOUT : EIO;
}

int Provider::wait_at_server(std::string_view what,
                             std::optional<TimeNs> wake_at_ns) {
  // The caller holds mutex_ (and unlocks it when this returns); the wait
  // lets go of it meanwhile.
  std::unique_lock<std::mutex> lock(mutex_, std::adopt_lock);
  const auto deadline = SteadyClock::now() + wait_timeout_;
  const int err = leader_.has_value()
                      ? follow_wait(lock, what, wake_at_ns, deadline)
                      : lead_wait(lock, what, wake_at_ns, deadline);
  WEFT_ASSERT(lock.owns_lock(), "a wait returns without the provider's lock");
  lock.release();
  return err;
}

int Provider::follow_wait(std::unique_lock<std::mutex>& lock,
                          std::string_view what,
                          std::optional<TimeNs> wake_at_ns,
                          SteadyClock::time_point deadline) {
  const pid_t me = ThreadCensus::current_thread();
  const uint64_t ended = waits_ended_;
  followers_[me] = Follower{std::string(what), wake_at_ns, ended};
  ++followers_came_;
  follower_came_.notify_all();
  const bool answered = wait_ended_.wait_until(
      lock, deadline, [&] { return waits_ended_ != ended; });
  followers_.erase(me);
  if (!answered) {
    return wait_error(absl::DeadlineExceededError(absl::StrFormat(
        "rank %u: a thread waited in %s for %d s without an answer "
        "(WEFT_SIM_WAIT_TIMEOUT_S)",
        remote_->rank(), what,
        std::chrono::duration_cast<std::chrono::seconds>(wait_timeout_)
            .count())));
  }
  return last_wait_error_;
}

int Provider::lead_wait(std::unique_lock<std::mutex>& lock,
                        std::string_view what, std::optional<TimeNs> wake_at_ns,
                        SteadyClock::time_point deadline) {
  leader_ = ThreadCensus::current_thread();
  last_census_ = {};
  // A crashed rank's wait fails at once, and after the server stopped
  // simulating every wait returns at once: no census for those.
  int err = remote_->crashed() || remote_->released()
                ? 0
                : await_other_threads(lock, what, deadline);
  if (err == 0) {
    std::optional<TimeNs> wake = wake_at_ns;
    for (pid_t tid : waiting_followers()) {
      const Follower& f = followers_.at(tid);
      if (f.wake_at_ns && (!wake || *f.wake_at_ns < *wake)) wake = f.wake_at_ns;
    }
    const std::string text = wait_text(what);
    lock.unlock();
    const absl::Status s = remote_->wait(text, wake);
    lock.lock();
    err = s.ok() ? 0 : wait_error(s);
  }
  leader_.reset();
  ++waits_ended_;
  last_wait_error_ = err;
  wait_ended_.notify_all();
  return err;
}

int Provider::await_other_threads(std::unique_lock<std::mutex>& lock,
                                  std::string_view what,
                                  SteadyClock::time_point deadline) {
  const auto started = SteadyClock::now();
  auto look = std::chrono::duration_cast<SteadyClock::duration>(kFirstLook);
  bool noticed = false;
  for (;;) {
    std::vector<pid_t> exempt = waiting_followers();
    exempt.push_back(*leader_);
    std::sort(exempt.begin(), exempt.end());
    const uint64_t came = followers_came_;
    lock.unlock();
    const sim_server::CensusResult census = census_.take(exempt);
    lock.lock();
    last_census_ = census;
    // The followers the census left out must still be waiting (a
    // follower's wait ends only with the leader's, or at its deadline).
    const bool stayed = std::all_of(exempt.begin(), exempt.end(), [&](pid_t t) {
      return t == *leader_ || followers_.contains(t);
    });
    if (census.all_wait && stayed) return 0;
    const auto now = SteadyClock::now();
    const bool late = now >= deadline;
    if (census.thread != 0 &&
        (late || (!noticed && now - started >= kNoticeAfter))) {
      const std::string text = absl::StrFormat(
          "rank %u waits in %s, but its thread %d (%s) %s: a rank waits on "
          "the fabric only when every thread of its process waits, in verbs "
          "or on another of its threads, so virtual time stands still "
          "(docs/simulation-server.md, \"Programs with threads\")%s",
          remote_->rank(), what, census.thread,
          ThreadCensus::thread_name(census.thread),
          ThreadCensus::describe(census.activity, census.syscall),
          late ? "; giving up (WEFT_SIM_WAIT_TIMEOUT_S)" : "");
      if (late) return wait_error(absl::DeadlineExceededError(text));
      std::fprintf(stderr, "weft simulated verbs provider: %s\n", text.c_str());
      noticed = true;
    }
    if (late) {
      return wait_error(absl::DeadlineExceededError(absl::StrFormat(
          "rank %u waited in %s for its threads until the wait timeout "
          "(WEFT_SIM_WAIT_TIMEOUT_S)",
          remote_->rank(), what)));
    }
    follower_came_.wait_until(lock, std::min(now + look, deadline),
                              [&] { return followers_came_ != came; });
    look = std::min(2 * look, std::chrono::duration_cast<SteadyClock::duration>(
                                  kLongestLook));
  }
}

std::vector<pid_t> Provider::waiting_followers() const {
  std::vector<pid_t> out;
  for (const auto& [tid, f] : followers_) {
    if (f.since == waits_ended_) out.push_back(tid);
  }
  return out;
}

std::string Provider::wait_text(std::string_view what) const {
  std::string text(what);
  for (pid_t tid : waiting_followers()) {
    absl::StrAppend(&text, ", ", followers_.at(tid).what);
  }
  const size_t others = last_census_.checked;
  if (others > 0) {
    absl::StrAppend(&text,
                    absl::StrFormat("; %u more thread%s blocked on threads of "
                                    "the process",
                                    others, others == 1 ? "" : "s"));
  }
  return text;
}

}  // namespace weft::sim_verbs
