// dense/convert.cuh — the converting kernel: any plan, operands and output of any dtypes, scalar
// operands by value. Each element is loaded in its own dtype and converted to the compute type
// C, combined by the ops.hpp functor, rounded to the result dtype and cast to the output's
// dtype in the same pass (ewise/promotion.hpp, src/element.hpp's casts on the host). The dtypes
// are kernel arguments, so one instantiation per (operation, C) serves every dtype pair.
// Two kernels, picked per launch:
//   flat     a rank-1 plan, out stride 1, each input stride 1 (at the same element offset modulo
//            kChunk as out) or a held value (stride 0, or a scalar): chunks of kChunk elements,
//            each operand loaded and stored as one vector of its own dtype, the dtype switched
//            once per chunk, not per element; a per-element head up to out's chunk boundary and
//            a tail.
//   strided  anything else: element by element through the plan's strides, each thread loading
//            its kConvertUnroll elements before it converts or stores any.
// Included by the convert_<group>.cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "convert.hpp"
#include "ewise/detail/dense/common.cuh"
#include "ewise/detail/launch.cuh"

namespace ewise::detail {

/// Elements per thread and iteration, loaded before any is stored (strided path).
inline constexpr int kConvertUnroll = 4;
/// Elements per chunk (flat path): a 16-byte vector of 2-byte dtypes, two of f32, 8 bytes of
/// 1-byte dtypes; each thread takes chunk_unroll(sizeof(C)) chunks per iteration (two chunks
/// of an 8-byte C would hold 64 registers of operands alone).
inline constexpr int kChunk = 8;
constexpr int chunk_unroll(std::size_t compute_bytes) { return compute_bytes >= 8 ? 1 : 2; }
/// Threads per block, whatever DenseOptions::threads says: the register budget of 255 per
/// thread that the unrolled chunks need (at 1024 threads the limit of 64 made f64 spill).
inline constexpr int kConvertThreads = 256;

template <class Index>
struct ConvertArgs {
  Strided<Index> map;  ///< the plan (a scalar's strides are 0)
  Index n = 0;
  void* out = nullptr;
  const void* a = nullptr;
  const void* b = nullptr;
  DType ta{}, tb{}, tout{}, tresult{};
  bool a_scalar = false, b_scalar = false;
  std::uint64_t a_value = 0, b_value = 0;  ///< scalars, as C in the low bytes
  DType compute{};                         ///< CallTypes' compute dtype
  bool a_round = false, b_round = false;   ///< CallTypes::a_round, b_round
  // the flat kernel's (see the file comment)
  bool a_held = false, b_held = false;  ///< stride 0 (or a scalar): one value for all elements
  Index head = 0, chunks = 0;           ///< per-element head, then chunks, then the tail
};

/// x as C: to bool, nonzero; otherwise C's conversion (integers wrap; integers to floating
/// round to nearest). Floating to integer is never asked (op_types, same_kind).
template <class C, class X>
EWISE_DEVICE C convert_to(X x) {
  if constexpr (std::is_same_v<C, bool>) return x != X(0);
  else return static_cast<C>(x);
}

/// Calls f(TypeTag<T>{}) with the device storage type T of dtype t.
template <class G>
EWISE_DEVICE void with_storage(DType t, G&& g) {
  switch (t) {
    case DType::f16: return g(TypeTag<__half>{});
    case DType::bf16: return g(TypeTag<__nv_bfloat16>{});
    case DType::f32: return g(TypeTag<float>{});
    case DType::f64: return g(TypeTag<double>{});
    case DType::i32: return g(TypeTag<std::int32_t>{});
    case DType::i64: return g(TypeTag<std::int64_t>{});
    case DType::b8: return g(TypeTag<bool>{});
    case DType::i8: return g(TypeTag<std::int8_t>{});
    case DType::u8: return g(TypeTag<std::uint8_t>{});
    case DType::i16: return g(TypeTag<std::int16_t>{});
    case DType::u16: return g(TypeTag<std::uint16_t>{});
    case DType::u32: return g(TypeTag<std::uint32_t>{});
    case DType::u64: return g(TypeTag<std::uint64_t>{});
  }
}

/// The value of storage type T as the widest type it converts through: float for 16-bit floats.
template <class T>
EWISE_DEVICE auto widen(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>) return __bfloat162float(v);
  else return v;
}

