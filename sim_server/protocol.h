// The simulation server's wire protocol: what a rank's process (the
// simulated verbs provider in client mode, sim_server/remote_world.h) and
// `weft-sim serve` (sim_server/fabric_server.h) say to each other over a
// local stream socket. Each message is a Header and `bytes` of body: a
// fixed structure, then the variable part it announces. Both ends run on
// one machine, so the structures travel in host byte order.
//
// The protocol is the fabric contract of fabric/endpoint.h across a
// process boundary: open an endpoint, connect it, post sends and receives,
// and wait for completions. Message bytes never travel in it: a rank's
// slabs are shared memory the server maps (kRegisterSlab), and posts name a
// frame of them. Posts, connects and closes go through a ring in shared
// memory (shared_memory.h), so posting costs no system call; the rest, and
// posts that find the ring full, go over the socket. Everything that changes
// the simulated world (open, connect, post, close) is queued by the server and
// applied only when every rank waits on the fabric, in rank order, so the
// world's trace does not depend on how the host schedules the processes.
// Each of those requests names the thread that made it (`thread`, any
// number the client keeps per thread): a rank's requests are applied in an
// order that keeps each thread's and each queue pair's, not in the order
// the host happened to run its threads (internal/apply_order.h).
#ifndef WEFT_SIM_SERVER_PROTOCOL_H_
#define WEFT_SIM_SERVER_PROTOCOL_H_

#include <array>
#include <cstdint>

