// ewise/detail/dense/vectorized.cuh — the vectorized kernel: any plan whose output is
// contiguous as a whole. The output is one flat range: a scalar head up to its first 16-byte
// boundary, 16-byte vectors, a scalar tail — once, whatever the rows. Each input is read as
// 16-byte vectors (laid out like the output), held in a register (a scalar), or gathered (a
// broadcast along rows or columns, an outer product, an odd row width, a misaligned start): by
// rows where every gathered input runs along the innermost dim with stride 1 or holds one value
// a row (stride 0), else element by element through its strides; at high ranks the gathered
// offsets come from a warp's row table, not divmod chains; rows of many vectors run by segments
// (a warp's run of vectors inside one row: offsets once a segment, a row's values held, a
// stride-1 input as aligned 16-byte vectors shifted into place by a compile-time shift).
// Planned by plan_vectorized.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

struct VectorizedArgs {
  std::int64_t n = 0;        ///< elements
  std::int64_t head = 0;     ///< leading scalar elements (out + head is 16-byte aligned)
  std::int64_t vectors = 0;  ///< 16-byte vectors after the head; the rest is a scalar tail
  /// Each input's VectorAccess as flags: read as vectors; else held, unless gathered. Plain
  /// flags keep the loop of kernels without a gathered input the same as a rank-1 kernel's
  /// (H100: comparing the enum in the loop cost the f32 scalar broadcast 5%).
  bool a_vector = true, b_vector = true;
  bool a_gather = false, b_gather = false;
  /// Gathered by rows (GatherMode::rows): the input's innermost stride is 1; else 0.
  bool a_along = false, b_along = false;
  /// The gathered offsets come from a warp's row table (VectorizedPlan::row_table).
  bool row_table = false;
  std::int64_t last_row = 0;  ///< numel / row length - 1 (the table's and segments' last row)
  std::int64_t segments = 0;  ///< GatherMode::segments: rows x segments a row
  bool evict_first = false;   ///< the segments' stores evict-first (VectorizedPlan::evict_first)
};

/// How the vectorized kernel finds the elements of its gathered inputs: none gathered; by rows
/// (gather_rows: VectorizedPlan::rows); by segments of long rows (VectorizedPlan::segments, with
/// gather_rows at the rows' ends); through the strides of every dim (gather).
enum class GatherMode { none, rows, segments, any };

/// The plan's dims (innermost first) for kernels that gather an input; nothing otherwise.
template <class Index, bool Gather>
struct GatherMap {
  Strided<Index> map;
  FastDivmod<Index> segments;  ///< GatherMode::segments: segments a row
};
template <class Index>
struct GatherMap<Index, false> {};

/// The offsets of the gathered inputs at the starts of the rows of a warp's chunk: lane l holds
/// row first + l's (VectorizedPlan::row_table: the chunk's vectors lie in 32 rows). Built once a
/// chunk, one divmod chain a lane; a vector then finds its offsets by one division by the row
/// length and shuffles, where the chains cost two a vector (its element and the next row's)
/// over every dim (H200 Nsight Compute, bf16 rank-5 mix: 256 instructions a vector).
template <class Index>
struct RowTable {
  using Offset = typename Strided<Index>::Offset;
  Index first = 0;
  Offset a = 0, b = 0;
};

/// The row table of the chunk whose first element is e0 (every lane of the warp calls it).
template <class Index>
EWISE_DEVICE RowTable<Index> row_table(const Strided<Index>& m, const VectorizedArgs& p,
                                       Index e0, unsigned lane) {
  RowTable<Index> t;
  Index c;
  m.extent[0].divmod(e0, t.first, c);
  // Rows past the last (the table has 32 whatever the chunk needs) repeat the last one.
  const auto row =
      static_cast<Index>(min_of(static_cast<std::int64_t>(t.first) + lane, p.last_row));
  typename Strided<Index>::Offset off[3];
  m.offsets(row * m.extent[0].divisor, off);
  t.a = off[1];
  t.b = off[2];
  return t;
}

