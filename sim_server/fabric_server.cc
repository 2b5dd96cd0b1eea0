// FabricServer, the clients' side: the socket, accepting and dropping
// clients, reading their messages (the socket, then their post rings) and
// answering or queueing each request. The barrier that applies the queued
// requests to the world is in fabric_server_world.cc.
#include "sim_server/fabric_server.h"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "fabric/work_id.h"
#include "sim_server/internal/server_state.h"
#include "sim_server/shared_memory.h"

namespace weft::sim_server {
namespace {

// A request in the words of the verbs call that sends it (the provider's),
// for the hold report; nullptr for what is no call of the program's.
const char* verbs_call(MsgType type) {
  switch (type) {
    case MsgType::kHello:
      return "ibv_get_device_list";
    case MsgType::kOpen:
      return "ibv_create_qp";
    case MsgType::kConnect:
      return "ibv_modify_qp to ready-to-receive";
    case MsgType::kPostSend:
      return "ibv_post_send";
    case MsgType::kPostRecv:
      return "ibv_post_recv";
    case MsgType::kClose:
      return "ibv_destroy_qp";
    case MsgType::kRegisterSlab:
      return "a memory allocation (ibv_reg_mr or ibv_create_cq)";
    case MsgType::kRegisterRegion:
      return "ibv_reg_mr";
    case MsgType::kUnregisterRegion:
      return "ibv_dereg_mr";
    case MsgType::kMoveToError:
      return "ibv_modify_qp to the error state";
    case MsgType::kQuery:
      return "a query of the simulated world";
    default:
      return nullptr;
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<FabricServer>> FabricServer::create(
    ServerOptions options) {
  sockaddr_un addr{};
  if (options.socket_path.empty() ||
      options.socket_path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "socket path '%s' is empty or longer than %u bytes: use a shorter "
        "directory",
        options.socket_path, sizeof(addr.sun_path) - 1));
  }
  // Any process that can open the socket can play a rank: its directory
  // must be this user's alone.
  const std::string dir =
      std::filesystem::path(options.socket_path).parent_path().string();
  struct stat st {};
  if (::stat(dir.empty() ? "." : dir.c_str(), &st) != 0 ||
      !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
      (st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the socket's directory '%s' must exist, be yours and be closed to "
        "others (mode 0700: mkdir -m 700 DIR), since any process that can "
        "open the socket can play a rank",
        dir.empty() ? "." : dir));
  }
  absl::StatusOr<std::unique_ptr<sim::World>> world =
      sim::World::create(options.world);
  if (!world.ok()) return world.status();
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("socket(): ", std::strerror(errno)));
  }
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, options.socket_path.data(),
              options.socket_path.size());
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, 64) != 0) {
    const int err = errno;
    ::close(fd);
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot listen on '%s': %s", options.socket_path, std::strerror(err)));
  }
  return std::unique_ptr<FabricServer>(
      new FabricServer(std::move(options), *std::move(world), fd));
}

FabricServer::FabricServer(ServerOptions options,
                           std::unique_ptr<sim::World> world, int fd)
    : options_(std::move(options)), world_(std::move(world)), listen_fd_(fd) {
  for (uint32_t r = 0; r < world_->ranks(); ++r) {
    auto rank = std::make_unique<Rank>();
    rank->index = r;
    rank->expected = options_.expected_ranks.empty() ||
                     std::find(options_.expected_ranks.begin(),
                               options_.expected_ranks.end(),
                               r) != options_.expected_ranks.end();
    ranks_.push_back(std::move(rank));
  }
}

FabricServer::~FabricServer() {
  for (auto& c : clients_) ::close(c->fd);
  qps_.clear();  // endpoints before the world
  ::close(listen_fd_);
  ::unlink(options_.socket_path.c_str());
}

std::optional<pid_t> FabricServer::pid_of(uint32_t rank) const {
  if (rank >= ranks_.size() || ranks_[rank]->client == nullptr) {
    return std::nullopt;
  }
  return ranks_[rank]->client->pid;
}

