// ewise/detail/apply_chunk.hpp — an operation functor applied to a chunk of elements, its fast
// path first and its full call only for the elements the fast path refused: the converting GPU
// kernel's and the CPU backend's (power in a float compute type: ops::Pow and pow_f32.hpp's
// functors for a scalar integer exponent).
#pragma once

#include <type_traits>
#include <utility>

#include "ewise/ops.hpp"

// EWISE_EXEC_CHECK_DISABLE: the functors of device code are often device functions alone
// (a kernel's staged-table Pow, user functors), called here from host-and-device templates that
// only a kernel instantiates.
#if defined(__CUDACC__)
#define EWISE_HD_NOINLINE __host__ __device__ __noinline__
#define EWISE_EXEC_CHECK_DISABLE _Pragma("nv_exec_check_disable")
#else
#define EWISE_HD_NOINLINE __attribute__((noinline))
#define EWISE_EXEC_CHECK_DISABLE
#endif
// Unrolled in the device pass and by a host compiler (the CPU backend); nvcc's host pass, whose
// front end knows neither pragma, compiles these loops for no backend's use.
#if defined(__CUDA_ARCH__)
#define EWISE_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)
#define EWISE_UNROLL
#else
#define EWISE_UNROLL _Pragma("GCC unroll 16")
#endif

namespace ewise::detail {

/// Whether F has a fast path for compute type C: `bool f.fast(x, y, r)`, false where only
/// f(x, y) gives r (ops::Pow).
template <class F, class C, class = void>
inline constexpr bool kHasFast = false;
template <class F, class C>
inline constexpr bool kHasFast<
    F, C, std::void_t<decltype(std::declval<const F&>().fast(C{}, C{}, std::declval<C&>()))>> =
    true;

/// Whether F takes a chunk of S elements of C at a time with a held operand (its own: pow_f32.hpp's
/// PowSmallInt and PowSmallIntExact): `unsigned f.chunk(x, r)`, the refused elements as bits
/// (PowSmallIntExact refuses none).
template <class F, class C, int S, class = void>
inline constexpr bool kHasChunk = false;
template <class F, class C, int S>
inline constexpr bool kHasChunk<F, C, S,
                                std::void_t<decltype(std::declval<const F&>().chunk(
                                    std::declval<const C (&)[S]>(), std::declval<C (&)[S]>()))>> =
    true;

/// f(x, y) out of line: the refused elements' call in apply_chunk. Inlined there, f's own fast
/// path was merged with the chunk's (the same inputs, the same values), which kept every
/// element's intermediate values live across the chunk: f32 power spilled 200 bytes a thread
/// and ran x ** 0.7 at half its speed (H100).
EWISE_EXEC_CHECK_DISABLE
template <class F, class C>
EWISE_HD_NOINLINE auto call_refused(const F& f, C x, C y) {
  return f(x, y);
}

/// r[e] = f(x[e], y[e]) for a chunk of S elements. A functor with a fast path runs it for all S
/// first (element by element, or the whole chunk at once) and f itself (call_refused) only for
/// the elements it refused, after the chunk: its rare path's code (f64 pow, ~200 instructions)
/// sits once outside the unrolled loop instead of in every element's sequence, where it took the
/// registers of the common path.
EWISE_EXEC_CHECK_DISABLE
template <class F, class C, class R, int S>
EWISE_HD void apply_chunk(const F& f, const C (&x)[S], const C (&y)[S], R (&r)[S]) {
  unsigned refused = 0;
  if constexpr (kHasChunk<F, C, S>) {
    refused = f.chunk(x, r);
  } else if constexpr (kHasFast<F, C>) {
    EWISE_UNROLL
    for (int e = 0; e < S; ++e)
      if (!f.fast(x[e], y[e], r[e])) refused |= 1u << e;
  } else {
    EWISE_UNROLL
    for (int e = 0; e < S; ++e) r[e] = f(x[e], y[e]);
  }
  if (refused != 0) {
    EWISE_UNROLL
    for (int e = 0; e < S; ++e)
      if (refused >> e & 1u) r[e] = call_refused(f, x[e], y[e]);
  }
}

}  // namespace ewise::detail
