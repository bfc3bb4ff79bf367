// GPU tests of the dense half: every kernel against the CPU reference on random broadcasts of
// random layouts (transposed, sliced, reversed, misaligned), tile and vector edges, in-place,
// tunables, user functors, validation that leaves the output untouched, and a tensor of more
// than 2^31 elements.
//
// Environment: EWISE_SEED replays a run; EWISE_DENSE_CASES sets the random cases per dtype
// (default 200); EWISE_DENSE_SMALL=1 skips the multi-GiB test (for compute-sanitizer runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/buffer.hpp"
#include "ewise/dense.cuh"
#include "ewise/dense.hpp"
#include "ewise/detail/dense/plan.hpp"
#include "ewise/detail/device_props.hpp"
#include "ewise/error.hpp"
#include "ewise/reference.hpp"
#include "ewise/verify.hpp"
#include "element.hpp"
#include "testing/gpu_test.hpp"
#include "testing/layouts.hpp"
#include "testing/nan_bits.hpp"

namespace ewise {
namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}
bool small_mode() { return env_int("EWISE_DENSE_SMALL", 0) == 1; }

using test::DeviceOperand;
using test::for_each_offset;
using test::Layout;
using test::random_shapes;

/// The operations the same-dtype kernels run (add ... maximum), for the kernel sweeps.
constexpr BinaryOp kKernelOps[] = {BinaryOp::add,     BinaryOp::subtract, BinaryOp::multiply,
                                   BinaryOp::divide,  BinaryOp::minimum,  BinaryOp::maximum};

/// The i-th (cyclically) of kKernelOps for dtype t: divide is subtract for integer dtypes, whose
/// true division gives f64 and so runs the converting kernel (test_mixed.cu).
BinaryOp kernel_op(std::size_t i, DType t) {
  const BinaryOp op = kKernelOps[i % std::size(kKernelOps)];
  return op == BinaryOp::divide && !is_floating(t) ? BinaryOp::subtract : op;
}

// ---- one problem: operands, host copies, reference result -----------------------------------

struct Problem {
  BinaryOp op;
  DType dtype;
  DeviceOperand a, b, out;
  HostTensor want;
  std::uint64_t seed;
  bool in_place_a = false;  ///< out is a's view (a is then not separately allocated)

  Problem(BinaryOp op_, DType t, const Dims& as, const Layout& la, const Dims& bs, const Layout& lb,
          const Layout& lo, std::uint64_t seed_)
      : op(op_),
        dtype(t),
        a(t, as, la),
        b(t, bs, lb),
        out(t, broadcast_shapes(as, bs), lo),
        seed(seed_) {
    refill();
  }

  /// Fresh random inputs and the reference result.
  void refill() {
    verify::fill_random(a.view, seed);
    verify::fill_random(b.view, seed ^ 0x9E3779B97F4A7C15ull);
    const HostTensor ha = to_host(a.view), hb = to_host(b.view);
    want = HostTensor(dtype, out.view.desc.shape);
    reference_binary(op, ha.view(), hb.view(), want.view());
  }

  std::string describe(const DenseOptions& o) const {
    return detail::concat(op_name(op), " ", dtype_name(dtype), " kernel ", kernel_name(o.kernel),
                          " (factor ", o.sliding_factor, " threads ", o.threads, " blocks ",
                          o.blocks, ") a ", a.str(), " b ", b.str(), " out ", out.str(), " seed ",
                          seed);
  }
};

/// Runs the problem with `o` on a poisoned output buffer; returns "" or what went wrong: wrong
/// values (the harness report) or a write outside the output view.
std::string run_and_check(Problem& p, const DenseOptions& o, cudaStream_t stream = nullptr) {
  verify::poison(p.out.whole(), stream);
  binary(p.op, p.a.view, p.b.view, p.out.view, o, stream);
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  const verify::CompareReport r =
      verify::compare(p.out.view, p.want.view(), verify::Tolerance{}, stream);
  if (!r.ok()) return p.describe(o) + ": " + r.str();
  // Every element of the buffer outside the view still holds the poison.
  const HostTensor whole = to_host(p.out.whole(), stream);
  std::vector<char> inside(static_cast<std::size_t>(p.out.buffer_elements), 0);
  for_each_offset(p.out.view.desc.shape, p.out.view.desc.strides, p.out.base,
                  [&](std::int64_t off) { inside[static_cast<std::size_t>(off)] = 1; });
  const auto* bytes = static_cast<const std::byte*>(whole.data());
  const std::size_t elem = dtype_size(p.dtype);
  for (std::int64_t i = 0; i < p.out.buffer_elements; ++i)
    if (!inside[static_cast<std::size_t>(i)] && !verify::is_poison(p.dtype, bytes + i * elem))
      return p.describe(o) + ": wrote buffer element " + std::to_string(i) +
             " outside the output view";
  return "";
}

/// Runs every kernel that supports the problem (automatic included) with options `o`; returns
/// the number of kernels run. Failures are reported through gtest.
int check_all_kernels(Problem& p, DenseOptions o = {}, std::initializer_list<Kernel> only = {}) {
  int ran = 0;
  for (Kernel k : kAllKernels) {
    if (only.size() && std::find(only.begin(), only.end(), k) == only.end()) continue;
    if (!kernel_supports(k, p.a.view, p.b.view, p.out.view)) continue;
    o.kernel = k;
    const std::string failure = run_and_check(p, o);
    EXPECT_EQ(failure, "");
    ++ran;
  }
  return ran;
}

std::uint64_t test_seed() {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed     ] EWISE_SEED=" << seed << "\n";
  return seed;
}

// ---- random broadcasts of random layouts -----------------------------------------------------

class DenseRandom : public ::testing::TestWithParam<DType> {};

TEST_P(DenseRandom, EveryKernelAgainstReference) {
  EWISE_REQUIRE_GPU();
  const DType t = GetParam();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed ^ static_cast<std::uint64_t>(t));
  const int cases = env_int("EWISE_DENSE_CASES", 200);
  int runs = 0, by_kernel[sizeof kAllKernels / sizeof kAllKernels[0]] = {};
  for (int i = 0; i < cases; ++i) {
    Dims as, bs;
    random_shapes(rng, &as, &bs);
    if (i % 10 == 9) {  // every tenth case a matrix-vector one, so that every kernel is met
      const std::int64_t m = 1 + static_cast<std::int64_t>(rng() % 300),
                         n = 2 + static_cast<std::int64_t>(rng() % 300);
      as = {m, n};
      bs = rng() % 2 ? Dims{1, n} : Dims{m, 1};
      if (rng() % 2) std::swap(as, bs);
    }
    const int rank = broadcast_shapes(as, bs).size();
    const bool plain =
        i % 20 == 9;  // half of those contiguous (the d2ltvm and Knet kernels need it)
    Problem p(kernel_op(static_cast<std::size_t>(i), t), t, as,
              plain ? Layout::contiguous(as.size()) : Layout::random(as.size(), rng), bs,
              plain ? Layout::contiguous(bs.size()) : Layout::random(bs.size(), rng),
              plain ? Layout::contiguous(rank) : Layout::random(rank, rng), rng());
    for (Kernel k : kAllKernels) {
      if (!kernel_supports(k, p.a.view, p.b.view, p.out.view)) continue;
      DenseOptions o;
      o.kernel = k;
      EXPECT_EQ(run_and_check(p, o), "") << "case " << i;
      ++runs;
      ++by_kernel[static_cast<int>(k)];
    }
    if (HasFailure()) break;  // one failing case is enough to debug
  }
  std::ostringstream os;
  for (Kernel k : kAllKernels) os << " " << kernel_name(k) << "=" << by_kernel[static_cast<int>(k)];
  std::cout << "[ cases    ] " << dtype_name(t) << ": " << cases << " cases, " << runs
            << " kernel runs:" << os.str() << "\n";
  // Every kernel met at least one random case (the generator covers all of them).
  if (cases >= 200)
    for (Kernel k : kAllKernels) EXPECT_GT(by_kernel[static_cast<int>(k)], 0) << kernel_name(k);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, DenseRandom, ::testing::ValuesIn(test::sweep_dtypes()),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

