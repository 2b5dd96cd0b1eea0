#include "jaccl/internal/env.h"

#include <array>
#include <cstdio>
#include <cstring>

namespace jaccl::internal {
namespace {

struct Alias {
  const char* jaccl;
  const char* mlx;
};
constexpr std::array<Alias, 4> kAliases = {{
    {"JACCL_RANK", "MLX_RANK"},
    {"JACCL_IBV_DEVICES", "MLX_IBV_DEVICES"},
    {"JACCL_COORDINATOR", "MLX_JACCL_COORDINATOR"},
    {"JACCL_RING", "MLX_JACCL_RING"},
}};

const Alias* find_alias(const char* name) {
  for (const Alias& a : kAliases) {
    if (std::strcmp(name, a.jaccl) == 0 || std::strcmp(name, a.mlx) == 0) {
      return &a;
    }
  }
  return nullptr;
}

}  // namespace

const char* lookup(const weft::EnvLookup& getenv, const char* jaccl_name) {
  const Alias* alias = find_alias(jaccl_name);
  if (alias == nullptr) return getenv(jaccl_name);
  const char* value = getenv(alias->jaccl);
  return value != nullptr ? value : getenv(alias->mlx);
}

weft::EnvLookup jaccl_env(const weft::EnvLookup& getenv) {
  return [getenv](const char* name) { return lookup(getenv, name); };
}

void warn_about_disagreements(const weft::EnvLookup& getenv) {
  for (const Alias& a : kAliases) {
    const char* jaccl_value = getenv(a.jaccl);
    const char* mlx_value = getenv(a.mlx);
    if (jaccl_value != nullptr && mlx_value != nullptr &&
        std::strcmp(jaccl_value, mlx_value) != 0) {
      std::fprintf(stderr,
                   "[jaccl] warning: %s='%s' and %s='%s' differ; using %s\n",
                   a.jaccl, jaccl_value, a.mlx, mlx_value, a.jaccl);
    }
  }
}

}  // namespace jaccl::internal