/// Where a gathered vector's elements lie: the offsets of its first element (here), that
/// element's coordinate along the row (inner) and the offsets of the next row's first element
/// (next, read only where the vector crosses the row's end).
template <class Index>
struct Spot {
  using Offset = typename Strided<Index>::Offset;
  Offset here[3], next[3];
  Index inner;
};

/// The spot of element i from the warp's row table. Every lane of the warp calls it (shuffles).
template <class Index>
EWISE_DEVICE Spot<Index> table_spot(const Strided<Index>& m, const VectorizedArgs& p,
                                    const RowTable<Index>& t, Index i) {
  using Offset = typename Strided<Index>::Offset;
  Spot<Index> s{};
  Index row;
  m.extent[0].divmod(i, row, s.inner);
  const int l = static_cast<int>(row - t.first);  // 0..31 for the chunk's vectors
  const auto c = static_cast<Offset>(s.inner);
  constexpr unsigned all = 0xFFFFFFFFu;
  if (p.a_gather) {
    s.here[1] = __shfl_sync(all, t.a, l) + c * m.stride[1][0];
    s.next[1] = __shfl_sync(all, t.a, l + 1);
  }
  if (p.b_gather) {
    s.here[2] = __shfl_sync(all, t.b, l) + c * m.stride[2][0];
    s.next[2] = __shfl_sync(all, t.b, l + 1);
  }
  return s;
}

/// The offsets of element i and its coordinate along the row: the spot's where the warp has a
/// row table (Table), else the divmod chain's.
template <bool Table, class Index>
EWISE_DEVICE void here_of(const Strided<Index>& m, const Spot<Index>& s, Index i,
                          typename Strided<Index>::Offset (&off)[3], Index& inner) {
  if constexpr (Table) {
    off[1] = s.here[1];
    off[2] = s.here[2];
    inner = s.inner;
  } else {
    m.offsets(i, off, inner);
  }
}

/// The offsets of element j, the first of the row after element i's: as here_of.
template <bool Table, class Index>
EWISE_DEVICE void next_of(const Strided<Index>& m, const Spot<Index>& s, Index j,
                          typename Strided<Index>::Offset (&next)[3]) {
  if constexpr (Table) {
    next[1] = s.next[1];
    next[2] = s.next[2];
  } else {
    m.offsets(j, next);
  }
}

/// Elements i .. i + V - 1 of the gathered inputs into x and y. The first element's offsets come
/// from here_of (the spot s or the divmod chain) and the next ones step along the innermost
/// dim. Rows of at least V elements end at most once inside a vector: the chain (or the spot)
/// gives the first element of the next row, and each element picks its side without a branch
/// (a per-element recompute at the row end left about half of a warp's lanes idle: H100 Nsight
/// Compute, 18 of 32 lanes active on 7x7 planes). Shorter rows step element by element, the
/// chain again at each end.
template <bool Table, class T, int V, class Index>
EWISE_DEVICE void gather(const Strided<Index>& m, Index i, const VectorizedArgs& p,
                         const Spot<Index>& s, const T* a, const T* b, Pack<T, V>& x,
                         Pack<T, V>& y) {
  using Offset = typename Strided<Index>::Offset;
  Offset off[3];
  Index inner;
  here_of<Table>(m, s, i, off, inner);
  const Index n0 = m.extent[0].divisor;
  const Offset sa = m.stride[1][0], sb = m.stride[2][0];
  if (n0 >= static_cast<Index>(V)) {
    const auto left = static_cast<Offset>(n0 - inner);  // elements before the row's end, >= 1
    // Long rows: most vectors lie in one row, and stepping alone serves them; in short rows the
    // lanes that cross a row end would leave the others idle, so every lane takes both sides
    // (H100 bf16, outer product over 4097-wide rows: 11% less time than both sides always; the
    // short-row shapes in docs/benchmarks.md).
    if (n0 >= static_cast<Index>(kLongRow) && left >= V) {
#pragma unroll
      for (int e = 0; e < V; ++e) {
        if (p.a_gather) x.v[e] = a[off[1] + e * sa];
        if (p.b_gather) y.v[e] = b[off[2] + e * sb];
      }
      return;
    }
    Offset next[3];
    next_of<Table>(m, s, i + static_cast<Index>(left), next);
#pragma unroll
    for (int e = 0; e < V; ++e) {
      const bool here = e < left;
      if (p.a_gather) x.v[e] = a[here ? off[1] + e * sa : next[1] + (e - left) * sa];
      if (p.b_gather) y.v[e] = b[here ? off[2] + e * sb : next[2] + (e - left) * sb];
    }
    return;
  }
#pragma unroll
  for (int e = 0; e < V; ++e) {
    if (e > 0) {
      if (++inner == n0) {
        m.offsets(i + static_cast<Index>(e), off, inner);
      } else {
        off[1] += sa;
        off[2] += sb;
      }
    }
    if (p.a_gather) x.v[e] = a[off[1]];
    if (p.b_gather) y.v[e] = b[off[2]];
  }
}