ServeResult FabricServer::serve() {
  const auto started = SteadyClock::now();
  while (!result_) {
    std::vector<pollfd> fds;
    fds.push_back({listen_fd_, POLLIN, 0});
    for (const auto& c : clients_) fds.push_back({c->fd, POLLIN, 0});
    const size_t clients = clients_.size();
    if (options_.wake_fd >= 0) fds.push_back({options_.wake_fd, POLLIN, 0});
    const int n = ::poll(fds.data(), fds.size(), kTickMs);
    if (n < 0 && errno != EINTR) break;
    if (n > 0) {
      // Clients first (in the order they came), then new ones.
      std::vector<Client*> ready;
      for (size_t i = 1; i <= clients; ++i) {
        if (fds[i].revents != 0) ready.push_back(clients_[i - 1].get());
      }
      for (Client* c : ready) read_client(*c);
      if ((fds[0].revents & POLLIN) != 0) accept_client();
    }
    if (options_.tick && !options_.tick()) {
      result_ = ServeResult{ServeResult::Outcome::kStopped,
                            world_->clock().now_ns(), ""};
      break;
    }
    // The ranks have connect_timeout to come, from the first connection
    // (or from the start, when none has come).
    if (SteadyClock::now() - first_connect_.value_or(started) >
        options_.connect_timeout) {
      for (auto& r : ranks_) {
        if (r->expected && !r->ever_connected && !r->gone) {
          std::fprintf(stderr,
                       "weft-sim serve: rank %u did not connect within %lld "
                       "s; counting it as gone\n",
                       r->index,
                       static_cast<long long>(
                           std::chrono::duration_cast<std::chrono::seconds>(
                               options_.connect_timeout)
                               .count()));
          r->gone = true;
        }
      }
    }
    try_step();
    report_holders();
    bool finished = true;
    for (const auto& r : ranks_) {
      if (r->expected && !r->gone) finished = false;
    }
    if (finished && !result_) {
      std::vector<uint32_t> missing;
      for (const auto& r : ranks_) {
        if (r->expected && !r->ever_connected) missing.push_back(r->index);
      }
      result_ = released_result_.value_or(
          ServeResult{missing.empty() ? ServeResult::Outcome::kFinished
                                      : ServeResult::Outcome::kMissingRanks,
                      world_->clock().now_ns(), "", std::move(missing)});
    }
  }
  return result_.value_or(ServeResult{ServeResult::Outcome::kStopped,
                                      world_->clock().now_ns(), ""});
}

void FabricServer::accept_client() {
  const int fd =
      ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
  if (fd < 0) return;
  auto c = std::make_unique<Client>();
  c->fd = fd;
  // The pid the kernel vouches for (what --on_crash=kill signals), not the
  // one the client's hello claims.
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    c->pid = cred.pid;
  }
  clients_.push_back(std::move(c));
  if (!first_connect_) first_connect_ = SteadyClock::now();
}

bool FabricServer::read_client(Client& client) {
  bool closed = false;
  absl::Status status = client.reader.fill(client.fd, &closed);
  if (!status.ok()) {
    drop(client, std::string(status.message()));
    return false;
  }
  while (std::optional<Message> m = client.reader.next()) {
    // What the client put in its ring came before what it sent since.
    if (client.hello && !drain_ring(client)) return false;
    const bool takes_fd =
        m->type == MsgType::kHello || m->type == MsgType::kRegisterSlab;
    if (!handle(client, *m)) return false;
    // File descriptors sent with messages that take none are closed.
    if (!takes_fd) client.reader.close_fds();
  }
  if (closed) {
    // Posts it made before it went count, as those it sent did.
    if (client.hello && !drain_ring(client)) return false;
    drop(client, "");
    return false;
  }
  return true;
}

