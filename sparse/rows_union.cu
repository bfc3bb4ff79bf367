// sparse/rows_union.cu — combine(op, a, b), coalesce(a) and multiply(a, dense) of row-sparse
// operands on the GPU (sparse.hpp). A canonical a alone (coalesce, multiply) is one pass over
// its stored rows. Otherwise both operands' row indices (nnz of them, not nnz * ncols
// coordinates) and storage positions are radix-sorted together, stably, over the bits nrows
// needs (rows.cuh's launch_row_keys, whose pass checks the indices), the runs of equal rows
// found by CUB (compaction.cuh's RunHeads) and the long ones picked (rows.cuh's
// LongRunLists); one synchronization reads the checks and the counts before the result is
// allocated. Then union_rows_kernel, and rows.cuh's long_rows_kernel with UnionSink for runs
// longer than kLongRun.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "compaction.cuh"
#include "entries_pass.cuh"
#include "ewise/detail/fast_divmod.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "internal.hpp"
#include "keys.cuh"
#include "policy.hpp"
#include "rows.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// combine's, coalesce's and multiply's output rows, run s of the stored rows (RunLayout: sorted,
/// a's stored rows numbered below na, b's from na, a's first in a run; or a canonical a alone)
/// into out row s: thread i takes run s = i / groups and kRowCols columns from g * kRowCols,
/// sums the run's rows of a and of b apart, each in storage order from its first value (a lone
/// -0 stays -0), and writes op(x, y) (Union: x a's sum or fill_a where a stores none, y b's or
/// fill_b) or a's sum, times the factor at its (row, column) where there is one (multiply), and
/// the run's row index (g = 0).
template <class T, class Op, bool Union>
struct RowUnion {
  RunLayout runs;
  std::uint64_t width = 0, groups = 0;
  detail::FastDivmod<std::uint64_t> by_groups;
  const T* a = nullptr;
  const T* b = nullptr;
  std::int64_t na = 0;
  T* out = nullptr;
  IndexArray out_rows;
  Op op;
  detail::compute_t<T> fill_a{}, fill_b{};
  DenseFactor<T> factor;
};

/// The value written for a's sum x at (row, c) without a union: x, or x times the factor.
template <class T>
__device__ T scaled_sum(const DenseFactor<T>& f, detail::compute_t<T> x, std::int64_t row,
                        std::uint64_t c) {
  return scaled<T>(f, x, f.at(row, static_cast<std::int64_t>(c), true));
}

template <class T, class Op, bool Union>
__global__ void __launch_bounds__(kBlock) union_rows_kernel(RowUnion<T, Op, Union> u) {
  using C = detail::compute_t<T>;
  const RunLayout& l = u.runs;
  const std::uint64_t total = static_cast<std::uint64_t>(l.runs) * u.groups;
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < total;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint64_t s, g;
    u.by_groups.divmod(i, s, g);
    const std::int64_t start = l.start(static_cast<std::int64_t>(s));
    const std::int64_t end = l.end(static_cast<std::int64_t>(s));
    // (a dependent load: only where it is used)
    const std::int64_t row =
        g == 0 || u.factor.present() ? l.row(static_cast<std::int64_t>(s), start) : 0;
    if (g == 0) u.out_rows.set(static_cast<std::int64_t>(s), row);
    if (end - start > kLongRun && u.width > 0) continue;  // long_rows_kernel's
    const std::uint64_t c0 = g * kRowCols;
    const int m = static_cast<int>(u.width - c0 < kRowCols ? u.width - c0 : kRowCols);
    C sa[kRowCols] = {}, sb[kRowCols] = {};
    std::int64_t j = start;
    for (; j < end; ++j) {
      const std::uint64_t k = l.stored(j);
      if (static_cast<std::int64_t>(k) >= u.na) break;
      const T* v = u.a + k * u.width + c0;
#pragma unroll
      for (int q = 0; q < kRowCols; ++q) {
        if (q >= m) break;
        const C x = static_cast<C>(detail::to_compute(v[q]));
        sa[q] = j == start ? x : ops::Add{}(sa[q], x);
      }
    }
    const bool has_a = j > start, has_b = j < end;
    for (const std::int64_t first = j; j < end; ++j) {
      const T* v = u.b + (l.pos[j] - static_cast<std::uint64_t>(u.na)) * u.width + c0;
#pragma unroll
      for (int q = 0; q < kRowCols; ++q) {
        if (q >= m) break;
        const C x = static_cast<C>(detail::to_compute(v[q]));
        sb[q] = j == first ? x : ops::Add{}(sb[q], x);
      }
    }
    T* o = u.out + s * u.width + c0;
#pragma unroll
    for (int q = 0; q < kRowCols; ++q) {
      if (q >= m) break;
      if constexpr (Union)
        o[q] = detail::from_compute<T>(u.op(has_a ? sa[q] : u.fill_a, has_b ? sb[q] : u.fill_b));
      else
        o[q] = scaled_sum(u.factor, sa[q], row, c0 + q);
    }
  }
}