/// One gathered input's V elements in rows mode, from offset `here` (element i) and, past the
/// row's end after `left` elements, offset `next` (the next row's first element). Stride 1
/// along the row (`along`): element e at here + e, or next + e - left; stride 0: one value a
/// row, the next row's loaded only where the vector reaches it (the last row has none). Each
/// element picks its side without a branch; with left = V (a constant) only `here` is read,
/// at immediate offsets.
template <class T, int V, class Offset>
EWISE_DEVICE void row_part(const T* src, Offset here, Offset next, Offset left, bool along,
                           Pack<T, V>& x) {
  if (along) {
    const Offset shifted = next - left;
#pragma unroll
    for (int e = 0; e < V; ++e) x.v[e] = src[(e < left ? here : shifted) + e];
  } else {
    const T h = src[here];
    const T n = left < V ? src[next] : h;
#pragma unroll
    for (int e = 0; e < V; ++e) x.v[e] = e < left ? h : n;
  }
}

/// Elements i .. i + V - 1 of the gathered inputs into x and y, by rows (VectorizedPlan::rows:
/// rows of at least V elements, so a vector ends at most one row): one divmod chain for element
/// i and, where the vector crosses the row's end, one for the next row's first element (or the
/// spot s of the warp's row table), then row_part. Long rows take the second chain only in the
/// lanes whose vector crosses (few); short rows in every lane, without a branch (as gather does,
/// for the same reason).
template <bool Table, class T, int V, class Index>
EWISE_DEVICE void gather_rows(const Strided<Index>& m, Index i, const VectorizedArgs& p,
                              const Spot<Index>& s, const T* a, const T* b, Pack<T, V>& x,
                              Pack<T, V>& y) {
  using Offset = typename Strided<Index>::Offset;
  Offset off[3];
  Index inner;
  here_of<Table>(m, s, i, off, inner);
  const Index n0 = m.extent[0].divisor;
  const auto left = static_cast<Offset>(n0 - inner);  // elements before the row's end, >= 1
  if (n0 >= static_cast<Index>(kLongRow) && left >= V) {
    if (p.a_gather) row_part<T, V>(a, off[1], off[1], static_cast<Offset>(V), p.a_along, x);
    if (p.b_gather) row_part<T, V>(b, off[2], off[2], static_cast<Offset>(V), p.b_along, y);
    return;
  }
  Offset next[3];
  next_of<Table>(m, s, i + static_cast<Index>(left), next);
  if (p.a_gather) row_part<T, V>(a, off[1], next[1], left, p.a_along, x);
  if (p.b_gather) row_part<T, V>(b, off[2], next[2], left, p.b_along, y);
}

/// Calls f(std::integral_constant<int, S>{}) for the run-time s in [S, V).
template <int V, int S = 0, class F>
EWISE_DEVICE void with_shift(int s, F&& f) {
  if constexpr (S + 1 < V) {
    if (s != S) return with_shift<V, S + 1>(s, f);
  }
  f(std::integral_constant<int, S>{});
}

