// threaded_ring DIR [ROUNDS] [--deadlock]: a verbs program whose threads
// share the fabric the way JACCL's multi-cable ring does, linked against
// libibverbs like any rdma-core program, for `weft-sim launch` to run as N
// ranks of a ring (--topology=ring, any --cables). Each rank has one queue
// pair per neighbour and cable (a "wire"), each driven by a thread of its
// own: in every round a wire posts its next round's receives, sends its
// messages, and polls its completion queue until they are sent and its
// peer's have arrived, checking every byte. A pool of worker threads
// (idle on a condition variable between rounds) runs every wire but the
// one with the fewest messages, which the main thread runs itself before
// it waits for the others on std::futures, outside any verbs call, so it
// usually waits there while the workers still post and poll.
//
// With --deadlock every rank leaves out the last message to its right
// neighbour on cable 0 in the last round: each rank's wire from its left
// neighbour then waits for ever, while its other threads wait for that
// one, a true deadlock the simulation server must report.
//
// The ranks swap queue pair numbers and GIDs through files in DIR. Prints
// one line per rank when every message was right, and exits 0; 1 with a
// line saying what went wrong. Every wait has a deadline.
#include <infiniband/verbs.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr uint32_t kBytes = 2048;
constexpr uint32_t kMessagesPerWire = 4;  // the inline wire's; others more
constexpr uint32_t kMaxMessages = 64;
constexpr uint8_t kGidIndex = 1;
constexpr int kDefaultRounds = 6;
constexpr auto kWaitLimit = std::chrono::seconds(120);

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "threaded_ring: %s\n", what.c_str());
  std::fflush(nullptr);
  std::_Exit(1);
}

uint8_t pattern(uint32_t from, uint32_t to, uint32_t cable, uint32_t round,
                uint32_t message, uint32_t i) {
  return static_cast<uint8_t>(from * 31 + to * 17 + cable * 13 + round * 7 +
                              message * 5 + i * 3 + 1);
}

// One queue pair to one neighbour over one cable, and what its thread
// needs.
struct Wire {
  uint32_t peer = 0;
  uint32_t cable = 0;
  uint32_t messages = 0;  // sent (and received) per round
  ibv_context* ctx = nullptr;
  ibv_pd* pd = nullptr;
  ibv_cq* cq = nullptr;
  ibv_qp* qp = nullptr;
  ibv_mr* mr = nullptr;
  // Receive slots for two rounds, then one send slot per message.
  std::vector<uint8_t> buffer;
  ibv_gid gid{};
  uint8_t* recv_slot(uint32_t round, uint32_t m) {
    return buffer.data() + ((round % 2) * kMaxMessages + m) * kBytes;
  }
  uint8_t* send_slot(uint32_t m) {
    return buffer.data() + (2 * kMaxMessages + m) * kBytes;
  }
};

// What a rank publishes per wire.
struct Record {
  uint32_t peer = 0;  // the publisher's peer: the reader
  uint32_t cable = 0;
  uint32_t qp_num = 0;
  uint32_t pad = 0;
  ibv_gid gid{};
};

ibv_context* open_named(const std::string& name) {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr) fail("ibv_get_device_list failed");
  ibv_context* ctx = nullptr;
  for (int i = 0; i < n && ctx == nullptr; ++i) {
    if (name == ibv_get_device_name(list[i])) ctx = ibv_open_device(list[i]);
  }
  ibv_free_device_list(list);
  if (ctx == nullptr) fail("no device " + name);
  return ctx;
}

void post_receives(Wire& w, uint32_t round) {
  for (uint32_t m = 0; m < w.messages; ++m) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(w.recv_slot(round, m)), kBytes,
                w.mr->lkey};
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    wr.wr_id = m;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (ibv_post_recv(w.qp, &wr, &bad) != 0) fail("ibv_post_recv failed");
  }
}

void open_wire(Wire& w, uint32_t rank) {
  w.ctx = open_named("sim_" + std::to_string(rank) + "_" +
                     std::to_string(w.peer) + "_" + std::to_string(w.cable));
  w.pd = ibv_alloc_pd(w.ctx);
  w.buffer.assign((2 * kMaxMessages + kMaxMessages) * kBytes, 0);
  w.mr = w.pd != nullptr ? ibv_reg_mr(w.pd, w.buffer.data(), w.buffer.size(),
                                      IBV_ACCESS_LOCAL_WRITE)
                         : nullptr;
  w.cq = ibv_create_cq(w.ctx, 4 * kMaxMessages, nullptr, nullptr, 0);
  if (w.mr == nullptr || w.cq == nullptr) fail("setup failed");
  ibv_qp_init_attr init{};
  init.send_cq = w.cq;
  init.recv_cq = w.cq;
  init.cap.max_send_wr = kMaxMessages;
  init.cap.max_recv_wr = 2 * kMaxMessages;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  init.qp_type = IBV_QPT_UC;
  w.qp = ibv_create_qp(w.pd, &init);
  if (w.qp == nullptr) fail("ibv_create_qp failed");
  if (ibv_query_gid(w.ctx, 1, kGidIndex, &w.gid) != 0) fail("no GID");
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.port_num = 1;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
  if (ibv_modify_qp(w.qp, &attr,
                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
                        IBV_QP_ACCESS_FLAGS) != 0) {
    fail("INIT failed");
  }
  // Round 0's receives, before the peer can know where to send.
  post_receives(w, 0);
}

