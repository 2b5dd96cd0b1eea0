#include "collectives/engine/op_runner.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "collectives/kernels/reduce.h"
#include "fabric/assert.h"

namespace weft::collectives::internal {
namespace {

uint64_t item_bytes(const Item& item) {
  return item.kind == ItemKind::kRecv ? item.dst.bytes : item.src.bytes;
}

}  // namespace

OpRunner::Step OpRunner::step_of(const Item& item, int32_t index, uint32_t part,
                                 uint32_t frames) {
  Step st;
  st.src_offset = item.src.offset;
  st.dst_offset = item.dst.offset;
  st.bytes = item_bytes(item);
  st.item = index;
  st.after = item.after;
  st.frames = frames;
  st.part = part;
  st.src_buffer = item.src.buffer;
  st.dst_buffer = item.dst.buffer;
  st.apply = item.apply;
  st.wait = item.wait;
  return st;
}

OpRunner::OpRunner(Plan plan, OpIdentity identity, DType dtype, ReduceOp op,
                   OpBuffers buffers, uint32_t rank,
                   const LaneFinder& find_lane)
    : identity_(identity),
      dtype_(dtype),
      op_(op),
      buffers_(buffers),
      rank_(rank),
      scratch_bytes_(plan.scratch_bytes),
      zero_copy_(buffers.in_slab != nullptr || buffers.out_slab != nullptr) {
  // A registered output may take receives straight into it where no later
  // item touches their bytes (receivable_in_place): that takes the whole
  // plan, so its sources are drained first (a plan's size is small beside
  // the buffers of an operation worth registering).
  if (buffers.out_slab != nullptr) plan = whole_plan(std::move(plan));
  // Lanes are listed in the order of their first use in the plan, each
  // with its steps in all; then the items made with the plan are taken in
  // and each lane's first steps made.
  std::vector<uint32_t> index;  // Lane::index() -> lanes_ position + 1
  // The last lanes found, most recent first: rings alternate two lanes.
  struct Found {
    uint32_t peer = kNoPeer;
    uint32_t cable = 0;
    uint32_t work = 0;
  };
  Found found[2];
  auto work_of = [&](uint32_t peer, uint32_t cable) {
    if (found[0].peer == peer && found[0].cable == cable) return found[0].work;
    if (found[1].peer == peer && found[1].cable == cable) {
      std::swap(found[0], found[1]);
      return found[0].work;
    }
    const OpLane lane(find_lane(peer, cable));
    const uint32_t i = lane.index();
    if (i >= index.size()) index.resize(i + 1, 0);
    uint32_t& at = index[i];
    if (at == 0) {
      lanes_.push_back(LaneWork{.lane = lane});
      at = static_cast<uint32_t>(lanes_.size());
    }
    found[1] = found[0];
    found[0] = Found{peer, cable, at - 1};
    return at - 1;
  };
  std::vector<std::vector<uint32_t>> item_work(plan.parts.size());
  uint64_t first = 0;
  parts_.reserve(plan.parts.size());
  for (size_t p = 0; p < plan.parts.size(); ++p) {
    PlanPart& part = plan.parts[p];
    PartWork& pw = parts_.emplace_back(first);
    first += part.size();
    item_work[p].resize(part.items.size());
    for (size_t i = 0; i < part.items.size(); ++i) {
      const Item& item = part.items[i];
      if (item.kind == ItemKind::kLocal) continue;
      LaneWork& w = lanes_[item_work[p][i] = work_of(item.peer, item.lane)];
      const bool sending = item.kind == ItemKind::kSend;
      WEFT_ASSERT((sending ? w.send_feed : w.recv_feed) == kNoPart,
                  "a plan part uses a lane another part's source feeds");
      ++(sending ? w.send_total : w.recv_total);
    }
    if (part.rest == nullptr) continue;
    pw.left = part.rest->size();
    for (const ItemSource::LaneUse& use : part.rest->lanes()) {
      const uint32_t at = work_of(use.peer, use.lane);
      LaneWork& w = lanes_[at];
      pw.lanes.push_back({use.peer, use.lane, at});
      for (auto [feed, total, n] :
           {std::tuple(&w.send_feed, &w.send_total, use.sends),
            std::tuple(&w.recv_feed, &w.recv_total, use.recvs)}) {
        if (n == 0) continue;
        WEFT_ASSERT(*feed == kNoPart,
                    "two parts' sources feed one lane in one direction");
        *feed = static_cast<int32_t>(p);
        *total += n;
      }
    }
    pw.source = std::move(part.rest);
  }
  bool any_recv = false;
  for (const LaneWork& w : lanes_) any_recv |= w.recv_total > 0;
  pure_sender_ = !any_recv && !lanes_.empty();
  for (LaneWork& w : lanes_) w.needs_ack = pure_sender_ && w.send_total > 0;
  for (size_t p = 0; p < plan.parts.size(); ++p) {
    const std::vector<Item>& items = plan.parts[p].items;
    for (size_t i = 0; i < items.size(); ++i) {
      take_in(items[i], static_cast<uint32_t>(p), item_work[p][i]);
    }
  }
  for (LaneWork& w : lanes_) {
    pass_send(w);
    pass_recv(w);
  }
  if (any_recv && buffers_.out_slab != nullptr) {
    std::vector<Item> items;
    for (const PlanPart& part : plan.parts) {
      items.insert(items.end(), part.items.begin(), part.items.end());
    }
    in_place_ = receivable_in_place(items);
  }
}

void OpRunner::take_in(const Item& item, uint32_t part, uint32_t work) {
  PositionRing<ItemState>& state = parts_[part].state;
  const auto index = static_cast<int32_t>(state.end());
  WEFT_ASSERT(item.after == kNoItem ||
                  static_cast<uint64_t>(item.after) >= parts_[part].first,
              "a plan item waits on an item of another part");
  const uint32_t frames = static_cast<uint32_t>(std::max<uint64_t>(
      1,
      (item_bytes(item) + identity_.chunk_bytes - 1) / identity_.chunk_bytes));
  state.push_back(ItemState{.frames = frames});
  const Step step = step_of(item, index, part, frames);
  switch (item.kind) {
    case ItemKind::kLocal:
      locals_.push_back(step);
      return;
    case ItemKind::kSend:
      lanes_[work].sends.push_back(step);
      return;
    case ItemKind::kRecv:
      lanes_[work].recvs.push_back(step);
      return;
  }
}

void OpRunner::make_next(uint32_t part) {
  PartWork& pw = parts_[part];
  WEFT_ASSERT(pw.left > 0, "a lane needs a step its source has not got");
  const Item item = pw.source->next();
  WEFT_ASSERT(item.kind != ItemKind::kLocal, "a plan source made a local item");
  uint32_t work = 0;
  for (const PartWork::SourceLane& l : pw.lanes) {
    if (l.peer == item.peer && l.cable == item.lane) work = l.work;
  }
  if (--pw.left == 0) pw.source.reset();
  take_in(item, part, work);
}

void OpRunner::pass_send(LaneWork& w) {
  w.sends.pop_front_to(w.send_pos);
  if (w.send_pos < w.send_total) make_until(w.sends, w.send_feed, w.send_pos);
}

void OpRunner::pass_recv(LaneWork& w) {
  w.recvs.pop_front_to(w.recv_pos);
  if (w.recv_pos < w.recv_total) make_until(w.recvs, w.recv_feed, w.recv_pos);
}

void OpRunner::retire(uint32_t part) {
  PositionRing<ItemState>& state = parts_[part].state;
  while (!state.empty() && state.front().done == state.front().frames) {
    state.pop_front();
  }
}

absl::Status OpRunner::start() {
  if (scratch_bytes_ > 0) {
    scratch_.reset(new (std::nothrow) std::byte[scratch_bytes_]);
    if (!scratch_) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "rank %u: %s needs %u bytes of scratch memory and the allocation "
          "failed; free memory or use an out-of-place call",
          rank_, describe_op(identity_), scratch_bytes_));
    }
  }
  receive_into_user_memory();
  return absl::OkStatus();
}

