// GPU tests of the residency check (src/residency.hpp): a device view over memory the current
// device cannot use at that pointer — plain host memory (heap or stack), bytes before or past
// the end of an allocation (a cudaMalloc allocation, an allocation of ewise's own pool exactly as
// ewise made it, or the mapped piece of other pool memory) —
// throws InvalidArgument naming the operand from every entry point
// that launches or copies, writes nothing (outputs poisoned first stay poisoned), and leaves no
// error behind: the device synchronizes cleanly and the next dense and sparse calls work.
// Without the check each of these calls launches a kernel or a copy on an address the device
// cannot reach: an illegal-address fault, which breaks the CUDA context for the whole process
// (or, where the device can read pageable memory, a call that does not throw at all).
// And the other side: memory the device can use is accepted (managed, pinned, registered host
// memory, reversed and broadcast views, views that end exactly at the allocation's end, memory
// mapped piece by piece with cuMemMap, sub-views of ewise's pool memory, an address the pool
// hands out again), and memory of a caller's MemoryResource still takes the driver's path. Its
// cost is in docs/design.md, not asserted here.
#include <gtest/gtest.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/dense.cuh"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/memory.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "own_allocations.hpp"
#include "residency.hpp"
#include "testing/expect_invalid.hpp"
#include "testing/calls_work.hpp"
#include "testing/gpu_test.hpp"

namespace ewise {
namespace {

using test::expect_invalid;

constexpr std::int64_t kRows = 37, kCols = 65, kNumel = kRows * kCols;

std::uint64_t test_seed() {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  return seed;
}

ConstTensorView device_view(const void* p, DType t, const Dims& shape) {
  return {p, TensorDesc::contiguous(t, shape), Memory::device};
}
TensorView device_out(void* p, DType t, const Dims& shape) {
  return {p, TensorDesc::contiguous(t, shape), Memory::device};
}

/// Every element of the device view `v` still holds the poison pattern.
void expect_poisoned(const ConstTensorView& v, const std::string& what) {
  const HostTensor h = to_host(v);
  const auto* bytes = static_cast<const std::byte*>(h.data());
  const std::size_t elem = dtype_size(h.dtype());
  for (std::int64_t i = 0; i < h.numel(); ++i)
    if (!verify::is_poison(h.dtype(), bytes + static_cast<std::size_t>(i) * elem)) {
      ADD_FAILURE() << what << ": element " << i << " was written";
      return;
    }
}

/// No error is pending or sticky: the device synchronizes, and a dense and a sparse call give
/// the reference's results.
void expect_context_works(std::uint64_t seed, const std::string& after) {
  test::expect_no_error_left(after);
  if (::testing::Test::HasFatalFailure()) return;  // the context is broken: nothing more runs
  test::expect_dense_call_works(seed, after);
  test::expect_sparse_call_works(seed + 2, after);
}

/// One kind of bad call: it must throw InvalidArgument whose message has every part, and leave
/// the context usable (checked cheaply here; expect_context_works at the end of each test).
template <class F>
void expect_rejected(F&& call, std::initializer_list<std::string> parts, const std::string& what) {
  expect_invalid(call, parts, what);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "the context is broken after " << what;
}

/// How the check names an allocation of `bytes` bytes at `begin` that a view leaves.
std::string outside(const void* begin, std::size_t bytes) {
  std::ostringstream s;
  s << "outside its allocation [" << begin << ", "
    << static_cast<const void*>(static_cast<const std::byte*>(begin) + bytes) << ") (" << bytes
    << " bytes)";
  return s.str();
}

/// The live allocation of ewise's pools holding `p`, or {0, 0, -1}.
detail::OwnAllocation own_allocation(const void* p) {
  detail::OwnAllocation a;
  return detail::own_allocations().find(reinterpret_cast<std::uintptr_t>(p), &a)
             ? a
             : detail::OwnAllocation{};
}

/// `t` is recorded as an allocation of ewise's pool, exactly.
void expect_own(const DeviceTensor& t, const std::string& what) {
  const detail::OwnAllocation a = own_allocation(t.data());
  EXPECT_EQ(a.begin, reinterpret_cast<std::uintptr_t>(t.data())) << what;
  EXPECT_EQ(a.end - a.begin, t.bytes()) << what;
}

struct Halve {
  __device__ float operator()(float x, float y) const { return 0.5f * (x + y); }
};

// ---- plain host memory as a device view -----------------------------------------------------

TEST(Residency, HostMemoryAsDenseOperandThrows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const DeviceTensor a = to_device(verify::random_tensor(DType::f32, {kRows, kCols}, seed));
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {kCols}, seed + 1));
  DeviceTensor out(DType::f32, {kRows, kCols});
  verify::poison(out.view());
  const std::vector<float> heap(kNumel, 1.5f);  // malloc'd memory CUDA knows nothing of
  float stack[kCols];
  std::fill(stack, stack + kCols, 2.5f);
  const ConstTensorView heap_a = device_view(heap.data(), DType::f32, {kRows, kCols});
  const ConstTensorView stack_b = device_view(stack, DType::f32, {kCols});
  std::vector<float> heap_out(kNumel, 0.0f);
  const TensorView host_out = device_out(heap_out.data(), DType::f32, {kRows, kCols});