void FabricServer::drop(Client& client, const std::string& why) {
  if (!why.empty()) {
    const std::string text = absl::StrCat("weft-sim serve: ", why);
    const std::array<std::span<const std::byte>, 1> parts = {
        std::as_bytes(std::span(text))};
    (void)write_message(client.fd, MsgType::kFatal, parts, write_deadline());
    std::fprintf(
        stderr, "weft-sim serve: dropped a client%s: %s\n",
        client.hello ? absl::StrFormat(" (rank %u)", client.rank).c_str() : "",
        why.c_str());
  }
  ::close(client.fd);
  if (client.hello && ranks_[client.rank]->client == &client) {
    leave(client.rank);
  }
  std::erase_if(clients_, [&](const auto& c) { return c.get() == &client; });
}

void FabricServer::rank_gone(uint32_t rank) {
  if (rank >= ranks_.size()) return;
  Rank& r = *ranks_[rank];
  if (r.client != nullptr) {
    // What the process sent before it ended counts, however the launcher
    // and the socket's end of file are ordered: read it all (the socket is
    // closed, so this ends in its end of file and the drop).
    Client* c = r.client;
    if (read_client(*c) && r.client == c) drop(*c, "");
  } else {
    r.gone = true;
  }
}

bool FabricServer::handle(Client& client, const Message& m) {
  if (!client.hello) {
    if (m.type != MsgType::kHello) {
      drop(client, "the first message must be hello");
      return false;
    }
    return handle_hello(client, m);
  }
  if (const char* call = verbs_call(m.type)) {
    ranks_[client.rank]->last_call = call;
  }
  switch (m.type) {
    case MsgType::kOpen:
      return handle_open(client, m);
    case MsgType::kConnect:
    case MsgType::kPostSend:
    case MsgType::kPostRecv:
    case MsgType::kClose:
    case MsgType::kRegisterRegion:
    case MsgType::kUnregisterRegion:
    case MsgType::kMoveToError:
      return queue_action(client, m);
    case MsgType::kWait:
      return handle_wait(client, m);
    case MsgType::kQuery:
      return handle_query(client, m);
    case MsgType::kRegisterSlab:
      return handle_register_slab(client, m);
    case MsgType::kDrainRing: {
      // read_client drained the ring before this message: say so.
      Answer a;
      const std::array<std::span<const std::byte>, 1> parts = {bytes_of(a)};
      return send_to(client, MsgType::kAnswer, parts);
    }
    default:
      drop(client, absl::StrFormat("a client may not send '%s'",
                                   msg_type_name(m.type)));
      return false;
  }
}