bool OpRunner::ready(const Step& step, uint32_t frame) const {
  if (step.after == kNoItem) return true;
  const PositionRing<ItemState>& state = parts_[step.part].state;
  const auto after = static_cast<uint64_t>(step.after);
  if (after < state.begin()) return true;  // done and let go
  const ItemState& dep = state.at(after);
  if (step.wait == Wait::kWhole) return dep.done == dep.frames;
  return dep.done > std::min(frame, dep.frames - 1);
}

std::span<std::byte> OpRunner::buffer(BufferId b) const {
  switch (b) {
    case BufferId::kIn:
      // Plans never write through kIn; the cast only unifies the types.
      return {const_cast<std::byte*>(buffers_.in.data()), buffers_.in.size()};
    case BufferId::kOut:
      return buffers_.out;
    case BufferId::kScratch:
      return {scratch_.get(), scratch_bytes_};
  }
  return {};
}

absl::Status OpRunner::apply(const Step& step, uint32_t frame,
                             std::span<const std::byte> payload) {
  const uint32_t bytes = frame_bytes(step, frame);
  WEFT_ASSERT(payload.size() == bytes, "a payload of the wrong length");
  if (bytes == 0) return absl::OkStatus();
  const std::byte* src = payload.data();
  std::byte* dst =
      at(step.dst_buffer,
         step.dst_offset + uint64_t{frame} * identity_.chunk_bytes);
  switch (step.apply) {
    case Apply::kCopy:
      if (dst != src) std::memcpy(dst, src, bytes);
      return absl::OkStatus();
    case Apply::kReduce:
      if (dst == src) return absl::OkStatus();
      return reduce_into(dtype_, op_, dst, src, bytes / dtype_size(dtype_));
    case Apply::kReduceAfter:
    case Apply::kReduceBefore:
      break;
  }
  const std::byte* other = src_at(step, frame);
  const bool other_first = step.apply == Apply::kReduceAfter;
  return combine(dst, other_first ? other : src, other_first ? src : other,
                 bytes);
}