namespace weft::sim_server {

// Bumped on every change to a message below; a client speaking another
// version is refused with a message naming both.
inline constexpr uint32_t kProtocolVersion = 7;
inline constexpr uint32_t kMagic = 0x74666577;  // "weft"
// Largest body either end accepts (message bytes never travel in the
// protocol, so bodies are small); anything longer is a protocol error, not
// an allocation.
inline constexpr uint64_t kMaxBodyBytes = uint64_t{1} << 20;

// The socket's path, for clients.
inline constexpr char kServerVariable[] = "WEFT_SIM_SERVER";
// Which rank a process is, in the order they are consulted: weft's own,
// JACCL's, MLX's, then the launchers' (Open MPI, MPICH/PMI, PMIx, Slurm).
inline constexpr std::array<const char*, 7> kRankVariables = {
    "WEFT_SIM_RANK", "JACCL_RANK", "MLX_RANK",    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",      "PMIX_RANK",  "SLURM_PROCID"};

enum class MsgType : uint32_t {
  kHello = 1,       // client: Hello
  kWelcome,         // server: Welcome + topology JSON (or the refusal's text)
  kOpen,            // client: Open + device name; answered by kOpened
  kOpened,          // server: Opened + error text
  kConnect,         // client: Connect (queued)
  kPostSend,        // client: PostSend + payload (queued)
  kPostRecv,        // client: PostRecv (queued)
  kClose,           // client: Close (queued)
  kWait,            // client: Wait + what it waits in; answered by kStep
  kStep,            // server: Step + completions (each + its payload)
  kQuery,           // client: Query; answered by kAnswer
  kAnswer,          // server: Answer
  kRegisterSlab,    // client: RegisterSlab, with the memfd; answered by kAnswer
  kRegisterRegion,  // client: RegisterRegion (queued)
  kUnregisterRegion,  // client: UnregisterRegion (queued)
  kMoveToError,       // client: Close's structure: the queue pair (queued)
  kDrainRing,         // client, its ring full: answered (kAnswer) once drained
  kFatal,             // server: the text of why the client must stop (last)
};

struct Header {
  uint32_t magic = kMagic;
  uint32_t type = 0;
  uint64_t bytes = 0;  // of the body that follows
};

// Carries the memfd of the client's post ring (MessageRing::kMappingBytes).
struct Hello {
  uint32_t version = kProtocolVersion;
  uint32_t rank = 0;
  int32_t pid = 0;
  char program[64] = {};
};

// Carries the memfd of a slab of `bytes` the client created; frames of it
// are named by `slab` (the client's Slab::id()) from then on.
struct RegisterSlab {
  uint64_t slab = 0;
  uint64_t bytes = 0;
};

struct Welcome {
  uint32_t version = kProtocolVersion;
  uint32_t ok = 0;  // 0: refused, the text says why
  uint32_t rank = 0;
  uint32_t ranks = 0;
  int64_t now_ns = 0;
  uint64_t seed = 0;
  uint32_t apple_limits = 0;
  uint32_t text_bytes = 0;  // topology JSON, or the refusal
};

struct Open {
  uint32_t peer = 0;
  uint32_t name_bytes = 0;
};

struct Opened {
  uint32_t ok = 0;
  uint32_t qp_num = 0;
  uint32_t resource_exhausted = 0;
  uint32_t text_bytes = 0;
};

struct Connect {
  uint32_t qp_num = 0;
  uint32_t remote_qp_num = 0;
  uint32_t thread = 0;
  uint32_t pad = 0;
};

// A frame of a registered slab.
struct FrameRef {
  uint64_t slab = 0;
  uint64_t offset = 0;
  uint32_t bytes = 0;
  uint32_t pad = 0;
};

struct PostSend {
  uint32_t qp_num = 0;
  uint32_t immediate = 0;  // host order
  uint64_t work_id = 0;    // WorkId::encode()
  FrameRef frame;          // the message is its first `length` bytes
  uint32_t length = 0;
  uint32_t flags = 0;  // kSendWithoutImmediate, kRdmaWrite
  // kRdmaWrite: where the bytes go at the far end.
  uint64_t remote_address = 0;
  uint32_t rkey = 0;
  uint32_t thread = 0;
};
inline constexpr uint32_t kSendWithoutImmediate = 1;
inline constexpr uint32_t kRdmaWrite = 2;

// A memory region of the client's rank, open to RDMA WRITEs under `rkey`
// when `remote_write`: `frame` (in a registered slab) mirrors the program's
// memory at `address`.
struct RegisterRegion {
  uint32_t rkey = 0;
  uint32_t remote_write = 0;
  uint64_t address = 0;
  FrameRef frame;
  uint32_t thread = 0;
  uint32_t pad = 0;
};

struct UnregisterRegion {
  uint32_t rkey = 0;
  uint32_t thread = 0;
};

struct PostRecv {
  uint32_t qp_num = 0;
  uint32_t thread = 0;
  uint64_t work_id = 0;
  FrameRef frame;  // where the message lands
};

// Also kMoveToError's.
struct Close {
  uint32_t qp_num = 0;
  uint32_t thread = 0;
};

struct Wait {
  int64_t wake_at_ns = -1;  // wake no later than this virtual time; -1: none
  uint32_t what_bytes = 0;  // the call it waits in, for deadlock reports
  uint32_t pad = 0;
};

// Step flags.
inline constexpr uint32_t kStepCrashed = 1;   // this rank crashed
inline constexpr uint32_t kStepReleased = 2;  // the server stopped serving

// Followed by `completions` StepCompletions, then `writes` StepWrites, then
// `departures` StepDepartures.
struct Step {
  int64_t now_ns = 0;
  uint32_t completions = 0;
  uint32_t flags = 0;
  uint32_t writes = 0;
  uint32_t departures = 0;
};

// A receive's bytes are already in its frame (shared memory) when its
// completion is sent.
struct StepCompletion {
  uint64_t work_id = 0;
  uint32_t qp_num = 0;
  int32_t status = 0;  // WcStatus
  uint32_t byte_len = 0;
  uint32_t immediate = 0;
  uint32_t has_immediate = 0;
  uint32_t from_rdma_write = 0;  // a receive an RDMA WRITE with immediate took
};

// Bytes RDMA WRITEs put into one of the client's regions (already in its
// shared slab), for it to copy on to the program's memory at `address`.
struct StepWrite {
  uint32_t rkey = 0;
  uint32_t pad = 0;
  uint64_t address = 0;
  FrameRef frame;
};

// A rank that left the world (departures.h): sent to each rank once, with
// the first answer whose time is past `left_at_ns`.
struct StepDeparture {
  uint32_t rank = 0;
  uint32_t pad = 0;
  int64_t left_at_ns = 0;
};

enum class QueryKind : uint32_t { kTraceHash = 1, kCrashed = 2 };

struct Query {
  uint32_t kind = 0;
  uint32_t rank = 0;
};

struct Answer {
  int64_t value = 0;
};

}  // namespace weft::sim_server

#endif  // WEFT_SIM_SERVER_PROTOCOL_H_
