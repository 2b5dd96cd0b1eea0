#include "sim_server/remote_world.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "fabric/assert.h"
#include "fabric/completion.h"
#include "fabric/endpoint.h"
#include "fabric/slab.h"
#include "fabric/wc_status.h"
#include "fabric/work_id.h"
#include "sim_server/shared_memory.h"
#include "sim_server/thread_census.h"

namespace weft::sim_server {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr auto kRequestTimeout = std::chrono::seconds(30);

std::span<const std::byte> text_bytes(std::string_view s) {
  return std::as_bytes(std::span(s.data(), s.size()));
}

// What a request names its thread by (protocol.h): the thread's id, read
// once per thread so that posting costs no system call.
uint32_t thread_tag() {
  thread_local const auto tag =
      static_cast<uint32_t>(ThreadCensus::current_thread());
  return tag;
}

}  // namespace

absl::StatusOr<uint32_t> rank_from_environment() {
  for (const char* name : kRankVariables) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    uint32_t rank = 0;
    const char* end = value + std::strlen(value);
    auto [ptr, ec] = std::from_chars(value, end, rank);
    if (ec != std::errc() || ptr != end || ptr == value) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s='%s' is not a rank: give a number from 0", name, value));
    }
    return rank;
  }
  return absl::InvalidArgumentError(
      "no rank: set WEFT_SIM_RANK (or JACCL_RANK, MLX_RANK, or run under a "
      "launcher that sets its rank variable)");
}

class RemoteWorld::RemoteEndpoint final : public Endpoint {
 public:
  RemoteEndpoint(RemoteWorld& world, uint32_t qp_num, EndpointInfo info)
      : world_(world), qp_num_(qp_num), info_(std::move(info)) {
    self_.qp_num = qp_num;
    world_.attach(qp_num, this);
  }
  ~RemoteEndpoint() override {
    world_.detach(qp_num_);
    Close c;
    c.qp_num = qp_num_;
    c.thread = thread_tag();
    const std::array<std::span<const std::byte>, 1> parts = {bytes_of(c)};
    (void)world_.post(MsgType::kClose, parts);
  }

  const EndpointInfo& info() const override { return info_; }
  absl::StatusOr<Destination> destination() const override { return self_; }

  absl::Status connect(const Destination& peer) override {
    if (connected_) {
      return absl::FailedPreconditionError("the queue pair is connected");
    }
    connected_ = true;
    Connect c;
    c.qp_num = qp_num_;
    c.remote_qp_num = peer.qp_num;
    c.thread = thread_tag();
    const std::array<std::span<const std::byte>, 1> parts = {bytes_of(c)};
    return world_.post(MsgType::kConnect, parts);
  }

  absl::Status post_recv(WorkId id, const Frame& frame) override {
    PostRecv p;
    p.qp_num = qp_num_;
    p.thread = thread_tag();
    p.work_id = id.encode();
    if (absl::Status s = world_.frame_ref(frame, &p.frame); !s.ok()) return s;
    const std::array<std::span<const std::byte>, 1> parts = {bytes_of(p)};
    return world_.post(MsgType::kPostRecv, parts);
  }

  absl::Status post_send(WorkId id, const Frame& frame, uint32_t length,
                         uint32_t immediate) override {
    return send(id, frame, length, immediate, 0);
  }

  absl::Status post_send_without_immediate(WorkId id, const Frame& frame,
                                           uint32_t length) override {
    return send(id, frame, length, 0, kSendWithoutImmediate);
  }

  absl::Status post_rdma_write(WorkId id, const Frame& frame, uint32_t length,
                               uint64_t remote_address, uint32_t rkey,
                               std::optional<uint32_t> immediate) override {
    return send(id, frame, length, immediate.value_or(0),
                kRdmaWrite | (immediate ? 0 : kSendWithoutImmediate),
                remote_address, rkey);
  }