/// long_rows_kernel's sink for combine, coalesce and multiply: out row s, column c = op(a's sum
/// or fill_a, b's sum or fill_b) (Union), or a's sum (times the factor: multiply).
template <class T, class Op, bool Union>
struct UnionSink {
  RowUnion<T, Op, Union> u;
  __device__ void operator()(std::int64_t s, std::int64_t start, std::uint64_t c,
                             detail::compute_t<T> sa, bool has_a, detail::compute_t<T> sb,
                             bool has_b) const {
    T& o = u.out[static_cast<std::uint64_t>(s) * u.width + c];
    if constexpr (Union)
      o = detail::from_compute<T>(u.op(has_a ? sa : u.fill_a, has_b ? sb : u.fill_b));
    else
      o = scaled_sum(u.factor, sa, u.runs.row(s, start), c);
  }
};

/// Writes out's rows from `layout`: union_rows_kernel, then long_rows_kernel for the long runs.
void write_rows(const RunLayout& layout, const LongRunLists& longs, const RowSparseView& a,
                const RowSparseView* b, const UnionArgs* u, const DenseOperand* factor,
                DeviceRowSparse& out, cudaStream_t stream) {
  const std::int64_t width = a.desc.ncols;
  detail::dispatch_dtype(out.desc().dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = detail::compute_t<T>;
    // (one group for rows of width 0: the row indices are still written)
    const auto groups =
        static_cast<std::uint64_t>(std::max<std::int64_t>(1, (width + kRowCols - 1) / kRowCols));
    const auto launch = [&](auto f, auto is_union) {
      using Op = decltype(f);
      constexpr bool kUnion = decltype(is_union)::value;
      RowUnion<T, Op, kUnion> args{layout,
                                   static_cast<std::uint64_t>(width),
                                   groups,
                                   detail::FastDivmod<std::uint64_t>(groups),
                                   static_cast<const T*>(a.vals),
                                   b ? static_cast<const T*>(b->vals) : nullptr,
                                   a.desc.nnz,
                                   static_cast<T*>(out.vals()),
                                   index_array(out.rows(), out.desc().index),
                                   f,
                                   u ? static_cast<C>(u->fill_a) : C{},
                                   u ? static_cast<C>(u->fill_b) : C{},
                                   factor ? factor_of<T>(*factor) : DenseFactor<T>{}};
      detail::launch("sparse union_rows", union_rows_kernel<T, Op, kUnion>,
                     dim3(blocks_for(layout.runs * static_cast<std::int64_t>(groups))),
                     dim3(kBlock), 0, stream, args);
      LongRuns<T> r;
      r.runs = layout;
      r.a = args.a;
      r.b = args.b;
      r.na = args.na;
      r.width = args.width;
      longs.launch(r, UnionSink<T, Op, kUnion>{args}, stream);
    };
    if (u) with_union_op(u->op, [&](auto f) { launch(f, std::true_type{}); });
    else launch(ops::Add{}, std::false_type{});
  });
}

}  // namespace

