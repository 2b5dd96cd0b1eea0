// Loads the system RDMA library at run time: Apple's librdma.dylib on macOS
// (26.2 and later), rdma-core's libibverbs.so.1 on Linux, or the library
// named by WEFT_VERBS_LIBRARY (weft's simulated provider in tests). Every
// entry point weft calls is resolved once into a VerbsApi table; weft never
// links against the library, so it builds and runs where none is installed
// and says what is missing when asked to use it.
//
// ibv_post_send, ibv_post_recv and ibv_poll_cq are inline functions in the
// header, not exports: call them through the context's operation table,
// `context->ops.post_send(...)`, as the header does.
//
// Symbol names. rdma-core versions its symbols; dlsym returns the default
// version (IBVERBS_1.1), the one a program built against the header links
// to. Two entry points are macros in rdma-core's header:
//  - ibv_query_port expands to the inline ___ibv_query_port, which calls the
//    provider's extended query_port or the exported ibv_query_port. The
//    export does the same itself, filling every field of ibv_port_attr up to
//    and including `flags` (port_cap_flags2 is left as the caller zeroed it;
//    weft does not read it). weft resolves the export.
//  - ibv_reg_mr expands to the inline __ibv_reg_mr, which calls the exported
//    ibv_reg_mr whenever the access flags are constants without
//    IBV_ACCESS_OPTIONAL_RANGE bits (and ibv_reg_mr_iova2 otherwise). weft's
//    flags are LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ, so the header would
//    call the export, and weft resolves it.
// ibv_get_device_list is a macro only in static builds
// (RDMA_STATIC_PROVIDERS); the export is the normal entry point.
#ifndef WEFT_VERBS_LOADER_H_
#define WEFT_VERBS_LOADER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "verbs/abi.h"

namespace weft::verbs {

// The environment variable naming a library to load instead of the system's.
inline constexpr const char* kLibraryEnv = "WEFT_VERBS_LIBRARY";

// "librdma.dylib" on macOS, "libibverbs.so.1" elsewhere.
std::string_view system_library_name();

// The library's entry points. Member names drop the "ibv_" prefix (some are
// macros in rdma-core's header). Every member is set once loading succeeds,
// except the ones marked optional, which are nullptr when the library lacks
// them.
struct VerbsApi {
  abi::ibv_device** (*get_device_list)(int* num_devices);
  void (*free_device_list)(abi::ibv_device** list);
  const char* (*get_device_name)(abi::ibv_device* device);
  abi::ibv_context* (*open_device)(abi::ibv_device* device);
  int (*close_device)(abi::ibv_context* context);
  int (*query_port)(abi::ibv_context* context, uint8_t port_num,
                    abi::ibv_port_attr* port_attr);
  int (*query_gid)(abi::ibv_context* context, uint8_t port_num, int index,
                   abi::ibv_gid* gid);
  abi::ibv_pd* (*alloc_pd)(abi::ibv_context* context);
  int (*dealloc_pd)(abi::ibv_pd* pd);
  abi::ibv_mr* (*reg_mr)(abi::ibv_pd* pd, void* addr, size_t length,
                         int access);
  int (*dereg_mr)(abi::ibv_mr* mr);
  abi::ibv_cq* (*create_cq)(abi::ibv_context* context, int cqe,
                            void* cq_context, abi::ibv_comp_channel* channel,
                            int comp_vector);
  int (*destroy_cq)(abi::ibv_cq* cq);
  abi::ibv_qp* (*create_qp)(abi::ibv_pd* pd, abi::ibv_qp_init_attr* attr);
  int (*destroy_qp)(abi::ibv_qp* qp);
  int (*modify_qp)(abi::ibv_qp* qp, abi::ibv_qp_attr* attr, int attr_mask);
  // Takes an enum ibv_wc_status; declared int so any code can be passed.
  const char* (*wc_status_str)(int status);

  // Optional (device listing only).
  uint64_t (*get_device_guid)(abi::ibv_device* device);  // big-endian
  int (*query_device)(abi::ibv_context* context,
                      abi::ibv_device_attr* device_attr);

  // Optional, weft's simulated provider only (sim_verbs.h): its virtual
  // time, the call that waits in it for a completion or a time, and the
  // ranks that left the simulation server's world before that time.
  int64_t (*sim_now_ns)();
  int (*sim_idle)(int64_t wake_at_ns);
  int (*sim_departed)(uint32_t* ranks, int64_t* left_at_ns, int capacity);
};

class VerbsLibrary {
 public:
  // Loads the library at `path`; when `path` is empty, the one named by
  // $WEFT_VERBS_LIBRARY, else system_library_name(). Each path is opened
  // and resolved once per process and never unloaded, so the returned
  // pointer stays valid. FailedPrecondition when the library cannot be
  // opened (saying what to install or enable) or lacks an entry point
  // (naming it).
  static absl::StatusOr<const VerbsLibrary*> load(std::string_view path = {});

  // The path weft resolves an empty `path` to, as load() would.
  static std::string default_path();

  VerbsLibrary(const VerbsLibrary&) = delete;
  VerbsLibrary& operator=(const VerbsLibrary&) = delete;

  const VerbsApi& api() const { return api_; }
  const std::string& path() const { return path_; }

  // ibv_wc_status_str(code): static storage owned by the library.
  std::string_view status_name(int32_t code) const;

 private:
  VerbsLibrary(std::string path, const VerbsApi& api)
      : path_(std::move(path)), api_(api) {}
  static absl::StatusOr<VerbsApi> open_and_resolve(const std::string& path,
                                                   bool from_env);

  std::string path_;
  VerbsApi api_;
};

}  // namespace weft::verbs

#endif  // WEFT_VERBS_LOADER_H_