  absl::Status send(WorkId id, const Frame& frame, uint32_t length,
                    uint32_t immediate, uint32_t flags,
                    uint64_t remote_address = 0, uint32_t rkey = 0) {
    if (length > frame.bytes()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "a send of %u bytes from a frame of %u", length, frame.bytes()));
    }
    PostSend p;
    p.qp_num = qp_num_;
    p.immediate = immediate;
    p.work_id = id.encode();
    p.length = length;
    p.flags = flags;
    p.remote_address = remote_address;
    p.rkey = rkey;
    p.thread = thread_tag();
    if (absl::Status s = world_.frame_ref(frame, &p.frame); !s.ok()) return s;
    const std::array<std::span<const std::byte>, 1> parts = {bytes_of(p)};
    return world_.post(MsgType::kPostSend, parts);
  }

  absl::Status move_to_error() override {
    Close c;
    c.qp_num = qp_num_;
    c.thread = thread_tag();
    const std::array<std::span<const std::byte>, 1> parts = {bytes_of(c)};
    return world_.post(MsgType::kMoveToError, parts);
  }

  absl::StatusOr<size_t> poll(std::span<Completion> out) override {
    const std::lock_guard<std::mutex> lock(world_.mutex_);
    size_t n = 0;
    while (n < out.size() && !done_.empty()) {
      out[n++] = done_.front();
      done_.pop_front();
    }
    return n;
  }

  // REQUIRES: world_.mutex_ held.
  size_t pending() const { return done_.size(); }

  // A completion the server sent (a receive's bytes are in its frame
  // already: the server's world wrote them into the shared slab).
  // REQUIRES: world_.mutex_ held.
  void complete(const StepCompletion& c) {
    std::optional<WorkId> id = WorkId::decode(c.work_id);
    if (!id) return;
    Completion done;
    done.id = *id;
    done.status = static_cast<WcStatus>(c.status);
    done.status_name = wc_status_name(c.status);
    done.byte_len = c.byte_len;
    done.has_immediate = c.has_immediate != 0;
    done.immediate = c.immediate;
    done.from_rdma_write = c.from_rdma_write != 0;
    done_.push_back(done);
  }

 private:
  RemoteWorld& world_;
  uint32_t qp_num_;
  EndpointInfo info_;
  Destination self_;
  bool connected_ = false;
  std::deque<Completion> done_;  // guarded by world_.mutex_
};

class RemoteWorld::RemoteFabric final : public Fabric {
 public:
  explicit RemoteFabric(RemoteWorld& world) : world_(world) {}

  std::string_view kind() const override { return "sim"; }
  uint32_t rank() const override { return world_.rank(); }
  const Clock& clock() const override { return world_.clock(); }

  // Shared memory the server maps, so its world moves message bytes in
  // and out of it directly.
  absl::StatusOr<Slab*> create_slab(uint64_t bytes) override {
    int fd = -1;
    absl::StatusOr<std::unique_ptr<Slab>> slab = create_shared_slab(bytes, &fd);
    if (!slab.ok()) return slab.status();
    RegisterSlab r;
    r.slab = (*slab)->id();
    r.bytes = (*slab)->bytes();
    const std::array<std::span<const std::byte>, 1> parts = {bytes_of(r)};
    absl::StatusOr<Message> m =
        world_.request(MsgType::kRegisterSlab, parts, MsgType::kAnswer, fd);
    ::close(fd);
    if (!m.ok()) return m.status();
    // Steps (read by any thread) name frames of the slabs.
    const std::lock_guard<std::mutex> lock(world_.mutex_);
    slabs_.push_back(*std::move(slab));
    return slabs_.back().get();
  }