  expect_rejected([&] { binary(BinaryOp::add, heap_a, b.view(), out.view()); }, {"a at", "is host memory"},
                  "binary: heap a");
  expect_rejected([&] { binary(BinaryOp::mul, a.view(), stack_b, out.view()); },
                  {"b at", "is host memory"}, "binary: stack b");
  expect_rejected([&] { binary(BinaryOp::sub, a.view(), b.view(), host_out); }, {"out at", "is host memory"},
                  "binary: heap out");
  expect_rejected([&] { (void)binary(BinaryOp::max, heap_a, b.view()); }, {"a at", "is host memory"},
                  "allocating binary: heap a");
  expect_rejected([&] { binary<dtype_mask({DType::f32})>(Halve{}, a, stack_b, out.view()); },
                  {"b at", "is host memory"}, "functor binary: stack b");
  expect_rejected([&] { (void)binary<dtype_mask({DType::f32})>(Halve{}, heap_a, b); },
                  {"a at", "is host memory"}, "allocating functor binary: heap a");
  expect_poisoned(out.view(), "out after the rejected dense calls");
  EXPECT_TRUE(std::all_of(heap_out.begin(), heap_out.end(), [](float x) { return x == 0.0f; }))
      << "the host memory passed as out was written";
  expect_context_works(seed, "dense calls on host memory");
}

TEST(Residency, HostMemoryAsSparseOperandThrows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const HostCoo ha = verify::random_coo(kRows, kCols, 0.2, seed);
  const HostCoo hb = verify::random_coo(kRows, kCols, 0.2, seed + 1);
  const DeviceCoo a = to_device(ha.view()), b = to_device(hb.view());
  const DeviceTensor dense = to_device(verify::random_tensor(DType::f32, {kRows, kCols}, seed + 2));
  DeviceTensor out_vals(DType::f32, {a.nnz()});
  verify::poison(out_vals.view());
  ASSERT_GT(a.nnz(), 0);

  // a with one array swapped for the host copy's: the same values, in memory CUDA does not know.
  CooView host_vals = a.view(), host_rows = a.view(), host_cols = a.view();
  host_vals.vals = ha.view().vals;
  host_rows.rows = ha.view().rows;
  host_cols.cols = ha.view().cols;
  const HostTensor dense_on_host = verify::random_tensor(DType::f32, {kRows, kCols}, seed + 3);
  const ConstTensorView heap_dense = device_view(dense_on_host.data(), DType::f32, {kRows, kCols});
  std::vector<float> heap_out(static_cast<std::size_t>(a.nnz()), 0.0f);
  const TensorView host_out_vals = device_out(heap_out.data(), DType::f32, {a.nnz()});

  expect_rejected([&] { (void)multiply(host_vals, b.view()); }, {"a vals at", "is host memory"},
                  "multiply(COO, COO): a.vals on the host");
  expect_rejected([&] { (void)multiply(a.view(), host_rows); }, {"b rows at", "is host memory"},
                  "multiply(COO, COO): b.rows on the host");
  expect_rejected([&] { (void)multiply(a.view(), heap_dense); }, {"dense at", "is host memory"},
                  "multiply(COO, dense): dense on the host");
  expect_rejected([&] { (void)multiply(host_cols, dense.view()); }, {"a cols at", "is host memory"},
                  "multiply(COO, dense): a.cols on the host");
  expect_rejected([&] { multiply_values(a.view(), dense.view(), host_out_vals); },
                  {"out_vals at", "is host memory"}, "multiply_values: out_vals on the host");
  expect_rejected([&] { multiply_values(host_rows, dense.view(), out_vals.view()); },
                  {"a rows at", "is host memory"}, "multiply_values: a.rows on the host");
  expect_rejected([&] { (void)coalesce(host_vals); }, {"a vals at", "is host memory"},
                  "coalesce: a.vals on the host");
  expect_rejected([&] { (void)dense_to_coo(heap_dense); }, {"dense at", "is host memory"},
                  "dense_to_coo: dense on the host");
  expect_rejected([&] { (void)coo_to_dense(host_cols); }, {"a cols at", "is host memory"},
                  "coo_to_dense: a.cols on the host");
  CooView canonical_host_rows = host_rows;
  canonical_host_rows.desc.canonical = true;
  expect_rejected([&] { (void)coo_to_csr_row_offsets(canonical_host_rows); },
                  {"a rows at", "is host memory"}, "coo_to_csr_row_offsets: a.rows on the host");
  expect_rejected([&] { check_indices(host_rows, "m"); }, {"m rows at", "is host memory"},
                  "check_indices: rows on the host");
  expect_poisoned(out_vals.view(), "out_vals after the rejected sparse calls");
  EXPECT_TRUE(std::all_of(heap_out.begin(), heap_out.end(), [](float x) { return x == 0.0f; }))
      << "the host memory passed as out_vals was written";
  expect_context_works(seed, "sparse calls on host memory");
}

