// src/own_allocations.cpp — OwnAllocations (own_allocations.hpp).
#include "own_allocations.hpp"

#include <limits>
#include <mutex>

namespace ewise::detail {

void OwnAllocations::add(const void* p, std::size_t bytes, int device) {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  if (bytes == 0 || bytes > std::numeric_limits<std::uintptr_t>::max() - begin) return;
  const std::unique_lock lock(mutex_);
  by_begin_.insert_or_assign(begin, OwnAllocation{begin, begin + bytes, device});
}

void OwnAllocations::remove(const void* p) noexcept {
  const std::unique_lock lock(mutex_);
  by_begin_.erase(reinterpret_cast<std::uintptr_t>(p));
}

bool OwnAllocations::find(std::uintptr_t p, OwnAllocation* out) const {
  const std::shared_lock lock(mutex_);
  auto it = by_begin_.upper_bound(p);  // the first allocation starting after p
  if (it == by_begin_.begin()) return false;
  --it;  // the last one starting at or before p
  if (p >= it->second.end) return false;
  *out = it->second;
  return true;
}

OwnAllocations& own_allocations() {
  static auto* const allocations = new OwnAllocations;
  return *allocations;
}

}  // namespace ewise::detail