  absl::StatusOr<std::unique_ptr<Endpoint>> open(std::string_view device,
                                                 uint32_t peer) override {
    Open o;
    o.peer = peer;
    o.name_bytes = static_cast<uint32_t>(device.size());
    const std::array<std::span<const std::byte>, 2> parts = {
        bytes_of(o), text_bytes(device)};
    absl::StatusOr<Message> m =
        world_.request(MsgType::kOpen, parts, MsgType::kOpened);
    if (!m.ok()) return m.status();
    std::optional<Opened> opened = m->fixed<Opened>();
    std::span<const std::byte> tail = m->tail<Opened>();
    if (!opened || tail.size() != opened->text_bytes) {
      return absl::InternalError("a malformed answer from the server");
    }
    if (opened->ok == 0) {
      const std::string text(reinterpret_cast<const char*>(tail.data()),
                             tail.size());
      return opened->resource_exhausted != 0
                 ? absl::ResourceExhaustedError(text)
                 : absl::InvalidArgumentError(text);
    }
    EndpointInfo info{world_.rank(), peer, std::string(device)};
    return std::unique_ptr<Endpoint>(
        new RemoteEndpoint(world_, opened->qp_num, std::move(info)));
  }

  // The slab of this fabric whose id is `id`, or nullptr. REQUIRES:
  // world_.mutex_ held.
  const Slab* slab(uint64_t id) const {
    for (const auto& s : slabs_) {
      if (s->id() == id) return s.get();
    }
    return nullptr;
  }

 private:
  RemoteWorld& world_;
  std::vector<std::unique_ptr<Slab>> slabs_;  // guarded by world_.mutex_
};

absl::StatusOr<std::unique_ptr<RemoteWorld>> RemoteWorld::connect(
    const std::string& socket_path, uint32_t rank,
    std::chrono::milliseconds wait_timeout) {
  sockaddr_un addr{};
  if (socket_path.empty() || socket_path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s='%s' is not a socket path", kServerVariable, socket_path));
  }
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrFormat("socket(): %s", std::strerror(errno)));
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.data(), socket_path.size());
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) !=
      0) {
    const int err = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrFormat(
        "no simulation server at %s='%s' (%s): start one with `weft-sim "
        "serve` or run the program under `weft-sim launch`",
        kServerVariable, socket_path, std::strerror(err)));
  }
  int channel_fd = -1;
  absl::StatusOr<std::unique_ptr<Slab>> channel =
      create_shared_slab(MessageRing::kMappingBytes, &channel_fd);
  if (!channel.ok()) {
    ::close(fd);
    return channel.status();
  }
  Hello hello;
  hello.rank = rank;
  hello.pid = static_cast<int32_t>(::getpid());
  if (FILE* f = std::fopen("/proc/self/comm", "r")) {
    if (std::fgets(hello.program, sizeof(hello.program), f) != nullptr) {
      hello.program[std::strcspn(hello.program, "\n")] = '\0';
    }
    std::fclose(f);
  }
  const std::array<std::span<const std::byte>, 1> parts = {bytes_of(hello)};
  const auto deadline = SteadyClock::now() + kRequestTimeout;
  MessageReader reader;
  absl::Status sent =
      write_message(fd, MsgType::kHello, parts, deadline, channel_fd);
  ::close(channel_fd);
  absl::StatusOr<Message> m =
      sent.ok() ? read_message(fd, reader, deadline) : sent;
  if (!m.ok()) {
    ::close(fd);
    return m.status();
  }
  std::optional<Welcome> w = m->fixed<Welcome>();
  std::span<const std::byte> tail = m->tail<Welcome>();
  if (m->type != MsgType::kWelcome || !w || tail.size() != w->text_bytes) {
    ::close(fd);
    return absl::InternalError(
        "the simulation server answered hello with something else");
  }
  const std::string text(reinterpret_cast<const char*>(tail.data()),
                         tail.size());
  if (w->ok == 0) {
    ::close(fd);
    return absl::FailedPreconditionError(text);
  }
  absl::StatusOr<Topology> topology = Topology::parse_json(text);
  if (!topology.ok()) {
    ::close(fd);
    return topology.status();
  }
  auto world = std::unique_ptr<RemoteWorld>(
      new RemoteWorld(fd, rank, *std::move(topology), wait_timeout));
  // No other thread has the world yet.
  world->reader_ = std::move(reader);
  world->channel_ = *std::move(channel);
  world->ring_.emplace(world->channel_->data(), true);
  world->seed_ = w->seed;
  world->apple_limits_ = w->apple_limits != 0;
  world->clock_.advance_to(w->now_ns);
  return world;
}

