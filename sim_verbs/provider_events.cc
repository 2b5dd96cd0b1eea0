// Completion channels and completion events: ibv_create_comp_channel,
// ibv_req_notify_cq (through the operation table), ibv_get_cq_event and
// ibv_ack_cq_events, on the in-process world.
//
// An armed CQ raises one event on its channel when a completion is added to
// it after it was armed (completions already there when it was armed do not
// count), then is disarmed, as the verbs API specifies. "Added" means taken
// from the simulator: each poll_cq and each step of ibv_get_cq_event looks
// for completions of armed CQs. A channel's fd is an eventfd counting the
// events not yet read, so poll() on it sees the events raised so far; in
// this in-process mode only verbs calls advance the world, so a program that
// waits for an event calls ibv_get_cq_event.
#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "fabric/clock.h"
#include "fabric/endpoint.h"
#include "sim_verbs/objects.h"
#include "sim_verbs/provider.h"

namespace weft::sim_verbs {
namespace {

// Adds one to the channel's eventfd count (never blocks: the count stays
// far below the eventfd's limit).
void signal_event(int fd) {
  const uint64_t one = 1;
  const ssize_t n = write(fd, &one, sizeof(one));
  (void)n;
}

// Takes one from the count. REQUIRES: the count is positive (an event is
// queued), so the read does not block even on a blocking fd.
void consume_event(int fd) {
  uint64_t value = 0;
  const ssize_t n = read(fd, &value, sizeof(value));
  (void)n;
}

}  // namespace

SimChannel* Provider::find_channel(const ibv_comp_channel* channel) const {
  auto it = channels_.find(channel);
  return it == channels_.end() ? nullptr : it->second.get();
}

ibv_comp_channel* Provider::create_comp_channel(ibv_context* context) {
  SimContext* c = find_context(context);
  if (c == nullptr) {
    errno = EINVAL;
    return nullptr;
  }
  // Semaphore mode: each read takes one event, and the fd stays readable
  // while any is left.
  const int fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
  if (fd < 0) return nullptr;  // errno from eventfd: EMFILE, ENFILE, ENOMEM
  auto channel = std::make_unique<SimChannel>();
  channel->channel.context = context;
  channel->channel.fd = fd;
  channel->channel.refcnt = 0;
  channel->owner = c;
  ibv_comp_channel* out = &channel->channel;
  channels_.emplace(out, std::move(channel));
  return out;
}

int Provider::destroy_comp_channel(ibv_comp_channel* channel) {
  SimChannel* ch = find_channel(channel);
  if (ch == nullptr) return EINVAL;
  if (channel->refcnt != 0) {
    return teardown_error("ibv_destroy_comp_channel",
                          "completion queues use it");
  }
  close(channel->fd);
  channels_.erase(channel);
  return 0;
}

void Provider::stash_all(SimCq& cq) {
  std::array<ibv_wc, Endpoint::kMaxPollBatch> batch;
  const int room = static_cast<int>(batch.size());
  for (SimQp* qp : cq.qps) {
    int n = room;
    while (n == room) {
      n = drain(*qp, cq, batch.data(), room);
      cq.stash.insert(cq.stash.end(), batch.begin(), batch.begin() + n);
    }
  }
}

// solicited_only is accepted and treated as 0: the simulated sends carry no
// solicited flag, so every completion counts.
int Provider::req_notify_cq(ibv_cq* cq, int /*solicited_only*/) {
  SimCq* c = find_cq(cq);
  if (c == nullptr) return EINVAL;
  if (c->armed) return 0;
  stash_all(*c);
  c->armed = true;
  c->armed_mark = c->added;
  armed_.push_back(c);
  return 0;
}

void Provider::raise_events() {
  if (armed_.empty()) return;
  for (SimCq* cq : armed_) {
    if (cq->added != cq->armed_mark) continue;
    for (SimQp* qp : cq->qps) {
      ibv_wc wc;
      if (drain(*qp, *cq, &wc, 1) == 1) {
        cq->stash.push_back(wc);
        break;
      }
    }
  }
  // Draining one CQ's queue pairs may have added completions to another
  // armed CQ (the pair's other CQ), so every CQ is judged after all drains.
  std::vector<SimCq*> still_armed;
  for (SimCq* cq : armed_) {
    if (cq->added == cq->armed_mark) {
      still_armed.push_back(cq);
      continue;
    }
    cq->armed = false;
    if (cq->channel != nullptr) {
      cq->channel->events.push_back(cq);
      signal_event(cq->channel->channel.fd);
    }
  }
  armed_ = std::move(still_armed);
}

void Provider::remove_events(SimCq& cq) {
  if (cq.channel == nullptr) return;
  std::deque<SimCq*>& events = cq.channel->events;
  const auto removed = std::erase(events, &cq);
  for (size_t i = 0; i < removed; ++i) consume_event(cq.channel->channel.fd);
}

int Provider::get_cq_event(ibv_comp_channel* channel, ibv_cq** cq,
                           void** cq_context) {
  SimChannel* ch = find_channel(channel);
  if (ch == nullptr || cq == nullptr || cq_context == nullptr) {
    errno = EINVAL;
    return -1;
  }
  const bool nonblocking = (fcntl(channel->fd, F_GETFL) & O_NONBLOCK) != 0;
  if (remote_ != nullptr) {
    // On the server: wait there until an armed CQ of the channel fires.
    raise_events();
    while (ch->events.empty()) {
      if (nonblocking) {
        errno = EAGAIN;
        return -1;
      }
      for (SimCq* armed : armed_) {
        if (armed->channel == ch) stash_all(*armed);
      }
      raise_events();
      if (!ch->events.empty()) break;
      if (const int err = wait_at_server("ibv_get_cq_event", std::nullopt);
          err != 0) {
        errno = err;
        return -1;
      }
      raise_events();
    }
    // What writes put into this rank's memory is there before the event.
    apply_writes(ch->owner->device->rank);
    return take_event(*ch, cq, cq_context);
  }
  const TimeNs limit_ns = world_->options().time_limit_ns;
  const TimeNs deadline_ns = world_->clock().now_ns() + limit_ns;
  raise_events();
  while (ch->events.empty()) {
    const TimeNs now_ns = world_->clock().now_ns();
    if (nonblocking) {
      errno = EAGAIN;
      return -1;
    }
    if (now_ns >= deadline_ns) {
      std::fprintf(stderr,
                   "weft simulated verbs provider: ibv_get_cq_event: no "
                   "completion event within %lld ns of virtual time (the "
                   "world's time limit); is a completion queue of this "
                   "channel armed (ibv_req_notify_cq) and its work posted? "
                   "(ETIMEDOUT)\n",
                   static_cast<long long>(limit_ns));
      errno = ETIMEDOUT;
      return -1;
    }
    world_->advance_to(next_wait_step(*ch, now_ns, deadline_ns));
    // As at a poll_cq: what RDMA WRITEs put into the rank's memory is
    // there before the completion that may announce them is taken.
    apply_writes(ch->owner->device->rank);
    raise_events();
  }
  return take_event(*ch, cq, cq_context);
}

int Provider::take_event(SimChannel& ch, ibv_cq** cq, void** cq_context) {
  SimCq* c = ch.events.front();
  ch.events.pop_front();
  consume_event(ch.channel.fd);
  ++c->events_reported;
  *cq = &c->cq;
  *cq_context = c->cq.cq_context;
  return 0;
}

// Where the next step of a wait goes: to the first poll step at or after
// the world's next event, which is where a loop of poll_cq calls (one step
// each) would first see what that event does, so a program that waits on
// events sees completions at the virtual times one that polls would; the
// steps in between could change nothing. With nothing in flight, no CQ of
// the channel armed, or a poll step of 0 (time would not move), no event
// can come before the deadline, and the wait goes there at once (handling
// every event before it).
TimeNs Provider::next_wait_step(const SimChannel& channel, TimeNs now_ns,
                                TimeNs deadline_ns) const {
  const bool any_armed =
      std::any_of(armed_.begin(), armed_.end(),
                  [&](const SimCq* cq) { return cq->channel == &channel; });
  const TimeNs step_ns = config_->poll_step_ns;
  const std::optional<TimeNs> next_ns = world_->next_event_ns();
  if (!any_armed || step_ns == 0 || !next_ns.has_value() ||
      *next_ns >= deadline_ns) {
    return deadline_ns;
  }
  const TimeNs ahead_ns = std::max<TimeNs>(*next_ns - now_ns, 1);
  const TimeNs steps = (ahead_ns + step_ns - 1) / step_ns;
  return std::min(now_ns + steps * step_ns, deadline_ns);
}

void Provider::ack_cq_events(ibv_cq* cq, unsigned int nevents) {
  if (find_cq(cq) == nullptr) return;
  pthread_mutex_lock(&cq->mutex);
  cq->comp_events_completed += nevents;
  pthread_cond_broadcast(&cq->cond);
  pthread_mutex_unlock(&cq->mutex);
}

}  // namespace weft::sim_verbs
