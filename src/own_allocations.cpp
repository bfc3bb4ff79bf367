// src/own_allocations.cpp — OwnAllocations (own_allocations.hpp).
#include "own_allocations.hpp"

#include <cstring>
#include <limits>
#include <string>

#include "ewise/error.hpp"

namespace ewise::detail {
namespace {

[[noreturn]] void lock_failed(const char* call, int rc) {
  throw Error(std::string("ewise: the own-allocation table's lock: ") + call + " returned " +
              std::to_string(rc) + " (" + std::strerror(rc) + ")");
}

/// The lock held shared or exclusively for the guard's lifetime. Taking it fails only when
/// the lock is broken (too many readers, a deadlock): Error.
class Held {
 public:
  Held(pthread_rwlock_t* lock, bool shared) : lock_(lock) {
    const int rc = shared ? pthread_rwlock_rdlock(lock_) : pthread_rwlock_wrlock(lock_);
    if (rc != 0) lock_failed(shared ? "pthread_rwlock_rdlock" : "pthread_rwlock_wrlock", rc);
  }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() { pthread_rwlock_unlock(lock_); }

 private:
  pthread_rwlock_t* lock_;
};

}  // namespace

OwnAllocations::OwnAllocations() {
  pthread_rwlockattr_t attr;
  if (const int rc = pthread_rwlockattr_init(&attr); rc != 0)
    lock_failed("pthread_rwlockattr_init", rc);
#if defined(__GLIBC__)
  const int kind =
      pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#else
  const int kind = 0;
#endif
  const int rc = kind == 0 ? pthread_rwlock_init(&lock_, &attr) : kind;
  pthread_rwlockattr_destroy(&attr);
  if (rc != 0) lock_failed(kind == 0 ? "pthread_rwlock_init" : "pthread_rwlockattr_setkind_np", rc);
}

OwnAllocations::~OwnAllocations() { pthread_rwlock_destroy(&lock_); }

void OwnAllocations::add(const void* p, std::size_t bytes, int device) {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  if (bytes == 0 || bytes > std::numeric_limits<std::uintptr_t>::max() - begin) return;
  const Held held(&lock_, false);
  by_begin_.insert_or_assign(begin, OwnAllocation{begin, begin + bytes, device});
}

void OwnAllocations::remove(const void* p) noexcept {
  const Held held(&lock_, false);
  by_begin_.erase(reinterpret_cast<std::uintptr_t>(p));
}

bool OwnAllocations::find(std::uintptr_t p, OwnAllocation* out) const {
  const Held held(&lock_, true);
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