TEST(Residency, HostMemoryInCopiesAndTheHarnessThrows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::vector<float> heap(kNumel, 1.5f);
  const ConstTensorView contiguous = device_view(heap.data(), DType::f32, {kRows, kCols});
  const ConstTensorView strided{heap.data(),
                                TensorDesc::strided(DType::f32, {kCols, kRows}, {1, kCols}),
                                Memory::device};  // to_host gathers it with a kernel
  const TensorView writable = device_out(heap.data(), DType::f32, {kRows, kCols});
  const HostCoo hc = verify::random_coo(kRows, kCols, 0.2, seed);
  CooView host_coo = hc.view();
  host_coo.memory = Memory::device;
  const DeviceTensor want = to_device(verify::random_tensor(DType::f32, {kRows, kCols}, seed));

  expect_rejected([&] { (void)to_host(contiguous); }, {"tensor at", "is host memory"},
                  "to_host: contiguous");
  expect_rejected([&] { (void)to_host(strided); }, {"tensor at", "is host memory"},
                  "to_host: strided");
  expect_rejected([&] { (void)to_device(strided); }, {"tensor at", "is host memory"},
                  "to_device: strided");
  expect_rejected([&] { (void)to_host(host_coo); }, {"COO matrix rows at", "is host memory"},
                  "to_host(COO)");
  expect_rejected([&] { (void)to_device(host_coo); }, {"COO matrix rows at", "is host memory"},
                  "to_device(COO)");
  expect_rejected([&] { verify::fill_random(writable, seed); },
                  {"tensor to fill at", "is host memory"}, "fill_random");
  expect_rejected([&] { verify::poison(writable); }, {"tensor to poison at", "is host memory"},
                  "poison");
  expect_rejected([&] { (void)verify::compare(contiguous, want.view()); },
                  {"tensor at", "is host memory"}, "compare");
  EXPECT_TRUE(std::all_of(heap.begin(), heap.end(), [](float x) { return x == 1.5f; }))
      << "fill_random or poison wrote the host memory";
  expect_context_works(seed, "copies of host memory");
}

// ---- views past the end (or before the start) of their allocation --------------------------

/// A cudaMalloc allocation of `n` f32 elements, poisoned.
class Allocation {
 public:
  explicit Allocation(std::int64_t n) : n_(n) {
    EWISE_CUDA_CHECK(cudaMalloc(&p_, static_cast<std::size_t>(n) * sizeof(float)));
    verify::poison(device_out(p_, DType::f32, {n}));
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation() { (void)cudaFree(p_); }
  float* get() const { return static_cast<float*>(p_); }
  ConstTensorView all() const { return device_view(p_, DType::f32, {n_}); }

 private:
  void* p_ = nullptr;
  std::int64_t n_;
};

TEST(Residency, ViewPastItsAllocationThrows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  // The issue's case: a 2^20-element view over a 10-element cudaMalloc.
  constexpr std::int64_t kSmall = 10, kLong = 1 << 20;
  const Allocation small(kSmall);
  const DeviceTensor b_long = to_device(verify::random_tensor(DType::f32, {kLong}, seed));
  DeviceTensor out_long(DType::f32, {kLong});
  verify::poison(out_long.view());
  const ConstTensorView long_view = device_view(small.get(), DType::f32, {kLong});
  expect_rejected([&] { binary(BinaryOp::add, long_view, b_long.view(), out_long.view()); },
                  {"a at", "outside its allocation"}, "binary: a 2^20 elements over 10");
  expect_rejected([&] { (void)to_host(long_view); }, {"tensor at", "outside its allocation"},
                  "to_host: 2^20 elements over 10");

  // One element too many, or too few before the start, of 4 MiB allocations (large enough
  // that the driver maps each on its own, so its range is exactly the allocation).
  constexpr std::int64_t kBig = 1 << 20, kOver = kBig + 1;
  const Allocation in(kBig), under_out(kBig);
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {kOver}, seed + 1));
  DeviceTensor out(DType::f32, {kOver});
  verify::poison(out.view());
  const ConstTensorView over_in = device_view(in.get(), DType::f32, {kOver});
  const TensorView over_out = device_out(under_out.get(), DType::f32, {kOver});
  // kSmall elements backwards from the allocation's first: 9 of them lie before it.
  const ConstTensorView before{in.get(), TensorDesc::strided(DType::f32, {kSmall}, {-1}),
                               Memory::device};
  const DeviceTensor b_small = to_device(verify::random_tensor(DType::f32, {kSmall}, seed + 2));
  DeviceTensor out_small(DType::f32, {kSmall});
  verify::poison(out_small.view());

  expect_rejected([&] { binary(BinaryOp::add, over_in, b.view(), out.view()); },
                  {"a at", "outside its allocation"}, "binary: a one element past its end");
  expect_rejected([&] { binary(BinaryOp::add, b.view(), b.view(), over_out); },
                  {"out at", "outside its allocation"}, "binary: out one element past its end");
  expect_rejected([&] { binary(BinaryOp::add, b_small.view(), before, out_small.view()); },
                  {"b at", "outside its allocation"}, "binary: b before its start");
  expect_rejected([&] { verify::fill_random(over_out, seed); },
                  {"tensor to fill at", "outside its allocation"}, "fill_random past the end");

  // A COO matrix whose vals array starts 10 elements before the end of its allocation.
  const HostCoo hc = verify::random_coo(kRows, kCols, 0.2, seed + 3);
  ASSERT_GT(hc.nnz(), kSmall);
  const DeviceCoo c = to_device(hc.view());
  CooView short_vals = c.view();
  short_vals.vals = in.get() + kBig - kSmall;
  expect_rejected([&] { (void)multiply(short_vals, c.view()); },
                  {"a vals at", "outside its allocation"}, "multiply: a.vals too short");
  expect_rejected([&] { (void)coalesce(short_vals); }, {"a vals at", "outside its allocation"},
                  "coalesce: a.vals too short");
  expect_rejected([&] { (void)to_host(short_vals); },
                  {"COO matrix vals at", "outside its allocation"}, "to_host(COO): vals too short");

  expect_poisoned(out_long.view(), "out_long after the rejected calls");
  expect_poisoned(out.view(), "out after the rejected calls");
  expect_poisoned(out_small.view(), "out_small after the rejected calls");
  expect_poisoned(under_out.all(), "the allocation under the too-long out");
  expect_context_works(seed, "views past their allocation");
}

