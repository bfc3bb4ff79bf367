// GPU tests at sizes where 32-bit indices, offsets or keys would overflow, verified by sampling
// windows of the results against values computed independently on the host. They extend what
// test_dense.cu (2^31 + 3 f16, 1-D and 2-D) and test_sparse.cu (one operand with nnz > 2^31 in
// a 65536 x 65536 matrix, small result) cover:
//   * dense: an outer-product broadcast with more than 2^32 output elements; a reversed output
//     (negative stride) of more than 2^31 elements; a tensor of only 8192 elements whose
//     offsets span more than 2^31 (the 64-bit path must follow the span, not numel);
//   * sparse: both operands with nnz > 2^31 in a matrix with nrows * ncols > 2^32 (keys above
//     2^32 in use) and a result with more than 2^31 entries, for each algorithm (an H200), and
//     for merge in a variant that fits an 80 GB GPU; COO x row
//     vector on it; CSR row offsets of it; coo_to_dense / dense_to_coo through a dense matrix of
//     more than 2^32 elements; combine(op, COO, dense) into, and in place over, a table of more
//     than 2^32 cells.
// Each part needs tens of GiB: it is skipped with the reason when the free device memory is too
// small, and fails instead under EWISE_REQUIRE_GPU=1 when the GPU's total memory is large
// enough that only something else (a leak) can have taken it.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "ewise/half.hpp"
#include "ewise/memory.hpp"
#include "ewise/ops.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/verify.hpp"
#include "testing/gpu_test.hpp"