// ---- edges ---------------------------------------------------------------------------------

/// Extents at warp and tile edges (tiles are 32 wide for 8-byte types, 64 otherwise); fewer
/// under the sanitizers.
std::vector<std::int64_t> edges() {
  if (test::sanitizer_sizes()) return {1, 31, 33, 65};
  return {1, 31, 32, 33, 63, 64, 65};
}

/// Matrix-vector shapes at tile edges: row vector, column vector, transposed matrix + row vector.
void matrix_vector_edges(DType t, std::uint64_t seed, std::initializer_list<Kernel> only,
                         const DenseOptions& o = {},
                         const std::vector<std::int64_t>& extents = edges()) {
  int i = 0;
  for (std::int64_t m : extents)
    for (std::int64_t n : extents)
      for (int pattern = 0; pattern < 3; ++pattern) {
        const Dims vec = pattern == 1 ? Dims{m, 1} : Dims{1, n};
        const Layout mat_layout = pattern == 2 ? Layout::transposed(2) : Layout::contiguous(2);
        const BinaryOp op = kernel_op(static_cast<std::size_t>(i++), t);
        // The vector as a or as b: the non-commutative ops see both orders.
        Problem p1(op, t, {m, n}, mat_layout, vec, Layout::contiguous(2), Layout::contiguous(2),
                   seed + i);
        check_all_kernels(p1, o, only);
        Problem p2(op, t, vec, Layout::contiguous(2), {m, n}, mat_layout, Layout::contiguous(2),
                   seed + i);
        check_all_kernels(p2, o, only);
      }
}

TEST(DenseGpu, MatrixVectorTileEdges) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes())
    matrix_vector_edges(t, seed,
                        {Kernel::automatic, Kernel::general, Kernel::sliding, Kernel::continuous,
                         Kernel::alternate, Kernel::baseline, Kernel::row_vectorized});
}

TEST(DenseGpu, SlidingSharedTileEdges) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes()) matrix_vector_edges(t, seed, {Kernel::sliding_shared});
  for (int factor : {1, 3}) {
    for (int threads : {32, 96, 1024}) {
      DenseOptions o;
      o.sliding_factor = factor;
      o.threads = threads;
      matrix_vector_edges(DType::f32, seed, {Kernel::sliding_shared}, o, {1, 33, 65});
    }
  }
}

TEST(DenseGpu, TiledTileEdges) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes()) {
    matrix_vector_edges(t, seed, {Kernel::tiled});
    // Both inputs transposed, a batch dim in front, edges of both tile dims.
    for (std::int64_t m : edges())
      for (std::int64_t n : edges()) {
        Problem p(BinaryOp::sub, t, {3, m, n},
                  Layout{{0, 2, 1}, {1, 1, 1}, {false, false, false}, 0}, {3, m, n},
                  Layout{{2, 1, 0}, {1, 1, 1}, {false, false, false}, 1}, Layout::contiguous(3),
                  seed + m * 100 + n);
        check_all_kernels(p, {}, {Kernel::tiled, Kernel::automatic});
      }
  }
  for (int threads : {32, 64, 1024}) {  // tiled ignores threads: always 32 x 8
    DenseOptions o;
    o.threads = threads;
    o.blocks = threads == 64 ? 3 : 0;
    matrix_vector_edges(DType::f64, seed, {Kernel::tiled}, o, {1, 33, 65});
  }
  // More row tiles than one band (16 tiles), and a partial last band: 1100 rows are 18 tiles of
  // 64 (f32) and 35 tiles of 32 (f64).
  for (DType t : {DType::f32, DType::f64, DType::bf16}) {
    Problem p(BinaryOp::div, t, {1100, 130}, Layout::transposed(2), {130}, Layout::contiguous(1),
              Layout::contiguous(2), seed);
    EXPECT_EQ(check_all_kernels(p, {}, {Kernel::tiled, Kernel::automatic}), 2);
  }
}

/// Rows (the tiled dim) and columns of the tiled kernel's 16-byte-path tiles for dtype t.
std::pair<std::int64_t, std::int64_t> vector_tile(DType t) {
  return detail::dispatch_dtype(t, [](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr detail::TileShape S = detail::tile_shape(sizeof(T), true);
    return std::pair<std::int64_t, std::int64_t>{S.rows(), S.cols()};
  });
}

/// Runs p with the tiled kernel and automatic, after checking whether the plan takes the tiled
/// kernel's 16-byte path and which kernel automatic picks (`pick`; automatic: not checked).
void check_tiled(Problem& p, bool vector_path, Kernel pick = Kernel::tiled) {
  DenseOptions o;
  o.kernel = Kernel::tiled;
  const detail::DensePlan L =
      detail::plan_dense(p.a.view, p.b.view, p.out.view, o, detail::current_device_props());
  EXPECT_EQ(L.tiled.vector, vector_path) << p.describe(o);
  if (pick != Kernel::automatic)
    EXPECT_EQ(select_kernel(p.a.view, p.b.view, p.out.view), pick) << p.describe(o);
  EXPECT_EQ(check_all_kernels(p, {}, {Kernel::tiled, Kernel::automatic}), 2) << p.describe(o);
}

// The tiled kernel's 16-byte path (one transposed input staged through shared memory, 16-byte
// loads and stores, register transposes) and its element-wise fallback, every dtype: both tiled
// extents at the vector width and around the tile edges, the other input a row vector, a column
// vector, a scalar or a full matrix (as a and as b), a batch dim, more row tiles than a band,
// +1-element misalignment of each operand, extents off the vector width, both inputs
// transposed, in place.
TEST(DenseGpu, TiledVectorPath) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::uint64_t k = 0;
  for (DType t : test::sweep_dtypes()) {
    const std::int64_t V = 16 / static_cast<std::int64_t>(dtype_size(t));
    const auto [R, C] = vector_tile(t);
    const std::pair<std::int64_t, std::int64_t> extents[] = {
        {V, C + V}, {R - V, C}, {R, V}, {R + V, C - V}, {3 * R + V, C + V}};
    const Layout tr = Layout::transposed(2), row_major = Layout::contiguous(2);
    for (const auto& [m, n] : extents) {
      for (const Dims& other : {Dims{1, n}, Dims{m, 1}, Dims{}, Dims{m, n}}) {
        const Layout lo = Layout::contiguous(other.size());
        // automatic tiles extents of at least 16 (kMinTiledExtent)
        const Kernel pick = m >= detail::kMinTiledExtent && n >= detail::kMinTiledExtent
                                ? Kernel::tiled
                                : Kernel::automatic;
        Problem as_a(kernel_op(k, t), t, {m, n}, tr, other, lo, row_major, seed + k);
        check_tiled(as_a, true, pick);
        Problem as_b(kernel_op(k, t), t, other, lo, {m, n}, tr, row_major, seed + k + 1);
        check_tiled(as_b, true, pick);
        ++k;
      }
    }
    const std::int64_t m = R + V, n = C + V;
    // A batch dim: (3, m, n) transposed in its last two dims plus (3, 1, n).
    Problem batch(BinaryOp::mul, t, {3, m, n},
                  Layout{{0, 2, 1}, {1, 1, 1}, {false, false, false}, 0}, {3, 1, n},
                  Layout::contiguous(3), Layout::contiguous(3), seed + ++k);
    check_tiled(batch, true);
    // Misaligned by one element: a, the other input, the output: element-wise tiles.
    for (int which = 0; which < 3; ++which) {
      Layout la = tr, lb = Layout::contiguous(2), lo = row_major;
      (which == 0 ? la : which == 1 ? lb : lo).offset = 1;
      Problem p(BinaryOp::sub, t, {m, n}, la, {1, n}, lb, lo, seed + ++k);
      check_tiled(p, false);
      Problem full(kernel_op(3, t), t, {m, n}, la, {m, n}, lb, lo, seed + ++k);
      check_tiled(full, false);
    }
    // Extents off the vector width; both inputs transposed: element-wise tiles.
    Problem odd_rows(BinaryOp::max, t, {R + 1, n}, tr, {1, n}, Layout::contiguous(2), row_major,
                     seed + ++k);
    check_tiled(odd_rows, false);
    Problem odd_cols(BinaryOp::min, t, {m, C - 1}, tr, {1, C - 1}, Layout::contiguous(2), row_major,
                     seed + ++k);
    check_tiled(odd_cols, false);
    Problem both(BinaryOp::add, t, {m, n}, tr, {m, n}, tr, row_major, seed + ++k);
    check_tiled(both, false);
  }
  // More row tiles than a band (16 tiles) and a partial last band, several column tiles.
  for (DType t : {DType::f32, DType::bf16}) {
    const std::int64_t V = 16 / static_cast<std::int64_t>(dtype_size(t));
    const auto [R, C] = vector_tile(t);
    Problem p(BinaryOp::add, t, {17 * R + V, 2 * C + V}, Layout::transposed(2), {1, 2 * C + V},
              Layout::contiguous(2), Layout::contiguous(2), seed + ++k);
    check_tiled(p, true);
  }
  // In place: the output is the full (row-major) input, the other input transposed.
  for (DType t : test::sweep_dtypes()) {
    const auto [R, C] = vector_tile(t);
    for (Kernel kernel : {Kernel::tiled, Kernel::automatic}) {
      DeviceOperand self(t, {R + 16, C}, Layout::contiguous(2));
      DeviceOperand other(t, {R + 16, C}, Layout::transposed(2));
      verify::fill_random(self.view, seed + 1);
      verify::fill_random(other.view, seed + 2);
      const HostTensor ha = to_host(other.view), hb = to_host(self.view);
      HostTensor want(t, {R + 16, C});
      reference_binary(BinaryOp::sub, ha.view(), hb.view(), want.view());
      EXPECT_TRUE(detail::plan_dense(other.view, self.view, self.view, {Kernel::tiled},
                                     detail::current_device_props())
                      .tiled.vector);
      binary(BinaryOp::sub, other.view, self.view, self.view, {kernel});
      const verify::CompareReport r = verify::compare(self.view, want.view(), verify::Tolerance{});
      EXPECT_TRUE(r.ok()) << "in place " << dtype_name(t) << " " << kernel_name(kernel) << ": "
                          << r.str();
    }
  }
}

