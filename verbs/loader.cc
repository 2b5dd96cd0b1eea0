#include "verbs/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "fabric/errors.h"

namespace weft::verbs {
namespace {

#if defined(__APPLE__)
constexpr std::string_view kSystemLibrary = "librdma.dylib";
constexpr std::string_view kInstallHint =
    "RDMA over Thunderbolt needs macOS 26.2 or later, Macs joined by "
    "Thunderbolt 5 cables, and RDMA enabled once by running `rdma_ctl "
    "enable` in Recovery mode (then restart)";
#else
constexpr std::string_view kSystemLibrary = "libibverbs.so.1";
constexpr std::string_view kInstallHint =
    "install rdma-core's verbs library and providers (Debian/Ubuntu: `apt "
    "install libibverbs1 ibverbs-providers`; Fedora/RHEL: `dnf install "
    "libibverbs`)";
#endif

// Every entry point weft requires, for the message when one is missing.
constexpr std::string_view kRequiredSymbols =
    "ibv_get_device_list, ibv_free_device_list, ibv_get_device_name, "
    "ibv_open_device, ibv_close_device, ibv_query_port, ibv_query_gid, "
    "ibv_alloc_pd, ibv_dealloc_pd, ibv_reg_mr, ibv_dereg_mr, ibv_create_cq, "
    "ibv_destroy_cq, ibv_create_qp, ibv_destroy_qp, ibv_modify_qp, "
    "ibv_wc_status_str";

enum class Origin { kCaller, kEnvironment, kSystem };

absl::Status load_error(std::string message) {
  ErrorPlace place;
  place.cause = ErrorCause::kFabric;
  return make_error(absl::StatusCode::kFailedPrecondition, place, message);
}

std::string dl_error() {
  const char* text = dlerror();
  return text == nullptr ? "unknown dlopen error" : text;
}

absl::Status open_error(const std::string& path, Origin origin) {
  const std::string why = dl_error();
  switch (origin) {
    case Origin::kCaller:
      return load_error(absl::StrFormat(
          "cannot load the RDMA library %s: %s; give the path of an ibverbs "
          "library",
          path, why));
    case Origin::kEnvironment:
      return load_error(absl::StrFormat(
          "cannot load the RDMA library %s named by %s: %s; point %s at an "
          "ibverbs library, or unset it to use %s",
          path, kLibraryEnv, why, kLibraryEnv, kSystemLibrary));
    case Origin::kSystem:
      break;
  }
  return load_error(absl::StrFormat(
      "cannot load the RDMA library %s: %s; %s; or set %s to an ibverbs "
      "library",
      path, why, kInstallHint, kLibraryEnv));
}

// Resolves `name` into `*out`; on failure records the first missing name.
template <typename Fn>
void resolve(void* handle, const char* name, Fn* out, std::string* missing,
             std::string* why) {
  dlerror();
  *out = reinterpret_cast<Fn>(dlsym(handle, name));
  if (*out == nullptr && missing->empty()) {
    *missing = name;
    *why = dl_error();
  }
}

VerbsApi resolve_all(void* handle, std::string* missing, std::string* why) {
  VerbsApi api{};
  resolve(handle, "ibv_get_device_list", &api.get_device_list, missing, why);
  resolve(handle, "ibv_free_device_list", &api.free_device_list, missing, why);
  resolve(handle, "ibv_get_device_name", &api.get_device_name, missing, why);
  resolve(handle, "ibv_open_device", &api.open_device, missing, why);
  resolve(handle, "ibv_close_device", &api.close_device, missing, why);
  resolve(handle, "ibv_query_port", &api.query_port, missing, why);
  resolve(handle, "ibv_query_gid", &api.query_gid, missing, why);
  resolve(handle, "ibv_alloc_pd", &api.alloc_pd, missing, why);
  resolve(handle, "ibv_dealloc_pd", &api.dealloc_pd, missing, why);
  resolve(handle, "ibv_reg_mr", &api.reg_mr, missing, why);
  resolve(handle, "ibv_dereg_mr", &api.dereg_mr, missing, why);
  resolve(handle, "ibv_create_cq", &api.create_cq, missing, why);
  resolve(handle, "ibv_destroy_cq", &api.destroy_cq, missing, why);
  resolve(handle, "ibv_create_qp", &api.create_qp, missing, why);
  resolve(handle, "ibv_destroy_qp", &api.destroy_qp, missing, why);
  resolve(handle, "ibv_modify_qp", &api.modify_qp, missing, why);
  resolve(handle, "ibv_wc_status_str", &api.wc_status_str, missing, why);
  // Optional: a missing one leaves the member nullptr.
  api.get_device_guid = reinterpret_cast<decltype(api.get_device_guid)>(
      dlsym(handle, "ibv_get_device_guid"));
  api.query_device = reinterpret_cast<decltype(api.query_device)>(
      dlsym(handle, "ibv_query_device"));
  api.sim_now_ns = reinterpret_cast<decltype(api.sim_now_ns)>(
      dlsym(handle, "weft_sim_verbs_now_ns"));
  api.sim_idle = reinterpret_cast<decltype(api.sim_idle)>(
      dlsym(handle, "weft_sim_verbs_idle"));
  api.sim_departed = reinterpret_cast<decltype(api.sim_departed)>(
      dlsym(handle, "weft_sim_verbs_departed"));
  return api;
}

// Loaded libraries by path; never destroyed, as libraries are never closed.
struct Cache {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<VerbsLibrary>> by_path;
};
Cache& cache() {
  static Cache* const instance = new Cache;
  return *instance;
}

}  // namespace

std::string_view system_library_name() { return kSystemLibrary; }

std::string VerbsLibrary::default_path() {
  const char* env = std::getenv(kLibraryEnv);
  if (env != nullptr && env[0] != '\0') return env;
  return std::string(kSystemLibrary);
}

absl::StatusOr<VerbsApi> VerbsLibrary::open_and_resolve(const std::string& path,
                                                        bool from_env) {
  const Origin origin = from_env                 ? Origin::kEnvironment
                        : path == kSystemLibrary ? Origin::kSystem
                                                 : Origin::kCaller;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return open_error(path, origin);
  std::string missing;
  std::string why;
  VerbsApi api = resolve_all(handle, &missing, &why);
  if (!missing.empty()) {
    dlclose(handle);
    return load_error(absl::StrFormat(
        "the RDMA library %s has no entry point %s (%s): it is not an "
        "ibverbs library, or one too old for weft, which needs %s",
        path, missing, why, kRequiredSymbols));
  }
  return api;
}

absl::StatusOr<const VerbsLibrary*> VerbsLibrary::load(std::string_view path) {
  const char* env = std::getenv(kLibraryEnv);
  const bool from_env = path.empty() && env != nullptr && env[0] != '\0';
  const std::string resolved =
      path.empty() ? default_path() : std::string(path);
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mutex);
  auto it = c.by_path.find(resolved);
  if (it != c.by_path.end()) return it->second.get();
  absl::StatusOr<VerbsApi> api = open_and_resolve(resolved, from_env);
  if (!api.ok()) return api.status();
  auto library =
      std::unique_ptr<VerbsLibrary>(new VerbsLibrary(resolved, *api));
  const VerbsLibrary* out = library.get();
  c.by_path.emplace(resolved, std::move(library));
  return out;
}

std::string_view VerbsLibrary::status_name(int32_t code) const {
  const char* name = api_.wc_status_str(code);
  return name == nullptr ? std::string_view("unknown") : std::string_view(name);
}

}  // namespace weft::verbs