namespace ewise {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
constexpr std::int64_t k2To31 = std::int64_t{1} << 31;
constexpr std::int64_t k2To32 = std::int64_t{1} << 32;

/// Whether `need` bytes (plus 2 GiB of headroom) are free. When not, `why` says so and whether
/// the GPU is big enough that the test must fail rather than skip.
bool fits(std::int64_t need, std::string* why, bool* must_fail) {
  // ewise's pool keeps what earlier tests freed (memory.hpp): hand it back first.
  EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  trim_memory_pool();
  std::size_t free_bytes = 0, total = 0;
  EWISE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::int64_t want = need + 2 * kGiB;
  if (static_cast<std::int64_t>(free_bytes) >= want) return true;
  *must_fail = test::gpu_required() && static_cast<std::int64_t>(total) >= want + 2 * kGiB;
  *why = "needs " + std::to_string(want / kGiB) + " GiB of free device memory, " +
         std::to_string(free_bytes / static_cast<std::size_t>(kGiB)) + " GiB free of " +
         std::to_string(total / static_cast<std::size_t>(kGiB));
  return false;
}

#define EWISE_REQUIRE_MEMORY(bytes)                                                     \
  do {                                                                                  \
    std::string why_;                                                                   \
    bool must_fail_ = false;                                                            \
    if (!fits((bytes), &why_, &must_fail_)) {                                           \
      if (must_fail_) FAIL() << why_ << " although the GPU is big enough (leak?)";       \
      GTEST_SKIP() << why_;                                                             \
    }                                                                                   \
  } while (0)

std::uint64_t test_seed() {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  return seed;
}

/// Copies `count` elements of `bytes_each` from device address base + first * bytes_each.
template <class T>
std::vector<T> fetch(const void* base, std::int64_t first, std::int64_t count) {
  std::vector<T> out(static_cast<std::size_t>(count));
  EWISE_CUDA_CHECK(cudaMemcpy(out.data(), static_cast<const T*>(base) + first,
                              static_cast<std::size_t>(count) * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

float f16(std::uint16_t bits) { return f16_bits_to_float(bits); }

// ---- dense ----------------------------------------------------------------------------------

/// out = a (rows, 1) - b (1, cols) with rows * cols > 2^32, for every kernel that accepts the
/// plan; rows around linear indices 2^31 and 2^32 and the last are checked in full.
TEST(Large, DenseOuterProductOver2To32Elements) {
  EWISE_REQUIRE_GPU();
  const std::int64_t rows = 65537, cols = 65537;  // 4,295,098,369 elements
  ASSERT_GT(rows * cols, k2To32);
  EWISE_REQUIRE_MEMORY(rows * cols * 2);
  const std::uint64_t seed = test_seed();
  const HostTensor ha = verify::random_tensor(DType::f16, {rows, 1}, seed);
  const HostTensor hb = verify::random_tensor(DType::f16, {1, cols}, seed + 1);
  const DeviceTensor a = to_device(ha), b = to_device(hb);
  DeviceTensor out(DType::f16, {rows, cols});
  const auto* pa = static_cast<const std::uint16_t*>(ha.data());
  const auto* pb = static_cast<const std::uint16_t*>(hb.data());
  const std::int64_t check_rows[] = {0, k2To31 / cols, k2To31 / cols + 1, k2To32 / cols,
                                     rows - 1};
  int kernels_run = 0;
  for (const Kernel k : kAllKernels) {
    if (!kernel_supports(k, a, b, out.view())) continue;
    ++kernels_run;
    verify::poison(out.view());
    binary(BinaryOp::sub, a.view(), b.view(), out.view(), {k});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << kernel_name(k);
    for (const std::int64_t r : check_rows) {
      const auto got = fetch<std::uint16_t>(out.data(), r * cols, cols);
      std::int64_t bad = 0, first_bad = -1;
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::uint16_t want = float_to_f16_bits(f16(pa[r]) - f16(pb[c]));
        if (got[static_cast<std::size_t>(c)] != want && bad++ == 0) first_bad = c;
      }
      EXPECT_EQ(bad, 0) << kernel_name(k) << ": row " << r << " (linear index " << r * cols
                        << "): " << bad << " wrong, first at column " << first_bad;
    }
  }
  EXPECT_GE(kernels_run, 2);
  std::cout << "[ verified ] " << rows * cols << "-element outer product, " << kernels_run
            << " kernels, 5 rows each\n";
}

/// A reversed output view (stride -1) of 2^31 + 2^20 f32 elements: out[i] = a[i] * b (scalar).
TEST(Large, DenseReversedOutputOver2To31Elements) {
  EWISE_REQUIRE_GPU();
  const std::int64_t n = k2To31 + (1 << 20);
  EWISE_REQUIRE_MEMORY(2 * n * 4);
  const std::uint64_t seed = test_seed();
  DeviceTensor a(DType::f32, {n}), storage(DType::f32, {n});
  verify::fill_random(a.view(), seed);
  const HostTensor hb = verify::random_tensor(DType::f32, {}, seed + 1);
  const DeviceTensor b = to_device(hb);
  const float scale = *static_cast<const float*>(hb.data());
  // out[i] lives at storage[n - 1 - i].
  const TensorView out{static_cast<float*>(storage.data()) + (n - 1),
                       TensorDesc::strided(DType::f32, {n}, {-1}), Memory::device};
  for (const Kernel k : {Kernel::automatic, Kernel::general}) {
    verify::poison(storage.view());
    binary(BinaryOp::mul, a.view(), b.view(), out, {k});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const std::int64_t window = 4096;
    for (const std::int64_t i0 : {std::int64_t{0}, k2To31 - window / 2, n - window}) {
      const auto av = fetch<float>(a.data(), i0, window);
      // storage[n - 1 - i] for i in [i0, i0 + window): storage window starting at n - i0 - window.
      const auto sv = fetch<float>(storage.data(), n - i0 - window, window);
      std::int64_t bad = 0;
      for (std::int64_t j = 0; j < window; ++j) {
        const float want = av[static_cast<std::size_t>(j)] * scale;
        const float got = sv[static_cast<std::size_t>(window - 1 - j)];
        bad += std::memcmp(&got, &want, 4) != 0;
      }
      EXPECT_EQ(bad, 0) << kernel_name(k) << ": window at " << i0;
    }
  }
}

/// 2 x 4096 f16 elements whose rows are 2^31 + 1 elements apart: numel is small but offsets
/// exceed int32, in the output and in an input; the whole result is checked.
TEST(Large, DenseSmallTensorWithOffsetsOver2To31) {
  EWISE_REQUIRE_GPU();
  const std::int64_t cols = 4096, stride = k2To31 + 1, span = stride + cols;
  EWISE_REQUIRE_MEMORY(2 * span * 2);
  const std::uint64_t seed = test_seed();
  DeviceBuffer abuf(static_cast<std::size_t>(span) * 2), obuf(static_cast<std::size_t>(span) * 2);
  const TensorDesc d = TensorDesc::strided(DType::f16, {2, cols}, {stride, 1});
  const TensorView a{abuf.data(), d, Memory::device}, out{obuf.data(), d, Memory::device};
  verify::fill_random(a, seed);
  const HostTensor hb = verify::random_tensor(DType::f16, {cols}, seed + 1);
  const DeviceTensor b = to_device(hb);
  // Host copies of the two rows (copying the view would move its whole 8 GiB span).
  HostTensor ha(DType::f16, {2, cols});
  for (int r = 0; r < 2; ++r) {
    const auto row = fetch<std::uint16_t>(abuf.data(), r * stride, cols);
    std::memcpy(static_cast<std::uint16_t*>(ha.data()) + r * cols, row.data(), row.size() * 2);
  }
  HostTensor want(DType::f16, {2, cols});
  reference_binary(BinaryOp::max, ha.view(), hb.view(), want.view());
  int kernels_run = 0;
  for (const Kernel k : kAllKernels) {
    if (!kernel_supports(k, a, b, out)) continue;
    ++kernels_run;
    verify::poison(out);
    binary(BinaryOp::max, a, b.view(), out, {k});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << kernel_name(k);
    for (int r = 0; r < 2; ++r) {
      const auto got = fetch<std::uint16_t>(obuf.data(), r * stride, cols);
      EXPECT_EQ(std::memcmp(got.data(), static_cast<const std::uint16_t*>(want.data()) + r * cols,
                            static_cast<std::size_t>(cols) * 2), 0)
          << kernel_name(k) << ": row " << r << " (offset " << r * stride << ")";
    }
  }
  EXPECT_GE(kernels_run, 2);
}

// ---- sparse: nnz > 2^31, nrows * ncols > 2^32 ----------------------------------------------

// Two canonical matrices on a logical sequence of cells K = 0, 1, 2, ...: each stores every cell
// but one in `period` (a cell K with K % period == period - 1 is left out). Cell K sits at
// absolute index 6K + 1 of a 131075 x 131075 matrix (so keys go past 2^32 and every row is
// reached). Entry k of a pattern is the k-th cell it stores, value (k % value_mod + 1) *
// value_unit. Products are exact in f16, so every result entry is known exactly on the host.
constexpr std::int64_t kDim = 131075;

struct Pattern {
  std::int64_t period;  ///< stores period - 1 of every `period` cells
  int value_mod;
  float value_unit;

  EWISE_HD std::int64_t cell(std::int64_t k) const { return k / (period - 1) * period + k % (period - 1); }
  EWISE_HD std::int64_t entry(std::int64_t cell) const { return cell / period * (period - 1) + cell % period; }
  EWISE_HD bool stores(std::int64_t cell) const { return cell % period != period - 1; }
  EWISE_HD float value(std::int64_t k) const { return static_cast<float>(k % value_mod + 1) * value_unit; }
};

EWISE_HD std::int64_t key_of_cell(std::int64_t cell) { return 6 * cell + 1; }

__global__ void fill_pattern(Pattern p, std::int64_t n, std::int32_t* rows, std::int32_t* cols,
                             __half* vals) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t key = key_of_cell(p.cell(k));
    rows[k] = static_cast<std::int32_t>(key / kDim);
    cols[k] = static_cast<std::int32_t>(key % kDim);
    vals[k] = __float2half(p.value(k));
  }
}

DeviceCoo make_pattern(const Pattern& p, std::int64_t n) {
  DeviceCoo m(CooDesc{kDim, kDim, n, IndexType::i32, DType::f16, true});
  detail::launch("fill_pattern", fill_pattern, dim3(8192), dim3(256), 0, nullptr, p, n,
                 static_cast<std::int32_t*>(m.rows()), static_cast<std::int32_t*>(m.cols()),
                 static_cast<__half*>(m.vals()));
  return m;
}

/// The cells (in increasing order) stored by both patterns, indexed: cell number j.
class Intersection {
 public:
  Intersection(const Pattern& a, const Pattern& b, std::int64_t cells_a, std::int64_t cells_b)
      : per_(a.period * b.period), limit_(std::min(cells_a, cells_b)) {
    for (std::int64_t c = 0; c < per_; ++c)
      if (a.stores(c) && b.stores(c)) residues_.push_back(c);
  }
  std::int64_t period_count() const { return static_cast<std::int64_t>(residues_.size()); }
  /// Number of common cells below `limit_`.
  std::int64_t size() const {
    const std::int64_t full = limit_ / per_;
    std::int64_t n = full * period_count();
    for (const std::int64_t r : residues_) n += full * per_ + r < limit_;
    return n;
  }
  std::int64_t cell(std::int64_t j) const {
    return j / period_count() * per_ + residues_[static_cast<std::size_t>(j % period_count())];
  }

