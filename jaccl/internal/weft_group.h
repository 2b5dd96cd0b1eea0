// The jaccl::Group that init() returns: a weft::ProcessGroup behind JACCL's
// calls. Arguments are checked before anything is sent (JACCL would
// truncate, ignore or crash); a weft error becomes std::runtime_error whose
// message starts "[jaccl] " and keeps weft's (rank, peer, cause). After a
// failed call the weft group is failed, and every later call throws naming
// the first cause.
#ifndef WEFT_JACCL_INTERNAL_WEFT_GROUP_H_
#define WEFT_JACCL_INTERNAL_WEFT_GROUP_H_

#include <cstddef>
#include <memory>

#include "collectives/dtype.h"
#include "jaccl/group.h"
#include "startup/process_group.h"

namespace jaccl::internal {

class WeftGroup final : public Group {
 public:
  explicit WeftGroup(std::unique_ptr<weft::ProcessGroup> process_group);
  ~WeftGroup() override;

  int rank() override;
  int size() override;
  void all_sum(const void* input, void* output, size_t n_bytes,
               int dtype) override;
  void all_max(const void* input, void* output, size_t n_bytes,
               int dtype) override;
  void all_min(const void* input, void* output, size_t n_bytes,
               int dtype) override;
  void all_gather(const void* input, void* output, size_t n_bytes) override;
  void sum_scatter(const void* input, void* output, size_t n_bytes,
                   int dtype) override;
  void send(const void* input, size_t n_bytes, int dst) override;
  void recv(void* output, size_t n_bytes, int src) override;
  void barrier() override;

  weft::ProcessGroup& process_group() { return *process_group_; }

 private:
  void all_reduce(const char* op_name, const void* input, void* output,
                  size_t n_bytes, int dtype, weft::ReduceOp op);
  // Throws std::runtime_error naming `op_name` unless `peer` is another
  // rank of the group.
  void check_peer(const char* op_name, const char* role, int peer);

  std::unique_ptr<weft::ProcessGroup> process_group_;
};

}  // namespace jaccl::internal

#endif  // WEFT_JACCL_INTERNAL_WEFT_GROUP_H_