TEST(DenseGpu, VectorEdgesAndMisalignment) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes()) {
    const std::int64_t V = 16 / static_cast<std::int64_t>(dtype_size(t));
    for (std::int64_t n :
         {std::int64_t{1}, V - 1, V, V + 1, 2 * V - 1, 2 * V + 1, 4 * V + 3, std::int64_t{1003}}) {
      if (n < 1) continue;
      for (int offsets = 0; offsets < 4; ++offsets) {  // none, all +1, only a +1, only out +1
        const int oa = offsets == 1 || offsets == 2, ob = offsets == 1,
                  oo = offsets == 1 || offsets == 3;
        Problem same(kernel_op(3, t), t, {n}, Layout::contiguous(1, oa), {n},
                     Layout::contiguous(1, ob), Layout::contiguous(1, oo), seed + n);
        EXPECT_GT(check_all_kernels(same), 2);
        Problem scalar(BinaryOp::max, t, {}, Layout::contiguous(0, ob), {n},
                       Layout::contiguous(1, oa), Layout::contiguous(1, oo), seed + n);
        EXPECT_GT(check_all_kernels(scalar), 2);
        // Rows at the vector width: bias add and column broadcast, 1 and 5 rows.
        for (std::int64_t rows : {1, 5}) {
          Problem bias(BinaryOp::add, t, {rows, n}, Layout::contiguous(2, oa), {n},
                       Layout::contiguous(1, ob), Layout::contiguous(2, oo), seed + rows);
          check_all_kernels(bias);
          Problem column(BinaryOp::sub, t, {rows, 1}, Layout::contiguous(2, ob), {rows, n},
                         Layout::contiguous(2, oa), Layout::contiguous(2, oo), seed + rows);
          check_all_kernels(column);
        }
      }
    }
  }
}

/// Inputs laid out like the output at every offset within 16 bytes from it (gathered by the
/// vectorized kernel, element-wise rows in row_vectorized), each of the output's offsets, and
/// lengths just past two and three vectors.
TEST(DenseGpu, InputsAtEveryOffsetWithin16Bytes) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes()) {
    const int V = 16 / static_cast<int>(dtype_size(t));
    for (std::int64_t n : {std::int64_t{2} * V + 1, std::int64_t{3} * V + 2, std::int64_t{1003}})
      for (int oo = 0; oo < V; ++oo)
        for (int oa = 0; oa < V; ++oa) {
          const int ob = (oa + 1) % V;
          const BinaryOp op = kernel_op(static_cast<std::size_t>(oa + oo), t);
          Problem p(op, t, {n}, Layout::contiguous(1, oa), {n}, Layout::contiguous(1, ob),
                    Layout::contiguous(1, oo), seed + static_cast<std::uint64_t>(n * V + oa));
          EXPECT_GE(check_all_kernels(p), 3) << p.describe({});
        }
  }
}

/// The vectorized kernel across rows: ML shapes whose rows are not whole aligned 16-byte
/// vectors (odd widths, a vocabulary-sized row, NCHW planes of 7x7 to 55x55, outer products
/// with an odd inner extent, a rank-5 mixed broadcast), the output at a 16-byte boundary and one
/// element past it, the full operand at the output's offset and at another (then gathered).
/// Every dtype and op; automatic must pick vectorized for each.
TEST(DenseGpu, VectorizedAcrossRows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  struct Shape {
    Dims a, b;
  };
  const Shape shapes[] = {
      {{64, 1}, {1, 1}},   {{64, 3}, {1, 3}},   {{37, 7}, {7}},         {{29, 49}, {29, 1}},
      {{40, 999}, {999}},  {{9, 1000}, {9, 1}}, {{3, 50257}, {50257}},  {{63, 1}, {1, 33}},
      {{2, 16, 7, 7}, {1, 16, 1, 1}},           {{2, 8, 14, 14}, {8, 1, 1}},
      {{1, 4, 55, 55}, {1, 4, 1, 1}},           {{3, 1, 5, 1, 7}, {1, 4, 1, 6, 1}},
  };
  for (DType t : test::sweep_dtypes())
    for (const Shape& sh : shapes)
      for (int offsets = 0; offsets < 3; ++offsets) {  // none; out and a +1; only out +1
        const int oa = offsets == 1, oo = offsets >= 1;
        const BinaryOp op = kernel_op(static_cast<std::size_t>(offsets + sh.a.size()), t);
        Problem p(op, t, sh.a, Layout::contiguous(sh.a.size(), oa), sh.b,
                  Layout::contiguous(sh.b.size()), Layout::contiguous(broadcast_shapes(sh.a, sh.b).size(), oo),
                  seed + static_cast<std::uint64_t>(sh.a.product()));
        // Rows of whole aligned vectors (after coalescing) stay with row_vectorized.
        const detail::DensePlan plan = detail::plan_dense(p.a.view, p.b.view, p.out.view, {},
                                                          detail::current_device_props());
        const bool whole_rows = plan.kernel == Kernel::row_vectorized && plan.row.vector > 1;
        const bool wide_elements = dtype_size(t) >= 4;  // may run element-wise rows (select)
        EXPECT_TRUE(plan.kernel == Kernel::vectorized || whole_rows ||
                    (wide_elements && plan.kernel == Kernel::row_vectorized))
            << kernel_name(plan.kernel) << " for " << p.describe({});
        check_all_kernels(p, {}, {Kernel::vectorized, Kernel::automatic});
        // The operands swapped: the gathered input is a.
        Problem q(op, t, sh.b, Layout::contiguous(sh.b.size()), sh.a,
                  Layout::contiguous(sh.a.size(), oa), Layout::contiguous(broadcast_shapes(sh.a, sh.b).size(), oo),
                  seed + 1);
        check_all_kernels(q, {}, {Kernel::vectorized});
      }
}

