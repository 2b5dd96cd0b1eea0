/* weft's simulated verbs provider (libweft_sim_verbs.so): a shared library
 * exporting rdma-core's ibv_* entry points (with rdma-core 44's symbol
 * versions), backed by weft's deterministic simulator, with Apple's quirks
 * switchable. Load it with WEFT_VERBS_LIBRARY=<path to libweft_sim_verbs.so>,
 * or run a program linked against rdma-core's libibverbs.so.1 with
 * LD_LIBRARY_PATH=<its drop-in directory>, which holds it as
 * libibverbs.so.1 and librdma.dylib (docs/simulated-verbs.md).
 *
 * One provider instance per process simulates every rank of one world; the
 * calls below (exported with C linkage, found with dlsym) say which rank the
 * next ibv_get_device_list() lists devices for, and let tests inspect and
 * rebuild the world. The world is built from the environment on first use
 * (docs/simulated-verbs.md lists the variables):
 *
 *   WEFT_SIM_VERBS_RANKS=N           ranks of a full mesh (default 2)
 *   WEFT_SIM_VERBS_CABLES=N          cables per pair of the mesh (default 1)
 *   WEFT_SIM_VERBS_TOPOLOGY=path     JACCL device JSON instead of the mesh
 *   WEFT_SIM_VERBS_RANK=r            first rank listed (default 0)
 *   WEFT_SIM_VERBS_SEED=n            simulator seed (default 1)
 *   WEFT_SIM_VERBS_LINK=spec         link model, sim's syntax (default tb5)
 *   WEFT_SIM_VERBS_FAULTS=plan       fault plan text, lines split by ';'
 *   WEFT_SIM_VERBS_FAULTS_FILE=path  fault plan file
 *   WEFT_SIM_VERBS_POLL_STEP_NS=n    virtual time each poll_cq advances
 *                                    (default 1000); ibv_get_cq_event waits
 *                                    in the same steps
 *   WEFT_SIM_VERBS_GID_MODE=m        ipv4_at:N (default ipv4_at:1: link-local
 *                                    at 0, IPv4-mapped at 1) | link_local |
 *                                    empty
 *   WEFT_SIM_VERBS_PORT=s            active (default) | down | down:dev,dev
 *   WEFT_SIM_VERBS_APPLE_LIMITS=1    10 queue pairs and 100 memory regions
 *                                    per device, queue depth 63, post errors
 *                                    returned negated (-12) as Apple does
 *   WEFT_SIM_VERBS_QUEUE_DEPTH=n     outstanding requests per queue before
 *                                    posting fails with ENOMEM (1..1024)
 */
#ifndef WEFT_SIM_VERBS_SIM_VERBS_H_
#define WEFT_SIM_VERBS_SIM_VERBS_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Drops the world; the next call rebuilds it from the environment. 0, or
 * EBUSY while any context is open or any device list is not yet freed
 * (a VerbsFabric holds its list until it is destroyed). */
int weft_sim_verbs_reset(void);

/* The rank whose devices the next ibv_get_device_list() returns. 0, or
 * EINVAL when the world has no such rank (or cannot be built). */
int weft_sim_verbs_set_rank(uint32_t rank);

/* Live objects of `kind` ("contexts", "pds", "mrs", "cqs", "qps",
 * "channels") on rank `rank`'s device `device` (NULL: every device of the
 * rank); -1 for an unknown kind or a world that cannot be built. Kind
 * "teardown_errors" counts objects destroyed out of order (rank and device
 * ignored); kind "shadows" the rank's slabs mirroring registered memory,
 * in use or spare (device ignored). */
int weft_sim_verbs_live(const char* kind, uint32_t rank, const char* device);

/* The GID index queue pair `qp_num` was moved to RTR with, -1 if none. */
int weft_sim_verbs_qp_sgid_index(uint32_t qp_num);

/* The world's virtual time in nanoseconds (each poll_cq advances it by
 * WEFT_SIM_VERBS_POLL_STEP_NS); -1 for a world that cannot be built. A
 * clock for tests that want deadlines in virtual time. */
int64_t weft_sim_verbs_now_ns(void);

/* The caller has nothing to do until a completion arrives or virtual time
 * reaches `wake_at_ns` (-1: no such time). On the simulation server
 * (WEFT_SIM_SERVER) the rank waits there until then, and from the first
 * call on an empty ibv_poll_cq returns at once instead of waiting (the
 * program says itself when it waits); weft's verbs fabric calls it from
 * Fabric::idle. In-process it returns at once. 0, or an errno (EIO: this
 * rank crashed or the server has gone; ETIMEDOUT: the wall-clock wait
 * timeout, WEFT_SIM_WAIT_TIMEOUT_S, passed). */
int weft_sim_verbs_idle(int64_t wake_at_ns);

/* 1 when rank `rank` has crashed (a fault plan's crash), 0 when it has
 * not, -1 for a world that cannot be built or has no such rank. A driver
 * stops stepping a crashed rank, as the simulator's scheduler does. */
int weft_sim_verbs_crashed(uint32_t rank);

/* The ranks that have left the simulation server's world before this
 * rank's virtual time: their process disconnected (exited, crashed, or was
 * killed by --on_crash=kill). Each is stamped with the virtual time it left
 * at, t0, and counts from virtual time t > t0 on, never at t0 itself, so
 * the answer is the same on every run however the host schedules the
 * processes (a rank that computes holds virtual time still, so the server
 * stamps its exit at the time it was last answered; a rank the fault plan
 * kills leaves at its crash time). Fills up to `capacity` entries of
 * `ranks` and `left_at_ns` (either may be NULL) in order of (time, rank)
 * and returns how many ranks have left, which may exceed `capacity`. No
 * system call: the server sends each departure with the rank's next answer
 * past it. -1 for a negative capacity, a world that cannot be built, or a
 * world in this process (WEFT_SIM_SERVER unset), whose ranks never leave
 * it: watch them some other way there. */
int weft_sim_verbs_departed(uint32_t* ranks, int64_t* left_at_ns, int capacity);

/* The simulator's trace hash of everything the world did so far (posts,
 * deliveries, drops, completions, faults): equal for equal sequences of
 * verbs calls; 0 for a world that cannot be built. */
uint64_t weft_sim_verbs_trace_hash(void);

/* Why the world could not be built from the environment ("" if it could);
 * valid until the next call into the provider. */
const char* weft_sim_verbs_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* WEFT_SIM_VERBS_SIM_VERBS_H_ */