/// Element `off` of `base`, of dtype t, as C.
template <class C, class Offset>
EWISE_DEVICE C load_as(DType t, const void* base, Offset off) {
  C x{};
  with_storage(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    x = convert_to<C>(widen(static_cast<const T*>(base)[off]));
  });
  return x;
}

/// x (bool, an integer, float or double) as device storage type T: floats rounded once to
/// nearest-even, a NaN as the canonical NaN, integers wrapped.
template <class T, class X>
EWISE_DEVICE T cast_to(X x) {
  constexpr bool from_float = std::is_same_v<X, float>;
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    if constexpr (std::is_floating_point_v<X>) {
      if (x != x) {  // the canonical NaN, 0x7FFF in both formats
        __half_raw nan;
        nan.x = 0x7FFF;
        T r;
        std::memcpy(&r, &nan, sizeof r);
        return r;
      }
    }
    if constexpr (std::is_same_v<T, __half>)
      return from_float ? __float2half_rn(static_cast<float>(x)) : __double2half(static_cast<double>(x));
    else
      return from_float ? __float2bfloat16_rn(static_cast<float>(x))
                        : __double2bfloat16(static_cast<double>(x));
  } else if constexpr (std::is_floating_point_v<T>) {
    return canonical_nan(static_cast<T>(x));
  } else {
    return convert_to<T>(x);
  }
}

/// x cast to dtype t (cast_to) and stored at element `off` of `base`.
template <class X, class Offset>
EWISE_DEVICE void store_cast(DType t, void* base, Offset off, X x) {
  with_storage(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    static_cast<T*>(base)[off] = cast_to<T>(x);
  });
}

/// kChunk elements of dtype t from element `first` of `base` (aligned to the chunk) as C: one
/// vector load, the dtype switched once.
template <class C, class Index>
EWISE_DEVICE void load_chunk(DType t, const void* base, Index first, C (&x)[kChunk]) {
  with_storage(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Pack<T, kChunk> v =
        *reinterpret_cast<const Pack<T, kChunk>*>(static_cast<const T*>(base) + first);
#pragma unroll
    for (int e = 0; e < kChunk; ++e) x[e] = convert_to<C>(widen(v.v[e]));
  });
}

/// kChunk results stored from element `first` of `base` (aligned to the chunk) in dtype t: the
/// dtype switched once, one vector store.
template <class V, class Index>
EWISE_DEVICE void store_chunk(DType t, void* base, Index first, const V (&v)[kChunk]) {
  with_storage(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    Pack<T, kChunk> r;
#pragma unroll
    for (int e = 0; e < kChunk; ++e) r.v[e] = cast_to<T>(v[e]);
    *reinterpret_cast<Pack<T, kChunk>*>(static_cast<T*>(base) + first) = r;
  });
}

/// x rounded to 16-bit compute dtype t (f16 or bf16) when `round` (CallTypes::a_round).
template <class C>
EWISE_DEVICE C round_operand(bool round, DType t, C x) {
  if constexpr (std::is_same_v<C, float>) {
    if (round)
      return t == DType::f16 ? __half2float(__float2half_rn(x))
                             : __bfloat162float(__float2bfloat16_rn(x));
  }
  return x;
}

/// v rounded to the result dtype when that is a 16-bit float and the output's dtype another.
template <class V>
EWISE_DEVICE V round_to_result(DType result, DType out, V v) {
  if constexpr (std::is_same_v<V, float>) {
    if (result != out && (result == DType::f16 || result == DType::bf16))
      return result == DType::f16 ? __half2float(__float2half_rn(v))
                                  : __bfloat162float(__float2bfloat16_rn(v));
  }
  return v;
}

