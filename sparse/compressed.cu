// sparse/compressed.cu — one pass over a compressed (CSR or CSC) operand's entries on the GPU,
// with the check of its offsets and indices: its major indices spelled out for the COO
// operations to run on, or a canonical operand's product with a dense or scalar factor made
// in place of the pattern it keeps (compressed.cpp).
#include <algorithm>
#include <cstdint>

#include "entries_pass.cuh"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "internal.hpp"
#include "offsets.cuh"
#include "policy.hpp"
#include "status.cuh"

namespace ewise::sparse_detail {
namespace {

/// Entries a lane of compressed_entries_kernel takes a step (a warp: 32 times as many,
/// interleaved, so that each load and store of the step is one coalesced access).
constexpr int kCompressedItems = 8;

/// The operand of compressed_entries_kernel, and the checks it makes with `bad` (kExpandCheckWords
/// words set to ~0, each keeping its first failure): offsets decreasing at m (offsets[m] >
/// offsets[m + 1]) → bad[0] = m; offsets[0] != 0 or offsets[nmajor] != nnz → bad[1] = 0; entry
/// k's minor index outside [0, nminor) → bad[2] = k; with `canonical`, entry k not after its
/// predecessor in its slice → bad[3] = k. With out_offsets, the offsets are copied there.
template <class I>
struct CompressedPass {
  const I* offsets;
  const I* indices;
  std::int64_t nmajor, nminor, nnz;
  bool canonical;
  unsigned long long* bad;
  I* out_offsets;
};

/// Every entry of p through the sink, in three steps per entry k (major index m, minor index
/// c, in = c inside [0, nminor)): x = sink.load(k), what the entry holds; f = sink.gather(m, c,
/// in), what its major index gives; sink.store(k, c, x, f). The checks of CompressedPass in the
/// same pass. A warp takes 32 * kCompressedItems consecutive entries a step, each lane every
/// 32nd (its loads and stores coalesced). The major indices are found for consecutive entries
/// instead, each lane kCompressedItems of them (a bisection for the first, then advance_major:
/// about one load an entry), and handed to the interleaved lanes through shared memory: an
/// interleaved lane's entries lie 32 apart, across as many short slices, and galloping between
/// them made a power-law CSR ⊙ CSR 11% slower (H200: docs/benchmarks.md). Each lane gathers
/// for all its entries before it stores any, so that its gathers are in flight together (a
/// store between two could alias the second's source). Valid offsets give each entry its major
/// index, invalid ones some index in range (the caller throws before the result is used);
/// every load stays inside the arrays whatever they hold.
template <class I, class Sink>
__global__ void __launch_bounds__(kBlock)
    compressed_entries_kernel(CompressedPass<I> p, Sink sink) {
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t threads = std::int64_t{gridDim.x} * blockDim.x;
  if (p.bad != nullptr || p.out_offsets != nullptr) {
    for (std::int64_t m = t; m <= p.nmajor; m += threads) {
      const I o = p.offsets[m];
      if (p.out_offsets != nullptr) p.out_offsets[m] = o;
      if (p.bad != nullptr && m < p.nmajor && o > p.offsets[m + 1])
        atomicMin(p.bad, static_cast<unsigned long long>(m));
    }
    if (p.bad != nullptr && t == 0 && (p.offsets[0] != 0 || p.offsets[p.nmajor] != p.nnz))
      atomicMin(p.bad + 1, 0ull);
  }
  if (p.nmajor == 0) return;  // no entry has a major index (offsets[0] != nnz was flagged)
  constexpr std::int64_t kStep = 32 * kCompressedItems;
  // a warp's major indices of a step, entry e at e + e / 32: a pad word per 32 entries, so that
  // the consecutive lanes' writes (e = 8 lane + j) fall in distinct banks (4-byte indices;
  // 8-byte ones in two phases of 16 lanes, two to a bank)
  __shared__ I spelled[kWarps][kStep + kStep / 32];
  I* const majors = spelled[threadIdx.x >> 5];
  const std::int64_t lane = threadIdx.x & 31;
  for (std::int64_t k0 = (t >> 5) * kStep; k0 < p.nnz; k0 += (threads >> 5) * kStep) {
    I c[kCompressedItems];
    typename Sink::Payload x[kCompressedItems];
    typename Sink::Factor f[kCompressedItems];
#pragma unroll
    for (int i = 0; i < kCompressedItems; ++i) {
      const std::int64_t k = k0 + i * 32 + lane;
      c[i] = k < p.nnz ? p.indices[k] : I{0};
      if (k < p.nnz) x[i] = sink.load(k);
    }
    const std::int64_t first = k0 + lane * kCompressedItems;
    if (first < p.nnz) {
      std::int64_t m = major_of(p.offsets, p.nmajor, first);
#pragma unroll
      for (int j = 0; j < kCompressedItems; ++j) {
        const std::int64_t e = lane * kCompressedItems + j;
        if (k0 + e < p.nnz) m = advance_major(p.offsets, p.nmajor, m, k0 + e);
        majors[e + e / 32] = static_cast<I>(m);
      }
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < kCompressedItems; ++i) {
      const std::int64_t k = k0 + i * 32 + lane;
      if (k >= p.nnz) continue;
      const std::int64_t m = majors[i * 32 + lane + i];
      const bool in = c[i] >= 0 && c[i] < p.nminor;
      if (p.bad != nullptr) {
        if (!in)
          atomicMin(p.bad + 2, static_cast<unsigned long long>(k));
        else if (p.canonical && k > 0 && k > p.offsets[m] &&  // (bad offsets may be < 0)
                 p.indices[k - 1] >= c[i])
          atomicMin(p.bad + 3, static_cast<unsigned long long>(k));
      }
      f[i] = sink.gather(m, c[i], in);
    }
#pragma unroll
    for (int i = 0; i < kCompressedItems; ++i) {
      const std::int64_t k = k0 + i * 32 + lane;
      if (k < p.nnz) sink.store(k, c[i], x[i], f[i]);
    }
    __syncwarp();  // the next step's writes to majors after this step's reads
  }
}

/// The sink that spells the major indices out: majors[k] = m.
template <class I>
struct SpellMajors {
  struct Payload {};
  using Factor = I;
  I* majors;
  __device__ Payload load(std::int64_t) const { return {}; }
  __device__ I gather(std::int64_t m, I, bool) const { return static_cast<I>(m); }
  __device__ void store(std::int64_t k, I, Payload, I m) const { majors[k] = m; }
};

/// The sink of a ⊙ factor in a's pattern: out_indices[k] = c, out_vals[k] = vals[k] times the
/// factor at (m, c), rounded once (a minor index out of range reads no factor).
template <class T, class I>
struct ScaleEntries {
  using Payload = T;
  using Factor = detail::compute_t<T>;
  const T* vals;
  DenseFactor<T> factor;
  I* out_indices;
  T* out_vals;
  __device__ T load(std::int64_t k) const { return vals[k]; }
  __device__ Factor gather(std::int64_t m, I c, bool in) const {
    return factor.at(static_cast<I>(m), c, in);
  }
  __device__ void store(std::int64_t k, I c, T v, Factor f) const {
    out_indices[k] = c;
    out_vals[k] = scaled<T>(factor, detail::to_compute(v), f);
  }
};

template <class I>
CompressedPass<I> pass_of(const CompressedView& v, unsigned long long* bad, void* out_offsets) {
  return {static_cast<const I*>(v.offsets), static_cast<const I*>(v.indices), v.major_extent(),
          v.minor_extent(), v.desc.nnz, v.desc.canonical, bad, static_cast<I*>(out_offsets)};
}

/// Launches compressed_entries_kernel over v with the sink made by make_sink(I{}).
template <class MakeSink>
void launch_pass(const char* name, const CompressedView& v, unsigned long long* bad,
                 void* out_offsets, cudaStream_t stream, MakeSink make_sink) {
  const std::int64_t steps = (v.desc.nnz + 32 * kCompressedItems - 1) / (32 * kCompressedItems);
  const auto go = [&](auto tag) {
    using I = decltype(tag);
    const auto sink = make_sink(tag);
    detail::launch(name, compressed_entries_kernel<I, decltype(sink)>,
                   dim3(blocks_for(std::max(v.major_extent() + 1, steps * 32))), dim3(kBlock), 0,
                   stream, pass_of<I>(v, bad, out_offsets), sink);
  };
  if (v.desc.index == IndexType::i32)
    go(std::int32_t{});
  else
    go(std::int64_t{});
}

}  // namespace

void device_expand_offsets(const CompressedView& v, void* majors, unsigned long long* bad,
                           cudaStream_t stream) {
  if (bad == nullptr && v.desc.nnz == 0) return;
  launch_pass("sparse expand_offsets", v, bad, nullptr, stream, [&](auto tag) {
    using I = decltype(tag);
    return SpellMajors<I>{static_cast<I*>(majors)};
  });
}

bool device_scales_in_place(const CompressedView& v, const DenseOperand& factor) {
  return column_bands(factor.data != nullptr, factor.row_stride, factor.col_stride,
                      v.minor_extent(), dtype_size(v.desc.dtype))
             .bands == 1;
}

void device_scale_compressed(const CompressedView& v, const DenseOperand& factor, bool check,
                             void* out_offsets, void* out_indices, void* out_vals,
                             cudaStream_t stream) {
  DeviceBuffer words;
  if (check) {
    words = DeviceBuffer(sizeof(unsigned long long) * kExpandCheckWords, stream);
    EWISE_CUDA_CHECK(cudaMemsetAsync(words.data(), 0xFF, words.size(), stream));
  }
  auto* bad = static_cast<unsigned long long*>(words.data());
  detail::dispatch_dtype(v.desc.dtype, [&](auto ttag) {
    using T = typename decltype(ttag)::type;
    const DenseFactor<T> f = factor_of<T>(factor);
    launch_pass("sparse scale_compressed", v, bad, out_offsets, stream, [&](auto tag) {
      using I = decltype(tag);
      return ScaleEntries<T, I>{static_cast<const T*>(v.vals), f, static_cast<I*>(out_indices),
                                static_cast<T*>(out_vals)};
    });
  });
  const ExpandCheck c{v, nullptr, "a"};
  if (bad != nullptr) device_read_expand_checks(&c, 1, bad, stream);
}

void device_read_expand_checks(const ExpandCheck* checks, int n, const unsigned long long* words,
                               cudaStream_t stream) {
  unsigned long long host[2 * kExpandCheckWords];
  EWISE_CUDA_CHECK(cudaMemcpyAsync(host, words, n * kExpandCheckWords * sizeof host[0],
                                   cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i) throw_expand_check(checks[i], host + i * kExpandCheckWords, stream);
}

void throw_expand_check(const ExpandCheck& check, const unsigned long long* bad,
                        cudaStream_t stream) {
  const CompressedView& v = check.view;
  const auto read = [&](const void* p, std::int64_t k) {
    return device_index(p, v.desc.index, k, stream);
  };
  // entry k's major index: spelled out, else found in the offsets (valid once bad[0] and
  // bad[1] passed) by bisection
  const auto major = [&](std::int64_t k) {
    if (check.majors != nullptr) return read(check.majors, k);
    std::int64_t lo = 0, hi = v.major_extent() - 1;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (read(v.offsets, mid) <= k)
        lo = mid;
      else
        hi = mid - 1;
    }
    return lo;
  };
  if (bad[0] != ~0ull) {
    const auto k = static_cast<std::int64_t>(bad[0]);
    throw_offsets_decrease(check.what, v, k, read(v.offsets, k), read(v.offsets, k + 1));
  }
  if (bad[1] != ~0ull)
    throw_offsets_ends(check.what, v, read(v.offsets, 0), read(v.offsets, v.major_extent()));
  if (bad[2] != ~0ull) {
    const auto k = static_cast<std::int64_t>(bad[2]);
    throw_index_out_of_range(check.what, v, k, major(k), read(v.indices, k));
  }
  if (bad[3] != ~0ull) {
    const auto k = static_cast<std::int64_t>(bad[3]);
    throw_slice_not_increasing(check.what, v, k, major(k), read(v.indices, k - 1),
                               read(v.indices, k));
  }
}

}  // namespace ewise::sparse_detail
