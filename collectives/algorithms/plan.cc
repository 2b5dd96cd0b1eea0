#include "collectives/algorithms/plan.h"

#include <cassert>

#include "absl/strings/str_format.h"

namespace weft::internal {
namespace {

constexpr uint64_t kScratchAlign = 64;

const char* buffer_name(BufferId b) {
  switch (b) {
    case BufferId::kIn:
      return "in";
    case BufferId::kOut:
      return "out";
    case BufferId::kScratch:
      return "scratch";
  }
  return "?";
}

std::string describe_slice(const Slice& s) {
  return absl::StrFormat("%s[%u, %u)", buffer_name(s.buffer), s.offset,
                         s.offset + s.bytes);
}

}  // namespace

int32_t PlanBuilder::add(Item item, Dep dep) {
  assert(dep.item < static_cast<int32_t>(plan_.items.size()));
  item.after = dep.item;
  item.wait = dep.wait;
  plan_.items.push_back(item);
  return static_cast<int32_t>(plan_.items.size() - 1);
}

int32_t PlanBuilder::send(uint32_t peer, uint32_t lane, Slice src, Dep dep) {
  Item item;
  item.kind = ItemKind::kSend;
  item.peer = peer;
  item.lane = lane;
  item.src = src;
  return add(item, dep);
}

int32_t PlanBuilder::recv(uint32_t peer, uint32_t lane, Slice dst, Apply apply,
                          Dep dep) {
  Item item;
  item.kind = ItemKind::kRecv;
  item.peer = peer;
  item.lane = lane;
  item.dst = dst;
  item.apply = apply;
  return add(item, dep);
}

int32_t PlanBuilder::recv_with(uint32_t peer, uint32_t lane, Slice dst,
                               Apply apply, Slice other, Dep dep) {
  assert(apply == Apply::kReduceAfter || apply == Apply::kReduceBefore);
  assert(other.bytes == dst.bytes);
  const int32_t i = recv(peer, lane, dst, apply, dep);
  plan_.items[static_cast<size_t>(i)].src = other;
  return i;
}

int32_t PlanBuilder::local(Slice src, Slice dst, Apply apply, Dep dep) {
  Item item;
  item.kind = ItemKind::kLocal;
  item.src = src;
  item.dst = dst;
  item.apply = apply;
  return add(item, dep);
}

Slice PlanBuilder::scratch(uint64_t bytes) {
  Slice s{BufferId::kScratch, plan_.scratch_bytes, bytes};
  plan_.scratch_bytes +=
      (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
  return s;
}

std::string describe_item(const Item& item) {
  std::string after =
      item.after == kNoItem
          ? ""
          : absl::StrFormat(" after #%d %s", item.after,
                            item.wait == Wait::kFrame ? "frame" : "whole");
  std::string apply = "copy";
  if (item.apply == Apply::kReduce) apply = "reduce";
  if (item.apply == Apply::kReduceAfter) {
    apply = absl::StrFormat("reduce after %s", describe_slice(item.src));
  }
  if (item.apply == Apply::kReduceBefore) {
    apply = absl::StrFormat("reduce before %s", describe_slice(item.src));
  }
  switch (item.kind) {
    case ItemKind::kSend:
      return absl::StrFormat("send %s to %u lane %u%s",
                             describe_slice(item.src), item.peer, item.lane,
                             after);
    case ItemKind::kRecv:
      return absl::StrFormat("recv from %u lane %u %s into %s%s", item.peer,
                             item.lane, apply, describe_slice(item.dst), after);
    case ItemKind::kLocal:
      return absl::StrFormat("local %s %s into %s%s", apply,
                             describe_slice(item.src), describe_slice(item.dst),
                             after);
  }
  return "?";
}

}  // namespace weft::internal