bool FabricServer::handle_hello(Client& client, const Message& m) {
  std::optional<Hello> hello = m.fixed<Hello>();
  Welcome w;
  std::string text;
  if (!hello) {
    text = "a hello message too short for its structure";
  } else if (hello->version != kProtocolVersion) {
    text = absl::StrFormat(
        "client speaks protocol version %u, this server %u: use the "
        "provider library built with this weft-sim",
        hello->version, kProtocolVersion);
  } else if (hello->rank >= ranks_.size()) {
    text = absl::StrFormat(
        "rank %u is outside this world's %u ranks (set WEFT_SIM_RANK)",
        hello->rank, ranks_.size());
  } else if (ranks_[hello->rank]->client != nullptr ||
             ranks_[hello->rank]->gone) {
    text =
        absl::StrFormat("rank %u %s: each rank is one process", hello->rank,
                        ranks_[hello->rank]->gone ? "has already come and gone"
                                                  : "is already connected");
  } else {
    const int channel_fd = client.reader.take_fd();
    absl::StatusOr<std::unique_ptr<Slab>> channel =
        channel_fd < 0
            ? absl::InvalidArgumentError(
                  "a hello without its post ring's memfd")
            : map_shared_slab(channel_fd, MessageRing::kMappingBytes);
    if (channel_fd >= 0) ::close(channel_fd);
    if (channel.ok()) {
      client.channel = *std::move(channel);
      client.ring.emplace(client.channel->data(), false);
    } else {
      text = std::string(channel.status().message());
    }
  }
  if (!text.empty()) {
    w.ok = 0;
    w.text_bytes = static_cast<uint32_t>(text.size());
    const std::array<std::span<const std::byte>, 2> parts = {
        bytes_of(w), std::as_bytes(std::span(text))};
    (void)write_message(client.fd, MsgType::kWelcome, parts, write_deadline());
    std::fprintf(stderr, "weft-sim serve: refused a client: %s\n",
                 text.c_str());
    ::close(client.fd);
    std::erase_if(clients_, [&](const auto& c) { return c.get() == &client; });
    return false;
  }
  client.hello = true;
  client.rank = hello->rank;
  client.program.assign(hello->program,
                        strnlen(hello->program, sizeof(hello->program)));
  Rank& r = *ranks_[client.rank];
  r.client = &client;
  r.ever_connected = true;
  r.since = SteadyClock::now();
  r.last_call = verbs_call(MsgType::kHello);
  const std::string topology = world_->options().topology.to_json();
  w.ok = 1;
  w.rank = client.rank;
  w.ranks = world_->ranks();
  w.now_ns = world_->clock().now_ns();
  w.seed = world_->options().seed;
  w.apple_limits = world_->options().apple_limits ? 1 : 0;
  w.text_bytes = static_cast<uint32_t>(topology.size());
  const std::array<std::span<const std::byte>, 2> parts = {
      bytes_of(w), std::as_bytes(std::span(topology))};
  return send_to(client, MsgType::kWelcome, parts);
}

bool FabricServer::handle_open(Client& client, const Message& m) {
  std::optional<Open> open = m.fixed<Open>();
  std::span<const std::byte> tail = m.tail<Open>();
  Opened reply;
  std::string text;
  Rank& r = *ranks_[client.rank];
  if (!open || tail.size() != open->name_bytes) {
    drop(client, "an open message whose name does not fit it");
    return false;
  }
  const std::string device(reinterpret_cast<const char*>(tail.data()),
                           tail.size());
  const Topology& topology = world_->options().topology;
  if (open->peer >= topology.ranks() || open->peer == client.rank ||
      std::find(topology.devices(client.rank, open->peer).begin(),
                topology.devices(client.rank, open->peer).end(),
                device) == topology.devices(client.rank, open->peer).end()) {
    text = absl::StrFormat("rank %u has no device '%s' cabled to rank %u",
                           client.rank, device, open->peer);
  } else if (r.next_qp >= kQpsPerRank) {
    text = absl::StrFormat(
        "rank %u has opened %u queue pairs, the most "
        "the server numbers",
        client.rank, kQpsPerRank);
    reply.resource_exhausted = 1;
  }
  if (text.empty()) {
    const uint32_t num = ((client.rank + 1) << 12) | r.next_qp++;
    auto qp = std::make_unique<Qp>();
    qp->num = num;
    qp->rank = client.rank;
    qp->peer = open->peer;
    qp->device = device;
    qps_.emplace(num, std::move(qp));
    Action a;
    a.type = MsgType::kOpen;
    a.qp_num = num;
    r.actions.push_back(std::move(a));
    reply.ok = 1;
    reply.qp_num = num;
  }
  reply.text_bytes = static_cast<uint32_t>(text.size());
  const std::array<std::span<const std::byte>, 2> parts = {
      bytes_of(reply), std::as_bytes(std::span(text))};
  return send_to(client, MsgType::kOpened, parts);
}