/// The driver calls of the cuMemMap and pool tests, found through the runtime (the tests do not
/// link libcuda either).
template <class Fn>
Fn driver_entry(const char* symbol, unsigned version = 10020) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  EWISE_CUDA_CHECK(
      cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found));
  EXPECT_EQ(found, cudaDriverEntryPointSuccess) << symbol;
  return reinterpret_cast<Fn>(fn);
}

/// Memory of a cudaMallocAsync pool: the range the driver gives for its pointers is the pool's
/// whole address reservation, of which only pieces are mapped, so the check goes by the mapped
/// piece. A view that ends at the end of the piece holding its pointer is accepted; one element
/// more, or one element before the piece's start, throws. (A cudaMalloc allocation, whose range
/// is exactly the allocation, is ViewPastItsAllocationThrows.)
TEST(Residency, PoolMemoryPastItsMappedPieceThrows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const auto address_range =
      driver_entry<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange", 3020);
  const auto attribute =
      driver_entry<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute", 4000);
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  ASSERT_EQ(cudaMemPoolCreate(&pool, &props), cudaSuccess);
  void* p = nullptr;
  ASSERT_EQ(cudaMallocFromPoolAsync(&p, std::size_t{1} << 20, pool, nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);

  // The mapped piece holding p, and the range the driver names for p.
  CUdeviceptr base = 0;
  std::size_t mapped = 0, reserved = 0;
  ASSERT_EQ(address_range(&base, &mapped, reinterpret_cast<CUdeviceptr>(p)), CUDA_SUCCESS);
  ASSERT_EQ(attribute(&reserved, CU_POINTER_ATTRIBUTE_RANGE_SIZE, reinterpret_cast<CUdeviceptr>(p)),
            CUDA_SUCCESS);
  std::cout << "[ pool     ] mapped piece " << mapped << " bytes, range " << reserved << " bytes\n";
  if (reserved <= mapped)
    std::cout << "[ note     ] the range is the mapped piece here: the case does not tell the two "
                 "answers apart\n";
  auto* first = reinterpret_cast<float*>(base);
  const auto to_end = static_cast<std::int64_t>(mapped / sizeof(float));  // elements in the piece
  const ConstTensorView whole = device_view(first, DType::f32, {to_end});
  const ConstTensorView past = device_view(first, DType::f32, {to_end + 1});
  const ConstTensorView before{first + 1, TensorDesc::strided(DType::f32, {3}, {-1}),
                               Memory::device};
  try {
    (void)to_host(whole);
  } catch (const Error& e) {
    ADD_FAILURE() << "a view of the whole mapped piece threw: " << e.what();
  }
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {1}, seed));
  DeviceTensor out(DType::f32, {to_end + 1});
  verify::poison(out.view());
  DeviceTensor out_small(DType::f32, {3});
  verify::poison(out_small.view());
  expect_rejected([&] { (void)to_host(past); }, {"tensor at", "outside its allocation"},
                  "to_host: one element past the pool's mapped piece");
  expect_rejected([&] { binary(BinaryOp::add, past, b.view(), out.view()); },
                  {"a at", "outside its allocation"}, "binary: a one element past the piece");
  expect_rejected([&] { binary(BinaryOp::add, b.view(), before, out_small.view()); },
                  {"b at", "outside its allocation"}, "binary: b before the piece's start");
  expect_poisoned(out.view(), "out after the rejected calls");
  expect_poisoned(out_small.view(), "out_small after the rejected calls");

  EXPECT_EQ(cudaFreeAsync(p, nullptr), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  EXPECT_EQ(cudaMemPoolDestroy(pool), cudaSuccess);
  expect_context_works(seed, "pool memory past its mapped piece");
}

