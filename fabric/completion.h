// Completion: what poll() returns for each finished work request, on every
// fabric alike.
#ifndef WEFT_FABRIC_COMPLETION_H_
#define WEFT_FABRIC_COMPLETION_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "fabric/wc_status.h"
#include "fabric/work_id.h"

namespace weft {

struct Completion {
  WorkId id;
  WcStatus status = WcStatus::kSuccess;
  // The verbs name of `status`; static storage, never freed.
  std::string_view status_name = "success";
  // Receives: bytes that arrived. Sends: bytes posted.
  uint32_t byte_len = 0;
  // Receives only: the SEND's 32-bit immediate in host order (fabrics carry
  // it big-endian on the wire and convert).
  bool has_immediate = false;
  uint32_t immediate = 0;
  // Receives only: consumed by an RDMA WRITE with immediate (verbs'
  // IBV_WC_RECV_RDMA_WITH_IMM), not by a SEND. The written bytes went to
  // the writer's target region, never to this receive's frame; byte_len is
  // the write's length.
  bool from_rdma_write = false;

  bool ok() const { return status == WcStatus::kSuccess; }
  std::string to_string() const;
};

}  // namespace weft

#endif  // WEFT_FABRIC_COMPLETION_H_