void connect_wire(Wire& w, const Record& far) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = IBV_MTU_1024;
  attr.dest_qp_num = far.qp_num;
  attr.ah_attr.is_global = 1;
  attr.ah_attr.port_num = 1;
  attr.ah_attr.grh.hop_limit = 1;
  attr.ah_attr.grh.dgid = far.gid;
  attr.ah_attr.grh.sgid_index = kGidIndex;
  if (ibv_modify_qp(w.qp, &attr,
                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                        IBV_QP_DEST_QPN | IBV_QP_RQ_PSN) != 0) {
    fail("RTR failed");
  }
  attr.qp_state = IBV_QPS_RTS;
  if (ibv_modify_qp(w.qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN) != 0) {
    fail("RTS failed");
  }
}

// Writes this rank's records whole under another name and renames them
// into place; reads a neighbour's, waiting (with a deadline) until it is
// there.
void publish(const std::string& dir, uint32_t rank,
             const std::vector<Wire>& wires) {
  const std::string path = dir + "/rank" + std::to_string(rank);
  {
    std::ofstream out(path + ".tmp", std::ios::binary);
    for (const Wire& w : wires) {
      Record r{w.peer, w.cable, w.qp->qp_num, 0, w.gid};
      out.write(reinterpret_cast<const char*>(&r), sizeof(r));
    }
  }
  if (std::rename((path + ".tmp").c_str(), path.c_str()) != 0) fail("rename");
}

