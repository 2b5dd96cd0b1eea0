// Provider: the simulated verbs provider's state and every verbs call it
// implements, on one simulated world: a sim::World whose ranks share the
// process, or (when WEFT_SIM_SERVER names a simulation server's socket) one
// rank of the server's world, through sim_server::RemoteWorld. It validates
// like a real provider (attribute masks, state transitions, queue pair numbers,
// GIDs, queue depth) and returns the errno a real one gives; Apple's quirks
// come from Config. Every public member is called with mutex() held (exports.cc
// takes it); a call that waits at the simulation server lets go of it while
// it waits, so the process's other threads post and poll meanwhile
// (provider_waits.cc).
#ifndef WEFT_SIM_VERBS_PROVIDER_H_
#define WEFT_SIM_VERBS_PROVIDER_H_

#include <infiniband/verbs.h>
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "fabric/clock.h"
#include "sim/frame_pool.h"
#include "sim/world.h"
#include "sim_server/remote_world.h"
#include "sim_server/thread_census.h"
#include "sim_verbs/config.h"
#include "sim_verbs/objects.h"

namespace weft::sim_verbs {

// Shadows by (rank, address, length) of the registered bytes.
using ShadowKey = std::tuple<uint32_t, uintptr_t, size_t>;
struct Shadow {
  Slab* slab = nullptr;
  uint32_t regions = 0;  // memory regions over these bytes
};

class Provider {
 public:
  // The process's one provider (never destroyed: the library is never
  // unloaded while weft runs).
  static Provider& instance();
  std::mutex& mutex() { return mutex_; }

  // Control (sim_verbs.h).
  int reset();
  int set_rank(uint32_t rank);
  int live(std::string_view kind, uint32_t rank, const char* device);
  int qp_sgid_index(uint32_t qp_num) const;
  // -1 (0 for the hash) when the world cannot be built.
  int64_t now_ns();
  // Nothing to do until a completion or `wake_at_ns` (-1: none): on the
  // simulation server, waits there (and from then on an empty poll_cq no
  // longer waits: the caller says when it waits); in-process, returns. 0,
  // or an errno.
  int idle(int64_t wake_at_ns);
  int crashed(uint32_t rank);
  int departed(uint32_t* ranks, int64_t* left_at_ns, int capacity);
  uint64_t trace_hash();
  const char* last_error() const { return last_error_.c_str(); }

  // Devices and contexts (provider.cc). Calls returning a pointer set errno
  // and return nullptr on failure; the others return an errno.
  ibv_device** get_device_list(int* num_devices);
  void free_device_list(ibv_device** list);
  const char* device_name(ibv_device* device);
  uint64_t device_guid(ibv_device* device);
  ibv_context* open_device(ibv_device* device);
  int close_device(ibv_context* context);
  int query_device(ibv_context* context, ibv_device_attr* attr);
  int query_port(ibv_context* context, uint8_t port, ibv_port_attr* attr);
  int query_gid(ibv_context* context, uint8_t port, int index, ibv_gid* gid);
  // rdma-core's private ibv_query_gid_type: 0 and *type (0: IB/RoCE v1, 1:
  // RoCE v2), or -1 with errno EINVAL.
  int query_gid_type(ibv_context* context, uint8_t port, unsigned int index,
                     int* type);

  // Protection domains, memory regions, completion queues
  // (provider_memory.cc).
  ibv_pd* alloc_pd(ibv_context* context);
  int dealloc_pd(ibv_pd* pd);
  ibv_mr* reg_mr(ibv_pd* pd, void* addr, size_t length, int access);
  int dereg_mr(ibv_mr* mr);
  ibv_cq* create_cq(ibv_context* context, int cqe, void* cq_context,
                    ibv_comp_channel* channel, int comp_vector);
  int destroy_cq(ibv_cq* cq);

  // Completion channels and events (provider_events.cc). In-process, a
  // wait is driven by the thread that waits: ibv_get_cq_event advances the
  // world as poll_cq does until an armed CQ of the channel gets a
  // completion, for at most the world's time limit of virtual time.
  ibv_comp_channel* create_comp_channel(ibv_context* context);
  int destroy_comp_channel(ibv_comp_channel* channel);
  int req_notify_cq(ibv_cq* cq, int solicited_only);
  // 0, or -1 with errno: ETIMEDOUT when the time limit passed (or nothing
  // in flight could ever raise an event), EAGAIN when the channel's fd is
  // non-blocking and no event is pending, EINVAL for an unknown channel.
  int get_cq_event(ibv_comp_channel* channel, ibv_cq** cq, void** cq_context);
  void ack_cq_events(ibv_cq* cq, unsigned int nevents);