/// The mapped piece of device memory holding `p` (cuMemGetAddressRange).
std::pair<const std::byte*, std::size_t> mapped_piece(const void* p) {
  const auto address_range =
      driver_entry<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange", 3020);
  CUdeviceptr base = 0;
  std::size_t size = 0;
  EXPECT_EQ(address_range(&base, &size, reinterpret_cast<CUdeviceptr>(p)), CUDA_SUCCESS);
  return {reinterpret_cast<const std::byte*>(base), size};
}

/// Memory of ewise's own pool (every ewise result and temporary by default): ewise recorded each
/// allocation, so the check knows its exact extent and asks the driver nothing. A view one
/// element past an allocation's end throws naming that allocation's exact range although the
/// bytes past it lie in the same mapped piece of the pool (which the driver alone cannot tell
/// apart: PoolMemoryPastItsMappedPieceThrows); so does one reaching before its start, and COO
/// vals that start one element into their array.
TEST(Residency, OwnPoolMemoryPastItsAllocationThrows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  constexpr std::int64_t n = 1000;  // 4000 bytes: the pool packs it into a larger mapped piece
  DeviceTensor mine(DType::f32, {n}, nullptr, pool_memory_resource());
  // A neighbour in the same piece, where the pool places it: bytes past `mine` may be its.
  const DeviceTensor after(DType::f32, {n}, nullptr, pool_memory_resource());
  verify::poison(mine.view());
  expect_own(mine, "a tensor of ewise's pool");
  const std::string range = outside(mine.data(), mine.bytes());
  const auto [piece, piece_bytes] = mapped_piece(mine.data());
  const auto* first = static_cast<const std::byte*>(mine.data());
  std::cout << "[ pool     ] allocation at byte " << first - piece << " of a " << piece_bytes
            << "-byte mapped piece; the next allocation "
            << static_cast<const std::byte*>(after.data()) - first << " bytes after it\n";
  if (first + mine.bytes() + sizeof(float) > piece + piece_bytes)
    std::cout << "[ note     ] the allocation ends at its mapped piece's end: the case does not "
                 "tell the allocation from the piece\n";

  const ConstTensorView past = device_view(mine.data(), DType::f32, {n + 1});
  const TensorView past_out = device_out(mine.data(), DType::f32, {n + 1});
  const ConstTensorView before{mine.data_as<float>() + 1,
                               TensorDesc::strided(DType::f32, {3}, {-1}), Memory::device};
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {n + 1}, seed));
  DeviceTensor out(DType::f32, {n + 1});
  verify::poison(out.view());
  const DeviceTensor b_small = to_device(verify::random_tensor(DType::f32, {3}, seed + 1));
  DeviceTensor out_small(DType::f32, {3});
  verify::poison(out_small.view());

  expect_rejected([&] { binary(BinaryOp::add, past, b.view(), out.view()); }, {"a at", range},
                  "binary: a one element past its allocation of ewise's pool");
  expect_rejected([&] { binary(BinaryOp::add, b.view(), b.view(), past_out); }, {"out at", range},
                  "binary: out one element past its allocation of ewise's pool");
  expect_rejected([&] { binary(BinaryOp::add, b_small.view(), before, out_small.view()); },
                  {"b at", range}, "binary: b reaching before its allocation of ewise's pool");
  expect_rejected([&] { (void)binary(BinaryOp::mul, past, b.view()); }, {"a at", range},
                  "allocating binary: a one element past");
  expect_rejected([&] { (void)to_host(past); }, {"tensor at", range}, "to_host: one element past");
  expect_rejected([&] { verify::fill_random(past_out, seed); }, {"tensor to fill at", range},
                  "fill_random: one element past");

  const HostCoo hc = verify::random_coo(kRows, kCols, 0.2, seed + 2);
  ASSERT_GT(hc.nnz(), 1);
  const DeviceCoo c = to_device(hc.view());
  CooView shifted_vals = c.view();
  shifted_vals.vals = static_cast<const float*>(c.view().vals) + 1;
  const std::string vals_range =
      outside(c.view().vals, static_cast<std::size_t>(c.nnz()) * sizeof(float));
  expect_rejected([&] { (void)multiply(shifted_vals, c.view()); }, {"a vals at", vals_range},
                  "multiply: a.vals one element past their array");
  expect_rejected([&] { (void)coalesce(shifted_vals); }, {"a vals at", vals_range},
                  "coalesce: a.vals one element past their array");
  expect_rejected([&] { (void)to_host(shifted_vals); }, {"COO matrix vals at", vals_range},
                  "to_host(COO): vals one element past their array");

  expect_poisoned(mine.view(), "the allocation under the too-long out");
  expect_poisoned(out.view(), "out after the rejected calls");
  expect_poisoned(out_small.view(), "out_small after the rejected calls");
  expect_context_works(seed, "views past their allocation of ewise's pool");
}

// ---- memory the device can use is accepted -------------------------------------------------