/// The flat path: a per-element head up to out's chunk boundary, chunks, a per-element tail.
template <class F, class C, class Index>
EWISE_DEVICE void convert_flat(const F& f, const ConvertArgs<Index>& p, C a0, C b0) {
  using R = decltype(f(a0, b0));
  const Index tid = global_thread<Index>(), nthreads = grid_threads<Index>();
  const auto one = [&](Index i) {
    const C x = p.a_held ? a0 : round_operand(p.a_round, p.compute, load_as<C>(p.ta, p.a, i));
    const C y = p.b_held ? b0 : round_operand(p.b_round, p.compute, load_as<C>(p.tb, p.b, i));
    store_cast(p.tout, p.out, i, round_to_result(p.tresult, p.tout, f(x, y)));
  };
  for (Index i = tid; i < p.head; i += nthreads) one(i);
  constexpr int U = chunk_unroll(sizeof(C));
  for (Index c0 = tid; c0 < p.chunks; c0 += nthreads * U) {
    C x[U][kChunk], y[U][kChunk];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const Index c = c0 + static_cast<Index>(u) * nthreads;
      if (c < p.chunks) {
        const Index first = p.head + c * kChunk;
        if (p.a_held) {
#pragma unroll
          for (int e = 0; e < kChunk; ++e) x[u][e] = a0;
        } else {
          load_chunk(p.ta, p.a, first, x[u]);
        }
        if (p.b_held) {
#pragma unroll
          for (int e = 0; e < kChunk; ++e) y[u][e] = b0;
        } else {
          load_chunk(p.tb, p.b, first, y[u]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const Index c = c0 + static_cast<Index>(u) * nthreads;
      if (c < p.chunks) {
        // Operands rounded here, after every chunk's loads were issued (a branch between the
        // loads kept the second chunk's from starting before the first one's data arrived).
        R r[kChunk];
#pragma unroll
        for (int e = 0; e < kChunk; ++e)
          r[e] = round_to_result(p.tresult, p.tout,
                                 f(p.a_held ? x[u][e] : round_operand(p.a_round, p.compute, x[u][e]),
                                   p.b_held ? y[u][e] : round_operand(p.b_round, p.compute, y[u][e])));
        store_chunk(p.tout, p.out, p.head + c * kChunk, r);
      }
    }
  }
  for (Index i = p.head + p.chunks * kChunk + tid; i < p.n; i += nthreads) one(i);
}

/// A scalar operand's value (by value in the arguments) as C, else C{}.
template <class C, class Index>
EWISE_DEVICE void scalar_values(const ConvertArgs<Index>& p, C& a0, C& b0) {
  std::memcpy(&a0, &p.a_value, sizeof a0);
  std::memcpy(&b0, &p.b_value, sizeof b0);
}

template <class F, class C, class Index>
__global__ void __launch_bounds__(kConvertThreads)
    convert_flat_kernel(F f, ConvertArgs<Index> p) {
  C a0, b0;
  scalar_values(p, a0, b0);
  // A held operand from memory (stride 0): its one element, read once per thread.
  if (p.a_held && !p.a_scalar) a0 = round_operand(p.a_round, p.compute, load_as<C>(p.ta, p.a, 0));
  if (p.b_held && !p.b_scalar) b0 = round_operand(p.b_round, p.compute, load_as<C>(p.tb, p.b, 0));
  convert_flat(f, p, a0, b0);
}

template <class F, class C, class Index>
__global__ void __launch_bounds__(kConvertThreads)
    convert_strided_kernel(F f, ConvertArgs<Index> p) {
  using Offset = typename Strided<Index>::Offset;
  constexpr int U = kConvertUnroll;
  C av, bv;
  scalar_values(p, av, bv);
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x * U;
  for (Index base = static_cast<Index>(blockIdx.x) * blockDim.x * U + threadIdx.x; base < p.n;
       base += step) {
    C x[U], y[U];
    Offset at[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const Index i = base + static_cast<Index>(u) * blockDim.x;
      if (i < p.n) {
        Offset off[3];
        p.map.offsets(i, off);
        at[u] = off[0];
        x[u] = p.a_scalar ? av : load_as<C>(p.ta, p.a, off[1]);
        y[u] = p.b_scalar ? bv : load_as<C>(p.tb, p.b, off[2]);
      }
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const Index i = base + static_cast<Index>(u) * blockDim.x;
      if (i < p.n) {  // operands rounded after every load was issued (see convert_flat)
        const C xa = p.a_scalar ? x[u] : round_operand(p.a_round, p.compute, x[u]);
        const C yb = p.b_scalar ? y[u] : round_operand(p.b_round, p.compute, y[u]);
        store_cast(p.tout, p.out, at[u], round_to_result(p.tresult, p.tout, f(xa, yb)));
      }
    }
  }
}

/// The element offset of `ptr` within a chunk, in elements of dtype d.
inline std::int64_t chunk_phase(const void* ptr, DType d) {
  return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(ptr) / dtype_size(d) % kChunk);
}

/// Whether the flat kernel runs the call (see the file comment).
inline bool flat_plan(const CallTypes& t, const DensePlan& plan) {
  const BroadcastPlan& P = plan.plan;
  if (P.rank() != 1 || P.strides[0][0] != 1) return false;
  const std::int64_t out_phase = chunk_phase(plan.out, t.out);
  const auto fits = [&](int k, const void* ptr, DType d, bool scalar) {
    return scalar || P.strides[k][0] == 0 ||
           (P.strides[k][0] == 1 && chunk_phase(ptr, d) == out_phase);
  };
  return fits(1, plan.a, t.a, t.a_scalar) && fits(2, plan.b, t.b, t.b_scalar);
}

/// The flat kernel's fields of a call flat_plan accepts.
template <class Index>
void set_flat(ConvertArgs<Index>& p, const CallTypes& t, const DensePlan& plan) {
  const BroadcastPlan& P = plan.plan;
  p.a_held = t.a_scalar || P.strides[1][0] == 0;
  p.b_held = t.b_scalar || P.strides[2][0] == 0;
  const std::int64_t head =
      std::min<std::int64_t>((kChunk - chunk_phase(plan.out, t.out)) % kChunk, plan.numel);
  p.head = static_cast<Index>(head);
  p.chunks = static_cast<Index>((plan.numel - head) / kChunk);
}

/// Launches the flat kernel (64-bit indices: its index arithmetic is a few adds, and one
/// instantiation serves every size) or the strided one (32-bit indices where they fit) for
/// the planned call.
template <class F, class C>
void launch_converting(const F& f, const CallTypes& t, const DensePlan& plan,
                       cudaStream_t stream) {
  const auto run = [&](auto index, auto flat) {
    using Index = typename decltype(index)::type;
    ConvertArgs<Index> p;
    p.n = static_cast<Index>(plan.numel);
    p.out = plan.out;
    p.a = plan.a;
    p.b = plan.b;
    p.ta = t.a;
    p.tb = t.b;
    p.tout = t.out;
    p.tresult = t.types.result;
    p.a_scalar = t.a_scalar;
    p.b_scalar = t.b_scalar;
    p.a_value = t.a_value;
    p.b_value = t.b_value;
    p.compute = t.types.compute;
    p.a_round = t.a_round;
    p.b_round = t.b_round;
    GridPlan grid = plan.grid;
    std::int64_t per_thread = kConvertUnroll;
    void (*kernel)(F, ConvertArgs<Index>) = convert_strided_kernel<F, C, Index>;
    if constexpr (decltype(flat)::value) {
      set_flat(p, t, plan);
      per_thread = std::int64_t{kChunk} * chunk_unroll(sizeof(C));
      kernel = convert_flat_kernel<F, C, Index>;
    } else {
      int dims[kMaxRank];
      for (int d = 0; d < plan.plan.rank(); ++d) dims[d] = d;
      p.map = make_strided<Index>(plan.plan, dims, plan.plan.rank());
    }
    const std::int64_t per_block = std::int64_t{kConvertThreads} * per_thread;
    grid.need = (plan.numel + per_block - 1) / per_block;
    launch("converting", kernel, grid_blocks(kernel, grid, kConvertThreads), kConvertThreads, 0,
           stream, f, p);
  };
  if (flat_plan(t, plan)) return run(TypeTag<std::uint64_t>{}, std::true_type{});
  with_index(plan.wide, [&](auto index) { run(index, std::false_type{}); });
}

/// Runs the call if its operation is one of Ops (ops:: functor types), in its compute type.
template <class... Ops>
void run_converting_of(const CallTypes& t, const DensePlan& plan, cudaStream_t stream) {
  with_op(t.op, [&](auto f) {
    using F = decltype(f);
    if constexpr ((std::is_same_v<F, Ops> || ...)) {
      with_compute_type(t.types.compute, [&](auto tag) {
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