 private:
  std::int64_t per_;    ///< the patterns repeat every per_ cells
  std::int64_t limit_;  ///< cells below this are stored by both operands' ranges
  std::vector<std::int64_t> residues_;
};

/// Checks `count` entries of a canonical f16 result from position `first` against
/// expected(j) -> (cell, value).
template <class Expected>
void check_entries(const DeviceCoo& got, std::int64_t first, std::int64_t count,
                   const Expected& expected, const std::string& what) {
  const auto rows = fetch<std::int32_t>(got.rows(), first, count);
  const auto cols = fetch<std::int32_t>(got.cols(), first, count);
  const auto vals = fetch<std::uint16_t>(got.vals(), first, count);
  std::int64_t bad = 0;
  std::string first_problem;
  for (std::int64_t i = 0; i < count; ++i) {
    const auto [cell, value] = expected(first + i);
    const std::int64_t key = key_of_cell(cell);
    const auto s = static_cast<std::size_t>(i);
    if (rows[s] == key / kDim && cols[s] == key % kDim && vals[s] == float_to_f16_bits(value)) continue;
    if (bad++ == 0)
      first_problem = "entry " + std::to_string(first + i) + ": got (" + std::to_string(rows[s]) +
                      "," + std::to_string(cols[s]) + ") " + std::to_string(f16(vals[s])) +
                      ", want (" + std::to_string(key / kDim) + "," + std::to_string(key % kDim) +
                      ") " + std::to_string(value);
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << count << " entries from " << first
                    << " wrong; " << first_problem;
}

/// Windows of positions to check in a result of n entries: both ends, around 2^31 and 2^32.
std::vector<std::int64_t> window_starts(std::int64_t n, std::int64_t window) {
  std::vector<std::int64_t> w = {0, n - window};
  for (const std::int64_t edge : {k2To31, k2To32})
    if (edge + window / 2 < n) w.push_back(edge - window / 2);
  return w;
}

/// a ⊙ b for patterns pa, pb of n entries each (both > 2^31, result > 2^31) by each algorithm in
/// `algorithms`, sampled windows checked; a times a row vector; CSR row offsets of a.
/// `scratch_per_entry`: the bytes per entry of a the algorithms need beyond operands and result.
void check_both_over_2to31(const Pattern& pa, const Pattern& pb, std::int64_t n,
                           std::initializer_list<CooAlgorithm> algorithms,
                           std::int64_t scratch_per_entry) {
  const std::int64_t cells_a = pa.cell(n - 1) + 1, cells_b = pb.cell(n - 1) + 1;
  ASSERT_LT(key_of_cell(std::max(cells_a, cells_b)), kDim * kDim);
  ASSERT_GT(kDim * kDim, k2To32);
  const Intersection common(pa, pb, cells_a, cells_b);
  const std::int64_t n_out = common.size();
  ASSERT_GT(n, k2To31);
  ASSERT_GT(n_out, k2To31);
  // Two operands and the result, 10 bytes an entry, plus the algorithms' scratch.
  EWISE_REQUIRE_MEMORY((2 * n + n_out) * 10 + n * scratch_per_entry);
  const DeviceCoo a = make_pattern(pa, n), b = make_pattern(pb, n);
  EXPECT_NO_THROW(check_indices(a.view(), "a"));
  const auto expected = [&](std::int64_t j) {
    const std::int64_t cell = common.cell(j);
    return std::pair{cell, pa.value(pa.entry(cell)) * pb.value(pb.entry(cell))};
  };
  const std::int64_t window = 4096;
  for (const CooAlgorithm alg : algorithms) {
    SparseOptions o;
    o.algorithm = alg;
    const DeviceCoo c = multiply(a.view(), b.view(), o);
    ASSERT_EQ(c.nnz(), n_out) << coo_algorithm_name(alg);
    EXPECT_TRUE(c.desc().canonical);
    for (const std::int64_t w : window_starts(n_out, window))
      check_entries(c, w, window, expected, coo_algorithm_name(alg));
  }
  std::cout << "[ verified ] " << n << " x " << n << " entries -> " << n_out
            << " (keys up to " << key_of_cell(std::max(cells_a, cells_b)) << ")\n";

  // a times a row vector: a's pattern, each value times v[col].
  const HostTensor hv = verify::random_tensor(DType::f16, {1, kDim}, 7);
  const DeviceTensor v = to_device(hv);
  const auto* pv = static_cast<const std::uint16_t*>(hv.data());
  {
    const DeviceCoo c = multiply(a.view(), v.view());
    ASSERT_EQ(c.nnz(), n);
    const auto scaled = [&](std::int64_t k) {
      const std::int64_t cell = pa.cell(k);
      // f16 x f16 computed in f32 and rounded once to f16.
      return std::pair{cell, f16(float_to_f16_bits(pa.value(k) * f16(pv[key_of_cell(cell) % kDim])))};
    };
    for (const std::int64_t w : window_starts(n, window)) check_entries(c, w, window, scaled, "a x row");
  }
  // CSR row offsets of a: offsets[r] = entries of a before row r (i64: nnz > 2^31).
  {
    const DeviceTensor offsets = coo_to_csr_row_offsets(a.view());
    ASSERT_EQ(offsets.dtype(), DType::i64);
    ASSERT_EQ(offsets.numel(), kDim + 1);
    const auto got = fetch<std::int64_t>(offsets.data(), 0, kDim + 1);
    // Entries before row r: a's cells whose key 6K + 1 < r * kDim, i.e. K < ceil((r kDim - 1) / 6).
    std::int64_t bad = 0;
    for (std::int64_t r = 0; r <= kDim; ++r) {
      const std::int64_t first_cell = r == 0 ? 0 : (r * kDim - 1 + 5) / 6;
      const std::int64_t want = std::min(pa.entry(first_cell), n);
      bad += got[static_cast<std::size_t>(r)] != want;
    }
    EXPECT_EQ(bad, 0) << "CSR row offsets of a";
  }
}

// Sparser patterns (1 cell in 17 and 1 in 13 left out) and every algorithm that takes them,
// sort_search's match positions (8 bytes an entry) included: about 91 GiB, an H200.
TEST(Large, SparseBothOperandsOver2To31EntriesKeysOver2To32) {
  EWISE_REQUIRE_GPU();
  check_both_over_2to31({17, 7, 0.25f}, {13, 5, 0.5f}, k2To31 + (std::int64_t{1} << 28),
                        {CooAlgorithm::automatic, CooAlgorithm::merge, CooAlgorithm::sort_search}, 8);
}

// The same on an 80 GB GPU: nearly full patterns (1 cell in 1024 and 1 in 1021 left out), so
// that operands and a result of just over 2^31 entries take about 61 GiB, with merge (4 bytes of
// staging an entry, 69 GiB in all; automatic picks it for canonical operands).
TEST(Large, SparseBothOperandsOver2To31EntriesIn80GB) {
  EWISE_REQUIRE_GPU();
  check_both_over_2to31({1024, 7, 0.25f}, {1021, 5, 0.5f}, k2To31 + (std::int64_t{1} << 25),
                        {CooAlgorithm::automatic, CooAlgorithm::merge}, 4);
}

/// 2^20 cells of a `cells`-cell matrix drawn from `seed` (a 64-bit LCG), plus `edges`; sorted and
/// distinct: the row-major keys of the large conversion and combine tests' entries.
std::vector<std::int64_t> spread_cells(std::int64_t cells, std::uint64_t seed,
                                       std::initializer_list<std::int64_t> edges) {
  std::vector<std::int64_t> keys(1 << 20);
  std::uint64_t s = seed;
  for (auto& k : keys) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    k = static_cast<std::int64_t>((s >> 1) % static_cast<std::uint64_t>(cells));
  }
  keys.insert(keys.end(), edges);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

/// coo_to_dense into, and dense_to_coo out of, a 65537 x 65537 f16 matrix (> 2^32 elements)
/// holding 2^20 entries spread over all of it, the last one in the last element.
TEST(Large, SparseDenseConversionsOver2To32Elements) {
  EWISE_REQUIRE_GPU();
  const std::int64_t dim = 65537, cells = dim * dim;
  ASSERT_GT(cells, k2To32);
  // The dense matrix and up to 10 bytes of scratch per element for dense_to_coo's scan.
  EWISE_REQUIRE_MEMORY(cells * 12);
  const std::uint64_t seed = test_seed();
  const std::vector<std::int64_t> keys =
      spread_cells(cells, seed, {0, k2To31 - 1, k2To31, k2To32 - 1, k2To32, cells - 1});
  const auto n = static_cast<std::int64_t>(keys.size());
  HostCoo h(CooDesc{dim, dim, n, IndexType::i64, DType::f16, true});
  for (std::int64_t k = 0; k < n; ++k) {
    static_cast<std::int64_t*>(h.rows())[k] = keys[static_cast<std::size_t>(k)] / dim;
    static_cast<std::int64_t*>(h.cols())[k] = keys[static_cast<std::size_t>(k)] % dim;
    static_cast<std::uint16_t*>(h.vals())[k] = float_to_f16_bits(static_cast<float>(k % 9 + 1) * 0.5f);
  }
  const DeviceCoo coo = to_device(h.view());
  {
    const DeviceTensor dense = coo_to_dense(coo.view());
    ASSERT_EQ(dense.numel(), cells);
    // Windows of the dense matrix: around the entries nearest 2^31 and 2^32 and the last cell.
    for (const std::int64_t at : {k2To31 - 2048, k2To32 - 2048, cells - 4096}) {
      const auto got = fetch<std::uint16_t>(dense.data(), at, 4096);
      std::int64_t bad = 0;
      for (std::int64_t i = 0; i < 4096; ++i) {
        const auto it = std::lower_bound(keys.begin(), keys.end(), at + i);
        const bool stored = it != keys.end() && *it == at + i;
        const std::uint16_t want =
            stored ? float_to_f16_bits(static_cast<float>((it - keys.begin()) % 9 + 1) * 0.5f) : 0;
        bad += got[static_cast<std::size_t>(i)] != want;
      }
      EXPECT_EQ(bad, 0) << "coo_to_dense window at " << at;
    }
    // And back: dense_to_coo must give exactly the original entries.
    const DeviceCoo back = dense_to_coo(dense.view(), IndexType::i64);
    const HostCoo hb = to_host(back.view());
    ASSERT_EQ(hb.nnz(), n);
    EXPECT_EQ(std::memcmp(hb.rows(), h.rows(), static_cast<std::size_t>(n) * 8), 0);
    EXPECT_EQ(std::memcmp(hb.cols(), h.cols(), static_cast<std::size_t>(n) * 8), 0);
    EXPECT_EQ(std::memcmp(hb.vals(), h.vals(), static_cast<std::size_t>(n) * 2), 0);
  }
  std::cout << "[ verified ] " << cells << "-element dense <-> COO with " << n << " entries\n";
}

/// combine(op, a, dense) over a 65537 x 65537 f16 table (> 2^32 cells) holding 2^20 entries
/// and the cells around 2^31 and 2^32 and the last: first against a scalar (the strided path)
/// into a new table, then in place over that table (the row-major path, out = dense). Windows
/// of two tiles each side of 2^31 and 2^32 and the last 8192 cells are checked in full.
TEST(Large, SparseCombineDenseOver2To32Cells) {
  EWISE_REQUIRE_GPU();
  const std::int64_t dim = 65537, cells = dim * dim;
  ASSERT_GT(cells, k2To32);
  EWISE_REQUIRE_MEMORY(cells * 2 + (std::int64_t{1} << 28));
  const std::uint64_t seed = test_seed();
  const std::vector<std::int64_t> keys = spread_cells(
      cells, seed, {0, k2To31 - 1, k2To31, k2To31 + 4095, k2To32 - 1, k2To32, cells - 1});
  const auto n = static_cast<std::int64_t>(keys.size());
  const auto value = [](std::int64_t k) { return static_cast<float>(k % 9 + 1) * 0.5f; };
  HostCoo h(CooDesc{dim, dim, n, IndexType::i32, DType::f16, true});
  for (std::int64_t k = 0; k < n; ++k) {
    static_cast<std::int32_t*>(h.rows())[k] =
        static_cast<std::int32_t>(keys[static_cast<std::size_t>(k)] / dim);
    static_cast<std::int32_t*>(h.cols())[k] =
        static_cast<std::int32_t>(keys[static_cast<std::size_t>(k)] % dim);
    static_cast<std::uint16_t*>(h.vals())[k] = float_to_f16_bits(value(k));
  }
  const DeviceCoo coo = to_device(h.view());
  HostTensor hd(DType::f16, Dims{});
  *static_cast<std::uint16_t*>(hd.data()) = float_to_f16_bits(0.75f);
  const DeviceTensor scalar = to_device(hd);
  // Every value is a multiple of 0.25 below 16: exact in f16, so the expected bits are those
  // of the float results.
  const auto check = [&](const DeviceTensor& t, const auto& want, const char* what) {
    for (const std::int64_t at : {k2To31 - 8192, k2To32 - 8192, cells - 16384}) {
      const auto got = fetch<std::uint16_t>(t.data(), at, 16384);
      std::int64_t bad = 0, first_bad = -1;
      for (std::int64_t i = 0; i < 16384 && at + i < cells; ++i) {
        const auto it = std::lower_bound(keys.begin(), keys.end(), at + i);
        const std::int64_t k = it != keys.end() && *it == at + i ? it - keys.begin() : -1;
        if (got[static_cast<std::size_t>(i)] != float_to_f16_bits(want(k)) && bad++ == 0)
          first_bad = at + i;
      }
      EXPECT_EQ(bad, 0) << what << ": window at " << at << ", first wrong cell " << first_bad;
    }
  };
  SparseOptions fill2;
  fill2.fill_a = 2;
  DeviceTensor table = combine(BinaryOp::sub, coo.view(), scalar.view(), fill2);
  ASSERT_EQ(table.numel(), cells);
  const auto first = [&](std::int64_t k) { return (k >= 0 ? value(k) : 2.0f) - 0.75f; };
  check(table, first, "a - scalar, fill 2");
  combine(BinaryOp::add, coo.view(), table.view(), table.view());
  check(table, [&](std::int64_t k) { return (k >= 0 ? value(k) : 0.0f) + first(k); },
        "a + table in place");
  std::cout << "[ verified ] " << cells << "-cell combine with " << n << " entries\n";
}

}  // namespace
}  // namespace ewise