absl::Status OpRunner::combine(std::byte* dst, const std::byte* first,
                               const std::byte* second, uint32_t bytes) const {
  return reduce_to(dtype_, op_, dst, first, second, bytes / dtype_size(dtype_));
}

absl::Status OpRunner::mismatch(const LaneWork& w, const FrameHeader& got,
                                uint32_t want_bytes) const {
  return make_error(
      absl::StatusCode::kFailedPrecondition,
      w.lane.place(ErrorCause::kMismatch),
      absl::StrFormat(
          "mismatched collectives: the peer sent a frame of %s (item %u, "
          "frame %u, %u bytes) but this rank runs %s and expects item %u, "
          "frame %u, %u bytes; every rank must call the same collectives in "
          "the same order with the same sizes, dtypes, roots and algorithms",
          describe_op(got.op), got.item, got.frame, got.payload_bytes,
          describe_op(identity_), w.check_pos, w.check_frame, want_bytes));
}

absl::Status OpRunner::check_arrivals(LaneWork& w) {
  while (w.check_pos < w.recv_total) {
    const FrameHeader* got = w.lane.arrival(w.checked);
    if (got == nullptr) break;
    const FrameHeader& h = *got;
    make_until(w.recvs, w.recv_feed, w.check_pos);
    const Step& step = w.recvs.at(w.check_pos);
    const uint32_t want = frame_bytes(step, w.check_frame);
    if (!(h.op == identity_) || h.item != w.check_pos ||
        h.frame != w.check_frame || h.payload_bytes != want) {
      return mismatch(w, h, want);
    }
    ++w.checked;
    if (++w.check_frame == step.frames) {
      w.check_frame = 0;
      ++w.check_pos;
    }
  }
  return absl::OkStatus();
}

absl::Status OpRunner::receive(LaneWork& w, bool* advanced) {
  while (w.recv_pos < w.recv_total && w.checked > 0) {
    const Step& step = w.recvs.at(w.recv_pos);
    if (!ready(step, w.recv_frame)) break;
    if (zero_copy_ && !writable(step, w.recv_frame)) break;
    absl::Status s =
        w.lane.consume_front([&](std::span<const std::byte> payload) {
          return apply(step, w.recv_frame, payload);
        });
    if (!s.ok()) return s;
    --w.checked;
    *advanced = true;
    state_of(step).done = ++w.recv_frame;
    if (w.recv_frame == step.frames) {
      const uint32_t part = step.part;
      w.recv_frame = 0;
      ++w.recv_pos;
      pass_recv(w);
      retire(part);
    }
  }
  return absl::OkStatus();
}

