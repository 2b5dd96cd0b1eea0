// Uses JACCL's API as a JACCL program does, against the installed weft:
// the Config rules, the element types, and init() refusing a one-rank
// world as JACCL does (no verbs library or peers needed).
#include <jaccl/jaccl.h>
#include <jaccl/types.h>

#include <cstdio>

int main() {
  jaccl::Config mesh;
  mesh.set_devices({{{}, {"rdma_en2"}}, {{"rdma_en3"}, {}}});
  jaccl::Config one;
  one.set_devices({{{}}});
  if (!mesh.is_valid_mesh() || one.is_valid() ||
      jaccl::init(one, false) != nullptr) {
    std::puts("jaccl_consumer: Config's rules differ from JACCL's");
    return 1;
  }
  if (jaccl::dtype_size(jaccl::BFloat16) != 2 ||
      static_cast<float>(jaccl::bfloat16_t(1.5f)) != 1.5f) {
    std::puts("jaccl_consumer: the element types are wrong");
    return 1;
  }
  std::puts("jaccl_consumer: ok");
  return 0;
}