RemoteWorld::RemoteWorld(int fd, uint32_t rank, Topology topology,
                         std::chrono::milliseconds wait_timeout)
    : fd_(fd),
      rank_(rank),
      topology_(std::move(topology)),
      wait_timeout_(wait_timeout),
      fabric_(std::make_unique<RemoteFabric>(*this)) {}

RemoteWorld::~RemoteWorld() {
  fabric_.reset();
  ::close(fd_);
}

Fabric& RemoteWorld::fabric() { return *fabric_; }

void RemoteWorld::StepClock::advance_to(TimeNs t_ns) {
  WEFT_ASSERT(t_ns >= now_ns(), "virtual time ran backwards");
  now_ns_.store(t_ns, std::memory_order_release);
}

void RemoteWorld::attach(uint32_t qp_num, RemoteEndpoint* endpoint) {
  const std::lock_guard<std::mutex> lock(mutex_);
  endpoints_[qp_num] = endpoint;
}

void RemoteWorld::detach(uint32_t qp_num) {
  const std::lock_guard<std::mutex> lock(mutex_);
  endpoints_.erase(qp_num);
}

absl::Status RemoteWorld::send(
    MsgType type, std::span<const std::span<const std::byte>> parts,
    int pass_fd) {
  const std::lock_guard<std::mutex> lock(send_mutex_);
  return write_message(fd_, type, parts, SteadyClock::now() + kRequestTimeout,
                       pass_fd);
}

absl::Status RemoteWorld::post(
    MsgType type, std::span<const std::span<const std::byte>> parts) {
  // Through the ring (no system call). When it is full, the server is
  // asked to drain it first, so posts keep their order; other threads'
  // posts wait meanwhile.
  const std::lock_guard<std::mutex> lock(send_mutex_);
  if (ring_->try_write(type, parts)) return absl::OkStatus();
  absl::StatusOr<uint64_t> ticket = send_request(MsgType::kDrainRing, {}, -1);
  if (!ticket.ok()) return ticket.status();
  absl::StatusOr<Message> drained = await_answer(*ticket, MsgType::kAnswer);
  if (!drained.ok()) return drained.status();
  if (ring_->try_write(type, parts)) return absl::OkStatus();
  return absl::InternalError("a post longer than the post ring");
}

absl::Status RemoteWorld::frame_ref(const Frame& frame, FrameRef* out) const {
  if (frame.slab() == nullptr) {
    return absl::InvalidArgumentError("a frame of no slab");
  }
  out->slab = frame.slab()->id();
  out->offset = frame.offset();
  out->bytes = frame.bytes();
  return absl::OkStatus();
}

void RemoteWorld::ended(const Message& fatal) {
  std::fprintf(stderr, "%.*s\n", static_cast<int>(fatal.body.size()),
               reinterpret_cast<const char*>(fatal.body.data()));
  // What the program printed so far goes out (into a pipe too), but no
  // destructor or atexit handler runs: this is inside a verbs call.
  std::fflush(nullptr);
  std::_Exit(kEndedExitCode);
}

absl::StatusOr<uint64_t> RemoteWorld::send_request(
    MsgType type, std::span<const std::span<const std::byte>> parts,
    int pass_fd) {
  absl::Status sent = write_message(
      fd_, type, parts, SteadyClock::now() + kRequestTimeout, pass_fd);
  if (!sent.ok()) {
    // Part of it may have gone: answers may no longer match requests.
    const std::lock_guard<std::mutex> lock(mutex_);
    if (broken_.ok()) broken_ = sent;
    arrived_.notify_all();
    return sent;
  }
  return requests_sent_++;
}