absl::Status OpRunner::send(LaneWork& w, bool* advanced) {
  while (w.send_pos < w.send_total) {
    const Step& step = w.sends.at(w.send_pos);
    if (!ready(step, w.send_frame)) break;
    const absl::StatusOr<SendOutcome> sent = w.lane.try_send([&] {
      const bool last =
          w.send_pos + 1 == w.send_total && w.send_frame + 1 == step.frames;
      return DataFrame{.op = identity_,
                       .item = static_cast<uint32_t>(w.send_pos),
                       .frame = w.send_frame,
                       .report_now = w.needs_ack && last,
                       .payload = source(step, w.send_frame),
                       .registered = user_slab(step.src_buffer)};
    });
    if (!sent.ok()) return sent.status();
    if (*sent == SendOutcome::kNoRoom) break;
    *advanced = true;
    state_of(step).done = ++w.send_frame;
    if (w.send_frame == step.frames) {
      const uint32_t part = step.part;
      w.send_frame = 0;
      ++w.send_pos;
      pass_send(w);
      retire(part);
    }
  }
  return absl::OkStatus();
}

bool OpRunner::writable(const Step& step, uint32_t frame) {
  if (step.dst_buffer == BufferId::kScratch) return true;
  const uint32_t bytes = frame_bytes(step, frame);
  const std::byte* dst =
      at(step.dst_buffer,
         step.dst_offset + uint64_t{frame} * identity_.chunk_bytes);
  bool free = true;
  for (LaneWork& w : lanes_) free &= w.lane.detach(dst, dst + bytes);
  return free;
}

bool OpRunner::detach_user_memory() {
  bool all = true;
  for (LaneWork& w : lanes_) {
    all &= w.lane.detach(nullptr, nullptr);
    all &= w.lane.stop_receiving_into() == 0;
  }
  return all;
}

absl::Status OpRunner::run_locals(bool* advanced) {
  for (const Step& step : locals_) {
    ItemState& st = state_of(step);
    while (st.done < st.frames && ready(step, st.done) &&
           (!zero_copy_ || writable(step, st.done))) {
      absl::Status s = apply(step, st.done, source(step, st.done));
      if (!s.ok()) return s;
      ++st.done;
      *advanced = true;
    }
  }
  std::erase_if(locals_, [&](const Step& step) {
    const ItemState& st = state_of(step);
    return st.done == st.frames;
  });
  for (uint32_t p = 0; p < parts_.size(); ++p) retire(p);
  return absl::OkStatus();
}

absl::Status OpRunner::advance(bool* advanced) {
  for (bool moved = true; moved;) {
    moved = false;
    for (LaneWork& w : lanes_) {
      // Cheap tests first: most lanes have nothing new at most steps.
      absl::Status s;
      if (w.lane.arrival(w.checked) != nullptr) s = check_arrivals(w);
      if (s.ok() && w.checked > 0) s = receive(w, &moved);
      if (s.ok() && w.send_pos < w.send_total) s = send(w, &moved);
      if (!s.ok()) return s;
    }
    if (!locals_.empty()) {
      absl::Status s = run_locals(&moved);
      if (!s.ok()) return s;
    }
    *advanced |= moved;
  }
  open_gates();
  return absl::OkStatus();
}

void OpRunner::note_hot(const void* p, size_t bytes) {
  for_each_line(p, bytes, [this](const void* line) {
    if (hot_count_ < kHotLines) hot_[hot_count_++] = line;
  });
}