/// `op` on contiguous inputs of shapes a and b at element offsets oa and ob (swapped where
/// `swap`: b's shape and offset first) into a contiguous output at element offset oo.
Problem pair_problem(BinaryOp op, DType t, const Dims& a, int oa, const Dims& b, int ob, int oo,
                     bool swap, std::uint64_t seed) {
  const Dims& x = swap ? b : a;
  const Dims& y = swap ? a : b;
  const int rank = static_cast<int>(broadcast_shapes(a, b).size());
  return Problem(op, t, x, Layout::contiguous(x.size(), swap ? ob : oa), y,
                 Layout::contiguous(y.size(), swap ? oa : ob), Layout::contiguous(rank, oo), seed);
}

/// The vectorized kernel, on a grid of two blocks of 64 threads where `small_grid` (each warp
/// loops over many chunks), else on the planner's grid.
DenseOptions vectorized_options(bool small_grid) {
  DenseOptions o;
  o.kernel = Kernel::vectorized;
  if (small_grid) {
    o.blocks = 2;
    o.threads = 64;
  }
  return o;
}

/// Elements of a warp's chunk in the vectorized kernel for dtype t, and the longest row for
/// which it builds no row table at any rank (VectorizedPlan::row_table).
std::pair<std::int64_t, std::int64_t> vector_chunk(DType t) {
  const auto size = static_cast<int>(dtype_size(t));
  const std::int64_t chunk = 32 * detail::vector_unroll(size) * (16 / size);
  return {chunk, (chunk - 2) / 31};
}

/// The vectorized kernel's gathering by rows (VectorizedPlan::rows): row lengths at the vector
/// width, on both sides of the row table's bound (rank 4) and around kLongRow (the lanes whose vector
/// crosses a row end read the next row; short rows every lane), a row vector (inner stride 1), a
/// column and a per-channel value (inner stride 0), an outer product (both gathered), a rank-4
/// mix, the output or an input one element past a 16-byte boundary, each operand order, and a
/// grid of two blocks (each warp's loop over many chunks rebuilds its row table). Rows shorter
/// than a vector, a stepped or reversed inner dim gather element by element: the planner's rules
/// are checked on both sides.
TEST(DenseGpu, VectorizedGathersByRows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes()) {
    const std::int64_t V = 16 / static_cast<std::int64_t>(dtype_size(t));
    const std::int64_t L = detail::kLongRow, T = vector_chunk(t).second;
    for (std::int64_t n : {V, V + 1, 3 * V - 1, T, T + 1, L - 1, L, L + 1, L + V + 3}) {
      const std::int64_t m = n >= L ? 9 : 37;
      struct Shape {
        Dims a, b;
      };
      const Shape shapes[] = {{{m, n}, {n}},          {{m, n}, {m, 1}},
                              {{m, 1}, {1, n}},       {{3, 5, n}, {1, 5, 1}},
                              {{2, 1, 3, n}, {1, 4, 1, n}},     {{16, 1, 9, n}, {1, 12, 1, n}}};
      for (const Shape& sh : shapes)
        for (int offsets = 0; offsets < 3; ++offsets) {  // none; out and a +1; only b +1
          const int oa = offsets == 1, ob = offsets == 2, oo = offsets == 1;
          const auto u = static_cast<std::uint64_t>(n * 8 + offsets);
          for (bool swap : {false, true}) {
            const BinaryOp op = kernel_op(static_cast<std::size_t>(u + swap), t);
            Problem p = pair_problem(op, t, sh.a, oa, sh.b, ob, oo, swap, seed + u);
            const DenseOptions o = vectorized_options(u % 3 == 0);
            const detail::DensePlan plan = detail::plan_dense(
                p.a.view, p.b.view, p.out.view, o, detail::current_device_props());
            EXPECT_EQ(plan.vectorized.rows, plan.vectorized.gathers()) << p.describe(o);
            EXPECT_EQ(plan.vectorized.row_table, plan.vectorized.gathers() && n > T &&
                                                     plan.plan.rank() >= detail::kRowTableRank)
                << p.describe(o);
            EXPECT_EQ(run_and_check(p, o), "");
          }
        }
    }
    // Rows shorter than a vector, and an input stepping by 2 or reversed along the row: gather,
    // at rank 2 and, with a row table where the rows allow one, at rank 4.
    const auto along = [](int rank, bool reverse) {
      Layout l = Layout::contiguous(rank);
      if (reverse) l.reverse[rank - 1] = true;
      else l.step[rank - 1] = 2;
      return l;
    };
    struct Rejected {
      Dims a;
      Layout layout;
      Dims b;
    };
    const Rejected rejected[] = {
        {{64, V - 1}, Layout::contiguous(2), {64, 1}},
        {{64, 3 * V + 1}, along(2, false), {64, 1}},
        {{64, 3 * V + 1}, along(2, true), {64, 1}},
        {{300, T + 5}, along(2, false), {300, 1}},
        {{7, 1, 3, V + 1}, along(4, false), {1, 4, 3, 1}},
        {{7, 1, 3, T + 5}, along(4, false), {1, 4, 3, 1}},
        {{5, 1, 3, L + 3}, along(4, true), {1, 4, 3, 1}}};
    for (const Rejected& r : rejected) {
      const int rank = static_cast<int>(r.a.size());
      if (r.a[rank - 1] < 2) continue;  // f64: a row of one element coalesces away
      Problem p(BinaryOp::sub, t, r.a, r.layout, r.b, Layout::contiguous(rank),
                Layout::contiguous(rank), seed + 7);
      DenseOptions o;
      o.kernel = Kernel::vectorized;
      const detail::DensePlan plan =
          detail::plan_dense(p.a.view, p.b.view, p.out.view, o, detail::current_device_props());
      EXPECT_TRUE(plan.vectorized.gathers() && !plan.vectorized.rows) << p.describe(o);
      EXPECT_EQ(plan.plan.rank(), rank) << p.describe(o);
      EXPECT_EQ(plan.vectorized.row_table, rank >= detail::kRowTableRank && r.a[rank - 1] > T)
          << p.describe(o);
      EXPECT_EQ(run_and_check(p, o), "");
    }
  }
}

/// The vectorized kernel's segments of long rows (VectorizedPlan::segments): rows around
/// segment_min_vectors and longer ones, a row vector, a column, an outer
/// product, a per-channel value and a rank-4 mix with one input along the rows, each operand
/// order, the output and each input at offsets that give every shift of the stride-1 input,
/// and grids of two blocks (each warp's range runs over many rows; the planner's grid gives
/// ranges that start and end inside rows). Two inputs along the rows, or
/// rows one element short, keep the rows mode: the planner's rule is checked on both sides.
TEST(DenseGpu, VectorizedSegmentsOfLongRows) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes()) {
    const int size = static_cast<int>(dtype_size(t));
    const std::int64_t V = 16 / size, S = detail::segment_min_vectors(size) * V;
    int runs = 0;  // calls that ran by segments
    for (std::int64_t n : {S - 1, S, S + 1, 4 * S + 3, 9 * S - V + 1}) {
      struct Shape {
        Dims a, b;
      };
      const Shape shapes[] = {{{5, n}, {n}},          {{4, n}, {4, 1}},
                              {{6, 1}, {1, n}},       {{2, 3, n}, {1, 3, 1}},
                              {{2, 1, 3, n}, {1, 4, 3, 1}}, {{2, 1, 2, n}, {1, 3, 1, n}}};
      for (const Shape& sh : shapes)
        for (std::int64_t k = 0; k < 2 * V; ++k) {
          // b at every offset from the output; a at the output's offset or one past it.
          const int oo = static_cast<int>(k / 2 % 2), ob = static_cast<int>(k / 2),
                    oa = oo + static_cast<int>(k % 2);
          const auto u = static_cast<std::uint64_t>(n * 16 + k);
          for (bool swap : {false, true}) {
            const BinaryOp op = kernel_op(static_cast<std::size_t>(u + swap), t);
            Problem p = pair_problem(op, t, sh.a, oa, sh.b, ob, oo, swap, seed + u);
            const DenseOptions o = vectorized_options(k % 3 == 0);
            const detail::DensePlan plan = detail::plan_dense(
                p.a.view, p.b.view, p.out.view, o, detail::current_device_props());
            const detail::VectorizedPlan& v = plan.vectorized;
            const BroadcastPlan& q = plan.plan;
            const int r = q.rank() - 1;
            const int along = (v.a == detail::VectorAccess::gather && q.strides[1][r] == 1) +
                              (v.b == detail::VectorAccess::gather && q.strides[2][r] == 1);
            EXPECT_EQ(v.segments, v.rows && along <= 1 && q.shape[r] >= S) << p.describe(o);
            EXPECT_FALSE(v.segments && v.row_table) << p.describe(o);
            runs += v.segments;
            EXPECT_EQ(run_and_check(p, o), "");
          }
        }
    }
    EXPECT_GT(runs, 100) << dtype_name(t);
  }
}