/// The V elements that start S elements into the aligned vectors p[0] and p[1] (p[0] alone for
/// S = 0): two 16-byte loads and register moves (byte permutes for 16-bit elements at odd S),
/// where a stride-1 input off the output's 16-byte grid took V element loads (H200 Nsight
/// Compute, bf16 outer product: L1/TEX 88% busy with them).
template <int S, class T, int V>
EWISE_DEVICE Pack<T, V> shifted(const Pack<T, V>* p) {
  if constexpr (S == 0) {
    return p[0];
  } else {
    const Pack<T, V> lo = p[0], hi = p[1];
    Pack<T, V> r;
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = e + S < V ? lo.v[e + S] : hi.v[e + S - V];
    return r;
  }
}

template <class T, class F, class Index, GatherMode G>
__global__ void __launch_bounds__(kMaxThreads)
    vectorized_kernel(F f, VectorizedArgs p, GatherMap<Index, G != GatherMode::none> g, T* out,
                      const T* a, const T* b) {
  constexpr int V = kVectorBytes / sizeof(T);
  using P = Pack<T, V>;
  const std::int64_t tid = global_thread<std::int64_t>(), nthreads = grid_threads<std::int64_t>();
  const T a0 = a[0], b0 = b[0];  // the values of scalar inputs
  // Element i alone: a vector input's offset is i (it is laid out like the output).
  const auto scalar = [&](std::int64_t i) {
    T x = p.a_vector ? a[i] : a0, y = p.b_vector ? b[i] : b0;
    if constexpr (G != GatherMode::none) {
      typename Strided<Index>::Offset off[3];
      g.map.offsets(static_cast<Index>(i), off);
      if (p.a_gather) x = a[off[1]];
      if (p.b_gather) y = b[off[2]];
    }
    out[i] = apply(f, x, y);
  };
  P a0v, b0v;  // scalar inputs as vectors
#pragma unroll
  for (int e = 0; e < V; ++e) {
    a0v.v[e] = a0;
    b0v.v[e] = b0;
  }
  for (std::int64_t i = tid; i < p.head; i += nthreads) scalar(i);
  P* vout = reinterpret_cast<P*>(out + p.head);
  const P* va = reinterpret_cast<const P*>(a + p.head);
  const P* vb = reinterpret_cast<const P*>(b + p.head);
  // Each warp takes chunks of 32*U consecutive vectors (U per lane, 32 apart: every access
  // coalesced, a warp's accesses within 512*U contiguous bytes), all loaded before any store.
  constexpr int U = vector_unroll(sizeof(T));
  const std::int64_t lane = threadIdx.x % 32;
  const std::int64_t chunk_step = nthreads * U;  // nthreads is a multiple of 32
  // The chunks, with the gathered offsets from a row table (Table) or the divmod chains. The
  // loop runs alike in every lane of a warp (its bound is the warp's first vector), so that the
  // row table's shuffles see the whole warp. (gm is g, passed so that the table's uses of its
  // map are instantiated only where it has one.)
  const auto chunks = [&](auto table, const auto& gm) {
    constexpr bool Table = decltype(table)::value;
    for (std::int64_t first = (tid - lane) * U; first < p.vectors; first += chunk_step) {
      const std::int64_t v0 = first + lane;
      P x[U], y[U];
      [[maybe_unused]] RowTable<Index> rows;
      if constexpr (Table)
        rows = row_table(gm.map, p, static_cast<Index>(p.head + first * V),
                         static_cast<unsigned>(lane));
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t w = v0 + u * 32;
        const auto i = static_cast<Index>(p.head + w * V);
        [[maybe_unused]] Spot<Index> spot;
        if constexpr (Table) spot = table_spot(gm.map, p, rows, i);
        if (w < p.vectors) {
          // A gathered input's vector is gather's alone (no load or select left to undo).
          if (G == GatherMode::none || !p.a_gather) x[u] = p.a_vector ? va[w] : a0v;
          if (G == GatherMode::none || !p.b_gather) y[u] = p.b_vector ? vb[w] : b0v;
          if constexpr (G == GatherMode::rows)
            gather_rows<Table>(g.map, i, p, spot, a, b, x[u], y[u]);
          if constexpr (G == GatherMode::any) gather<Table>(g.map, i, p, spot, a, b, x[u], y[u]);
        }
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const std::int64_t w = v0 + u * 32;
        if (w < p.vectors) vout[w] = apply_pack(f, x[u], y[u]);
      }
    }
  };
  // Long rows (GatherMode::segments): each warp takes segments of segment_vectors vectors inside
  // one row, consecutive segments across the grid's warps (their stores meet in memory). A
  // segment's offsets come from one divmod chain, an input with one value a row (stride 0) is
  // loaded once, and a stride-1 input's vectors are its aligned 16-byte vectors shifted into
  // place (shifted), the shift fixed for the row and dispatched once (a loop for each). A row's
  // first and last vector inside it, and the one across its end, are left to the loop after: a
  // window of two vectors stays inside the input's row that way. Where the inputs are small,
  // the segments store evict-first (VectorizedArgs::evict_first).
  const auto segments = [&](const auto& gm) {
    using Offset = typename Strided<Index>::Offset;
    const auto J = static_cast<std::int64_t>(gm.map.extent[0].divisor);
    constexpr int SU = segment_unroll(sizeof(T));
    for (std::int64_t t = (tid - lane) / 32; t < p.segments; t += nthreads / 32) {
      Index row, k;
      gm.segments.divmod(static_cast<Index>(t), row, k);
      // The row's elements relative to vector 0's first: [start, start + J), start >= -head;
      // its vectors inside it but the first and the last: from ceil(start / V) + 1 up to
      // floor((start + J) / V) - 1; the segment's: [w, stop).
      const std::int64_t start = static_cast<std::int64_t>(row) * J - p.head;
      const std::int64_t w =
          static_cast<std::int64_t>(static_cast<std::uint64_t>(start + V - 1) / V) + 1 +
          static_cast<std::int64_t>(k) * segment_vectors(sizeof(T));
      const std::int64_t stop = min_of(w + segment_vectors(sizeof(T)), (start + J) / V - 1);
      if (w >= stop) continue;
      Offset off[3];
      gm.map.offsets(static_cast<Index>(row * J), off);
      P ca = a0v, cb = b0v;  // the values of held inputs and of inputs with one a row
      if (p.a_gather && !p.a_along) {
        const T v = a[off[1]];
#pragma unroll
        for (int e = 0; e < V; ++e) ca.v[e] = v;
      }
      if (p.b_gather && !p.b_along) {
        const T v = b[off[2]];
#pragma unroll
        for (int e = 0; e < V; ++e) cb.v[e] = v;
      }
      // The stride-1 input: vector w's elements start `shift` elements into aligned vector w.
      // (Pointer arithmetic, not integers: the loads stay global ones, LDG, not generic.)
      const T* at = (p.a_along ? a + off[1] : b + off[2]) - start;
      const int shift =
          static_cast<int>(reinterpret_cast<std::uintptr_t>(at) % kVectorBytes / sizeof(T));
      const P* aligned = reinterpret_cast<const P*>(at - shift);
      const auto run = [&](auto along, auto s) {
        constexpr int A = decltype(along)::value, S = decltype(s)::value;
        for (std::int64_t w0 = w + lane; w0 < stop; w0 += 32 * SU) {
          P x[SU], y[SU];
#pragma unroll
          for (int u = 0; u < SU; ++u) {
            const std::int64_t v = w0 + u * 32;
            if (v < stop) {
              x[u] = A == 1 ? shifted<S>(aligned + v) : p.a_vector ? va[v] : ca;
              y[u] = A == 2 ? shifted<S>(aligned + v) : p.b_vector ? vb[v] : cb;
            }
          }
#pragma unroll
          for (int u = 0; u < SU; ++u) {
            const std::int64_t v = w0 + u * 32;
            if (v >= stop) continue;
            const P r = apply_pack(f, x[u], y[u]);
            if (p.evict_first) {
              int4 bits;
              memcpy(&bits, &r, sizeof bits);
              __stcs(reinterpret_cast<int4*>(vout + v), bits);
            } else {
              vout[v] = r;
            }
          }
        }
      };
      using std::integral_constant;
      using A1 = integral_constant<int, 1>;
      using A2 = integral_constant<int, 2>;
      if (p.a_along) with_shift<V>(shift, [&](auto s) { run(A1{}, s); });
      else if (p.b_along) with_shift<V>(shift, [&](auto s) { run(A2{}, s); });
      else run(integral_constant<int, 0>{}, integral_constant<int, 0>{});
    }
    // The vectors at the rows' ends: for the start s of each row and of the end, those from
    // floor(s / V) - 1 up to ceil(s / V) + 1, by gather_rows.
    for (std::int64_t item = tid; item < (p.last_row + 2) * 3; item += nthreads) {
      const std::int64_t start = item / 3 * J - p.head;
      const std::int64_t floor = (start + V) / V - 1, ceil = (start + V - 1) / V;
      const std::int64_t w = floor - 1 + item % 3;
      if (w < 0 || w >= p.vectors || w > ceil) continue;
      const auto i = static_cast<Index>(p.head + w * V);
      P x = p.a_vector ? va[w] : a0v, y = p.b_vector ? vb[w] : b0v;
      gather_rows<false>(gm.map, i, p, Spot<Index>{}, a, b, x, y);
      vout[w] = apply_pack(f, x, y);
    }
  };
  if constexpr (G == GatherMode::segments) {
    segments(g);
  } else if constexpr (G != GatherMode::none) {
    if (p.row_table) chunks(std::true_type{}, g);
    else chunks(std::false_type{}, g);
  } else {
    chunks(std::false_type{}, g);
  }
  for (std::int64_t i = p.head + p.vectors * V + tid; i < p.n; i += nthreads) scalar(i);
}

