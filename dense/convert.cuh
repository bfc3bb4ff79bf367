// dense/convert.cuh — the converting kernel: any plan, operands and output of any dtypes, scalar
// operands by value. Each element is loaded in its own dtype and converted to the compute type
// C, combined by the ops.hpp functor, rounded to the result dtype and cast to the output's
// dtype in the same pass (ewise/promotion.hpp, src/element.hpp's casts on the host). The dtypes
// are kernel arguments, so one instantiation per (operation, C) serves every dtype pair. Loads
// go by the element's width alone and every load of an iteration is issued before any value is
// converted; the dtype is switched once for up to 8 elements (flat) or once an element
// (strided) after that.
// Two kernels, picked per launch:
//   flat     a rank-1 plan, out stride 1, each input stride 1 (at the same element offset modulo
//            a group as out) or a held value (stride 0, or a scalar): groups of 16 / W
//            elements, W the widest dtype's bytes (one instantiation per W), each group of an
//            operand one load; a per-element head up to out's group boundary and a tail.
//   strided  anything else: element by element through the plan's strides, each thread loading
//            its kConvertUnroll elements before it converts or stores any.
// Element access by width and dtype: convert_elements.cuh. Included by the convert_<group>.cu
// files.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "convert.hpp"
#include "convert_elements.cuh"
#include "ewise/detail/apply_chunk.hpp"
#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

/// Elements per thread and iteration, loaded before any is stored (strided path).
inline constexpr int kConvertUnroll = 4;
/// Threads per block of the strided kernel, whatever DenseOptions::threads says (at 1024 threads
/// a block the limit of 64 registers a thread made its f64 compute type spill); the flat
/// kernel's are FlatShape's.
inline constexpr int kConvertThreads = 256;

template <class Index>
struct ConvertArgs {
  Strided<Index> map;  ///< the plan (a scalar's strides are 0)
  Index n = 0;
  void* out = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  DType ta{}, tb{}, tout{};
  std::int8_t wa = 0, wb = 0, wout = 0;    ///< bytes of an element of a, b, out
  std::int8_t sa = 0, sb = 0, sout = 0;    ///< their base-2 logarithms
  bool a_scalar = false, b_scalar = false;
  std::uint64_t a_value = 0, b_value = 0;  ///< scalars, as C in the low bytes
  DType compute{};                         ///< CallTypes' compute dtype
  bool a_round = false, b_round = false;   ///< CallTypes::a_round, b_round
  DType tresult{};                         ///< the result dtype
  bool result_round = false;  ///< round to tresult first: a 16-bit float, out another dtype
  // the flat kernel's (see the file comment)
  bool a_held = false, b_held = false;  ///< stride 0 (or a scalar): one value for all elements
  Index head = 0, tiles = 0;            ///< per-element head, then tiles, then the tail
};

/// Whether F reads tables per element in compute type C: ops::Pow's f32 series (pow_f32.hpp),
/// two random gathers an element, which the flat kernel reads from a copy in shared memory (H200
/// test kernel, x ** y: 0.94 of a copy's time from shared memory, 0.91 from L1).
template <class F, class C>
inline constexpr bool kStagedTables = std::is_same_v<F, ops::Pow> && std::is_same_v<C, float>;

/// Copies the static tables of ops::Pow's f32 series to `staged` (shared memory), by the whole
/// block: every thread of it must call this.
__device__ __forceinline__ void stage_pow_tables(ops::detail::PowTables& staged) {
  const auto* from = reinterpret_cast<const uint4*>(&ops::detail::pow_tables());
  auto* to = reinterpret_cast<uint4*>(&staged);
  for (unsigned i = threadIdx.x; i < sizeof staged / sizeof(uint4); i += blockDim.x)
    to[i] = from[i];
  __syncthreads();
}

/// ops::Pow in the f32 compute type with its series' tables read from `tables` (the flat kernel's
/// copy in shared memory): its fast path with them, the rest (rare) as Pow itself.
struct PowStagedTables {
  const ops::detail::PowTables* tables;
  __device__ bool fast(float a, float b, float& r) const {
    return ops::detail::pow_f32_fast(a, b, r, *tables);
  }
  __device__ float operator()(float a, float b) const { return ops::Pow{}(a, b); }
};

/// The operations whose functor is a long sequence (a libm call, divmod's steps): at 40
/// registers a thread they spilled.
template <class F>
inline constexpr bool kLongOp = std::is_same_v<F, ops::Pow> || std::is_same_v<F, ops::FloorDiv> ||
                                std::is_same_v<F, ops::Remainder> ||
                                std::is_same_v<F, ops::detail::PowSmallInt> ||
                                std::is_same_v<F, ops::detail::PowSmallIntExact>;

