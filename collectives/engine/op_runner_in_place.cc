// OpRunner: which receives may land straight in a registered output, and
// handing their destinations to the lanes (op_runner.h, receive_targets.h).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "collectives/engine/op_runner.h"
#include "fabric/assert.h"

namespace weft::collectives::internal {

std::vector<OpRunner::InPlace> OpRunner::receivable_in_place(
    const std::vector<Item>& items) {
  // Every item's user-memory ranges, sorted by start: overlapping pairs
  // are neighbours in a sweep.
  struct Range {
    const std::byte* begin;
    const std::byte* end;
    int32_t item;
    bool dst;
  };
  std::vector<Range> ranges;
  auto add = [&](const Slice& s, size_t item, bool dst) {
    const std::byte* base =
        s.buffer == BufferId::kScratch ? nullptr : buffer(s.buffer).data();
    if (base == nullptr || s.bytes == 0) return;  // scratch, or no buffer
    const std::byte* b = base + s.offset;
    ranges.push_back(Range{b, b + s.bytes, static_cast<int32_t>(item), dst});
  };
  std::vector<InPlace> out(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const bool reads_src = it.kind != ItemKind::kRecv ||
                           it.apply == Apply::kReduceAfter ||
                           it.apply == Apply::kReduceBefore;
    if (reads_src) add(it.src, i, /*dst=*/false);
    if (it.kind != ItemKind::kSend) add(it.dst, i, /*dst=*/true);
    out[i].ok = it.kind == ItemKind::kRecv && it.apply == Apply::kCopy &&
                it.dst.buffer == BufferId::kOut && it.dst.bytes > 0;
  }
  std::sort(ranges.begin(), ranges.end(),
            [](const Range& a, const Range& b) { return a.begin < b.begin; });
  // A send forwarding receive `recv`'s slice once it arrived.
  auto forwards = [&](const Range& r, int32_t recv) {
    const Item& it = items[static_cast<size_t>(r.item)];
    const Slice& got = items[static_cast<size_t>(recv)].dst;
    return !r.dst && it.kind == ItemKind::kSend && it.after == recv &&
           it.wait != Wait::kNone && it.src.buffer == got.buffer &&
           it.src.offset == got.offset && it.src.bytes == got.bytes;
  };
  // Receive `recv` writes where `other` reads or writes too.
  auto overlaps = [&](const Range& recv, const Range& other) {
    InPlace& in = out[static_cast<size_t>(recv.item)];
    if (!recv.dst || !in.ok || forwards(other, recv.item)) return;
    if (other.item > recv.item) {
      in.ok = false;
    } else if (std::find(in.needs.begin(), in.needs.end(), other.item) ==
               in.needs.end()) {
      in.needs.push_back(other.item);
    }
  };
  for (size_t i = 0; i < ranges.size(); ++i) {
    for (size_t j = i + 1; j < ranges.size() && ranges[j].begin < ranges[i].end;
         ++j) {
      if (ranges[i].item == ranges[j].item) continue;
      overlaps(ranges[i], ranges[j]);
      overlaps(ranges[j], ranges[i]);
    }
  }
  return out;
}

void OpRunner::receive_into_user_memory() {
  if (in_place_.empty()) return;
  std::vector<InPlace> in_place = std::move(in_place_);
  in_place_ = {};
  const Slab& out = *buffers_.out_slab;
  gate_next_.assign(lanes_.size(), 0);
  gate_end_.assign(lanes_.size(), 0);
  for (uint32_t work = 0; work < lanes_.size(); ++work) {
    LaneWork& w = lanes_[work];
    const uint32_t room = w.lane.payload_room();
    const uint32_t first_seq = w.lane.data_consumed();
    gate_next_[work] = static_cast<uint32_t>(gates_.size());
    std::vector<Frame> frames;
    bool any = false;
    for (uint64_t pos = w.recvs.begin(); pos < w.recvs.end(); ++pos) {
      const Step& step = w.recvs.at(pos);
      InPlace& in = in_place[static_cast<size_t>(step.item)];
      Gate* gate = nullptr;
      if (in.ok && !in.needs.empty()) {
        const std::byte* dst = at(step.dst_buffer, step.dst_offset);
        gate = &gates_.emplace_back(
            Gate{.work = work,
                 .first_seq = first_seq + static_cast<uint32_t>(frames.size()),
                 .begin = dst,
                 .end = dst + step.bytes,
                 .needs = std::move(in.needs)});
      }
      for (uint32_t f = 0; f < step.frames; ++f) {
        frames.emplace_back();
        if (gate != nullptr) gate->frames.emplace_back();
        if (!in.ok || frame_bytes(step, f) != room) continue;
        const std::byte* dst =
            at(step.dst_buffer,
               step.dst_offset + uint64_t{f} * identity_.chunk_bytes);
        absl::StatusOr<Frame> frame =
            out.frame(static_cast<uint64_t>(dst - out.data()), room);
        WEFT_ASSERT(frame.ok(), "a registered buffer's frame is outside it");
        (gate != nullptr ? gate->frames.back() : frames.back()) = *frame;
        any = true;
      }
    }
    gate_end_[work] = static_cast<uint32_t>(gates_.size());
    if (any) w.lane.receive_into(first_seq, std::move(frames));
  }
  gates_left_ = static_cast<uint32_t>(gates_.size());
  open_gates();
}

bool OpRunner::item_done(int32_t item) const {
  const auto index = static_cast<uint64_t>(item);
  for (const PartWork& pw : parts_) {
    if (index < pw.first || index >= pw.state.end()) continue;
    if (index < pw.state.begin()) return true;  // done and let go
    const ItemState& st = pw.state.at(index);
    return st.done == st.frames;
  }
  // Parts follow one another; an item not made yet is not done.
  return false;
}

void OpRunner::open_gates() {
  if (gates_left_ == 0) return;
  for (uint32_t work = 0; work < lanes_.size(); ++work) {
    uint32_t& next = gate_next_[work];
    for (; next < gate_end_[work]; ++next) {
      Gate& g = gates_[next];
      if (!std::all_of(g.needs.begin(), g.needs.end(),
                       [&](int32_t i) { return item_done(i); })) {
        break;
      }
      // No lane may read the slice once a receive may land there: frames
      // sent from it and not yet acknowledged are copied aside first.
      bool free = true;
      for (LaneWork& w : lanes_) free &= w.lane.detach(g.begin, g.end);
      if (!free) break;
      lanes_[work].lane.receive_also_into(g.first_seq, g.frames);
      g.frames = {};
      --gates_left_;
    }
  }
}

}  // namespace weft::collectives::internal
