// ewise/detail/dense/common.cuh — what the dense kernel families share: the element-wise apply
// (with packed 16-bit math), 16-byte packs, index maps (Strided, MatrixVector), thread indices,
// and the host helpers that build those maps from a DensePlan and finish a planned grid.
// Kernels are templated on the storage type T, the functor F (called with compute types, see
// types.cuh) and, where index arithmetic dominates, the index type (uint32_t when every index
// and offset fits in int32, else uint64_t). Dims in device structs are stored innermost first.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ewise/detail/dense/plan.hpp"
#include "ewise/detail/dense/policy.hpp"
#include "ewise/detail/fast_divmod.hpp"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "ewise/tensor.hpp"

/// Device helpers of the dense kernels: inlined device functions.
#define EWISE_DEVICE __device__ __forceinline__

namespace ewise::detail {

template <class T, class F>
EWISE_DEVICE T apply(const F& f, T x, T y) {
  return from_compute<T>(static_cast<compute_t<T>>(f(to_compute(x), to_compute(y))));
}

/// V elements of T as one aligned access (16 bytes for the vectorized paths).
template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
};

/// The packed two-element type of a 16-bit float storage type (void for the others).
template <class T>
using Packed2 = std::conditional_t<std::is_same_v<T, __half>, __half2,
                                   std::conditional_t<std::is_same_v<T, __nv_bfloat16>,
                                                      __nv_bfloat162, void>>;

/// The packed two-element instruction that computes a functor F on 16-bit floats.
enum class PackedOp { none, add, sub, mul };
/// none unless specialised: only for functors whose result the packed instruction reproduces bit
/// for bit (the built-in add, sub, mul; a program may specialise it for an equivalent functor).
template <class F>
struct PackedOpOf : std::integral_constant<PackedOp, PackedOp::none> {};
template <>
struct PackedOpOf<ops::Add> : std::integral_constant<PackedOp, PackedOp::add> {};
template <>
struct PackedOpOf<ops::Sub> : std::integral_constant<PackedOp, PackedOp::sub> {};
template <>
struct PackedOpOf<ops::Mul> : std::integral_constant<PackedOp, PackedOp::mul> {};

/// Whether F on 16-bit floats T runs as packed two-element instructions (add/sub/mul.rn.f16x2,
/// .bf16x2). Those round the exact result once, as ops.hpp specifies; the f32 compute path
/// rounds twice (to f32, then to T) and gives the same bits because f32 has at least 2p+2
/// significand bits for p = 11 (f16) and 8 (bf16) (double rounding is then innocuous; products
/// of two 16-bit values are even exact in f32). Both keep subnormals (no ftz). div stays in f32,
/// and min/max too (ops.hpp's "equal operands give a" rule for -0/+0 is not the hardware's).
template <class T, class F>
inline constexpr bool kPackedOp =
    !std::is_void_v<Packed2<T>> && PackedOpOf<F>::value != PackedOp::none;

/// The bits of two packed 16-bit floats with each NaN half replaced by the canonical NaN 0x7FFF
/// (ops.hpp), as from_compute does for one element. The NaN halves are found by one packed
/// unordered compare of v with itself (0xFFFF in each NaN half), so that the canonical form
/// costs two instructions a pair (integer compares of the bits took six).
template <class T2>
EWISE_DEVICE std::uint32_t canonical_nan2(T2 v) {
  const std::uint32_t nan = __hneu2_mask(v, v);
  std::uint32_t x;
  memcpy(&x, &v, 4);  // __half2 is not trivially copyable: no bit_cast
  return (x & ~nan) | (nan & 0x7FFF7FFFu);
}

/// r = f(x, y) element by element: pairs of packed instructions where kPackedOp, else one
/// f(to_compute, to_compute) per element. Either way a NaN result is stored canonical.
template <class T, class F, int V>
EWISE_DEVICE Pack<T, V> apply_pack(const F& f, const Pack<T, V>& x, const Pack<T, V>& y) {
  Pack<T, V> r;
  if constexpr (kPackedOp<T, F> && V % 2 == 0) {
    using T2 = Packed2<T>;
    const T2* x2 = reinterpret_cast<const T2*>(x.v);
    const T2* y2 = reinterpret_cast<const T2*>(y.v);
    T2* r2 = reinterpret_cast<T2*>(r.v);
#pragma unroll
    for (int e = 0; e < V / 2; ++e) {
      constexpr PackedOp op = PackedOpOf<F>::value;
      T2 v;
      if constexpr (op == PackedOp::add) v = __hadd2_rn(x2[e], y2[e]);
      else if constexpr (op == PackedOp::sub) v = __hsub2_rn(x2[e], y2[e]);
      else v = __hmul2_rn(x2[e], y2[e]);
      const std::uint32_t w = canonical_nan2(v);
      memcpy(&r2[e], &w, 4);
    }
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) r.v[e] = apply(f, x.v[e], y.v[e]);
  }
  return r;
}

/// Maps a linear row-major index over up to kMaxRank dims to the offsets of the three operands
/// (0 = out, 1 = a, 2 = b). rank >= 1; extent[0] is the innermost dim.
template <class Index>
struct Strided {
  using Offset = std::make_signed_t<Index>;
  int rank = 1;
  FastDivmod<Index> extent[kMaxRank];
  Offset stride[3][kMaxRank] = {};