bool FabricServer::queue_action(Client& client, const Message& m) {
  Action a;
  a.type = m.type;
  bool ok = false;
  switch (m.type) {
    case MsgType::kConnect:
      if (auto c = m.fixed<Connect>()) {
        a.thread = c->thread;
        a.qp_num = c->qp_num;
        a.remote_qp_num = c->remote_qp_num;
        ok = m.body.size() == sizeof(Connect);
      }
      break;
    case MsgType::kPostSend:
      if (auto p = m.fixed<PostSend>()) {
        a.thread = p->thread;
        a.qp_num = p->qp_num;
        a.work_id = p->work_id;
        a.immediate = p->immediate;
        a.length = p->length;
        a.has_immediate = (p->flags & kSendWithoutImmediate) == 0;
        a.rdma_write = (p->flags & kRdmaWrite) != 0;
        a.address = p->remote_address;
        a.rkey = p->rkey;
        ok = m.body.size() == sizeof(PostSend) &&
             resolve(client, p->frame, &a.frame) &&
             p->length <= a.frame.bytes();
      }
      break;
    case MsgType::kRegisterRegion:
      if (auto r = m.fixed<RegisterRegion>()) {
        a.thread = r->thread;
        a.rkey = r->rkey;
        a.address = r->address;
        a.remote_write = r->remote_write != 0;
        ok = m.body.size() == sizeof(RegisterRegion) &&
             resolve(client, r->frame, &a.frame);
      }
      break;
    case MsgType::kUnregisterRegion:
      if (auto r = m.fixed<UnregisterRegion>()) {
        a.thread = r->thread;
        a.rkey = r->rkey;
        ok = m.body.size() == sizeof(UnregisterRegion);
      }
      break;
    case MsgType::kPostRecv:
      if (auto p = m.fixed<PostRecv>()) {
        a.thread = p->thread;
        a.qp_num = p->qp_num;
        a.work_id = p->work_id;
        ok = m.body.size() == sizeof(PostRecv) &&
             resolve(client, p->frame, &a.frame);
        a.length = a.frame.bytes();
      }
      break;
    case MsgType::kClose:
    case MsgType::kMoveToError:
      if (auto c = m.fixed<Close>()) {
        a.thread = c->thread;
        a.qp_num = c->qp_num;
        ok = m.body.size() == sizeof(Close);
      }
      break;
    default:
      break;
  }
  const bool region = m.type == MsgType::kRegisterRegion ||
                      m.type == MsgType::kUnregisterRegion;
  auto qp = qps_.find(a.qp_num);
  if (!ok || a.thread == kServerThread ||
      (!region && (qp == qps_.end() || qp->second->rank != client.rank))) {
    drop(client, absl::StrFormat("a malformed '%s' message, or one naming "
                                 "queue pair %u, which is not this rank's",
                                 msg_type_name(m.type), a.qp_num));
    return false;
  }
  // A post names its own kind of work (the completion's counters go by
  // it).
  if (m.type == MsgType::kPostSend || m.type == MsgType::kPostRecv) {
    const std::optional<WorkId> id = WorkId::decode(a.work_id);
    const WorkKind want =
        m.type == MsgType::kPostSend ? WorkKind::kSend : WorkKind::kRecv;
    if (!id || id->kind != want) {
      drop(client, absl::StrFormat("a '%s' whose work id is not one",
                                   msg_type_name(m.type)));
      return false;
    }
  }
  std::deque<Action>& actions = ranks_[client.rank]->actions;
  if (actions.size() >= kMaxQueuedActions) {
    drop(client,
         absl::StrFormat("more than %u requests queued without a wait; wait on "
                         "the fabric (poll a completion queue) now and then",
                         kMaxQueuedActions));
    return false;
  }
  actions.push_back(std::move(a));
  return true;
}

bool FabricServer::resolve(const Client& client, const FrameRef& ref,
                           Frame* out) const {
  auto slab = client.slabs.find(ref.slab);
  if (slab == client.slabs.end()) return false;
  absl::StatusOr<Frame> frame = slab->second->frame(ref.offset, ref.bytes);
  if (!frame.ok()) return false;
  *out = *frame;
  return true;
}

