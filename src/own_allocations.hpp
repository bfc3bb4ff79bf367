// src/own_allocations.hpp — the allocations ewise's own memory pools have made and not yet freed.
// memory.cpp records them (PoolResource); the residency check (residency.cpp) looks each
// operand's pointer up here first: for memory ewise allocated it knows the device and the exact
// extent without asking the driver, whose queries on pool memory cost about 1-2 us per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <pthread.h>

namespace ewise::detail {

/// One live allocation: bytes [begin, end) of device `device`.
struct OwnAllocation {
  std::uintptr_t begin = 0, end = 0;
  int device = -1;
};

/// Live allocations keyed by their start address. Thread-safe: find() takes the lock shared
/// (every checked call looks up from any thread) and allocates nothing; add() and remove() take
/// it exclusively. Allocations never overlap while they live: a pool hands out an address again
/// only after its free, and remove() runs before the free is issued.
///
/// The lock prefers writers where the C library offers it (glibc's
/// PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP): with the default preference for readers,
/// threads that keep looking up hold add() and remove() back for as long as their shared holds
/// overlap (docs/reliability.md, bug 16).
class OwnAllocations {
 public:
  /// Throws Error when the lock cannot be made; find(), add() and remove() throw Error when
  /// it cannot be taken (a broken lock: remove(), noexcept, then terminates).
  OwnAllocations();
  OwnAllocations(const OwnAllocations&) = delete;
  OwnAllocations& operator=(const OwnAllocations&) = delete;
  ~OwnAllocations();

  /// Records bytes [p, p + bytes) of `device`, replacing a record that starts at p. An empty
  /// allocation holds no byte, and none can wrap past the top of the address space: neither is
  /// recorded. Throws std::bad_alloc.
  void add(const void* p, std::size_t bytes, int device);
  /// Forgets the allocation that starts at p; nothing when none does.
  void remove(const void* p) noexcept;
  /// The live allocation holding byte p into `*out`; false when none holds it.
  bool find(std::uintptr_t p, OwnAllocation* out) const;

 private:
  mutable pthread_rwlock_t lock_;
  std::map<std::uintptr_t, OwnAllocation> by_begin_;
};

/// The live allocations of ewise's pools on every device. Never destroyed: buffers may be freed
/// during static destruction, as the pools themselves are (memory.cpp).
OwnAllocations& own_allocations();

}  // namespace ewise::detail
