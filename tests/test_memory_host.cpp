// Host tests of ewise/memory.hpp that need no GPU: bad device ordinals are rejected before any
// CUDA call, an empty buffer allocates nothing, and the record of ewise's own allocations
// (src/own_allocations.hpp, on fake addresses) finds the allocation holding a byte, at its
// boundaries too, while threads add, remove and look up at once; large host blocks are kept for
// the next buffer of their size, from any thread, and only up to their bound.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "own_allocations.hpp"
#include "testing/expect_invalid.hpp"

namespace ewise {
namespace {

TEST(MemoryHost, NegativeDeviceOrdinalsOtherThanCurrentAreRejected) {
  test::expect_invalid([] { pool_memory_resource(-2); }, {"-1 (the current device)", "-2"});
  test::expect_invalid([] { set_default_memory_resource(nullptr, -7); }, {"-7"});
  test::expect_invalid([] { memory_pool_stats(-3); }, {"-3"});
  test::expect_invalid([] { trim_memory_pool(0, -4); }, {"-4"});
}

TEST(MemoryHost, EmptyBufferAllocatesNothing) {
  DeviceBuffer empty(0);
  EXPECT_EQ(empty.data(), nullptr);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.resource(), nullptr);
  DeviceTensor none(DType::f32, {0, 5});
  EXPECT_EQ(none.data(), nullptr);
}

using detail::OwnAllocation;
using detail::OwnAllocations;

/// The allocation `r` finds holding byte p, or {0, 0, -1} when none does.
OwnAllocation found(const OwnAllocations& r, std::uintptr_t p) {
  OwnAllocation a;
  return r.find(p, &a) ? a : OwnAllocation{};
}

void expect_found(const OwnAllocations& r, std::uintptr_t p, const OwnAllocation& want) {
  const OwnAllocation a = found(r, p);
  EXPECT_EQ(a.begin, want.begin) << "byte " << p;
  EXPECT_EQ(a.end, want.end) << "byte " << p;
  EXPECT_EQ(a.device, want.device) << "byte " << p;
}

void expect_none(const OwnAllocations& r, std::uintptr_t p) {
  OwnAllocation a;
  EXPECT_FALSE(r.find(p, &a)) << "byte " << p << " found in [" << a.begin << ", " << a.end << ")";
}

const void* address(std::uintptr_t p) { return reinterpret_cast<const void*>(p); }

TEST(MemoryHost, LargeHostBlocksAreReusedBySizeUpToTheirBound) {
  // 8 MiB (a block of 4 MiB and up, rounded to 2 MiB pages) comes back for the next buffer of
  // the same rounded size, written or not; another size gets another block.
  const std::size_t mib = std::size_t{1} << 20;
  const void* first = nullptr;
  {
    HostBuffer a(8 * mib);
    std::memset(a.data(), 0x5A, a.size());
    first = a.data();
  }
  {
    HostBuffer b(8 * mib - 100), c(8 * mib);  // b takes the kept block; c is new
    EXPECT_EQ(b.data(), first);
    EXPECT_NE(c.data(), first);
    EXPECT_EQ(static_cast<const unsigned char*>(b.data())[12345], 0x5A);
  }
  // Threads take and return blocks of a few sizes at once (under TSan: the cache's lock).
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, mib] {
      for (int i = 0; i < 50; ++i) {
        HostBuffer x((4 + 2 * ((t + i) % 3)) * mib);
        static_cast<unsigned char*>(x.data())[x.size() - 1] = 1;
      }
    });
  for (std::thread& t : threads) t.join();
  // More than the bound freed at once: the oldest go back to the system, the newest stay.
  {
    std::vector<HostBuffer> many;
    for (int i = 0; i < 40; ++i) many.emplace_back(10 * mib);
    const void* last = many.back().data();
    for (HostBuffer& m : many) m = HostBuffer();  // freed in order: the last is the newest
    HostBuffer again(10 * mib);
    EXPECT_EQ(again.data(), last);
  }
}