template <typename Pred>
absl::Status RemoteWorld::await(Pred arrived, WallDeadline deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (arrived()) return absl::OkStatus();
    if (!broken_.ok()) return broken_;
    if (reading_) {
      // Another thread reads, and hands this one its message.
      if (arrived_.wait_until(lock, deadline) == std::cv_status::timeout &&
          !arrived()) {
        return absl::DeadlineExceededError(
            "no answer from the simulation server in time");
      }
      continue;
    }
    reading_ = true;
    lock.unlock();
    absl::StatusOr<Message> m = read_message(fd_, reader_, deadline);
    lock.lock();
    reading_ = false;
    if (m.ok()) {
      dispatch(*std::move(m));
    } else if (broken_.ok()) {
      // An answer may still come and would be read as the next one's: the
      // connection is of no use from now on.
      broken_ = m.status();
    }
    // A message for another thread, or the reading given up: wake them
    // (one of them reads next).
    arrived_.notify_all();
  }
}

void RemoteWorld::dispatch(Message m) {
  switch (m.type) {
    case MsgType::kFatal:
      ended(m);
    case MsgType::kStep:
      deliver(m);
      ++steps_read_;
      return;
    default:
      answers_.emplace(answers_read_++, std::move(m));
      return;
  }
}

absl::StatusOr<Message> RemoteWorld::await_answer(uint64_t ticket,
                                                  MsgType want) {
  absl::Status s = await([&] { return answers_.contains(ticket); },
                         SteadyClock::now() + kRequestTimeout);
  if (!s.ok()) return s;
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = answers_.find(ticket);
  Message m = std::move(it->second);
  answers_.erase(it);
  if (m.type != want) {
    return absl::InternalError(
        absl::StrFormat("the simulation server sent '%s' where '%s' was due",
                        msg_type_name(m.type), msg_type_name(want)));
  }
  return m;
}

absl::StatusOr<Message> RemoteWorld::request(
    MsgType type, std::span<const std::span<const std::byte>> parts,
    MsgType answer, int pass_fd) {
  absl::StatusOr<uint64_t> ticket;
  {
    const std::lock_guard<std::mutex> lock(send_mutex_);
    ticket = send_request(type, parts, pass_fd);
  }
  if (!ticket.ok()) return ticket.status();
  return await_answer(*ticket, answer);
}

absl::Status RemoteWorld::wait(std::string_view what,
                               std::optional<TimeNs> wake_at_ns) {
  uint64_t steps_before = 0;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    WEFT_ASSERT(!waiting_, "two threads wait at the server at once");
    if (crashed_) {
      return absl::AbortedError(absl::StrFormat(
          "rank %u has crashed (the simulation's fault plan)", rank_));
    }
    waiting_ = true;
    steps_before = steps_read_;
  }
  Wait w;
  w.wake_at_ns = wake_at_ns.value_or(-1);
  w.what_bytes = static_cast<uint32_t>(what.size());
  const std::array<std::span<const std::byte>, 2> parts = {bytes_of(w),
                                                           text_bytes(what)};
  absl::Status s = send(MsgType::kWait, parts);
  // The server answers this rank's one wait with one Step.
  if (s.ok()) {
    s = await([&] { return steps_read_ > steps_before; },
              SteadyClock::now() + wait_timeout_);
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  waiting_ = false;
  if (s.ok() && crashed_) {
    return absl::AbortedError(absl::StrFormat(
        "rank %u has crashed (the simulation's fault plan)", rank_));
  }
  return s;
}