void OpRunner::prefetch_next() {
  // Many ranks step between two steps of one rank (a simulator runs them
  // all on one core), so what the next step reads is cold by then. Now,
  // while it is at hand: ask for the step records one ahead of the cursors
  // (they come from memory while other ranks run), and list the lines the
  // next step reads first (prefetch_state() asks for them all at once):
  // the cursors, the records at them, the state their dependencies and
  // receives read, and the first lines of where the next receive writes.
  hot_count_ = 0;
  note_hot(lanes_.data(), lanes_.size() * sizeof(LaneWork));
  for (const LaneWork& w : lanes_) {
    if (w.send_pos < w.send_total) {
      const Step& step = w.sends.at(w.send_pos);
      if (w.sends.holds(w.send_pos + 1)) {
        __builtin_prefetch(&w.sends.at(w.send_pos + 1));
      }
      note_hot(&step, sizeof(Step));
      const PositionRing<ItemState>& state = parts_[step.part].state;
      if (step.after != kNoItem &&
          state.holds(static_cast<uint64_t>(step.after))) {
        note_hot(&state.at(static_cast<uint64_t>(step.after)),
                 sizeof(ItemState));
      }
    }
    if (w.recv_pos < w.recv_total) {
      const Step& step = w.recvs.at(w.recv_pos);
      if (w.recvs.holds(w.recv_pos + 1)) {
        __builtin_prefetch(&w.recvs.at(w.recv_pos + 1));
      }
      note_hot(&step, sizeof(Step));
      note_hot(&parts_[step.part].state.at(static_cast<uint64_t>(step.item)),
               sizeof(ItemState));
      const std::byte* dst =
          at(step.dst_buffer,
             step.dst_offset + uint64_t{w.recv_frame} * identity_.chunk_bytes);
      const size_t bytes = std::min<size_t>(frame_bytes(step, w.recv_frame),
                                            kPrefetchLines * kCacheLineBytes);
      prefetch_bytes</*kForWrite=*/true>(dst, bytes);
      note_hot(dst, bytes);
    }
  }
}

bool OpRunner::lane_done(const LaneWork& w) const {
  return w.send_pos == w.send_total && w.recv_pos == w.recv_total &&
         w.lane.drained(/*until_consumed=*/w.needs_ack);
}

bool OpRunner::done() const {
  return locals_.empty() &&
         std::all_of(lanes_.begin(), lanes_.end(),
                     [&](const LaneWork& w) { return lane_done(w); });
}

uint32_t OpRunner::departed_needed() const {
  for (const LaneWork& w : lanes_) {
    if (lane_done(w) || !w.lane.peer_departed()) continue;
    // Frames already in the inbox are used whatever became of their
    // sender; acknowledgements owed and sends in flight to it complete.
    const bool needs = w.send_pos < w.send_total ||
                       w.check_pos < w.recv_total ||
                       (w.needs_ack && !w.lane.all_data_consumed());
    if (needs) return w.lane.index();
  }
  return kNoLane;
}

void OpRunner::mark_waiting(std::span<uint8_t> waiting) const {
  for (const LaneWork& w : lanes_) {
    waiting[w.lane.index()] = lane_done(w) ? 0 : 1;
  }
}

std::string OpRunner::outstanding(uint32_t* blame) const {
  std::vector<std::string> parts;
  const LaneWork* silent = nullptr;
  const LaneWork* stuck = nullptr;
  for (const LaneWork& w : lanes_) {
    if (lane_done(w)) continue;
    const OpLane& lane = w.lane;
    if (w.recv_pos < w.recv_total) {
      parts.push_back(absl::StrFormat(
          "receive item %u frame %u of %u from peer %u (%u checked frame(s) "
          "waiting)",
          w.recv_pos, w.recv_frame, w.recvs.at(w.recv_pos).frames, lane.peer(),
          w.checked));
      if (w.checked == 0 && silent == nullptr) silent = &w;
    }
    if (w.send_pos < w.send_total) {
      parts.push_back(absl::StrFormat(
          "send item %u frame %u of %u to peer %u", w.send_pos, w.send_frame,
          w.sends.at(w.send_pos).frames, lane.peer()));
      if (stuck == nullptr && !lane.can_send_data()) stuck = &w;
    } else if (stuck == nullptr && w.needs_ack && !lane.all_data_consumed()) {
      stuck = &w;
    }
    parts.push_back(lane.describe());
  }
  if (!locals_.empty()) {
    parts.push_back(
        absl::StrFormat("%u local copy/reduce item(s)", locals_.size()));
  }
  const LaneWork* most = silent != nullptr ? silent : stuck;
  *blame = most != nullptr ? most->lane.index() : kNoLane;
  return absl::StrJoin(parts, "; ");
}

}  // namespace weft::collectives::internal