/// Vectors (of 16 bytes) per chunk of the row_vectorized kernel for dtype t.
std::int64_t row_chunk_vectors(DType t) {
  return detail::dispatch_dtype(t, [](auto tag) -> std::int64_t {
    return 32 * detail::vector_unroll(sizeof(typename decltype(tag)::type));
  });
}

// Rows of lengths around the row_vectorized chunk (32 * unroll vectors): runs mode (a chunk in
// one row, partial last chunks: C - 1, C, 8C + 1 vectors) and slot mode (C + 1, 4 vectors; a
// chunk spans rows), for bias add, column broadcast and a 3-d mixed broadcast, aligned and +1.
TEST(DenseGpu, RowVectorizedChunkEdges) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes()) {
    const std::int64_t V = 16 / static_cast<std::int64_t>(dtype_size(t)), C = row_chunk_vectors(t);
    for (std::int64_t per_row : {std::int64_t{4}, C - 1, C, C + 1, 8 * C + 1}) {
      const std::int64_t n = per_row * V;
      for (int off : {0, 1}) {
        Problem bias(BinaryOp::add, t, {3, n}, Layout::contiguous(2, off), {n},
                     Layout::contiguous(1), Layout::contiguous(2, off), seed + n);
        EXPECT_GT(check_all_kernels(bias, {}, {Kernel::row_vectorized, Kernel::automatic}), 1);
        Problem column(BinaryOp::mul, t, {3, 1}, Layout::contiguous(2), {3, n},
                       Layout::contiguous(2, off), Layout::contiguous(2), seed + n + 1);
        EXPECT_GT(check_all_kernels(column, {}, {Kernel::row_vectorized, Kernel::automatic}), 1);
        Problem mixed(BinaryOp::sub, t, {2, 1, n}, Layout::contiguous(3), {1, 3, n},
                      Layout::contiguous(3, off), Layout::contiguous(3, off), seed + n + 2);
        EXPECT_GT(check_all_kernels(mixed, {}, {Kernel::row_vectorized, Kernel::automatic}), 1);
      }
    }
  }
}

// f16/bf16 add, sub and mul run as packed pairs (add.rn.bf16x2 ...) in the vectorized kernels;
// they must give the bits of the f32 compute path (and so of the reference) on every input: all
// 65536 patterns (subnormals, +-0, inf, NaN, overflow, underflow) against random patterns, same
// shape, a row vector, a scalar, aligned and +1; compared bit for bit (signed zeros included,
// and every NaN the canonical 0x7FFF, ops.hpp).
TEST(DenseGpu, HalfPatternsBitExact) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t rows = 257, cols = 256;  // 65536 patterns and one more row
  for (DType t : {DType::f16, DType::bf16}) {
    for (BinaryOp op : kKernelOps) {
      for (int shape = 0; shape < 3; ++shape) {
        const Dims bs = shape == 0 ? Dims{rows, cols} : shape == 1 ? Dims{1, cols} : Dims{};
        for (int off : {0, 1}) {
          Problem p(op, t, {rows, cols}, Layout::contiguous(2, off), bs,
                    Layout::contiguous(bs.size(), off), Layout::contiguous(2, off), seed);
          HostTensor ha(t, p.a.view.desc.shape), hb(t, bs);
          auto* ua = static_cast<std::uint16_t*>(ha.data());
          auto* ub = static_cast<std::uint16_t*>(hb.data());
          for (std::int64_t i = 0; i < rows * cols; ++i) ua[i] = static_cast<std::uint16_t>(i);
          for (std::int64_t i = 0; i < hb.view().desc.numel(); ++i)
            ub[i] = static_cast<std::uint16_t>(rng());
          EWISE_CUDA_CHECK(
              cudaMemcpy(p.a.view.data, ha.data(), ha.bytes(), cudaMemcpyHostToDevice));
          EWISE_CUDA_CHECK(
              cudaMemcpy(p.b.view.data, hb.data(), hb.bytes(), cudaMemcpyHostToDevice));
          reference_binary(op, ha.view(), hb.view(), p.want.view());
          const auto* want = static_cast<const std::uint16_t*>(p.want.data());
          for (Kernel k : {Kernel::automatic, Kernel::vectorized, Kernel::row_vectorized}) {
            if (!kernel_supports(k, p.a.view, p.b.view, p.out.view)) continue;
            DenseOptions o;
            o.kernel = k;
            verify::poison(p.out.whole());
            binary(op, p.a.view, p.b.view, p.out.view, o);
            const HostTensor got = to_host(p.out.view);
            const auto* g = static_cast<const std::uint16_t*>(got.data());
            std::int64_t bad = 0, first = -1;
            for (std::int64_t i = 0; i < rows * cols; ++i)
              if (g[i] != want[i] && bad++ == 0) first = i;
            const std::int64_t first_b = shape == 0 ? first : shape == 1 ? first % cols : 0;
            EXPECT_EQ(bad, 0) << p.describe(o) << ": first at " << first << ": a 0x" << std::hex
                              << ua[first] << " b 0x" << ub[first_b] << " got 0x" << g[first]
                              << " want 0x" << want[first] << std::dec;
          }
        }
      }
    }
  }
}

// ops.hpp's NaN rule in every kernel: inputs holding NaNs of random sign and payload (and
// infinities and zeros, so that operations make NaNs) give the reference's bits, every NaN the
// canonical one (compare() matches NaN only against the same bits). Same shape, row and column
// vectors, a scalar, a transposed operand and misaligned views; every op, every kernel that runs
// the layout, every floating dtype.
TEST(DenseGpu, NaNResultsAreCanonical) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  const std::int64_t m = 67, n = 130;
  struct Shapes {
    Dims a, b;
    Layout la, lb;
  };
  const Shapes shapes[] = {{{m, n}, {m, n}, Layout::contiguous(2), Layout::contiguous(2)},
                           {{m, n}, {1, n}, Layout::contiguous(2, 1), Layout::contiguous(2)},
                           {{m, 1}, {m, n}, Layout::contiguous(2), Layout::contiguous(2, 1)},
                           {{m, n}, {}, Layout::contiguous(2), Layout::contiguous(0)},
                           {{m, n}, {m, n}, Layout::transposed(2), Layout::contiguous(2)}};
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    for (const Shapes& sh : shapes) {
      for (BinaryOp op : kKernelOps) {
        Problem p(op, t, sh.a, sh.la, sh.b, sh.lb, Layout::contiguous(2), rng());
        for (DeviceOperand* x : {&p.a, &p.b}) {  // NaNs, infinities and zeros over the whole buffer
          HostTensor h = verify::random_tensor(t, Dims{x->buffer_elements}, rng());
          test::sprinkle_nans(t, h.data(), h.numel(), 0.15, rng);
          EWISE_CUDA_CHECK(cudaMemcpy(x->buf.data(), h.data(), h.bytes(), cudaMemcpyHostToDevice));
        }
        const HostTensor ha = to_host(p.a.view), hb = to_host(p.b.view);
        reference_binary(op, ha.view(), hb.view(), p.want.view());
        std::int64_t nans = 0;
        const auto es = static_cast<std::int64_t>(dtype_size(t));
        for (std::int64_t i = 0; i < p.want.numel(); ++i)
          nans += test::is_nan_bits(t, static_cast<const std::byte*>(p.want.data()) + i * es);
        ASSERT_GT(nans, 0) << p.describe({}) << ": no NaN to check";
        EXPECT_GT(check_all_kernels(p), 1) << p.describe({});
      }
    }
  }
}