/// out = a + b for device views over any memory, compared with the reference on host copies.
void expect_add_works(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                      const std::string& what, cudaStream_t stream = nullptr) {
  try {
    verify::poison(out, stream);
    binary(BinaryOp::add, a, b, out, {}, stream);
    const HostTensor ha = to_host(a, stream), hb = to_host(b, stream);
    HostTensor want(out.desc.dtype, out.desc.shape);
    reference_binary(BinaryOp::add, ha.view(), hb.view(), want.view());
    const verify::CompareReport r = verify::compare(out, want.view(), verify::Tolerance{}, stream);
    EXPECT_TRUE(r.ok()) << what << ": " << r.str();
  } catch (const Error& e) {
    ADD_FAILURE() << what << " threw: " << e.what();
  }
}

TEST(Residency, UsableMemoryIsAccepted) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const DeviceTensor a = to_device(verify::random_tensor(DType::f32, {kRows, kCols}, seed));
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {kCols}, seed + 1));
  DeviceTensor out(DType::f32, {kRows, kCols});
  const auto bytes = static_cast<std::size_t>(kNumel) * sizeof(float);

  void* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, bytes), cudaSuccess);
  verify::fill_random(device_out(managed, DType::f32, {kRows, kCols}), seed + 2);
  expect_add_works(device_view(managed, DType::f32, {kRows, kCols}), b, out.view(), "managed a");
  expect_add_works(a, b, device_out(managed, DType::f32, {kRows, kCols}), "managed out");

  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, bytes), cudaSuccess);
  verify::fill_random(device_out(pinned, DType::f32, {kRows, kCols}), seed + 3);
  expect_add_works(device_view(pinned, DType::f32, {kRows, kCols}), b, out.view(), "pinned a");

  // Registered host memory is addressed by the device at its host pointer where the device
  // says so (else the check rejects it: the kernel would need the other pointer).
  std::vector<float> registered(kNumel, 0.25f);
  ASSERT_EQ(cudaHostRegister(registered.data(), bytes, cudaHostRegisterDefault), cudaSuccess);
  int device = 0, same_pointer = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(
      cudaDeviceGetAttribute(&same_pointer, cudaDevAttrCanUseHostPointerForRegisteredMem, device),
      cudaSuccess);
  if (same_pointer) {
    expect_add_works(device_view(registered.data(), DType::f32, {kRows, kCols}), b, out.view(),
                     "registered host a");
    expect_add_works(a, b, device_out(registered.data(), DType::f32, {kRows, kCols}),
                     "registered host out");
  } else {
    std::cout << "[ note     ] device " << device
              << " does not address registered memory at its host pointer: case skipped\n";
  }

  // Views at the edges of a cudaMalloc allocation of exactly kNumel elements.
  const Allocation exact(kNumel);
  verify::fill_random(device_out(exact.get(), DType::f32, {kNumel}), seed + 4);
  const ConstTensorView whole = device_view(exact.get(), DType::f32, {kRows, kCols});
  const ConstTensorView reversed{exact.get() + kNumel - 1,
                                 TensorDesc::strided(DType::f32, {kRows, kCols}, {-kCols, -1}),
                                 Memory::device};
  const ConstTensorView broadcast_last{exact.get() + kNumel - 1,
                                       TensorDesc::strided(DType::f32, {kRows, kCols}, {0, 0}),
                                       Memory::device};
  const ConstTensorView tail{exact.get() + kNumel - kCols,
                             TensorDesc::contiguous(DType::f32, {kCols}), Memory::device};
  expect_add_works(whole, b, out.view(), "a view of the whole allocation");
  expect_add_works(reversed, b, out.view(), "a reversed view of the whole allocation");
  expect_add_works(broadcast_last, tail, out.view(), "a broadcast last element and the last row");
  expect_add_works(a, b, device_out(exact.get(), DType::f32, {kRows, kCols}),
                   "out filling the allocation");
  expect_add_works(a, b, out.view(), "the per-thread default stream", cudaStreamPerThread);
  expect_add_works(a, b, out.view(), "the legacy default stream", cudaStreamLegacy);

  EXPECT_EQ(cudaHostUnregister(registered.data()), cudaSuccess);
  EXPECT_EQ(cudaFreeHost(pinned), cudaSuccess);
  EXPECT_EQ(cudaFree(managed), cudaSuccess);
  expect_context_works(seed, "usable memory");
}