/// The flat kernel's shape for operation F in compute type C, widest dtype W bytes. Each lane
/// takes `groups` groups of G = 16 / W elements a tile and converts, combines and packs them
/// `chunk` elements at a time (each dtype switched once a chunk; 32 bytes of C an operand at
/// most, more spilled); `threads` a block, `blocks` resident an SM (launch bounds: 64 registers
/// a thread at 8 blocks, 40 at 12).
///   * two groups, 12 blocks: 40 registers, 1536 threads an SM (H200: 2 to 6% faster than four
///     groups at 64 registers for u8, f16, f32 and bf16 + f32);
///   * four groups where W = 8 (two groups of 2 elements left too little work a thread: f64
///     division 0.84 of cub, against 0.95) or where the result is bool and W = 4 (a lane's
///     groups of 4 bools are 4-byte stores: two groups ran f32 > 0.5 at 0.89 of cub, four at
///     0.97);
///   * two groups at 8 blocks for the long operations.
template <class F, class C, int W>
struct FlatShape {
  using R = decltype(F{}(C{}, C{}));
  static constexpr bool four = !kLongOp<F> && (W == 8 || (W == 4 && std::is_same_v<R, bool>));
  static constexpr int groups = four ? 4 : 2;
  static constexpr int chunk = std::min<int>(groups * 16 / W, 32 / std::max<int>(4, sizeof(C)));
  static constexpr int threads = 128;
  static constexpr int blocks = four || kLongOp<F> ? 8 : 12;
};

/// The flat path: a per-element head up to out's group boundary; tiles of 32 * NG groups of
/// G = 16 / W elements, one tile a warp, each lane's NG groups 32 groups apart (every load and
/// store of a warp contiguous); a per-element tail. A lane loads all its groups of both
/// operands (by width, switched once) before it converts any; then per chunk of S elements: the
/// conversions (each dtype switched once), the roundings the call asks (uniform branches), the
/// operation, the cast into out's words (switched once); then its groups' stores.
template <class F, class C, int W, class Shape>
__device__ __forceinline__ void flat_tiles(const F& f, const ConvertArgs<std::uint64_t>& p) {
  using Index = std::uint64_t;
  using R = decltype(f(C{}, C{}));
  constexpr int G = 16 / W, NG = Shape::groups, S = Shape::chunk;
  static_assert((NG * G) % S == 0, "a lane's elements are whole chunks");
  // a scalar operand's value, or a held operand's one element
  C a0 = scalar_value<C>(p.a_value), b0 = scalar_value<C>(p.b_value);
  if (p.a_held && !p.a_scalar) {
    a0 = bits_as<C>(p.ta, load_bits(p.wa, p.a, 0));
    if (p.a_round) a0 = round16(p.compute, a0);
  }
  if (p.b_held && !p.b_scalar) {
    b0 = bits_as<C>(p.tb, load_bits(p.wb, p.b, 0));
    if (p.b_round) b0 = round16(p.compute, b0);
  }
  const Index tid = global_thread<Index>(), nthreads = grid_threads<Index>();
  const auto one = [&](Index i) {
    C x = a0, y = b0;
    if (!p.a_held) {
      x = bits_as<C>(p.ta, load_bits(p.wa, p.a, i));
      if (p.a_round) x = round16(p.compute, x);
    }
    if (!p.b_held) {
      y = bits_as<C>(p.tb, load_bits(p.wb, p.b, i));
      if (p.b_round) y = round16(p.compute, y);
    }
    R r = f(x, y);
    if (p.result_round) r = round16(p.tresult, r);
    store_cast(p.tout, p.out, i, r);
  };
  for (Index i = tid; i < p.head; i += nthreads) one(i);
  const Index lane = threadIdx.x % 32;
  for (Index tile = tid / 32; tile < p.tiles; tile += nthreads / 32) {
    const Index first = p.head + (tile * (32 * NG) + lane) * G;  // the lane's first element
    // zeroed: no value lives from one iteration to the next
    RawGroup ra[NG] = {}, rb[NG] = {};
    if (!p.a_held) load_groups<G>(p.wa, static_cast<const char*>(p.a) + (first << p.sa), ra);
    if (!p.b_held) load_groups<G>(p.wb, static_cast<const char*>(p.b) + (first << p.sb), rb);
    std::uint32_t w[NG][4] = {};
#pragma unroll
    for (int k0 = 0; k0 < NG * G; k0 += S) {
      C x[S] = {}, y[S] = {};
      if (p.a_held) {
#pragma unroll
        for (int e = 0; e < S; ++e) x[e] = a0;
      } else {
        convert_chunk<G>(p.ta, ra, k0, x);
        if (p.a_round)
#pragma unroll
          for (int e = 0; e < S; ++e) x[e] = round16(p.compute, x[e]);
      }
      if (p.b_held) {
#pragma unroll
        for (int e = 0; e < S; ++e) y[e] = b0;
      } else {
        convert_chunk<G>(p.tb, rb, k0, y);
        if (p.b_round)
#pragma unroll
          for (int e = 0; e < S; ++e) y[e] = round16(p.compute, y[e]);
      }
      R r[S];
      apply_chunk(f, x, y, r);
      if (p.result_round)
#pragma unroll
        for (int e = 0; e < S; ++e) r[e] = round16(p.tresult, r[e]);
      pack_chunk<G>(p.tout, r, k0, w);
    }
    store_groups<G>(p.wout, static_cast<char*>(p.out) + (first << p.sout), w);
  }
  for (Index i = p.head + p.tiles * (32 * NG * G) + tid; i < p.n; i += nthreads) one(i);
}