template <class T, class F>
void launch_vectorized(const F& f, const DensePlan& plan, cudaStream_t stream) {
  const VectorizedPlan& v = plan.vectorized;
  VectorizedArgs p;
  p.n = plan.numel;
  p.head = v.head;
  p.vectors = v.vectors;
  p.a_vector = v.a == VectorAccess::vector;
  p.b_vector = v.b == VectorAccess::vector;
  p.a_gather = v.a == VectorAccess::gather;
  p.b_gather = v.b == VectorAccess::gather;
  const int r = plan.plan.rank() - 1;
  p.a_along = p.a_gather && plan.plan.strides[1][r] == 1;
  p.b_along = p.b_gather && plan.plan.strides[2][r] == 1;
  p.row_table = v.row_table;
  p.last_row = v.row_table || v.segments ? plan.numel / plan.plan.shape[r] - 1 : 0;
  p.segments = v.segments ? (p.last_row + 1) * v.row_segments : 0;
  p.evict_first = v.evict_first;
  const auto run = [&](auto index, auto mode) {
    using Index = typename decltype(index)::type;
    constexpr GatherMode G = decltype(mode)::value;
    GatherMap<Index, G != GatherMode::none> g;
    if constexpr (G != GatherMode::none) {
      int dims[kMaxRank];
      for (int d = 0; d < plan.plan.rank(); ++d) dims[d] = d;
      g.map = make_strided<Index>(plan.plan, dims, plan.plan.rank());
      const std::int64_t per_row = std::max<std::int64_t>(v.row_segments, 1);
      g.segments = FastDivmod<Index>(static_cast<std::uint64_t>(per_row));
    }
    const auto kernel = vectorized_kernel<T, F, Index, G>;
    launch("vectorized", kernel, grid_blocks(kernel, plan.grid, plan.threads), plan.threads, 0,
           stream, f, p, g, static_cast<T*>(plan.out), static_cast<const T*>(plan.a),
           static_cast<const T*>(plan.b));
  };
  using Mode = std::integral_constant<GatherMode, GatherMode::none>;
  if (!v.gathers()) return run(TypeTag<std::uint32_t>{}, Mode{});
  // Segments only with 32-bit indices (the planner's rule): one instantiation, not two.
  using Segments = std::integral_constant<GatherMode, GatherMode::segments>;
  if (v.segments) return run(TypeTag<std::uint32_t>{}, Segments{});
  with_index(plan.wide, [&](auto index) {
    if (v.rows) return run(index, std::integral_constant<GatherMode, GatherMode::rows>{});
    run(index, std::integral_constant<GatherMode, GatherMode::any>{});
  });
}

}  // namespace ewise::detail