Record record_for(const std::string& dir, uint32_t rank, const Wire& w) {
  const std::string path = dir + "/rank" + std::to_string(w.peer);
  const auto deadline = SteadyClock::now() + kWaitLimit;
  for (;;) {
    std::ifstream in(path, std::ios::binary);
    Record r;
    while (in.read(reinterpret_cast<char*>(&r), sizeof(r))) {
      if (r.peer == rank && r.cable == w.cable) return r;
    }
    if (SteadyClock::now() > deadline) fail("no record in " + path);
    usleep(10'000);  // the poll interval of a wait with a deadline
  }
}

// One wire's round: the next round's receives, the sends, then polling
// until every send completed and every message arrived, each checked.
// Returns a checksum of what arrived.
uint64_t run_wire(Wire& w, uint32_t rank, uint32_t round, uint32_t rounds,
                  bool skip_last) {
  if (round + 1 < rounds) post_receives(w, round + 1);
  const uint32_t sends = skip_last ? w.messages - 1 : w.messages;
  for (uint32_t m = 0; m < sends; ++m) {
    uint8_t* slot = w.send_slot(m);
    for (uint32_t i = 0; i < kBytes; ++i) {
      slot[i] = pattern(rank, w.peer, w.cable, round, m, i);
    }
    ibv_sge sge{reinterpret_cast<uintptr_t>(slot), kBytes, w.mr->lkey};
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = kMaxMessages + m;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    if (ibv_post_send(w.qp, &wr, &bad) != 0) fail("ibv_post_send failed");
  }
  uint32_t sent = 0;
  uint32_t received = 0;
  uint64_t sum = 0;
  const auto deadline = SteadyClock::now() + kWaitLimit;
  while (sent < sends || received < w.messages) {
    ibv_wc wc[8];
    const int n = ibv_poll_cq(w.cq, 8, wc);
    if (n < 0) fail("ibv_poll_cq failed");
    if (n == 0 && SteadyClock::now() > deadline) {
      fail("wire to rank " + std::to_string(w.peer) + " cable " +
           std::to_string(w.cable) + " timed out in round " +
           std::to_string(round));
    }
    for (int k = 0; k < n; ++k) {
      if (wc[k].status != IBV_WC_SUCCESS) {
        fail(std::string("completion failed: ") +
             ibv_wc_status_str(wc[k].status));
      }
      if (wc[k].opcode == IBV_WC_SEND) {
        ++sent;
        continue;
      }
      const auto m = static_cast<uint32_t>(wc[k].wr_id);
      if (m != received || wc[k].byte_len != kBytes) {
        fail("message " + std::to_string(m) + " out of order or short");
      }
      const uint8_t* slot = w.recv_slot(round, m);
      for (uint32_t i = 0; i < kBytes; ++i) {
        if (slot[i] != pattern(w.peer, rank, w.cable, round, m, i)) {
          fail("byte " + std::to_string(i) + " of message " +
               std::to_string(m) + " from rank " + std::to_string(w.peer) +
               " on cable " + std::to_string(w.cable) + " in round " +
               std::to_string(round) + " is " + std::to_string(slot[i]) +
               ", not " +
               std::to_string(pattern(w.peer, rank, w.cable, round, m, i)));
        }
        sum += slot[i];
      }
      ++received;
    }
  }
  return sum;
}

// Worker threads that wait for tasks on a condition variable, as JACCL's
// ThreadPool does (with a deadline).
class Pool {
 public:
  explicit Pool(size_t threads) {
    for (size_t i = 0; i < threads; ++i) {
      workers_.emplace_back([this] { work(); });
    }
  }
  ~Pool() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  std::future<uint64_t> run(std::function<uint64_t()> task) {
    auto packaged =
        std::make_shared<std::packaged_task<uint64_t()>>(std::move(task));
    std::future<uint64_t> result = packaged->get_future();
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      tasks_.emplace_back([packaged] { (*packaged)(); });
    }
    ready_.notify_one();
    return result;
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        if (!ready_.wait_until(lock, SteadyClock::now() + kWaitLimit,
                               [&] { return stop_ || !tasks_.empty(); })) {
          fail("a worker waited too long for a task");
        }
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace

int main(int argc, char** argv) {
  const char* rank_text = std::getenv("WEFT_SIM_RANK");
  if (argc < 2 || rank_text == nullptr) {
    fail(
        "usage: threaded_ring DIR [ROUNDS] [--deadlock] (under weft-sim "
        "launch --topology=ring)");
  }
  const auto rank = static_cast<uint32_t>(std::atoi(rank_text));
  const std::string dir = argv[1];
  int rounds = kDefaultRounds;
  bool deadlock = false;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--deadlock") == 0) {
      deadlock = true;
    } else {
      rounds = std::atoi(argv[i]);
    }
  }
  if (rounds < 1) fail("ROUNDS must be at least 1");
  // This rank's devices name its neighbours and cables: sim_<me>_<peer>_<c>.
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (list == nullptr || n < 1) fail("no device");
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (int i = 0; i < n; ++i) {
    unsigned me = 0, peer = 0, cable = 0;
    if (std::sscanf(ibv_get_device_name(list[i]), "sim_%u_%u_%u", &me, &peer,
                    &cable) == 3 &&
        me == rank) {
      seen.emplace(peer, cable);
    }
  }
  ibv_free_device_list(list);
  // A wire's message count is the same at both of its ends; the main
  // thread runs the wire with the fewest (the first, once sorted).
  std::vector<Wire> wires;
  for (const auto& [peer, cable] : seen) {
    Wire w;
    w.peer = peer;
    w.cable = cable;
    w.messages = kMessagesPerWire * (1 + cable + (rank + peer) % 3);
    wires.push_back(std::move(w));
  }
  std::stable_sort(
      wires.begin(), wires.end(),
      [](const Wire& a, const Wire& b) { return a.messages < b.messages; });
  // The right neighbour: rank + 1, or 0 for the last rank.
  const uint32_t right = seen.contains({rank + 1, 0}) ? rank + 1 : 0;
  size_t skipped = 0;
  for (size_t i = 0; i < wires.size(); ++i) {
    if (wires[i].cable == 0 && wires[i].peer == right) skipped = i;
  }
  for (Wire& w : wires) open_wire(w, rank);
  publish(dir, rank, wires);
  for (Wire& w : wires) connect_wire(w, record_for(dir, rank, w));

  Pool pool(wires.size() - 1);
  uint64_t total = 0;
  for (uint32_t round = 0; round < static_cast<uint32_t>(rounds); ++round) {
    const bool last = round + 1 == static_cast<uint32_t>(rounds);
    std::vector<std::future<uint64_t>> futures;
    for (size_t i = 1; i < wires.size(); ++i) {
      Wire* w = &wires[i];
      const bool skip = deadlock && last && i == skipped;
      futures.push_back(pool.run([=] {
        return run_wire(*w, rank, round, static_cast<uint32_t>(rounds), skip);
      }));
    }
    total += run_wire(wires.front(), rank, round, static_cast<uint32_t>(rounds),
                      deadlock && last && skipped == 0);
    // Outside any verbs call, as JACCL's dispatch_wires waits.
    for (std::future<uint64_t>& f : futures) {
      if (f.wait_until(SteadyClock::now() + kWaitLimit) !=
          std::future_status::ready) {
        fail("a wire's thread did not finish in time");
      }
      total += f.get();
    }
  }
  std::printf(
      "threaded_ring: rank %u: %d rounds on %zu wires, every byte "
      "right (sum %llu)\n",
      rank, rounds, wires.size(), static_cast<unsigned long long>(total));
  std::fflush(stdout);
  return 0;
}