bool FabricServer::drain_ring(Client& client) {
  if (!client.ring) return true;
  for (;;) {
    absl::StatusOr<std::optional<Message>> m = client.ring->read();
    if (!m.ok()) {
      drop(client, std::string(m.status().message()));
      return false;
    }
    if (!m->has_value()) return true;
    const MsgType type = (*m)->type;
    if (type != MsgType::kConnect && type != MsgType::kPostSend &&
        type != MsgType::kPostRecv && type != MsgType::kClose &&
        type != MsgType::kRegisterRegion &&
        type != MsgType::kUnregisterRegion && type != MsgType::kMoveToError) {
      drop(client, absl::StrFormat("'%s' does not go through the post ring",
                                   msg_type_name(type)));
      return false;
    }
    if (!queue_action(client, **m)) return false;
    ranks_[client.rank]->last_call = verbs_call(type);
  }
}

bool FabricServer::handle_register_slab(Client& client, const Message& m) {
  std::optional<RegisterSlab> r = m.fixed<RegisterSlab>();
  const int fd = client.reader.take_fd();
  absl::StatusOr<std::unique_ptr<Slab>> slab =
      !r || m.body.size() != sizeof(RegisterSlab) || fd < 0
          ? absl::InvalidArgumentError(
                "a register_slab message without its slab's memfd")
          : map_shared_slab(fd, r->bytes);
  if (fd >= 0) ::close(fd);
  if (!slab.ok() || client.slabs.contains(r->slab)) {
    drop(client, slab.ok() ? "a slab registered twice"
                           : std::string(slab.status().message()));
    return false;
  }
  Slab* adopted = world_->adopt_slab(client.rank, *std::move(slab));
  client.slabs[r->slab] = adopted;
  client.slab_ids[adopted] = r->slab;
  Answer a;
  const std::array<std::span<const std::byte>, 1> parts = {bytes_of(a)};
  return send_to(client, MsgType::kAnswer, parts);
}

bool FabricServer::handle_wait(Client& client, const Message& m) {
  std::optional<Wait> wait = m.fixed<Wait>();
  std::span<const std::byte> tail = m.tail<Wait>();
  if (!wait || tail.size() != wait->what_bytes) {
    drop(client, "a wait message whose text does not fit it");
    return false;
  }
  Rank& r = *ranks_[client.rank];
  r.waiting = true;
  r.since = SteadyClock::now();
  r.waits_in.assign(reinterpret_cast<const char*>(tail.data()), tail.size());
  r.last_call = r.waits_in.empty() ? "a wait on the fabric" : r.waits_in;
  r.wake_at = wait->wake_at_ns >= 0 ? std::optional<TimeNs>(wait->wake_at_ns)
                                    : std::nullopt;
  // Each answer may drop the client (a failed write): then report it gone.
  if (released_) return answer(r, kStepReleased);
  if (r.crash_noticed) return answer(r, kStepCrashed);
  if (world_->stalled(r.index)) {
    return true;  // a stalled rank's waits return when the stall ends
  }
  if (r.outbox_count > 0 || r.writes_count > 0 ||
      (r.wake_at && *r.wake_at <= world_->clock().now_ns())) {
    // What it waits for is here already: no barrier needed, and nothing
    // of the world changes.
    return answer(r, 0);
  }
  return true;
}

bool FabricServer::handle_query(Client& client, const Message& m) {
  std::optional<Query> q = m.fixed<Query>();
  Answer a;
  if (!q) {
    drop(client, "a query message too short for its structure");
    return false;
  }
  switch (static_cast<QueryKind>(q->kind)) {
    case QueryKind::kTraceHash:
      a.value = static_cast<int64_t>(world_->trace().hash());
      break;
    case QueryKind::kCrashed:
      a.value = q->rank < ranks_.size() && world_->crashed(q->rank) ? 1 : 0;
      break;
    default:
      drop(client, absl::StrFormat("unknown query %u", q->kind));
      return false;
  }
  const std::array<std::span<const std::byte>, 1> parts = {bytes_of(a)};
  return send_to(client, MsgType::kAnswer, parts);
}

}  // namespace weft::sim_server