TEST(MemoryHost, OwnAllocationsFindTheAllocationHoldingAByte) {
  OwnAllocations r;
  expect_none(r, 0);
  expect_none(r, 0x10000);
  // a and b side by side, c alone further up.
  const OwnAllocation a{0x10000, 0x10100, 0}, b{0x10100, 0x10180, 1}, c{0x20000, 0x20001, 2};
  r.add(address(b.begin), b.end - b.begin, b.device);
  r.add(address(a.begin), a.end - a.begin, a.device);
  r.add(address(c.begin), 1, c.device);
  expect_none(r, 0);
  expect_none(r, a.begin - 1);
  expect_found(r, a.begin, a);
  expect_found(r, a.begin + 0x80, a);
  expect_found(r, a.end - 1, a);
  expect_found(r, b.begin, b);  // a's end
  expect_found(r, b.end - 1, b);
  expect_none(r, b.end);
  expect_none(r, c.begin - 1);
  expect_found(r, c.begin, c);
  expect_none(r, c.end);
  expect_none(r, std::numeric_limits<std::uintptr_t>::max());

  // Removing goes by the start address: an interior pointer or an unknown one removes nothing.
  r.remove(address(b.begin + 1));
  r.remove(address(0x30000));
  expect_found(r, b.begin, b);
  r.remove(address(a.begin));
  expect_none(r, a.begin);
  expect_none(r, a.end - 1);
  expect_found(r, b.begin, b);
  // The address handed out again, smaller: only the new extent is found.
  const OwnAllocation again{a.begin, a.begin + 0x40, 3};
  r.add(address(again.begin), 0x40, again.device);
  expect_found(r, again.end - 1, again);
  expect_none(r, again.end);
  // A record at the same start replaces the old one.
  const OwnAllocation c2{c.begin, c.begin + 8, 4};
  r.add(address(c.begin), 8, c2.device);
  expect_found(r, c.begin + 7, c2);
  r.remove(address(c.begin));
  expect_none(r, c.begin);
}

TEST(MemoryHost, OwnAllocationsRecordNoEmptyOrWrappingAllocation) {
  OwnAllocations r;
  r.add(address(0x1000), 0, 0);
  expect_none(r, 0x1000);
  // One that would end past the top of the address space is not recorded; one ending just
  // below the top is, up to its last byte.
  constexpr std::uintptr_t top = std::numeric_limits<std::uintptr_t>::max();
  r.add(address(top - 15), 16, 0);
  expect_none(r, top - 15);
  expect_none(r, top);
  r.add(address(top - 15), 15, 1);
  expect_found(r, top - 15, {top - 15, top, 1});
  expect_found(r, top - 1, {top - 15, top, 1});
  expect_none(r, top);
}

/// Writers add and remove allocations of their own address ranges while readers look up both
/// allocations that stay (which must always be found, whole) and the writers' (found whole, with
/// the writer's device, or not at all).
TEST(MemoryHost, OwnAllocationsUnderConcurrentLookupsAddsAndRemoves) {
  constexpr int kWriters = 4, kReaders = 4, kRounds = 20000;
  constexpr std::uintptr_t kRegion = 0x100000, kSize = 0x100, kSlots = 16;
  OwnAllocations r;
  // Thread w's region starts at (w + 1) * kRegion: its first slot stays, the next kSlots churn.
  const auto slot = [](int w, std::uintptr_t k) {
    return static_cast<std::uintptr_t>(w + 1) * kRegion + k * kSize;
  };
  for (int w = 0; w < kWriters; ++w) r.add(address(slot(w, 0)), kSize, w);

  std::atomic<long> errors{0};
  std::atomic<int> writers_left{kWriters};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      for (int i = 0; i < kRounds; ++i) {
        const std::uintptr_t p = slot(w, 1 + static_cast<std::uintptr_t>(i) % kSlots);
        r.add(address(p), kSize, 100 + w);
        const OwnAllocation a = found(r, p + kSize - 1);  // only this thread touches its slots
        if (a.begin != p || a.end != p + kSize || a.device != 100 + w) ++errors;
        r.remove(address(p));
        if (found(r, p).device != -1) ++errors;
      }
      --writers_left;
    });
  for (int t = 0; t < kReaders; ++t)
    threads.emplace_back([&, t] {
      std::uintptr_t k = static_cast<std::uintptr_t>(t);
      do {
        for (int w = 0; w < kWriters; ++w) {
          const std::uintptr_t stays = slot(w, 0) + k % kSize;
          const OwnAllocation s = found(r, stays);
          if (s.begin != slot(w, 0) || s.end != slot(w, 0) + kSize || s.device != w) ++errors;
          const std::uintptr_t churns = slot(w, 1 + k % kSlots) + k % kSize;
          const OwnAllocation c = found(r, churns);
          const bool whole = c.begin <= churns && churns < c.end && c.end - c.begin == kSize;
          if (c.device != -1 && (!whole || c.device != 100 + w)) ++errors;
        }
        ++k;
      } while (writers_left.load() > 0);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(errors.load(), 0);
  for (int w = 0; w < kWriters; ++w) {
    expect_found(r, slot(w, 0), {slot(w, 0), slot(w, 0) + kSize, w});
    for (std::uintptr_t k = 1; k <= kSlots; ++k) expect_none(r, slot(w, k));
  }
}

}  // namespace
}  // namespace ewise