/// Views over ewise's own pool memory that stay inside their allocation: the whole of it, sub-
/// views at an offset, with negative strides, broadcast, as out, and results of the allocating
/// form used by the next call (c = add(a, b); d = add(c, b)) compute the right results.
TEST(Residency, OwnPoolMemoryIsAccepted) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  DeviceTensor a(DType::f32, {kRows, kCols}, nullptr, pool_memory_resource());
  verify::fill_random(a.view(), seed);
  expect_own(a, "a");
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {kCols}, seed + 1));
  const DeviceTensor b_inner = to_device(verify::random_tensor(DType::f32, {kCols - 1}, seed + 2));
  DeviceTensor out(DType::f32, {kRows, kCols});
  DeviceTensor out_inner(DType::f32, {kRows - 1, kCols - 1});
  const float* p = a.data_as<float>();

  const ConstTensorView reversed{p + kNumel - 1,
                                 TensorDesc::strided(DType::f32, {kRows, kCols}, {-kCols, -1}),
                                 Memory::device};
  // Rows 1.. and columns 1.. of a: starts one row and one element in, ends at a's end.
  const ConstTensorView inner{p + kCols + 1,
                              TensorDesc::strided(DType::f32, {kRows - 1, kCols - 1}, {kCols, 1}),
                              Memory::device};
  // Rows ..kRows-2 and columns ..kCols-2, both reversed: reaches down to a's first element.
  const ConstTensorView inner_reversed{
      p + (kRows - 2) * kCols + kCols - 2,
      TensorDesc::strided(DType::f32, {kRows - 1, kCols - 1}, {-kCols, -1}), Memory::device};
  const ConstTensorView broadcast_last{p + kNumel - 1,
                                       TensorDesc::strided(DType::f32, {kRows, kCols}, {0, 0}),
                                       Memory::device};
  const ConstTensorView last_row{p + kNumel - kCols, TensorDesc::contiguous(DType::f32, {kCols}),
                                 Memory::device};
  const TensorView out_reversed{out.data_as<float>() + kNumel - 1,
                                TensorDesc::strided(DType::f32, {kRows, kCols}, {-kCols, -1}),
                                Memory::device};
  expect_add_works(a, b, out.view(), "a view of the whole allocation");
  expect_add_works(reversed, b, out.view(), "a reversed view of the whole allocation");
  expect_add_works(inner, b_inner, out_inner.view(), "a sub-view at an offset to the end");
  expect_add_works(inner_reversed, b_inner, out_inner.view(),
                   "a reversed sub-view down to the start");
  expect_add_works(broadcast_last, last_row, out.view(),
                   "a broadcast last element and the last row");
  expect_add_works(a, b, out_reversed, "a reversed out filling its allocation");

  const DeviceTensor c = binary(BinaryOp::add, a.view(), b.view());
  expect_own(c, "the allocating form's result");
  expect_add_works(c, b, out.view(), "the allocating form's result as the next call's a");
  expect_context_works(seed, "views of ewise's pool memory");
}

/// Buffers of ewise's pool freed and allocated again on the same stream, where the pool may
/// hand out the same address: the check goes by the new allocation's extent, not a freed one's.
TEST(Residency, OwnPoolAllocationFreedAndAllocatedAgain) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  constexpr std::int64_t kFirst = 4096, kSmaller = 1024, kLarger = 8192;
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {1}, seed));
  const void* first = nullptr;
  {
    DeviceTensor t(DType::f32, {kFirst}, nullptr, pool_memory_resource());
    first = t.data();
  }
  // Another allocation, possibly at the freed one's address: all of it is accepted, one element
  // more is not, whether it is smaller than the freed one or larger.
  const auto reallocated = [&](std::int64_t n, std::uint64_t salt, const std::string& what) {
    DeviceTensor t(DType::f32, {n}, nullptr, pool_memory_resource());
    std::cout << "[ pool     ] " << what << " " << (t.data() == first ? "reuses" : "does not reuse")
              << " the freed one's address\n";
    expect_own(t, what);
    verify::fill_random(t.view(), seed + salt);
    DeviceTensor out(DType::f32, {n});
    expect_add_works(t, b, out.view(), what);
    expect_rejected([&] { (void)to_host(device_view(t.data(), DType::f32, {n + 1})); },
                    {"tensor at", outside(t.data(), t.bytes())}, "one element past " + what);
  };
  reallocated(kSmaller, 1, "the smaller allocation");
  reallocated(kLarger, 2, "the larger allocation");
  expect_context_works(seed, "allocations freed and allocated again");
}

/// A MemoryResource of the caller's: a cudaMemPool of its own.
class CallerPool final : public MemoryResource {
 public:
  CallerPool() {
    int device = 0;
    EWISE_CUDA_CHECK(cudaGetDevice(&device));
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    EWISE_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
  }
  ~CallerPool() override {
    (void)cudaDeviceSynchronize();
    (void)cudaMemPoolDestroy(pool_);
  }
  CallerPool(const CallerPool&) = delete;
  CallerPool& operator=(const CallerPool&) = delete;
  void* allocate(std::size_t bytes, cudaStream_t stream) override {
    void* p = nullptr;
    EWISE_CUDA_CHECK(cudaMallocFromPoolAsync(&p, bytes, pool_, stream));
    return p;
  }
  void deallocate(void* p, std::size_t, cudaStream_t stream) noexcept override {
    (void)cudaFreeAsync(p, stream);
  }

 private:
  cudaMemPool_t pool_ = nullptr;
};