TEST(DenseGpu, EmptyOutputsWriteNothing) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (const auto& [as, bs] : {std::pair<Dims, Dims>{{0, 33}, {1, 33}},
                               {{33, 0}, {33, 1}},
                               {{0}, {1}},
                               {{4, 0, 3}, {4, 1, 3}}}) {
    Problem p(BinaryOp::add, DType::f32, as, Layout::contiguous(as.size()), bs,
              Layout::contiguous(bs.size()), Layout::contiguous(as.size()), seed);
    for (Kernel k : kAllKernels) {
      DenseOptions o;
      o.kernel = k;
      EXPECT_EQ(run_and_check(p, o), "");  // checks that the buffer stays poisoned
    }
  }
}

TEST(DenseGpu, RankZeroAndRankEight) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : test::sweep_dtypes()) {
    Problem scalar(BinaryOp::mul, t, {}, Layout::contiguous(0), {}, Layout::contiguous(0),
                   Layout::contiguous(0), seed);
    EXPECT_GE(check_all_kernels(scalar), 4);
    const Dims a8{2, 1, 3, 1, 2, 3, 1, 5}, b8{1, 4, 3, 2, 1, 3, 2, 1};
    std::vector<int> perm{7, 6, 5, 4, 3, 2, 1, 0};
    Layout la = Layout::contiguous(8);
    la.perm = perm;
    la.reverse[3] = true;
    Layout lo = Layout::contiguous(8, 1);
    lo.step[7] = 2;
    Problem rank8(BinaryOp::sub, t, a8, la, b8, Layout::contiguous(8), lo, seed);
    EXPECT_GE(check_all_kernels(rank8), 2);
  }
}

// ---- in-place ------------------------------------------------------------------------------

TEST(DenseGpu, InPlace) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  struct Pattern {
    Dims self, other;
    Layout layout;
  };
  std::mt19937_64 rng(seed);
  const Pattern patterns[] = {
      {{300, 67}, {300, 67}, Layout::contiguous(2)},
      {{300, 64}, {1, 64}, Layout::contiguous(2)},
      {{300, 64}, {300, 1}, Layout::contiguous(2, 1)},
      {{64, 48}, {1, 48}, Layout::transposed(2)},  // out and a the same transposed view
      {{5, 33, 34}, {33, 1}, Layout::random(3, rng)},
      {{300, 67}, {1, 67}, Layout::contiguous(2)},     // odd width: vectorized across rows
      {{300, 67}, {300, 1}, Layout::contiguous(2, 1)},  // and a misaligned start
      {{7, 1031}, {1, 1031}, Layout::contiguous(2, 1)},  // long odd rows: by segments
      {{7, 1031}, {7, 1}, Layout::contiguous(2)},
  };
  for (DType t : test::sweep_dtypes())
    for (const Pattern& pat : patterns)
      for (bool self_is_a : {true, false}) {
        for (Kernel k : kAllKernels) {
          // The output is the `self` operand's own view; fresh inputs for every kernel.
          DeviceOperand self(t, pat.self, pat.layout);
          DeviceOperand other(t, pat.other, Layout::contiguous(pat.other.size()));
          verify::fill_random(self.view, seed + 1);
          verify::fill_random(other.view, seed + 2);
          const BinaryOp op = self_is_a ? BinaryOp::sub : kernel_op(3, t);
          const ConstTensorView a =
              self_is_a ? ConstTensorView(self.view) : ConstTensorView(other.view);
          const ConstTensorView b =
              self_is_a ? ConstTensorView(other.view) : ConstTensorView(self.view);
          if (!kernel_supports(k, a, b, self.view)) continue;
          const HostTensor ha = to_host(a), hb = to_host(b);
          HostTensor want(t, pat.self);
          reference_binary(op, ha.view(), hb.view(), want.view());
          DenseOptions o;
          o.kernel = k;
          binary(op, a, b, self.view, o);
          const verify::CompareReport r =
              verify::compare(self.view, want.view(), verify::Tolerance{});
          EXPECT_TRUE(r.ok()) << "in place " << dtype_name(t) << " " << kernel_name(k) << " self "
                              << self.str() << (self_is_a ? " as a" : " as b")
                              << ": " << r.str();
        }
      }
}

// ---- tunables ------------------------------------------------------------------------------

TEST(DenseGpu, TunablesKeepResults) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : {DType::f32, DType::bf16, DType::i64}) {
    Problem row(BinaryOp::sub, t, {37, 45}, Layout::contiguous(2), {45}, Layout::contiguous(1),
                Layout::contiguous(2), seed);
    Problem col(kernel_op(3, t), t, {37, 1}, Layout::contiguous(2), {37, 45}, Layout::contiguous(2),
                Layout::contiguous(2), seed);
    std::mt19937_64 rng(seed);
    Problem nd(BinaryOp::max, t, {6, 1, 9, 1}, Layout::random(4, rng), {5, 1, 7},
               Layout::contiguous(3), Layout::contiguous(4), seed);
    const std::vector<int> factors =
        small_mode() ? std::vector<int>{0, 3} : std::vector<int>{0, 1, 2, 7, 1000};
    const std::vector<int> threads_list =
        small_mode() ? std::vector<int>{0, 64} : std::vector<int>{0, 32, 64, 1024};
    for (int factor : factors)
      for (int threads : threads_list)
        for (int blocks : {0, 1, 5}) {
          DenseOptions o;
          o.sliding_factor = factor;
          o.threads = threads;
          o.blocks = blocks;
          check_all_kernels(row, o);
          check_all_kernels(col, o);
          check_all_kernels(nd, o);
        }
  }
}

// ---- user functors (ewise/dense.cuh) ---------------------------------------------------------

/// x*x + y*y: no cancellation, so the reference in double is within tolerance for every dtype.
struct SumOfSquares {
  template <class C>
  __device__ C operator()(C x, C y) const {
    return x * x + y * y;
  }
};

/// Element i of a contiguous host tensor.
const std::byte* host_element(const HostTensor& h, std::int64_t i) {
  return static_cast<const std::byte*>(h.data()) + i * static_cast<std::int64_t>(dtype_size(h.dtype()));
}

TEST(DenseGpu, UserFunctorEveryKernel) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  std::mt19937_64 rng(seed);
  for (DType t : test::sweep_dtypes())
    for (int c = 0; c < 12; ++c) {
      Dims as, bs;
      random_shapes(rng, &as, &bs);
      DeviceOperand a(t, as, Layout::random(as.size(), rng)), b(t, bs, Layout::random(bs.size(), rng));
      const Dims shape = broadcast_shapes(as, bs);
      DeviceOperand out(t, shape, Layout::random(shape.size(), rng));
      verify::fill_random(a.view, seed + c);
      verify::fill_random(b.view, seed + c + 100);
      // The expected result in double, rounded once. a and b broadcast to the output's shape
      // through the reference (x + 0 == x), then x*x + y*y per element.
      const HostTensor ha = to_host(a.view), hb = to_host(b.view);
      HostTensor a_full(t, shape), b_full(t, shape), zeros(t, shape), want(t, shape);
      std::memset(zeros.data(), 0, zeros.bytes());
      reference_binary(BinaryOp::add, ha.view(), zeros.view(), a_full.view());
      reference_binary(BinaryOp::add, hb.view(), zeros.view(), b_full.view());
      for (std::int64_t i = 0; i < want.numel(); ++i) {
        const double u = detail::load_double(t, host_element(a_full, i)),
                     v = detail::load_double(t, host_element(b_full, i));
        detail::store_double(t, static_cast<std::byte*>(want.data()) + i * static_cast<std::int64_t>(dtype_size(t)),
                             u * u + v * v);
      }
      for (Kernel k : kAllKernels) {
        if (!kernel_supports(k, a.view, b.view, out.view)) continue;
        DenseOptions o;
        o.kernel = k;
        verify::poison(out.view);
        binary(SumOfSquares{}, a.view, b.view, out.view, o);
        const verify::CompareReport r = verify::compare(out.view, want.view());
        EXPECT_TRUE(r.ok()) << "functor " << dtype_name(t) << " " << kernel_name(k) << " a "
                            << a.str() << " b " << b.str() << ": "
                            << r.str();
      }
    }
}