  EWISE_DEVICE void offsets(Index i, Offset (&off)[3]) const {
    Index inner;
    offsets(i, off, inner);
  }
  /// The offsets and the innermost coordinate of index i.
  EWISE_DEVICE void offsets(Index i, Offset (&off)[3], Index& inner) const {
    off[0] = off[1] = off[2] = 0;
    inner = i;
#pragma unroll
    for (int d = 0; d < kMaxRank; ++d) {
      if (d == rank - 1) {  // outermost dim: the remaining quotient is its coordinate
        const auto c = static_cast<Offset>(i);
#pragma unroll
        for (int k = 0; k < 3; ++k) off[k] += c * stride[k][d];
        break;
      }
      Index q, r;
      extent[d].divmod(i, q, r);
      if (d == 0) inner = r;
      const auto c = static_cast<Offset>(r);
#pragma unroll
      for (int k = 0; k < 3; ++k) off[k] += c * stride[k][d];
      i = q;
    }
  }
};

EWISE_DEVICE std::int64_t min_of(std::int64_t x, std::int64_t y) { return x < y ? x : y; }

template <class Index>
EWISE_DEVICE Index global_thread() {
  return static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x;
}
template <class Index>
EWISE_DEVICE Index grid_threads() {
  return static_cast<Index>(gridDim.x) * blockDim.x;
}

/// Calls f(TypeTag<Index>{}) with the plan's index type: uint64_t for wide plans, else uint32_t.
template <class F>
void with_index(bool wide, F&& f) {
  if (wide)
    f(TypeTag<std::uint64_t>{});
  else
    f(TypeTag<std::uint32_t>{});
}

/// The dims `dims[0..n)` of `plan` (outermost first) as a device Strided map (innermost first);
/// n == 0 gives one dim of extent 1.
template <class Index>
Strided<Index> make_strided(const BroadcastPlan& plan, const int* dims, int n) {
  using Offset = typename Strided<Index>::Offset;
  Strided<Index> s;
  s.rank = n > 0 ? n : 1;
  for (int j = 0; j < n; ++j) {
    const int d = dims[n - 1 - j];
    s.extent[j] = FastDivmod<Index>(static_cast<std::uint64_t>(plan.shape[d]));
    for (int k = 0; k < 3; ++k) s.stride[k][j] = static_cast<Offset>(plan.strides[k][d]);
  }
  return s;
}

/// The planned grid of a grid-stride kernel: GridPlan::blocks, given the blocks of `kernel`
/// (with `threads` and `smem` bytes of dynamic shared memory) resident per SM when the plan caps
/// the grid at one full wave. That count depends on the registers of the compiled instantiation,
/// which only the CUDA runtime knows.
template <class... Params>
unsigned grid_blocks(void (*kernel)(Params...), const GridPlan& grid, int threads,
                     std::size_t smem = 0) {
  int per_sm = 0;
  if (grid.needs_occupancy())
    EWISE_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return grid.blocks(per_sm);
}

// ---- matrix-vector plans (sliding.cuh, schedules.cuh) --------------------------------------

/// A rank-2 plan (rows, cols) where one input (the vector) has one zero stride.
template <class Index>
struct MatrixVector {
  using Offset = std::make_signed_t<Index>;
  Index rows = 0, cols = 0;
  Offset out_row = 0, out_col = 0;  ///< strides of out
  Offset mat_row = 0, mat_col = 0;  ///< strides of the other input (the matrix)
  Offset vec_stride = 0;            ///< the vector's non-zero stride
  bool vector_is_a = false;         ///< the vector is the left operand
  bool row_vector = false;          ///< the vector runs along cols (one element per column)
  FastDivmod<Index> div_cols;       ///< continuous, alternate: linear index -> (row, col)
  Index chunk = 1;                  ///< continuous: elements per thread
  int sliding_factor = 1;           ///< sliding kernels: rows (cols) per thread
};

template <class T, class F, class Index>
EWISE_DEVICE T apply_mv(const F& f, const MatrixVector<Index>& p, T mat, T vec) {
  return p.vector_is_a ? apply(f, vec, mat) : apply(f, mat, vec);
}

/// The matrix-vector view of a plan's rank-2 BroadcastPlan.
template <class Index>
MatrixVector<Index> make_matrix_vector(const DensePlan& plan) {
  using Offset = typename MatrixVector<Index>::Offset;
  const BroadcastPlan& P = plan.plan;
  const MatrixVectorPlan& mv = plan.matrix_vector;
  const int vec = mv.vector_operand, mat = 3 - vec;
  MatrixVector<Index> p;
  p.rows = static_cast<Index>(P.shape[0]);
  p.cols = static_cast<Index>(P.shape[1]);
  p.out_row = static_cast<Offset>(P.strides[0][0]);
  p.out_col = static_cast<Offset>(P.strides[0][1]);
  p.mat_row = static_cast<Offset>(P.strides[mat][0]);
  p.mat_col = static_cast<Offset>(P.strides[mat][1]);
  p.vec_stride = static_cast<Offset>(P.strides[vec][mv.row_vector ? 1 : 0]);
  p.vector_is_a = vec == 1;
  p.row_vector = mv.row_vector;
  p.div_cols = FastDivmod<Index>(static_cast<std::uint64_t>(P.shape[1]));
  p.sliding_factor = mv.sliding_factor;
  return p;
}

/// The operands of a matrix-vector plan: out, the matrix and the vector.
template <class T>
struct MatrixVectorPointers {
  T* out;
  const T* mat;
  const T* vec;
  explicit MatrixVectorPointers(const DensePlan& plan)
      : out(static_cast<T*>(plan.out)),
        mat(static_cast<const T*>(plan.matrix_vector.vector_operand == 1 ? plan.b : plan.a)),
        vec(static_cast<const T*>(plan.matrix_vector.vector_operand == 1 ? plan.a : plan.b)) {}
};

}  // namespace ewise::detail