/// Memory of a caller's MemoryResource is not recorded as ewise's, so it takes the driver's path
/// as before: valid views are accepted (also the allocating form's result in that memory), and
/// pool memory goes by its mapped piece: one element past the allocation but inside the piece is
/// accepted (the driver knows no finer extent), one element past the piece throws naming it.
TEST(Residency, CallerResourceMemoryTakesTheDriverPath) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  CallerPool pool;  // outlives the tensors below
  constexpr std::int64_t n = 1000;
  DeviceTensor t(DType::f32, {n}, nullptr, &pool);
  verify::fill_random(t.view(), seed);
  EXPECT_EQ(own_allocation(t.data()).device, -1) << "the caller's memory was recorded as ewise's";
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {n}, seed + 1));
  DeviceTensor out(DType::f32, {n});
  expect_add_works(t, b, out.view(), "a tensor of the caller's resource");
  DenseOptions in_callers;
  in_callers.memory = &pool;
  const DeviceTensor c = binary(BinaryOp::add, t.view(), b.view(), in_callers);
  EXPECT_EQ(own_allocation(c.data()).device, -1) << "the result in the caller's memory was "
                                                    "recorded as ewise's";
  expect_add_works(c, b, out.view(), "the allocating form's result in the caller's memory");

  const auto [piece, piece_bytes] = mapped_piece(t.data());
  const auto* first = static_cast<const std::byte*>(t.data());
  const auto to_end = static_cast<std::int64_t>((piece + piece_bytes - first) / sizeof(float));
  if (to_end > n) {
    try {
      (void)to_host(device_view(t.data(), DType::f32, {n + 1}));
    } catch (const Error& e) {
      ADD_FAILURE() << "one element past the caller's allocation, inside its mapped piece, threw: "
                    << e.what();
    }
  } else {
    std::cout << "[ note     ] the allocation ends at its mapped piece's end: the case one element "
                 "past it inside the piece is skipped\n";
  }
  expect_rejected([&] { (void)to_host(device_view(t.data(), DType::f32, {to_end + 1})); },
                  {"tensor at", outside(piece, piece_bytes)},
                  "one element past the mapped piece of the caller's memory");
  expect_context_works(seed, "memory of the caller's resource");
}

/// Two physical pieces mapped side by side into one reservation of three pieces (the last one
/// left unmapped), as PyTorch's expandable segments grow: a view across both mapped pieces is one
/// allocation to its user and must be accepted; one reaching into the unmapped third must not.
TEST(Residency, MemoryMappedInPiecesIsOneAllocation) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  const auto granularity_of =
      driver_entry<PFN_cuMemGetAllocationGranularity_v10020>("cuMemGetAllocationGranularity");
  const auto create = driver_entry<PFN_cuMemCreate_v10020>("cuMemCreate");
  const auto reserve = driver_entry<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
  const auto map = driver_entry<PFN_cuMemMap_v10020>("cuMemMap");
  const auto set_access = driver_entry<PFN_cuMemSetAccess_v10020>("cuMemSetAccess");
  const auto unmap = driver_entry<PFN_cuMemUnmap_v10020>("cuMemUnmap");
  const auto release = driver_entry<PFN_cuMemRelease_v10020>("cuMemRelease");
  const auto address_free = driver_entry<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaFree(nullptr), cudaSuccess);  // the primary context current for the driver calls

  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  std::size_t piece = 0;
  ASSERT_EQ(granularity_of(&piece, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
  CUdeviceptr base = 0;
  ASSERT_EQ(reserve(&base, 3 * piece, 0, 0, 0), CUDA_SUCCESS);
  CUmemGenericAllocationHandle handles[2] = {};
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(create(&handles[k], piece, &prop, 0), CUDA_SUCCESS);
    ASSERT_EQ(map(base + k * piece, piece, 0, handles[k], 0), CUDA_SUCCESS);
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  for (int k = 0; k < 2; ++k)
    ASSERT_EQ(set_access(base + k * piece, piece, &access, 1), CUDA_SUCCESS);

  const auto n = static_cast<std::int64_t>(piece / sizeof(float));  // elements per piece
  auto* first = reinterpret_cast<float*>(base);
  const DeviceTensor b = to_device(verify::random_tensor(DType::f32, {n}, seed));
  DeviceTensor out(DType::f32, {n});
  verify::fill_random(device_out(first, DType::f32, {2 * n}), seed + 1);
  // n elements from the middle of the first piece to the middle of the second.
  expect_add_works(device_view(first + n / 2, DType::f32, {n}), b, out.view(),
                   "a view across two mapped pieces");
  expect_add_works(b, b, device_out(first + n / 2, DType::f32, {n}),
                   "out across two mapped pieces");
  expect_rejected(
      [&] {
        binary(BinaryOp::add, device_view(first + n + n / 2, DType::f32, {n}), b.view(), out.view());
      },
      {"a at", "outside its allocation"}, "a view into the unmapped third piece");

  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(unmap(base, 2 * piece), CUDA_SUCCESS);
  for (CUmemGenericAllocationHandle h : handles) EXPECT_EQ(release(h), CUDA_SUCCESS);
  EXPECT_EQ(address_free(base, 3 * piece), CUDA_SUCCESS);
  expect_context_works(seed, "memory mapped in pieces");
}

}  // namespace
}  // namespace ewise