constexpr unsigned kMask = dtype_mask({DType::f32, DType::f16});

/// |a - b| through an extended __device__ lambda, instantiated for f32 and f16 only (the lambda
/// must live in a free function: nvcc rejects it inside a test's private TestBody).
DeviceTensor absdiff(const ConstTensorView& a, const ConstTensorView& b,
                     const TensorView* out = nullptr) {
  const auto f = [] __device__(float x, float y) { return fabsf(x - y); };
  if (out != nullptr) {
    binary<kMask>(f, a, b, *out);
    return DeviceTensor();
  }
  return binary<kMask>(f, a, b);
}

TEST(DenseGpu, UserLambdaWithDtypeMask) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  for (DType t : {DType::f32, DType::f16}) {
    const HostTensor ha = verify::random_tensor(t, {129, 65}, seed);
    const HostTensor hb = verify::random_tensor(t, {65}, seed + 1);
    const DeviceTensor a = to_device(ha), b = to_device(hb);
    // |a - b| = max(a, b) - min(a, b), each exact in the reference's arithmetic, one rounding.
    HostTensor hi(t, {129, 65}), lo(t, {129, 65}), want(t, {129, 65});
    reference_binary(BinaryOp::max, ha.view(), hb.view(), hi.view());
    reference_binary(BinaryOp::min, ha.view(), hb.view(), lo.view());
    reference_binary(BinaryOp::sub, hi.view(), lo.view(), want.view());
    const DeviceTensor got = absdiff(a, b);  // allocating form
    EXPECT_EQ(got.shape(), (Dims{129, 65}));
    const verify::CompareReport r = verify::compare(got, want);
    EXPECT_TRUE(r.ok()) << dtype_name(t) << ": " << r.str();
  }
  // A dtype outside the mask throws before anything runs.
  const DeviceTensor d(DType::f64, {4});
  EXPECT_THROW(absdiff(d, d), InvalidArgument);
  DeviceTensor out(DType::f64, {4});
  const TensorView out_view = out.view();
  EXPECT_THROW(absdiff(d, d, &out_view), InvalidArgument);
  // Host views throw for functors.
  HostTensor h(DType::f32, {4});
  EXPECT_THROW(binary(SumOfSquares{}, h, h, h.view()), InvalidArgument);
}

// ---- validation on real buffers: the output stays untouched --------------------------------

TEST(DenseGpu, ValidationErrorsLeaveOutputUntouched) {
  EWISE_REQUIRE_GPU();
  DeviceTensor a(DType::f32, {8, 16}), b(DType::f32, {1, 16}), out(DType::f32, {8, 16});
  verify::fill_random(a.view(), 1);
  verify::fill_random(b.view(), 2);
  verify::poison(out.view());
  const auto untouched = [&] {
    const HostTensor h = to_host(out.view());
    for (std::int64_t i = 0; i < h.numel(); ++i)
      if (!verify::is_poison(DType::f32, static_cast<const std::byte*>(h.data()) + 4 * i))
        return false;
    return true;
  };
  TensorView shifted = out.view();  // out's buffer shifted by one element: partial overlap
  shifted.data = static_cast<float*>(out.data()) + 1;
  shifted.desc = TensorDesc::contiguous(DType::f32, {1, 16});
  TensorView self_overlap = out.view();
  self_overlap.desc = TensorDesc::strided(DType::f32, {8, 16}, {1, 1});
  DeviceTensor half_b(DType::f16, {1, 16});
  TensorView null_a = a.view();
  null_a.data = nullptr;
  const HostTensor host_b(DType::f32, {1, 16});
  const std::pair<const char*, std::function<void()>> bad[] = {
      {"wrong out shape",
       [&] {
         binary(BinaryOp::add, a.view(), b.view(), DeviceTensor(DType::f32, {8, 15}).view());
       }},
      {"bitwise on floats", [&] { binary(BinaryOp::bitwise_and, a.view(), half_b.view(), out); }},
      {"a named kernel on mixed dtypes",
       [&] { binary(BinaryOp::add, a.view(), half_b.view(), out, {Kernel::vectorized}); }},
      {"a float result into an int out",
       [&] { binary(BinaryOp::add, a.view(), b.view(), DeviceTensor(DType::i32, {8, 16}).view()); }},
      {"partial overlap", [&] { binary(BinaryOp::add, a.view(), shifted, out); }},
      {"self-overlapping out", [&] { binary(BinaryOp::add, a.view(), b.view(), self_overlap); }},
      {"null data", [&] { binary(BinaryOp::add, null_a, b.view(), out); }},
      {"mixed memory", [&] { binary(BinaryOp::add, a.view(), host_b.view(), out); }},
      {"kernel cannot run", [&] { binary(BinaryOp::add, a.view(), a.view(), out, {Kernel::tiled}); }},
      {"bad threads",
       [&] {
         binary(BinaryOp::add, a.view(), b.view(), out, {Kernel::general, 0, 33});
       }},
  };
  for (const auto& [what, call] : bad) {
    EXPECT_THROW(call(), InvalidArgument) << what;
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess) << what;
    EXPECT_TRUE(untouched()) << what << ": the output was written";
  }
}

// ---- allocating form and streams -------------------------------------------------------------

