// Host tests of the dense half: fast divmod, kernel names, planning and kernel choice (which,
// like the residency check's lookup of ewise's own allocations, allocate nothing), every
// validation error (thrown before anything touches the GPU, so these run without one), and the
// CPU fallback for host views.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/detail/fast_divmod.hpp"
#include "ewise/error.hpp"
#include "ewise/reference.hpp"
#include "ewise/verify.hpp"
#include "own_allocations.hpp"
#include "testing/expect_invalid.hpp"

// Heap allocations made by this thread while counting is on (the planner test below): every
// operator new of the test binary goes through here. All the unaligned forms are replaced, the
// nothrow ones too (std::stable_sort's buffer): a form left to the runtime would allocate where
// these free, which AddressSanitizer reports as a mismatch.
namespace {
thread_local bool g_count_allocations = false;
thread_local long g_allocations = 0;

void* counted_malloc(std::size_t n) noexcept {
  if (g_count_allocations) ++g_allocations;
  return std::malloc(n == 0 ? 1 : n);
}
}  // namespace

void* operator new(std::size_t n) {
  if (void* p = counted_malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return counted_malloc(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace ewise {
namespace {

// ---- fast divmod --------------------------------------------------------------------------

template <class U>
void check_divmod(std::uint64_t seed) {
  using D = detail::FastDivmod<U>;
  std::mt19937_64 rng(seed);
  const U max_n = D::kMaxNumerator;
  std::vector<std::uint64_t> divisors = {
      1, 2, 3, 5, 7, 10, 31, 32, 33, 1000, 65535, 65536, 65537, (1ull << 31) - 1, 1ull << 31};
  if constexpr (sizeof(U) == 8)
    for (std::uint64_t d : {(1ull << 32) - 1, 1ull << 32, (1ull << 32) + 1, (1ull << 62) + 3,
                            (1ull << 63) - 1, 1ull << 63})
      divisors.push_back(d);
  for (int i = 0; i < 200; ++i) {  // random divisors of every magnitude
    const int bits = 1 + static_cast<int>(rng() % (D::kBits - 1));
    divisors.push_back(1 + (rng() >> (64 - bits)));
  }
  for (std::uint64_t d64 : divisors) {
    const D div(d64);
    const U d = static_cast<U>(d64);
    std::vector<U> numerators = {0, 1, d - 1, d, max_n, max_n - 1};
    if (d < max_n) numerators.push_back(d + 1);
    if (d <= max_n / 2) numerators.push_back(2 * d - 1);
    for (int i = 0; i < 500; ++i)
      numerators.push_back(static_cast<U>(rng() % (std::uint64_t{max_n} + 1)));
    for (U n : numerators) {
      U q, r;
      div.divmod(n, q, r);
      ASSERT_EQ(q, n / d) << "n=" << n << " d=" << d << " seed=" << seed;
      ASSERT_EQ(r, n % d) << "n=" << n << " d=" << d << " seed=" << seed;
    }
  }
}

TEST(DenseHost, FastDivmodMatchesDivision) {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  SCOPED_TRACE("EWISE_SEED=" + std::to_string(seed));
  check_divmod<std::uint32_t>(seed);
  check_divmod<std::uint64_t>(seed);
}

TEST(DenseHost, FastDivmodRejectsBadDivisors) {
  EXPECT_THROW(detail::FastDivmod<std::uint32_t>(0), InvalidArgument);
  EXPECT_THROW(detail::FastDivmod<std::uint32_t>((1ull << 31) + 1), InvalidArgument);
  EXPECT_THROW(detail::FastDivmod<std::uint64_t>(0), InvalidArgument);
}

// ---- names --------------------------------------------------------------------------------

TEST(DenseHost, KernelNamesRoundTrip) {
  for (Kernel k : kAllKernels) EXPECT_EQ(parse_kernel(kernel_name(k)), k);
  EXPECT_STREQ(kernel_name(Kernel::row_vectorized), "row_vectorized");
  try {
    parse_kernel("fastest");
    FAIL() << "parse_kernel accepted 'fastest'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("fastest"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("sliding_shared"), std::string::npos) << e.what();
  }
}

// ---- planning on fake device pointers (never dereferenced) ---------------------------------

/// A device view at a fake address: planning and validation never touch it.
TensorView fake(std::uintptr_t address, DType t, const Dims& shape, const Dims& strides = {},
                Memory m = Memory::device) {
  TensorView v;
  v.data = reinterpret_cast<void*>(address);
  v.desc = strides.size() == shape.size() && shape.size() > 0
               ? TensorDesc::strided(t, shape, strides)
               : TensorDesc::contiguous(t, shape);
  v.memory = m;
  return v;
}

// Far apart, so that even multi-GiB fake views do not overlap.
constexpr std::uintptr_t kA = std::uintptr_t{1} << 40, kB = std::uintptr_t{2} << 40,
                         kOut = std::uintptr_t{3} << 40;

Kernel pick(const Dims& as, const Dims& bs, const Dims& outs, const Dims& a_strides = {},
            const Dims& out_strides = {}) {
  return select_kernel(fake(kA, DType::f32, as, a_strides), fake(kB, DType::f32, bs),
                       fake(kOut, DType::f32, outs, out_strides));
}

TEST(DenseHost, AutomaticPicksByPattern) {
  EXPECT_EQ(pick({4096, 4096}, {4096, 4096}, {4096, 4096}), Kernel::vectorized);   // same shape
  EXPECT_EQ(pick({4096, 4096}, {1}, {4096, 4096}), Kernel::vectorized);            // scalar
  EXPECT_EQ(pick({}, {}, {}), Kernel::vectorized);                                 // rank 0
  EXPECT_EQ(pick({4096, 4096}, {1, 4096}, {4096, 4096}), Kernel::row_vectorized);  // bias add
  EXPECT_EQ(pick({4096, 4096}, {4096, 1}, {4096, 4096}), Kernel::row_vectorized);  // column
  EXPECT_EQ(pick({4096, 1}, {1, 4096}, {4096, 4096}), Kernel::row_vectorized);     // outer
  EXPECT_EQ(pick({64, 256, 64, 64}, {1, 256, 1, 1}, {64, 256, 64, 64}), Kernel::row_vectorized);
  EXPECT_EQ(pick({64, 1, 256, 1}, {1, 128, 1, 512}, {64, 128, 256, 512}), Kernel::row_vectorized);
  // A transposed view plus a row vector or a column vector: shared-memory tiles, in 16-byte
  // units or (extents off the vector width, misaligned data) element by element.
  EXPECT_EQ(pick({4096, 4096}, {1, 4096}, {4096, 4096}, {1, 4096}), Kernel::tiled);
  EXPECT_EQ(pick({4096, 4096}, {4096, 1}, {4096, 4096}, {1, 4096}), Kernel::tiled);
  EXPECT_EQ(pick({4098, 4096}, {1, 4096}, {4098, 4096}, {1, 4098}), Kernel::tiled);
  EXPECT_EQ(select_kernel(fake(kA + 4, DType::f32, {4096, 4096}, {1, 4096}),
                          fake(kB, DType::f32, {1, 4096}), fake(kOut, DType::f32, {4096, 4096})),
            Kernel::tiled);
  // A transposed view plus a full matrix (no vector): shared-memory tiles; also in N-d.
  EXPECT_EQ(pick({4096, 4096}, {4096, 4096}, {4096, 4096}, {1, 4096}), Kernel::tiled);
  EXPECT_EQ(pick({8, 64, 64}, {8, 64, 64}, {8, 64, 64}, {4096, 1, 64}), Kernel::tiled);
  // Too short to tile: the output as one flat range of vectors, the transposed input gathered.
  EXPECT_EQ(pick({4096, 8}, {4096, 8}, {4096, 8}, {1, 4096}), Kernel::vectorized);
  // A transposed output over contiguous inputs: the plan follows the output, so the inputs are
  // the transposed ones.
  EXPECT_EQ(pick({4096, 4096}, {4096, 4096}, {4096, 4096}, {}, {1, 4096}), Kernel::tiled);
  // Reversed innermost dim, every other element: no vector access, no tile; the output is
  // contiguous, so vectorized gathers the input; with a non-contiguous output, general, or
  // sliding for a matrix-vector plan.
  EXPECT_EQ(pick({4096, 4096}, {4096, 4096}, {4096, 4096}, {4096, -1}), Kernel::vectorized);
  EXPECT_EQ(pick({4096, 4096}, {1, 4096}, {4096, 4096}, {4096, -1}), Kernel::vectorized);
  EXPECT_EQ(pick({4096, 4096}, {4096, 4096}, {4096, 4096}, {8192, 2}), Kernel::vectorized);
  EXPECT_EQ(pick({4096, 4096}, {4096, 4096}, {4096, 4096}, {4096, -1}, {8192, 1}),
            Kernel::general);
  EXPECT_EQ(pick({4096, 4096}, {1, 4096}, {4096, 4096}, {4096, -1}, {8192, 1}), Kernel::sliding);
  // Rows that are not whole aligned 16-byte vectors (odd widths, a misaligned start), short
  // rows and outer products: vectorized across rows when the output is contiguous, except
  // rows of >= kLongRow elements of 4 bytes or more with an input read along them in full
  // (row_vectorized element by element); row_vectorized when the output is not contiguous.
  const auto pick16 = [](const Dims& as, const Dims& bs, const Dims& outs, std::uintptr_t off = 0) {
    return select_kernel(fake(kA + off, DType::f16, as), fake(kB, DType::f16, bs),
                         fake(kOut + off, DType::f16, outs));
  };
  EXPECT_EQ(pick16({4096, 999}, {1, 999}, {4096, 999}), Kernel::vectorized);
  EXPECT_EQ(pick16({4096, 999}, {4096, 1}, {4096, 999}), Kernel::vectorized);
  EXPECT_EQ(pick16({4096, 4096}, {1, 4096}, {4096, 4096}, 2), Kernel::vectorized);
  EXPECT_EQ(pick({4096, 999}, {1, 999}, {4096, 999}), Kernel::row_vectorized);
  EXPECT_EQ(pick({4096, 999}, {4096, 1}, {4096, 999}), Kernel::row_vectorized);
  EXPECT_EQ(pick({4096, 255}, {1, 255}, {4096, 255}), Kernel::vectorized);  // short rows
  EXPECT_EQ(pick({4095, 1}, {1, 999}, {4095, 999}), Kernel::vectorized);    // no full input
  EXPECT_EQ(pick({8, 64, 7, 7}, {1, 64, 1, 1}, {8, 64, 7, 7}), Kernel::vectorized);
  EXPECT_EQ(pick({4096, 999}, {1, 999}, {4096, 999}, {}, {1000, 1}), Kernel::row_vectorized);
  EXPECT_EQ(select_kernel(fake(kA + 4, DType::f32, {4096, 4096}), fake(kB, DType::f32, {1, 4096}),
                          fake(kOut + 4, DType::f32, {4096, 4096})),
            Kernel::row_vectorized);
  // Same shape with one input off the output's 16-byte offset: f32 element-wise rows, f16
  // across rows (that input gathered).
  EXPECT_EQ(select_kernel(fake(kA + 4, DType::f32, {4096}), fake(kB, DType::f32, {4096}),
                          fake(kOut + 4, DType::f32, {4096})),
            Kernel::row_vectorized);
  EXPECT_EQ(pick16({4096}, {4096}, {4096}, 2), Kernel::vectorized);
}

TEST(DenseHost, KernelSupports) {
  const auto a = fake(kA, DType::f32, {100, 200}), row = fake(kB, DType::f32, {1, 200});
  const auto col = fake(kB, DType::f32, {100, 1}), out = fake(kOut, DType::f32, {100, 200});
  const auto at = fake(kA, DType::f32, {100, 200}, {1, 100});  // transposed view
  for (Kernel k : kAllKernels) EXPECT_TRUE(kernel_supports(k, a, row, out)) << kernel_name(k);
  for (Kernel k : kAllKernels) EXPECT_TRUE(kernel_supports(k, a, col, out)) << kernel_name(k);
  // vectorized needs an output contiguous as a whole.
  const auto pitched = fake(kOut, DType::f32, {100, 200}, {256, 1});
  EXPECT_FALSE(kernel_supports(Kernel::vectorized, a, row, pitched));
  test::expect_invalid([&] { detail::plan_dense(a, row, pitched, {Kernel::vectorized}, detail::host_device_props()); },
                       {"kernel vectorized cannot run", "contiguous as a whole"});
  // Transposed matrix: the sliding kernels take any strides, the contiguous schedules do not.
  EXPECT_TRUE(kernel_supports(Kernel::sliding, at, row, out));
  EXPECT_TRUE(kernel_supports(Kernel::sliding_shared, at, row, out));
  EXPECT_FALSE(kernel_supports(Kernel::continuous, at, row, out));
  EXPECT_FALSE(kernel_supports(Kernel::alternate, at, row, out));
  EXPECT_FALSE(kernel_supports(Kernel::baseline, at, row, out));
  EXPECT_FALSE(kernel_supports(Kernel::row_vectorized, at, row, out));
  EXPECT_TRUE(kernel_supports(Kernel::tiled, at, row, out));
  // Same shape coalesces to rank 1: no tiles, no vector.
  const auto b = fake(kB, DType::f32, {100, 200});
  EXPECT_FALSE(kernel_supports(Kernel::tiled, a, b, out));
  EXPECT_FALSE(kernel_supports(Kernel::sliding, a, b, out));
  EXPECT_TRUE(kernel_supports(Kernel::vectorized, a, b, out));
  EXPECT_TRUE(kernel_supports(Kernel::row_vectorized, a, b, out));
}

/// An H200's properties (132 SMs, 227 KiB of shared memory a block may opt in to).
constexpr detail::DeviceProps kH200{0, 90, 132, 2048, 227 << 10, 60 << 20};

detail::DensePlan plan(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                       const DenseOptions& options = {},
                       const detail::DeviceProps& device = kH200) {
  return detail::plan_dense(a, b, out, options, device);
}

/// A call's checks and plan take no heap allocation (what binary() does on the host before the
/// launch): the same-shape, broadcast, across-rows and tiled paths, each planned 1000 times.
TEST(DenseHost, PlanningAllocatesNothing) {
  const auto a = fake(kA, DType::f32, {64, 256}), row = fake(kB, DType::f32, {1, 256});
  const auto out = fake(kOut, DType::f32, {64, 256});
  const auto h = fake(kA, DType::f16, {64, 257}), hrow = fake(kB, DType::f16, {257});
  const auto hout = fake(kOut, DType::f16, {64, 257});
  const auto at = fake(kA, DType::f32, {256, 256}, {1, 256});
  const auto square = fake(kOut, DType::f32, {256, 256}), srow = fake(kB, DType::f32, {256});
  long total = 0;
  const auto count = [&](auto&& plan) {
    g_allocations = 0;
    g_count_allocations = true;
    for (int i = 0; i < 1000; ++i) plan();
    g_count_allocations = false;
    total += g_allocations;
    return g_allocations;
  };
  EXPECT_EQ(count([&] { (void)plan(a, a, out); }), 0);
  EXPECT_EQ(count([&] { (void)plan(a, row, out); }), 0);
  EXPECT_EQ(count([&] { (void)plan(h, hrow, hout); }), 0);
  EXPECT_EQ(count([&] { (void)plan(at, srow, square); }), 0);
  EXPECT_EQ(total, 0);
}

/// The residency check's lookup of an operand in ewise's own allocations takes no heap
/// allocation either (1000 lookups of each kind: found, between two allocations, past the last).
TEST(DenseHost, OwnAllocationLookupAllocatesNothing) {
  detail::OwnAllocations own;
  for (std::uintptr_t k = 1; k <= 64; ++k)
    own.add(reinterpret_cast<const void*>(k * 0x10000), 0x1000, 0);
  detail::OwnAllocation a;
  int hits = 0;
  g_allocations = 0;
  g_count_allocations = true;
  for (int i = 0; i < 1000; ++i)
    hits += own.find(0x20010, &a) + own.find(0x21000, &a) + own.find(0x1000000, &a);
  g_count_allocations = false;
  EXPECT_EQ(g_allocations, 0);
  EXPECT_EQ(hits, 1000);
}

TEST(DenseHost, PlanDecisions) {
  // 32-bit indices up to int32, 64-bit beyond.
  const std::int64_t big = (std::int64_t{1} << 31) + 3;
  auto L = plan(fake(kA, DType::f16, {big}), fake(kB, DType::f16, {1}),
                fake(kOut, DType::f16, {big}));
  EXPECT_TRUE(L.wide);
  EXPECT_EQ(L.kernel, Kernel::vectorized);
  L = plan(fake(kA, DType::f16, {1 << 20}), fake(kB, DType::f16, {1}),
           fake(kOut, DType::f16, {1 << 20}));
  EXPECT_FALSE(L.wide);
  // A small tensor whose strides reach past int32 offsets is wide too.
  L = plan(fake(kA, DType::f32, {2, 2}, {std::int64_t{1} << 31, 1}), fake(kB, DType::f32, {2, 2}),
           fake(kOut, DType::f32, {2, 2}));
  EXPECT_TRUE(L.wide);

  // vectorized head: the output one f32 past a 16-byte boundary needs 3 scalars first.
  L = plan(fake(kA + 4, DType::f32, {100}), fake(kB + 4, DType::f32, {100}),
           fake(kOut + 4, DType::f32, {100}));
  EXPECT_EQ(L.vectorized.head, 3);
  // An input aligned differently from the output is gathered; the output still runs in vectors.
  L = plan(fake(kA + 8, DType::f32, {100}), fake(kB + 4, DType::f32, {100}),
           fake(kOut + 4, DType::f32, {100}));
  EXPECT_EQ(L.vectorized.head, 3);
  EXPECT_EQ(L.vectorized.vectors, 24);
  EXPECT_EQ(L.vectorized.a, detail::VectorAccess::gather);
  EXPECT_EQ(L.vectorized.b, detail::VectorAccess::vector);
  // A scalar input does not constrain the alignment.
  L = plan(fake(kA + 4, DType::f32, {100}), fake(kB + 8, DType::f32, {1}),
           fake(kOut + 4, DType::f32, {100}));
  EXPECT_EQ(L.vectorized.head, 3);
  EXPECT_EQ(L.vectorized.b, detail::VectorAccess::scalar);
  // Odd widths in f16: one flat range (8 elements a vector), the row vector gathered.
  L = plan(fake(kA, DType::f16, {3, 50257}), fake(kB, DType::f16, {50257}),
           fake(kOut, DType::f16, {3, 50257}));
  EXPECT_EQ(L.kernel, Kernel::vectorized);
  EXPECT_EQ(L.vectorized.head, 0);
  EXPECT_EQ(L.vectorized.vectors, 3 * 50257 / 8);
  EXPECT_EQ(L.vectorized.a, detail::VectorAccess::vector);
  EXPECT_EQ(L.vectorized.b, detail::VectorAccess::gather);
  EXPECT_TRUE(L.vectorized.gathers());
  EXPECT_TRUE(L.vectorized.rows);  // the row vector's inner stride is 1, its rows >= 8
  // An outer product gathers both inputs by rows (inner strides 0 and 1); rows shorter than a
  // vector, or an inner stride of 2, gather element by element.
  L = plan(fake(kA, DType::f16, {8191, 1}), fake(kB, DType::f16, {1, 4097}),
           fake(kOut, DType::f16, {8191, 4097}));
  EXPECT_EQ(L.vectorized.a, detail::VectorAccess::gather);
  EXPECT_EQ(L.vectorized.b, detail::VectorAccess::gather);
  EXPECT_TRUE(L.vectorized.rows);
  // Its rows of 4097 (512 vectors) run by segments, one input along them: each row's 510 inner
  // vectors in two segments of 256, the grid a warp a segment.
  EXPECT_TRUE(L.vectorized.segments);
  EXPECT_FALSE(L.vectorized.row_table);
  EXPECT_EQ(detail::segment_vectors(2), 256);
  EXPECT_EQ(L.vectorized.row_segments, 2);
  EXPECT_TRUE(L.vectorized.evict_first);  // neither input read as vectors: write-only
  EXPECT_TRUE(L.grid.covers_work);
  EXPECT_EQ(L.grid.need, (8191 * 2 * 32 + L.threads - 1) / L.threads);
  // Rows one element short of segment_min_vectors, and two inputs along the rows: by rows.
  const std::int64_t short_row = detail::segment_min_vectors(2) * 8 - 1;
  L = plan(fake(kA, DType::f16, {64, 1}), fake(kB, DType::f16, {1, short_row}),
           fake(kOut, DType::f16, {64, short_row}));
  EXPECT_TRUE(L.vectorized.rows);
  EXPECT_FALSE(L.vectorized.segments);
  // The threshold in vectors depends on the element size: an outer product on each side of it.
  for (DType t : {DType::f16, DType::f32, DType::f64}) {
    const int size = static_cast<int>(dtype_size(t));
    const std::int64_t n = detail::segment_min_vectors(size) * (16 / size);
    for (std::int64_t row : {n - 1, n + 1}) {  // odd: the row vector is gathered
      L = plan(fake(kA, t, {64, 1}), fake(kB, t, {1, row}), fake(kOut, t, {64, row}));
      EXPECT_EQ(L.kernel, Kernel::vectorized) << dtype_name(t) << " rows of " << row;
      EXPECT_EQ(L.vectorized.segments, row > n) << dtype_name(t) << " rows of " << row;
    }
  }
  // A bias by segments: its full input is read as vectors, the output stored as usual.
  L = plan(fake(kA, DType::f16, {64, 4097}), fake(kB, DType::f16, {4097}),
           fake(kOut, DType::f16, {64, 4097}));
  EXPECT_TRUE(L.vectorized.segments);
  EXPECT_EQ(L.vectorized.a, detail::VectorAccess::vector);
  EXPECT_FALSE(L.vectorized.evict_first);
  L = plan(fake(kA + 2, DType::f16, {64, 4097}), fake(kB, DType::f16, {4097}),
           fake(kOut, DType::f16, {64, 4097}));
  EXPECT_EQ(L.vectorized.a, detail::VectorAccess::gather);
  EXPECT_TRUE(L.vectorized.rows);
  EXPECT_FALSE(L.vectorized.segments);
  L = plan(fake(kA, DType::f16, {100, 7}), fake(kB, DType::f16, {7}),
           fake(kOut, DType::f16, {100, 7}));
  EXPECT_EQ(L.kernel, Kernel::vectorized);
  EXPECT_FALSE(L.vectorized.rows);
  L = plan(fake(kA, DType::f16, {100, 9}, {18, 2}), fake(kB, DType::f16, {100, 1}),
           fake(kOut, DType::f16, {100, 9}));
  EXPECT_TRUE(L.vectorized.gathers());
  EXPECT_FALSE(L.vectorized.rows);

  // row_vectorized: 16-byte rows need rows of a multiple of 4 f32 and aligned bases.
  const auto rv = [](std::uintptr_t a_off, std::int64_t cols) {
    return plan(fake(kA + a_off, DType::f32, {8, cols}), fake(kB, DType::f32, {1, cols}),
                fake(kOut, DType::f32, {8, cols}));
  };
  EXPECT_EQ(rv(0, 64).row.vector, 4);
  EXPECT_EQ(rv(4, 64).row.vector, 1);
  EXPECT_EQ(rv(0, 66).row.vector, 1);
  EXPECT_EQ(rv(0, 66).kernel, Kernel::vectorized);
  EXPECT_EQ(rv(4, 64).kernel, Kernel::vectorized);
  EXPECT_EQ(rv(0, 64).kernel, Kernel::row_vectorized);

  // Matrix-vector fields: which operand is the vector and its direction.
  L = plan(fake(kA, DType::f32, {100, 1}), fake(kB, DType::f32, {100, 200}),
           fake(kOut, DType::f32, {100, 200}), {Kernel::sliding});
  EXPECT_EQ(L.matrix_vector.vector_operand, 1);
  EXPECT_FALSE(L.matrix_vector.row_vector);
  // Tiled: the dim where the transposed input has stride 1, staged through shared memory.
  L = plan(fake(kA, DType::f32, {100, 200}, {1, 100}), fake(kB, DType::f32, {1, 200}),
           fake(kOut, DType::f32, {100, 200}), {Kernel::tiled});
  EXPECT_EQ(L.kernel, Kernel::tiled);
  EXPECT_EQ(L.tiled.tile_dim, 0);
  EXPECT_TRUE(L.tiled.staged_a);
  EXPECT_FALSE(L.tiled.staged_b);
  EXPECT_TRUE(L.tiled.vector);
  // 16-byte tiles need aligned data, extents of whole vectors and one staged input.
  const auto tv = [](std::uintptr_t a_off, std::int64_t rows, std::int64_t cols, bool b_t) {
    return plan(fake(kA + a_off, DType::f32, {rows, cols}, {1, rows}),
                b_t ? fake(kB, DType::f32, {rows, cols}, {1, rows})
                    : fake(kB, DType::f32, {1, cols}),
                fake(kOut, DType::f32, {rows, cols}), {Kernel::tiled})
        .tiled.vector;
  };
  EXPECT_TRUE(tv(0, 100, 200, false));
  EXPECT_FALSE(tv(4, 100, 200, false));
  EXPECT_FALSE(tv(0, 102, 200, false));
  EXPECT_FALSE(tv(0, 100, 202, false));
  EXPECT_FALSE(tv(0, 100, 200, true));
}

TEST(DenseHost, PlanFollowsTheDevice) {
  // 16-byte tiles of f16 need 3 buffers of 128 x 128 elements (96 KiB): an H200 has the shared
  // memory, a device with 64 KiB does not and runs element-wise tiles (64 x 64, 24 KiB).
  detail::DeviceProps small = kH200;
  small.max_shared = 64 << 10;
  const auto a = fake(kA, DType::f16, {1024, 1024}, {1, 1024});
  const auto b = fake(kB, DType::f16, {1, 1024}), out = fake(kOut, DType::f16, {1024, 1024});
  const detail::DensePlan big_tiles = plan(a, b, out, {}, kH200);
  const detail::DensePlan small_tiles = plan(a, b, out, {}, small);
  EXPECT_EQ(big_tiles.kernel, Kernel::tiled);
  EXPECT_EQ(small_tiles.kernel, Kernel::tiled);  // the kernel choice does not depend on it
  EXPECT_TRUE(big_tiles.tiled.vector);
  EXPECT_EQ(big_tiles.tiled.shared_bytes, 96 << 10);
  EXPECT_EQ(big_tiles.tiled.tiles, 8 * 8);
  EXPECT_FALSE(small_tiles.tiled.vector);
  EXPECT_EQ(small_tiles.tiled.shared_bytes, 24 << 10);
  EXPECT_EQ(small_tiles.tiled.tiles, 16 * 16);
  // Both inputs transposed: element-wise tiles stage both, 3 x 2 x 16 KiB in f32 (96 KiB). On a
  // device with 64 KiB automatic runs general instead and a request for tiled throws.
  const auto at = fake(kA, DType::f32, {1024, 1024}, {1, 1024});
  const auto bt = fake(kB, DType::f32, {1024, 1024}, {1, 1024});
  const auto ot = fake(kOut, DType::f32, {1024, 1024});
  EXPECT_EQ(plan(at, bt, ot, {}, kH200).tiled.shared_bytes, 96 << 10);
  EXPECT_EQ(plan(at, bt, ot, {}, small).kernel, Kernel::general);
  test::expect_invalid([&] { plan(at, bt, ot, {Kernel::tiled}, small); },
                       {"tiled needs 98304 bytes of shared memory", "allows 65536"});
  // Grids: one full wave of resident blocks, or the blocks asked for, never more than needed.
  EXPECT_EQ(big_tiles.grid.blocks(2), 64u);
  EXPECT_EQ(small_tiles.grid.blocks(1), 132u);
  EXPECT_EQ(plan(a, b, out, {Kernel::tiled, 0, 0, 100}, small).grid.blocks(1), 100u);
  // The 16-byte kernels launch every block their chunks need (no occupancy query), unless
  // DenseOptions::blocks caps them.
  const auto flat = fake(kA, DType::f32, {1 << 24}), flat_out = fake(kOut, DType::f32, {1 << 24});
  const detail::DensePlan vec = plan(flat, flat, flat_out, {}, kH200);
  EXPECT_EQ(vec.kernel, Kernel::vectorized);
  EXPECT_FALSE(vec.grid.needs_occupancy());
  EXPECT_EQ(vec.grid.blocks(1), (1u << 24) / 4 / (4 * 256));  // 4 vectors per thread, 256 threads
  EXPECT_EQ(plan(flat, flat, flat_out, {Kernel::vectorized, 0, 0, 100}, kH200).grid.blocks(1), 100u);
  // Gathering an input, vectorized loops over its chunks in kGatherWaves full waves (rows one
  // element short of segment_min_vectors, not by segments, whose grid covers them: above).
  const std::int64_t row = detail::segment_min_vectors(2) * 8 - 1;
  const detail::DensePlan outer = plan(fake(kA, DType::f16, {8191, 1}),
                                       fake(kB, DType::f16, {1, row}),
                                       fake(kOut, DType::f16, {8191, row}), {}, kH200);
  EXPECT_EQ(outer.kernel, Kernel::vectorized);
  EXPECT_FALSE(outer.vectorized.segments);
  EXPECT_TRUE(outer.grid.needs_occupancy());
  EXPECT_EQ(outer.grid.blocks(4), 4u * 132 * detail::kGatherWaves);
  // The automatic sliding factor leaves two waves of threads: 2^24 elements over
  // 2 * 132 * 2048 threads need a factor of 32 on an H200, 2 with 16 times as many SMs.
  const auto m = fake(kA, DType::f32, {4096, 4096}), v = fake(kB, DType::f32, {1, 4096});
  const auto mo = fake(kOut, DType::f32, {4096, 4096});
  detail::DeviceProps wide = kH200;
  wide.sm_count = 132 * 16;
  EXPECT_EQ(plan(m, v, mo, {Kernel::sliding}).matrix_vector.sliding_factor, 32);
  EXPECT_EQ(plan(m, v, mo, {Kernel::sliding}, wide).matrix_vector.sliding_factor, 2);
  EXPECT_EQ(plan(m, v, mo, {Kernel::sliding, 5}).matrix_vector.sliding_factor, 5);
}

// ---- validation: every error before anything runs ------------------------------------------

using test::expect_invalid;

TEST(DenseHost, ValidationErrorsBeforeLaunch) {
  const auto a = fake(kA, DType::f32, {3, 4}), b = fake(kB, DType::f32, {1, 4});
  const auto out = fake(kOut, DType::f32, {3, 4});
  expect_invalid(
      [&] {
        binary(BinaryOp::add, a, b, fake(kOut, DType::f32, {3, 5}));
      },
      {"(3,5)", "(3,4)"});
  expect_invalid(
      [&] {
        binary(BinaryOp::add, a, fake(kB, DType::f32, {5, 4}), out);
      },
      {"(3,4)", "(5,4)"});
  // Dtypes: a result the output cannot hold (same_kind), an operation the dtypes do not have, a
  // named kernel other than general on a call that converts (mixed dtypes, a scalar).
  expect_invalid(
      [&] {
        binary(BinaryOp::add, a, fake(kB, DType::f16, {1, 4}), fake(kOut, DType::i32, {3, 4}));
      },
      {"f32", "i32", "same_kind"});
  expect_invalid(
      [&] {
        binary(BinaryOp::bitwise_or, a, fake(kB, DType::i32, {1, 4}), fake(kOut, DType::f64, {3, 4}));
      },
      {"bitwise_or", "f32", "i32"});
  expect_invalid(
      [&] {
        binary(BinaryOp::add, a, fake(kB, DType::f16, {1, 4}), out, {Kernel::vectorized});
      },
      {"vectorized", "f16", "general"});
  expect_invalid(
      [&] {
        binary(BinaryOp::add, a, Scalar::weak_float(1), out, {Kernel::row_vectorized});
      },
      {"row_vectorized", "scalar", "general"});
  // out overlapping a partially: a shifted by one element.
  expect_invalid(
      [&] {
        binary(BinaryOp::add, fake(kOut + 4, DType::f32, {3, 4}), b, out);
      },
      {"overlap"});
  // out overlapping itself (a zero stride).
  expect_invalid(
      [&] {
        binary(BinaryOp::add, a, b, fake(kOut, DType::f32, {3, 4}, {0, 1}));
      },
      {"overlaps itself"});
  // Null data with elements.
  expect_invalid([&] { binary(BinaryOp::add, fake(0, DType::f32, {3, 4}), b, out); }, {"null"});
  // Mixed memories.
  expect_invalid(
      [&] {
        binary(BinaryOp::add, fake(kA, DType::f32, {3, 4}, {}, Memory::host), b, out);
      },
      {"host", "device"});
  // Device data not aligned to the element size.
  expect_invalid(
      [&] {
        binary(BinaryOp::add, fake(kA + 2, DType::f32, {3, 4}), b, out);
      },
      {"aligned"});
  // Options out of range.
  expect_invalid([&] { binary(BinaryOp::add, a, b, out, {Kernel::general, 0, 48}); }, {"48"});
  expect_invalid([&] { binary(BinaryOp::add, a, b, out, {Kernel::general, 0, 0, -1}); }, {"-1"});
  expect_invalid([&] { binary(BinaryOp::add, a, b, out, {Kernel::sliding, -2}); }, {"-2"});
  expect_invalid([&] { binary(static_cast<BinaryOp>(42), a, b, out); }, {"42"});
  // A kernel asked for a plan it cannot run names the kernel and the shapes.
  expect_invalid(
      [&] {
        binary(BinaryOp::add, a, b, fake(kOut, DType::f32, {3, 4}, {8, 1}), {Kernel::vectorized});
      },
      {"vectorized", "(3,4)", "(1,4)", "contiguous as a whole"});
  expect_invalid(
      [&] {
        binary(BinaryOp::add, a, fake(kB, DType::f32, {3, 4}), out, {Kernel::tiled});
      },
      {"tiled", "rank"});
  // Rank over 8 cannot be described at all.
  EXPECT_THROW((Dims{1, 2, 3, 4, 5, 6, 7, 8, 9}), InvalidArgument);
  EXPECT_THROW(Dims::of_rank(9, 1), InvalidArgument);
  // The allocating form checks before allocating.
  expect_invalid([&] { binary(BinaryOp::add, a, fake(kB, DType::f32, {5, 4})); }, {"(5,4)"});
  expect_invalid([&] { binary(BinaryOp::bitwise_and, a, fake(kB, DType::i32, {1, 4})); },
                 {"bitwise_and", "f32", "i32"});
  expect_invalid([&] { binary(BinaryOp::add, Scalar::weak_int(1), Scalar::weak_int(2)); },
                 {"two scalars"});
}

TEST(DenseHost, EmptyIsANoOpWithoutTheGpu) {
  // Null data is fine with no elements; nothing is launched, so this passes without a GPU.
  const auto a = fake(0, DType::f32, {0, 4}), b = fake(kB, DType::f32, {1, 4});
  for (Kernel k : kAllKernels)
    EXPECT_NO_THROW(binary(BinaryOp::add, a, b, fake(0, DType::f32, {0, 4}), {k}))
        << kernel_name(k);
}

// ---- the CPU fallback for host views -------------------------------------------------------

template <class T>
HostTensor host_tensor(DType t, const Dims& shape, std::initializer_list<T> values) {
  HostTensor h(t, shape);
  std::memcpy(h.data(), std::data(values), values.size() * sizeof(T));
  return h;
}

TEST(DenseHost, HostViewsRunOnTheCpu) {
  const HostTensor a = host_tensor<std::int32_t>(DType::i32, {2, 3}, {1, -2, 3, 4, 5, -6});
  const HostTensor b = host_tensor<std::int32_t>(DType::i32, {3}, {10, 0, -3});
  const BinaryOp ops[6] = {BinaryOp::add,          BinaryOp::subtract, BinaryOp::multiply,
                           BinaryOp::floor_divide, BinaryOp::minimum,  BinaryOp::maximum};
  const std::int32_t want[6][6] = {{11, -2, 0, 14, 5, -9},  // add
                                   {-9, -2, 6, -6, 5, -3},  // subtract
                                   {10, 0, -9, 40, 0, 18},  // multiply
                                   {0, 0, -1, 0, 0, 2},     // floor_divide: x // 0 == 0
                                   {1, -2, -3, 4, 0, -6},   // minimum
                                   {10, 0, 3, 10, 5, -3}};  // maximum
  for (int o = 0; o < 6; ++o) {
    HostTensor out(DType::i32, {2, 3});
    verify::poison(out.view());
    binary(ops[o], a.view(), b.view(), out.view());
    const auto* got = out.data_as<std::int32_t>();
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(got[i], want[o][i]) << op_name(ops[o]) << " element " << i;
  }
  // True division of integers gives f64 (NumPy's rule): x / 0 is +-inf.
  HostTensor quotient(DType::f64, {2, 3});
  binary(BinaryOp::divide, a.view(), b.view(), quotient.view());
  const double want_q[6] = {0.1, -INFINITY, -1, 0.4, INFINITY, 2};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(quotient.data_as<double>()[i], want_q[i]) << i;
  expect_invalid([&] { binary(BinaryOp::divide, a.view(), b.view(), HostTensor(DType::i32, {2, 3}).view()); },
                 {"f64", "i32"});
  // Float, with a transposed (strided) host view and an explicit kernel name (checked, then run
  // on the CPU).
  const HostTensor x = host_tensor<float>(DType::f32, {2, 2}, {1.5f, 2.f, -3.f, 8.f});
  ConstTensorView xt = x.view();
  xt.desc = TensorDesc::strided(DType::f32, {2, 2}, {1, 2});  // [[1.5, -3], [2, 8]]
  const HostTensor y = host_tensor<float>(DType::f32, {1, 2}, {0.5f, 4.f});
  HostTensor out(DType::f32, {2, 2});
  binary(BinaryOp::div, xt, y.view(), out.view(), {Kernel::tiled});
  const float want_f[4] = {3.f, -0.75f, 4.f, 2.f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out.data_as<float>()[i], want_f[i]) << i;
  // The kernel is checked even on the host: row_vectorized needs the inputs' inner strides 0
  // or 1, vectorized an output contiguous as a whole.
  EXPECT_THROW(binary(BinaryOp::div, xt, y.view(), out.view(), {Kernel::row_vectorized}),
               InvalidArgument);
  HostTensor wide(DType::f32, {2, 4});
  TensorView pitched = wide.view();
  pitched.desc = TensorDesc::strided(DType::f32, {2, 2}, {4, 1});
  EXPECT_THROW(binary(BinaryOp::div, x.view(), y.view(), pitched, {Kernel::vectorized}),
               InvalidArgument);
}

TEST(DenseHost, HostInPlaceAndRankZero) {
  HostTensor a = host_tensor<double>(DType::f64, {4}, {1, 2, 3, 4});
  const HostTensor s = host_tensor<double>(DType::f64, {}, {0.25});
  binary(BinaryOp::mul, a.view(), s.view(), a.view());  // in place
  const double want[4] = {0.25, 0.5, 0.75, 1.0};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.data_as<double>()[i], want[i]);
  HostTensor r(DType::f64, {});
  binary(BinaryOp::sub, s.view(), s.view(), r.view());
  EXPECT_EQ(r.data_as<double>()[0], 0.0);
}

}  // namespace
}  // namespace ewise