DeviceRowSparse device_combine_rows(const RowSparseView& a, const RowSparseView* b,
                                    const UnionArgs* u, const DenseOperand* factor,
                                    const SparseOptions& options, cudaStream_t stream) {
  const std::int64_t na = a.desc.nnz, nb = b ? b->desc.nnz : 0, n = na + nb;
  CooDesc d = a.desc;
  d.canonical = true;
  d.nnz = 0;
  if (n == 0) return DeviceRowSparse(d, stream);
  const bool validate = options.validate_indices;
  if (b == nullptr && a.desc.canonical) {  // each stored row a run: one pass, nothing sorted
    const RowCheck c{index_array(a.rows, a.desc.index), a.desc.nrows, true, nullptr};
    if (validate) {
      DeviceBuffer words(2 * sizeof(std::int64_t), stream);
      auto* const w = static_cast<unsigned long long*>(words.data());
      EWISE_CUDA_CHECK(cudaMemsetAsync(w, 0xFF, 2 * sizeof(std::int64_t), stream));
      RowCheck checked = c;
      checked.words = w;
      launch_row_check(checked, na, stream);
      struct Check {
        std::int64_t words[2];
      };
      throw_row_check(read_back<Check>(w, stream).words, a, "a", stream);
    }
    d.nnz = na;
    DeviceRowSparse out(d, stream);
    write_rows(RunLayout{c.rows, {}, {}, nullptr, na, na}, {}, a, nullptr, u, factor, out, stream);
    return out;
  }
  // Both checks' first bad stored rows (all ones: none), the run count, the long runs' counts.
  struct UnionWords {
    std::int64_t check_a[2], check_b[2], runs, long_runs[2];
  };
  DeviceBuffer words(sizeof(UnionWords), stream);
  auto* const w = static_cast<unsigned long long*>(words.data());
  EWISE_CUDA_CHECK(cudaMemsetAsync(w, 0xFF, 4 * sizeof(std::int64_t), stream));
  // The keys are the row indices: a matrix of one column's absolute indices.
  CooDesc keys_desc = a.desc;
  keys_desc.ncols = 1;
  const bool wide = wide_keys(keys_desc), wide_pos = n > (std::int64_t{1} << 32);
  SortScratch sorted(n, wide, wide_pos ? 8 : 4, key_bits(keys_desc), stream);
  const WordArray keys_in{sorted.keys_in(), wide}, pos_in{sorted.vals_in(), wide_pos};
  const auto make_keys = [&](const RowSparseView& v, std::int64_t offset,
                             unsigned long long* check) {
    if (v.desc.nnz == 0) return;
    const RowCheck c{index_array(v.rows, v.desc.index), v.desc.nrows, v.desc.canonical,
                     validate ? check : nullptr};
    launch_row_keys(c, v.desc.nnz, offset, keys_in, pos_in, stream);
  };
  make_keys(a, 0, w);
  if (b) make_keys(*b, na, w + 2);
  sorted.sort();
  RunLayout layout{{}, WordArray{sorted.keys(), wide}, WordArray{sorted.vals(), wide_pos}, nullptr,
                   0, n};
  KeySeq keys;
  keys.keys = layout.keys;
  auto* const runs = reinterpret_cast<std::int64_t*>(w) + 4;
  const RunHeads heads(keys, n, runs, stream);
  layout.heads = heads.positions();
  LongRunLists longs(layout.heads, runs, n, runs + 1, stream);
  const auto read = read_back<UnionWords>(w, stream);
  throw_row_check(read.check_a, a, "a", stream);
  if (b) throw_row_check(read.check_b, *b, "b", stream);
  layout.runs = read.runs;
  d.nnz = read.runs;
  DeviceRowSparse out(d, stream);
  longs.count[0] = read.long_runs[0];
  longs.count[1] = read.long_runs[1];
  write_rows(layout, longs, a, b, u, factor, out, stream);
  return out;
}

}  // namespace ewise::sparse_detail