TEST(DenseGpu, AllocatingFormOnAStream) {
  EWISE_REQUIRE_GPU();
  const std::uint64_t seed = test_seed();
  cudaStream_t s;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  {
    const HostTensor ha = verify::random_tensor(DType::bf16, {64, 256, 1, 1}, seed);
    const HostTensor hb = verify::random_tensor(DType::bf16, {256, 33, 17}, seed + 1);
    const DeviceTensor a = to_device(ha, s), b = to_device(hb, s);
    const DeviceTensor c = binary(BinaryOp::mul, a.view(), b.view(), {}, s);
    EXPECT_EQ(c.shape(), (Dims{64, 256, 33, 17}));
    HostTensor want(DType::bf16, c.shape());
    reference_binary(BinaryOp::mul, ha.view(), hb.view(), want.view());
    const verify::CompareReport r = verify::compare(c, want, verify::Tolerance{}, s);
    EXPECT_TRUE(r.ok()) << r.str();
  }
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

// ---- more than 2^31 elements --------------------------------------------------------------

/// Checks rows [r0, r0 + rows) of out (cols wide, contiguous) against the reference on the same
/// rows of a and the whole of b (shape b_shape, broadcast against the rows).
void check_window(BinaryOp op, const void* a, const void* b, const Dims& b_shape, const void* out,
                  std::int64_t cols, std::int64_t r0, std::int64_t rows, const char* what) {
  const DType t = DType::f16;
  const std::size_t bytes = static_cast<std::size_t>(rows * cols) * 2;
  const std::int64_t first = r0 * cols * 2;
  HostTensor ha(t, {rows, cols}), hout(t, {rows, cols}), want(t, {rows, cols});
  HostTensor hb(t, b_shape);
  EWISE_CUDA_CHECK(cudaMemcpy(ha.data(), static_cast<const std::byte*>(a) + first, bytes,
                              cudaMemcpyDeviceToHost));
  EWISE_CUDA_CHECK(cudaMemcpy(hout.data(), static_cast<const std::byte*>(out) + first, bytes,
                              cudaMemcpyDeviceToHost));
  const bool column = b_shape.size() == 2 && b_shape[1] == 1 && b_shape[0] > 1;
  if (column) {  // the b rows of this window
    EWISE_CUDA_CHECK(cudaMemcpy(hb.data(), static_cast<const std::byte*>(b) + r0 * 2,
                                static_cast<std::size_t>(rows) * 2, cudaMemcpyDeviceToHost));
  } else {
    EWISE_CUDA_CHECK(cudaMemcpy(hb.data(), b, hb.bytes(), cudaMemcpyDeviceToHost));
  }
  ConstTensorView vb = hb.view();
  if (column) vb.desc = TensorDesc::contiguous(t, {rows, 1});
  reference_binary(op, ha.view(), vb, want.view());
  const verify::CompareReport r = verify::compare(hout.view(), want.view(), verify::Tolerance{});
  EXPECT_TRUE(r.ok()) << what << " rows " << r0 << ".." << r0 + rows << ": " << r.str();
}

TEST(DenseGpu, MoreThan2To31Elements) {
  EWISE_REQUIRE_GPU();
  if (small_mode()) GTEST_SKIP() << "EWISE_DENSE_SMALL=1: the multi-GiB test is skipped";
  const std::int64_t n = (std::int64_t{1} << 31) + 3;                  // 1-d: 2^31 + 3 f16
  const std::int64_t cols = 2048, rows = (std::int64_t{1} << 20) + 1;  // 2-d: 2^31 + 2048
  const std::int64_t elements = std::max(n, rows * cols);
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  const std::size_t need = 2 * static_cast<std::size_t>(elements) * 2 + (std::size_t{1} << 30);
  if (free_bytes < need)
    GTEST_SKIP() << "needs " << need << " bytes of free device memory, " << free_bytes << " free";
  const std::uint64_t seed = test_seed();
  DeviceBuffer abuf(static_cast<std::size_t>(elements) * 2),
      obuf(static_cast<std::size_t>(elements) * 2);
  DeviceBuffer bbuf(static_cast<std::size_t>(rows) * 2);
  const auto view = [](void* p, const Dims& shape) {
    return TensorView{p, TensorDesc::contiguous(DType::f16, shape), Memory::device};
  };
  verify::fill_random(view(abuf.data(), {elements}), seed);
  verify::fill_random(view(bbuf.data(), {rows}), seed + 1);

  // 1-d, b a scalar: vectorized (64-bit) and general (64-bit divmod).
  for (Kernel k : {Kernel::automatic, Kernel::general}) {
    verify::poison(view(obuf.data(), {n}));
    binary(BinaryOp::mul, view(abuf.data(), {n}), view(bbuf.data(), {1}), view(obuf.data(), {n}),
           {k});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    // Windows as (4099, 1) slices of the 1-d tensor; the last one ends at element 2^31 + 2.
    for (std::int64_t r0 : {std::int64_t{0}, (std::int64_t{1} << 30) + 7, n - 4099})
      check_window(BinaryOp::mul, abuf.data(), bbuf.data(), {1}, obuf.data(), 1, r0, 4099,
                   kernel_name(k));
  }
  // 2-d (2^20 + 1, 2048): row vector and column vector, the row past 2^31 checked.
  const std::int64_t windows[] = {0, 1 << 19, rows - 2};
  for (Kernel k : {Kernel::automatic, Kernel::tiled, Kernel::sliding}) {
    verify::poison(view(obuf.data(), {rows, cols}));
    binary(BinaryOp::sub, view(abuf.data(), {rows, cols}), view(bbuf.data(), {1, cols}),
           view(obuf.data(), {rows, cols}), {k});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (std::int64_t r0 : windows)
      check_window(BinaryOp::sub, abuf.data(), bbuf.data(), {1, cols}, obuf.data(), cols, r0, 2,
                   kernel_name(k));
  }
  for (Kernel k : {Kernel::automatic, Kernel::sliding_shared}) {
    verify::poison(view(obuf.data(), {rows, cols}));
    binary(BinaryOp::div, view(abuf.data(), {rows, cols}), view(bbuf.data(), {rows, 1}),
           view(obuf.data(), {rows, cols}), {k});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (std::int64_t r0 : windows)
      check_window(BinaryOp::div, abuf.data(), bbuf.data(), {rows, 1}, obuf.data(), cols, r0, 2,
                   kernel_name(k));
  }
}

// ---- device properties: queried once per device, cached per ordinal --------------------------

/// Device `ordinal`'s properties straight from the CUDA runtime, as a string to compare.
std::string queried_props(int ordinal) {
  const auto attribute = [ordinal](cudaDeviceAttr attr) {
    int value = 0;
    EXPECT_EQ(cudaDeviceGetAttribute(&value, attr, ordinal), cudaSuccess);
    return value;
  };
  return detail::concat(ordinal, " sm_", attribute(cudaDevAttrComputeCapabilityMajor),
                        attribute(cudaDevAttrComputeCapabilityMinor), " ",
                        attribute(cudaDevAttrMultiProcessorCount), " SMs ",
                        attribute(cudaDevAttrMaxThreadsPerMultiProcessor), " threads/SM ",
                        attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin), " B shared ",
                        attribute(cudaDevAttrL2CacheSize), " B L2");
}

std::string props_str(const detail::DeviceProps& p) {
  return detail::concat(p.ordinal, " sm_", p.cc, " ", p.sm_count, " SMs ", p.max_threads_per_sm,
                        " threads/SM ", p.max_shared, " B shared ", p.l2_bytes, " B L2");
}

/// Every device, highest ordinal first (a cache that ignored the ordinal would then hand the
/// later devices the first one's entry), asked twice (the query, then the cache), from the
/// current device and by ordinal; then from threads that each use one device.
TEST(DenseGpu, DevicePropsPerDevice) {
  EWISE_REQUIRE_GPU();
  int count = 0, current = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  for (int d = count - 1; d >= 0; --d) {
    ASSERT_EQ(cudaSetDevice(d), cudaSuccess);
    const std::string want = queried_props(d);
    for (int call = 0; call < 2; ++call) {
      EXPECT_EQ(props_str(detail::current_device_props()), want) << "call " << call;
      EXPECT_EQ(props_str(detail::device_props(d)), want) << "call " << call;
    }
  }
  ASSERT_EQ(cudaSetDevice(current), cudaSuccess);
  std::vector<std::string> want(static_cast<std::size_t>(count)), got(8 * want.size());
  for (int d = 0; d < count; ++d) want[static_cast<std::size_t>(d)] = queried_props(d);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t)
    threads.emplace_back([&got, t, count] {
      const int d = static_cast<int>(t) % count;
      if (cudaSetDevice(d) != cudaSuccess) return;
      for (int call = 0; call < 100; ++call) got[t] = props_str(detail::current_device_props());
    });
  for (std::thread& t : threads) t.join();
  for (std::size_t t = 0; t < got.size(); ++t)
    EXPECT_EQ(got[t], want[t % want.size()]) << "thread " << t;
}

/// The cache must tell devices apart: needs a second GPU.
TEST(DenseGpu, DevicePropsTellDevicesApart) {
  EWISE_REQUIRE_GPU();
  int count = 0, current = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  if (count < 2) GTEST_SKIP() << "needs 2 GPUs to tell devices apart, this machine has " << count;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  for (int d : {1, 0, 1}) {
    ASSERT_EQ(cudaSetDevice(d), cudaSuccess);
    EXPECT_EQ(detail::current_device_props().ordinal, d);
    EXPECT_EQ(props_str(detail::current_device_props()), queried_props(d));
  }
  ASSERT_EQ(cudaSetDevice(current), cudaSuccess);
}

}  // namespace
}  // namespace ewise
