#include "collectives/algorithms/plan.h"

#include <cassert>

#include "absl/strings/str_format.h"

namespace weft::collectives::internal {
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

Item with_dep(Item item, Dep dep) {
  item.after = dep.item;
  item.wait = dep.wait;
  return item;
}

}  // namespace

uint64_t Plan::size() const {
  uint64_t n = 0;
  for (const PlanPart& part : parts) n += part.size();
  return n;
}

Plan whole_plan(Plan plan) {
  for (PlanPart& part : plan.parts) {
    if (part.rest == nullptr) continue;
    part.items.reserve(part.items.size() + part.rest->size());
    for (uint64_t i = 0, n = part.rest->size(); i < n; ++i) {
      part.items.push_back(part.rest->next());
    }
    part.rest.reset();
  }
  return plan;
}

std::vector<Item> all_items(Plan plan) {
  std::vector<Item> items;
  items.reserve(plan.size());
  for (PlanPart& part : whole_plan(std::move(plan)).parts) {
    items.insert(items.end(), part.items.begin(), part.items.end());
  }
  return items;
}

Item send_item(uint32_t peer, uint32_t lane, Slice src, Dep dep) {
  Item item;
  item.kind = ItemKind::kSend;
  item.peer = peer;
  item.lane = lane;
  item.src = src;
  return with_dep(item, dep);
}

Item recv_item(uint32_t peer, uint32_t lane, Slice dst, Apply apply, Dep dep) {
  Item item;
  item.kind = ItemKind::kRecv;
  item.peer = peer;
  item.lane = lane;
  item.dst = dst;
  item.apply = apply;
  return with_dep(item, dep);
}

Item recv_with_item(uint32_t peer, uint32_t lane, Slice dst, Apply apply,
                    Slice other, Dep dep) {
  assert(apply == Apply::kReduceAfter || apply == Apply::kReduceBefore);
  assert(other.bytes == dst.bytes);
  Item item = recv_item(peer, lane, dst, apply, dep);
  item.src = other;
  return item;
}

PlanPart& PlanBuilder::part() {
  if (!part_open_ || plan_.parts.empty() ||
      plan_.parts.back().rest != nullptr) {
    plan_.parts.emplace_back();
    part_open_ = true;
  }
  return plan_.parts.back();
}

void PlanBuilder::end_part() { part_open_ = false; }

int32_t PlanBuilder::add(Item item) {
  assert(item.after < next_index());
  part().items.push_back(item);
  return static_cast<int32_t>(size_++);
}

int32_t PlanBuilder::append(std::unique_ptr<ItemSource> source, bool lazy) {
  if (!lazy) {
    for (uint64_t i = source->size(); i > 0; --i) add(source->next());
    return next_index() - 1;
  }
  size_ += source->size();
  part().rest = std::move(source);
  return next_index() - 1;
}

int32_t PlanBuilder::local(Slice src, Slice dst, Apply apply, Dep dep) {
  Item item;
  item.kind = ItemKind::kLocal;
  item.src = src;
  item.dst = dst;
  item.apply = apply;
  return add(with_dep(item, dep));
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

}  // namespace weft::collectives::internal