  // Queue pairs (provider_qp.cc).
  ibv_qp* create_qp(ibv_pd* pd, ibv_qp_init_attr* attr);
  int destroy_qp(ibv_qp* qp);
  int modify_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask);
  int query_qp(ibv_qp* qp, ibv_qp_attr* attr, int mask,
               ibv_qp_init_attr* init_attr);

  // The operation table's data path (provider_data.cc).
  int post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad_wr);
  int post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad_wr);
  int poll_cq(ibv_cq* cq, int num_entries, ibv_wc* wc);

 private:
  Provider() = default;

  // Builds the world from the environment if there is none; false (with
  // last_error_ set and printed once) when it cannot.
  bool ensure_world();
  // Client mode: connects to the server named by WEFT_SIM_SERVER as the
  // rank the environment names, and takes the world's topology from it.
  absl::Status connect_to_server(Config* config);
  void build_devices();
  // The fabric of `rank`'s queue pairs: the in-process world's, or this
  // process's rank of the server's world.
  Fabric& fabric_of(uint32_t rank);
  TimeNs world_now_ns() const;
  // Client mode: true when a completion has arrived that no poll has
  // taken yet (in a CQ's stash or at an endpoint).
  bool has_local_work() const;
  // Client mode: waits at the server in `what` until it has something for
  // this rank or virtual time reaches `wake_at_ns`. 0, or an errno (EIO:
  // this rank crashed or the server has gone; ETIMEDOUT: the wall-clock
  // wait timeout passed), reported once on stderr. Lets go of mutex_
  // while it waits (provider_waits.cc). REQUIRES: mutex_ held.
  int wait_at_server(std::string_view what, std::optional<TimeNs> wake_at_ns);
  // The two parts of a wait: the thread that talks to the server (the
  // first to wait), and the others, which wait for it.
  int lead_wait(std::unique_lock<std::mutex>& lock, std::string_view what,
                std::optional<TimeNs> wake_at_ns,
                std::chrono::steady_clock::time_point deadline);
  int follow_wait(std::unique_lock<std::mutex>& lock, std::string_view what,
                  std::optional<TimeNs> wake_at_ns,
                  std::chrono::steady_clock::time_point deadline);
  // Until every other thread of the process waits (in verbs, or on a
  // thread of the process): 0, or ETIMEDOUT at `deadline`.
  int await_other_threads(std::unique_lock<std::mutex>& lock,
                          std::string_view what,
                          std::chrono::steady_clock::time_point deadline);
  // What the rank waits in, for the server's deadlock report: `what`, the
  // other threads' calls, and how many threads wait outside verbs.
  std::string wait_text(std::string_view what) const;
  // The followers still waiting (not yet answered).
  std::vector<pid_t> waiting_followers() const;
  int wait_error(const absl::Status& status);
  // Client mode: the rank posted or got a completion, so no CQ counts as
  // found empty any more.
  void note_activity();
  SimDevice* find_device(const ibv_device* device) const;
  SimContext* find_context(const ibv_context* context) const;
  SimPd* find_pd(const ibv_pd* pd) const;
  SimCq* find_cq(const ibv_cq* cq) const;
  SimQp* find_qp(const ibv_qp* qp) const;
  SimChannel* find_channel(const ibv_comp_channel* channel) const;
  int count_on(const SimDevice& device, std::string_view kind) const;
  int teardown_error(const char* what,
                     const char* why = "objects created on it are alive");
  // The shadow of `length` bytes at `addr` of `rank`, counted as used by
  // one more region; nullptr when the world has no memory for it.
  Slab* shadow_for(uint32_t rank, void* addr, size_t length);
  // One region over `mr`'s bytes is gone; its shadow becomes spare when
  // none is left.
  void release_shadow(const SimMr& mr);
  // Work requests posted with an entry in `mr` whose completions have not
  // been polled.
  int outstanding_on(const SimMr& mr) const;
  // In-process: copies the bytes RDMA WRITEs put into `rank`'s regions
  // since the last call from the regions' shadows to the memory they
  // mirror. Called before anything the rank could learn of them from
  // (poll_cq, a wait for a completion event) and before its memory is
  // read into a shadow again (a post) or let go (dereg_mr).
  void apply_writes(uint32_t rank);
  SimDevice* far_end(const SimDevice& device) const;
  const SimDevice* port_of_gid(const GidBytes& gid) const;

  int move_to_rtr(SimQp& qp, const ibv_qp_attr& attr);
  // Resolves a scatter entry to the simulator's frame; EINVAL if no memory
  // region of the queue pair's protection domain covers it.
  int shadow_frame(const SimQp& qp, const ibv_sge& sge, Frame* out) const;
  int post_one_send(SimQp& qp, const ibv_send_wr& wr);
  // A request with an entry no region covers: completes with
  // IBV_WC_LOC_PROT_ERR and the queue pair enters the error state.
  int protection_error(SimQp& qp, uint64_t wr_id, ibv_wc_opcode opcode);
  int total_length(const ibv_sge* sges, int num_sge, uint32_t* out) const;
  sim::FramePool& pool_of(uint32_t rank);
  int post_one_recv(SimQp& qp, const ibv_recv_wr& wr);
  int post_result(int err) const;
  template <typename Wr>
  int post_chain(ibv_qp* qp, Wr* wr, Wr** bad_wr,
                 int (Provider::*post_one)(SimQp&, const Wr&));
  uint32_t depth_limit(uint32_t capacity) const;
  // Moves `qp`'s finished work into `cq` (or the other CQ's stash).
  int drain(SimQp& qp, SimCq& cq, ibv_wc* out, int room);
  bool to_wc(SimQp& qp, const Completion& c, ibv_wc* wc);

  // Completion events (provider_events.cc). Takes every completion the
  // simulator holds for `cq` into its stash.
  void stash_all(SimCq& cq);
  // Raises the event of each armed CQ that got a completion since it was
  // armed, in the order the CQs were armed.
  void raise_events();
  void remove_events(SimCq& cq);
  // Hands out the channel's oldest event. REQUIRES: one is queued.
  int take_event(SimChannel& channel, ibv_cq** cq, void** cq_context);
  TimeNs next_wait_step(const SimChannel& channel, TimeNs now_ns,
                        TimeNs deadline_ns) const;

  std::mutex mutex_;
  std::string last_error_;
  bool reported_ = false;
  bool reported_wait_error_ = false;
  std::optional<Config> config_;
  std::unique_ptr<sim::World> world_;
  std::unique_ptr<sim_server::RemoteWorld> remote_;  // client mode
  // Client mode: how long a wait may last (WEFT_SIM_WAIT_TIMEOUT_S).
  std::chrono::milliseconds wait_timeout_{std::chrono::minutes(10)};
  // Client mode: the threads in a verbs wait. The first (the leader)
  // tells the server the rank waits, once every other thread of the
  // process waits too, and blocks until it answers; the others (followers,
  // by thread id) wait for that answer.
  struct Follower {
    std::string what;
    std::optional<TimeNs> wake_at_ns;
    // waits_ended_ when it began: once that has moved on, the follower
    // has been answered and is about to run, though still listed until it
    // takes the lock.
    uint64_t since = 0;
  };
  std::optional<pid_t> leader_;
  std::map<pid_t, Follower> followers_;
  uint64_t waits_ended_ = 0;     // the leader's waits that ended
  int last_wait_error_ = 0;      // how the last one ended
  uint64_t followers_came_ = 0;  // followers that began waiting
  std::condition_variable wait_ended_;
  std::condition_variable follower_came_;
  sim_server::ThreadCensus census_;  // the leader's
  sim_server::CensusResult last_census_;
  // Client mode: the program announces its waits (idle()), so an empty
  // poll_cq returns at once instead of waiting.
  bool announces_waits_ = false;
  uint32_t current_rank_ = 0;
  std::vector<std::unique_ptr<SimDevice>> devices_;  // every rank's
  std::map<ibv_device**, std::unique_ptr<ibv_device*[]>> lists_;
  // Objects by the address handed out (looked up, never iterated for
  // anything whose order matters).
  std::map<const ibv_context*, std::unique_ptr<SimContext>> contexts_;
  std::map<const ibv_pd*, std::unique_ptr<SimPd>> pds_;
  std::map<const ibv_mr*, std::unique_ptr<SimMr>> mrs_;
  std::map<const ibv_cq*, std::unique_ptr<SimCq>> cqs_;
  std::map<const ibv_comp_channel*, std::unique_ptr<SimChannel>> channels_;
  std::vector<SimCq*> armed_;  // in the order they were armed
  std::map<const ibv_qp*, std::unique_ptr<SimQp>> qps_;
  std::map<uint32_t, SimQp*> qps_by_num_;
  // The simulator's copies of registered memory, by (rank, address,
  // length); shared by every region over the same bytes, counted.
  std::map<ShadowKey, Shadow> shadows_;
  // Shadows no region uses any more, by rank and size: a later
  // registration of at most that size takes one instead of a new slab, so
  // a program that registers and deregisters buffers in turn (weft's
  // registration cache) holds as many slabs as it has regions at once.
  std::map<uint32_t, std::multimap<uint64_t, Slab*>> spare_shadows_;
  // Frames for gathered sends and scattered receives, by rank.
  std::map<uint32_t, std::unique_ptr<sim::FramePool>> pools_;
  uint32_t next_handle_ = 1;
  uint32_t next_key_ = 1;
  int teardown_errors_ = 0;
};

}  // namespace weft::sim_verbs

#endif  // WEFT_SIM_VERBS_PROVIDER_H_