/// The flat kernel: flat_tiles, with F's tables (kStagedTables) first copied to shared memory by
/// the whole block.
template <class F, class C, int W, class Shape = FlatShape<F, C, W>>
__global__ void __launch_bounds__(Shape::threads, Shape::blocks)
    convert_flat_kernel(F f, ConvertArgs<std::uint64_t> p) {
  if constexpr (kStagedTables<F, C>) {
    __shared__ ops::detail::PowTables staged;
    stage_pow_tables(staged);
    flat_tiles<PowStagedTables, C, W, Shape>(PowStagedTables{&staged}, p);
  } else {
    flat_tiles<F, C, W, Shape>(f, p);
  }
}

template <class F, class C, class Index>
__global__ void __launch_bounds__(kConvertThreads)
    convert_strided_kernel(F f, ConvertArgs<Index> p) {
  using Offset = typename Strided<Index>::Offset;
  using R = decltype(f(C{}, C{}));
  constexpr int U = kConvertUnroll;
  const C a0 = scalar_value<C>(p.a_value), b0 = scalar_value<C>(p.b_value);
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x * U;
  for (Index base = static_cast<Index>(blockIdx.x) * blockDim.x * U + threadIdx.x; base < p.n;
       base += step) {
    std::uint64_t x[U] = {}, y[U] = {};  // bits, converted after every load was issued
    Offset at[U] = {};  // (zeroed: no value lives from one iteration to the next)
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const Index i = base + static_cast<Index>(u) * blockDim.x;
      if (i < p.n) {
        Offset off[3];
        p.map.offsets(i, off);
        at[u] = off[0];
        if (!p.a_scalar) x[u] = load_bits(p.wa, p.a, off[1]);
        if (!p.b_scalar) y[u] = load_bits(p.wb, p.b, off[2]);
      }
    }
    C xa[U], yb[U];  // (past n: the loads' zero bits, computed and not stored)
#pragma unroll
    for (int u = 0; u < U; ++u) {
      xa[u] = p.a_scalar ? a0 : bits_as<C>(p.ta, x[u]);
      yb[u] = p.b_scalar ? b0 : bits_as<C>(p.tb, y[u]);
      if (p.a_round) xa[u] = round16(p.compute, xa[u]);  // a_round: not a scalar
      if (p.b_round) yb[u] = round16(p.compute, yb[u]);
    }
    R r[U];
    apply_chunk(f, xa, yb, r);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (base + static_cast<Index>(u) * blockDim.x < p.n) {
        if (p.result_round) r[u] = round16(p.tresult, r[u]);
        store_cast(p.tout, p.out, at[u], r[u]);
      }
    }
  }
}

/// The element offset of `ptr` within a group of g elements of dtype d.
inline std::int64_t group_phase(const void* ptr, DType d, int g) {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(ptr) / dtype_size(d) % g);
}

/// Whether the flat kernel with groups of g elements runs the call (see the file comment).
inline bool flat_plan(const CallTypes& t, const DensePlan& plan, int g) {
  const BroadcastPlan& P = plan.plan;
  if (P.rank() != 1 || P.strides[0][0] != 1) return false;
  const std::int64_t out_phase = group_phase(plan.out, t.out, g);
  const auto fits = [&](int i, const void* ptr, DType d, bool scalar) {
    return scalar || P.strides[i][0] == 0 ||
           (P.strides[i][0] == 1 && group_phase(ptr, d, g) == out_phase);
  };
  return fits(1, plan.a, t.a, t.a_scalar) && fits(2, plan.b, t.b, t.b_scalar);
}

/// Whether the flat kernel has an instantiation of widest dtype W bytes for C: the S elements
/// of an operand it converts at a time in at most 8 registers; an 8-byte C only W = 8 (at W = 4
/// f64 division spilled).
template <class C, int W>
inline constexpr bool kFlatWidth =
    sizeof(C) < 8 ? std::min(16 / W, 8) * sizeof(C) <= 32 : W == 8;

