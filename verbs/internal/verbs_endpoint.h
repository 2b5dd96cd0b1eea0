// VerbsEndpoint: the Endpoint over one completion queue and one UC queue
// pair on a DeviceDomain. Created in INIT; connect() moves it through RTR to
// RTS. Sends are SEND_WITH_IMM, signalled, immediate = big-endian sequence
// number; a send or receive has one scatter/gather entry per part (up to
// the domain's sges(), at most Endpoint::kMaxParts). Each work request
// counts as outstanding on the memory regions of its parts until its
// completion (flushed ones included) or the endpoint's end, so the domain's
// registration cache never evicts them under it. Every post and connect()
// is first the UcContract's to refuse (fabric/uc_contract.h). All three
// data-path calls go through the context's operation table, as the
// header's inline functions do.
#ifndef WEFT_VERBS_INTERNAL_VERBS_ENDPOINT_H_
#define WEFT_VERBS_INTERNAL_VERBS_ENDPOINT_H_

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fabric/endpoint.h"
#include "fabric/uc_contract.h"
#include "timeline/timeline_recorder.h"
#include "verbs/abi.h"
#include "verbs/gid.h"
#include "verbs/internal/device_domain.h"

namespace weft::verbs::internal {

// The fixed shape of every weft queue pair (MLX's values).
inline constexpr int kCompletionQueueEntries = 64;
inline constexpr uint32_t kPacketSequenceNumber = 7;
inline constexpr abi::ibv_mtu kPathMtu = abi::IBV_MTU_1024;
inline constexpr uint8_t kHopLimit = 1;

class VerbsEndpoint final : public Endpoint {
 public:
  struct Setup {
    DeviceDomain* domain = nullptr;
    EndpointInfo info;
    uint16_t lid = 0;    // our port's LID
    GidEntry gid;        // our GID and the index it was found at
    uint32_t cable = 0;  // which cable to `peer` (for the timeline)
    timeline::TimelineRecorder* trace = nullptr;  // nullptr: no timeline
  };

  // Creates the completion queue and queue pair and moves the pair to INIT.
  static absl::StatusOr<std::unique_ptr<VerbsEndpoint>> create(Setup setup);

  ~VerbsEndpoint() override;

  const EndpointInfo& info() const override { return setup_.info; }
  absl::StatusOr<Destination> destination() const override;
  absl::Status connect(const Destination& peer) override;
  absl::Status post_recv(WorkId id, const Frame& frame) override;
  absl::Status post_send(WorkId id, const Frame& frame, uint32_t length,
                         uint32_t immediate) override;
  absl::Status post_send_parts(WorkId id, std::span<const Frame> parts,
                               std::span<const uint32_t> lengths,
                               uint32_t immediate) override;
  size_t max_parts() const override;
  absl::Status post_recv_parts(WorkId id,
                               std::span<const Frame> parts) override;
  absl::StatusOr<size_t> poll(std::span<Completion> out) override;

 private:
  // The slabs whose regions a posted work request uses, one per part.
  struct Pinned {
    std::array<uint64_t, kMaxParts> slab_ids{};
    uint32_t count = 0;
  };
  // A part's scatter/gather entries, for one work request.
  struct Sges {
    std::array<abi::ibv_sge, kMaxParts> entries{};
    Pinned pinned;
  };
  struct PostedSend {
    uint64_t wr_id;
    uint32_t length;
    uint32_t immediate;
    TimeNs posted_ns;  // for the timeline (0 without one)
    Pinned pinned;
  };
  struct PostedRecv {
    uint64_t wr_id;
    Pinned pinned;
  };

  explicit VerbsEndpoint(Setup setup);
  ErrorPlace place(ErrorCause cause = ErrorCause::kUnknown) const;
  const abi::ibv_context_ops& ops() const;
  absl::Status create_queues();
  // 0, or the errno of a failed ibv_modify_qp.
  int modify(abi::ibv_qp_attr& attr, int mask);
  absl::Status modify_error(const char* state, int err,
                            std::string_view hint = {}) const;
  absl::Status move_to_rtr(const Destination& peer);
  // The entries for `parts` (the first lengths[i] bytes of each, in
  // memory of this domain: the contract checked), their regions registered
  // and counted outstanding; on error none stays counted.
  absl::StatusOr<Sges> sges_for(std::span<const Frame> parts,
                                std::span<const uint32_t> lengths);
  // The regions' outstanding work ends (completion or teardown).
  void unpin(const Pinned& pinned);
  absl::Status post_error(const char* what, int rc, int saved_errno) const;
  Completion to_completion(const abi::ibv_wc& wc, const WorkId& id);
  // Puts a completion (and the frame it sent or received) on the timeline.
  void record(const Completion& c, const PostedSend* sent);

  Setup setup_;
  abi::ibv_cq* cq_ = nullptr;
  abi::ibv_qp* qp_ = nullptr;
  // INIT until connected, then RTS (the device knows of errors, not this
  // endpoint); the work outstanding.
  UcContract contract_;
  // Sends complete in posting order; their lengths, for the completions.
  std::deque<PostedSend> posted_sends_;
  // Receives complete in posting order; the regions they use.
  std::deque<PostedRecv> posted_recvs_;
  uint64_t frames_sent_ = 0;  // sends completed, for the timeline
  uint64_t frames_arrived_ = 0;
};

}  // namespace weft::verbs::internal

#endif  // WEFT_VERBS_INTERNAL_VERBS_ENDPOINT_H_