// REQUIRES: mutex_ held.
void RemoteWorld::deliver(const Message& m) {
  std::optional<Step> step = m.fixed<Step>();
  if (!step) return;
  if (step->now_ns > clock_.now_ns()) clock_.advance_to(step->now_ns);
  crashed_ = crashed_ || (step->flags & kStepCrashed) != 0;
  released_ = released_ || (step->flags & kStepReleased) != 0;
  std::span<const std::byte> rest = m.tail<Step>();
  for (uint32_t i = 0; i < step->completions; ++i) {
    if (rest.size() < sizeof(StepCompletion)) return;
    StepCompletion c;
    std::memcpy(&c, rest.data(), sizeof(c));
    rest = rest.subspan(sizeof(c));
    auto ep = endpoints_.find(c.qp_num);
    if (ep != endpoints_.end()) ep->second->complete(c);
  }
  for (uint32_t i = 0; i < step->writes; ++i) {
    if (rest.size() < sizeof(StepWrite)) return;
    StepWrite w;
    std::memcpy(&w, rest.data(), sizeof(w));
    rest = rest.subspan(sizeof(w));
    const Slab* slab = fabric_->slab(w.frame.slab);
    absl::StatusOr<Frame> frame =
        slab == nullptr ? absl::NotFoundError("no such slab")
                        : slab->frame(w.frame.offset, w.frame.bytes);
    if (!frame.ok()) continue;
    writes_.push_back(sim::WrittenRange{w.rkey, w.address, *frame});
  }
  for (uint32_t i = 0; i < step->departures; ++i) {
    if (rest.size() < sizeof(StepDeparture)) return;
    StepDeparture d;
    std::memcpy(&d, rest.data(), sizeof(d));
    rest = rest.subspan(sizeof(d));
    departures_.record(d.rank, d.left_at_ns);
  }
}

size_t RemoteWorld::pending_completions() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  size_t n = 0;
  for (const auto& [num, ep] : endpoints_) n += ep->pending();
  return n;
}

absl::StatusOr<bool> RemoteWorld::crashed(uint32_t rank) {
  Query q;
  q.kind = static_cast<uint32_t>(QueryKind::kCrashed);
  q.rank = rank;
  const std::array<std::span<const std::byte>, 1> parts = {bytes_of(q)};
  absl::StatusOr<Message> m = request(MsgType::kQuery, parts, MsgType::kAnswer);
  if (!m.ok()) return m.status();
  std::optional<Answer> a = m->fixed<Answer>();
  if (!a) return absl::InternalError("a malformed answer from the server");
  return a->value != 0;
}

absl::Status RemoteWorld::register_region(uint32_t rkey, const Frame& region,
                                          uint64_t address, bool remote_write) {
  RegisterRegion r;
  r.rkey = rkey;
  r.thread = thread_tag();
  r.remote_write = remote_write ? 1 : 0;
  r.address = address;
  if (absl::Status s = frame_ref(region, &r.frame); !s.ok()) return s;
  const std::array<std::span<const std::byte>, 1> parts = {bytes_of(r)};
  return post(MsgType::kRegisterRegion, parts);
}

absl::Status RemoteWorld::unregister_region(uint32_t rkey) {
  UnregisterRegion r;
  r.rkey = rkey;
  r.thread = thread_tag();
  const std::array<std::span<const std::byte>, 1> parts = {bytes_of(r)};
  return post(MsgType::kUnregisterRegion, parts);
}

std::vector<sim::WrittenRange> RemoteWorld::take_writes() {
  const std::lock_guard<std::mutex> lock(mutex_);
  return std::exchange(writes_, {});
}

bool RemoteWorld::has_writes() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return !writes_.empty();
}

bool RemoteWorld::crashed() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return crashed_;
}

bool RemoteWorld::released() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return released_;
}

std::vector<Departure> RemoteWorld::departed() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::span<const Departure> visible =
      departures_.visible_at(clock_.now_ns());
  return std::vector<Departure>(visible.begin(), visible.end());
}

absl::StatusOr<uint64_t> RemoteWorld::trace_hash() {
  Query q;
  q.kind = static_cast<uint32_t>(QueryKind::kTraceHash);
  const std::array<std::span<const std::byte>, 1> parts = {bytes_of(q)};
  absl::StatusOr<Message> m = request(MsgType::kQuery, parts, MsgType::kAnswer);
  if (!m.ok()) return m.status();
  std::optional<Answer> a = m->fixed<Answer>();
  if (!a) return absl::InternalError("a malformed answer from the server");
  return static_cast<uint64_t>(a->value);
}

}  // namespace weft::sim_server