/// Launches the planned call: the flat kernel (64-bit indices: its index arithmetic is a few
/// adds, and one instantiation serves every size) where flat_plan accepts it, with the
/// narrowest W that holds every loaded operand's and out's dtype; the strided one (32-bit
/// indices where they fit) otherwise.
template <class F, class C>
void launch_converting(const F& f, const CallTypes& t, const DensePlan& plan,
                       cudaStream_t stream) {
  const BroadcastPlan& P = plan.plan;
  const auto run = [&](auto index, auto width) {
    using Index = typename decltype(index)::type;
    constexpr int W = decltype(width)::value;
    ConvertArgs<Index> p;
    p.n = static_cast<Index>(plan.numel);
    p.out = plan.out;
    p.a = plan.a;
    p.b = plan.b;
    p.ta = t.a;
    p.tb = t.b;
    p.tout = t.out;
    p.wa = static_cast<std::int8_t>(dtype_size(t.a));
    p.wb = static_cast<std::int8_t>(dtype_size(t.b));
    p.wout = static_cast<std::int8_t>(dtype_size(t.out));
    const auto log2 = [](int w) { return static_cast<std::int8_t>(w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : 3); };
    p.sa = log2(p.wa);
    p.sb = log2(p.wb);
    p.sout = log2(p.wout);
    p.tresult = t.types.result;
    p.result_round = t.types.result != t.out &&
                     (t.types.result == DType::f16 || t.types.result == DType::bf16);
    p.a_scalar = t.a_scalar;
    p.b_scalar = t.b_scalar;
    p.a_value = t.a_value;
    p.b_value = t.b_value;
    p.compute = t.types.compute;
    p.a_round = t.a_round;
    p.b_round = t.b_round;
    GridPlan grid = plan.grid;
    std::int64_t per_thread = kConvertUnroll;
    int threads = kConvertThreads;
    void (*kernel)(F, ConvertArgs<Index>) = nullptr;
    if constexpr (W > 0) {
      constexpr int G = 16 / W;
      p.a_held = t.a_scalar || P.strides[1][0] == 0;
      p.b_held = t.b_scalar || P.strides[2][0] == 0;
      const std::int64_t head =
          std::min<std::int64_t>((G - group_phase(plan.out, t.out, G)) % G, plan.numel);
      p.head = static_cast<Index>(head);
      using Shape = FlatShape<F, C, W>;
      constexpr int NG = Shape::groups;
      p.tiles = static_cast<Index>((plan.numel - head) / (32 * NG * G));
      per_thread = NG * G;
      threads = Shape::threads;
      grid.covers_work = true;  // every tile its own warp: no wave of loops
      kernel = convert_flat_kernel<F, C, W>;
    } else {
      int dims[kMaxRank];
      for (int d = 0; d < P.rank(); ++d) dims[d] = d;
      p.map = make_strided<Index>(P, dims, P.rank());
      kernel = convert_strided_kernel<F, C, Index>;
    }
    const std::int64_t per_block = std::int64_t{threads} * per_thread;
    grid.need = (plan.numel + per_block - 1) / per_block;
    launch("converting", kernel, grid_blocks(kernel, grid, threads), threads, 0, stream, f, p);
  };
  const auto loaded = [&](int i, DType d, bool scalar) {
    return scalar || P.strides[i][0] == 0 ? std::size_t{0} : dtype_size(d);
  };
  const std::size_t widest = std::max({loaded(1, t.a, t.a_scalar), loaded(2, t.b, t.b_scalar),
                                       dtype_size(t.out)});
  bool launched = false;
  const auto flat = [&](auto width) {
    constexpr int W = decltype(width)::value;
    if constexpr (kFlatWidth<C, W>) {
      if (!launched && widest <= W && flat_plan(t, plan, 16 / W)) {
        run(TypeTag<std::uint64_t>{}, width);
        launched = true;
      }
    }
  };
  flat(std::integral_constant<int, 1>{});
  flat(std::integral_constant<int, 2>{});
  flat(std::integral_constant<int, 4>{});
  flat(std::integral_constant<int, 8>{});
  if (!launched)
    with_index(plan.wide, [&](auto index) { run(index, std::integral_constant<int, 0>{}); });
}

/// Runs the call if its operation is one of Ops (ops:: functor types), in its compute type.
template <class... Ops>
void run_converting_of(const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  with_op(t.op, [&](auto f) {
    using F = decltype(f);
    if constexpr ((std::is_same_v<F, Ops> || ...)) {
      with_call_compute(t, [&](auto tag) {
        using C = typename decltype(tag)::type;
        if constexpr (kComputes<F, C>) launch_converting<F, C>(f, t, plan, stream);
        else EWISE_EXPECTS(false, "internal: ", op_name(t.op), " does not compute in ",
                           dtype_name(t.types.compute));
      });
    } else {
      EWISE_EXPECTS(false, "internal: ", op_name(t.op), " is not in this group");
    }
  });
}

}  // namespace ewise::detail
