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

namespace weft::internal {

std::vector<uint8_t> OpRunner::receivable_in_place(
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
    const std::byte* base = s.buffer == BufferId::kIn    ? buffers_.in
                            : s.buffer == BufferId::kOut ? buffers_.out
                                                         : nullptr;
    if (base == nullptr || s.bytes == 0) return;  // scratch, or no buffer
    const std::byte* b = base + s.offset;
    ranges.push_back(Range{b, b + s.bytes, static_cast<int32_t>(item), dst});
  };
  std::vector<uint8_t> ok(items.size(), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& it = items[i];
    const bool reads_src = it.kind != ItemKind::kRecv ||
                           it.apply == Apply::kReduceAfter ||
                           it.apply == Apply::kReduceBefore;
    if (reads_src) add(it.src, i, /*dst=*/false);
    if (it.kind != ItemKind::kSend) add(it.dst, i, /*dst=*/true);
    ok[i] = it.kind == ItemKind::kRecv && it.apply == Apply::kCopy &&
                    it.dst.buffer == BufferId::kOut && it.dst.bytes > 0
                ? 1
                : 0;
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
  for (size_t i = 0; i < ranges.size(); ++i) {
    for (size_t j = i + 1; j < ranges.size() && ranges[j].begin < ranges[i].end;
         ++j) {
      const Range& a = ranges[i];
      const Range& b = ranges[j];
      if (a.item == b.item) continue;
      if (a.dst && !forwards(b, a.item)) ok[static_cast<size_t>(a.item)] = 0;
      if (b.dst && !forwards(a, b.item)) ok[static_cast<size_t>(b.item)] = 0;
    }
  }
  return ok;
}

void OpRunner::receive_into_user_memory() {
  if (in_place_.empty()) return;
  const Slab& out = *buffers_.out_slab;
  for (LaneWork& w : lanes_) {
    const uint32_t room = w.lane->payload_room();
    std::vector<Frame> frames;
    bool any = false;
    for (uint64_t pos = w.recvs.begin(); pos < w.recvs.end(); ++pos) {
      const Step& step = w.recvs.at(pos);
      const bool ok = in_place_[static_cast<size_t>(step.item)] != 0;
      for (uint32_t f = 0; f < step.frames; ++f) {
        frames.emplace_back();
        if (!ok || frame_bytes(step, f) != room) continue;
        const std::byte* dst =
            at(step.dst_buffer,
               step.dst_offset + uint64_t{f} * identity_.chunk_bytes);
        absl::StatusOr<Frame> frame =
            out.frame(static_cast<uint64_t>(dst - out.data()), room);
        WEFT_ASSERT(frame.ok(), "a registered buffer's frame is outside it");
        frames.back() = *frame;
        any = true;
      }
    }
    if (any) w.lane->receive_into(w.lane->data_consumed(), std::move(frames));
  }
}

}  // namespace weft::internal
