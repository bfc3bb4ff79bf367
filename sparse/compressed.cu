// sparse/compressed.cu — a compressed (CSR or CSC) operand's major indices spelled out on the
// GPU, with the check of its offsets, for the COO operations to run on (compressed.cpp).
#include <algorithm>
#include <cstdint>

#include "ewise/detail/launch.cuh"
#include "internal.hpp"
#include "policy.hpp"
#include "status.cuh"

namespace ewise::sparse_detail {
namespace {

/// The major index of entry k, given m, a major index whose slice starts at or before k: the
/// last m' >= m with offsets[m'] <= k, found by galloping from m (a gap of g empty slices
/// costs about 2 log g loads; the next slice, the common case, one). Every load stays in
/// [0, nmajor], whatever the offsets hold.
template <class I>
__device__ __forceinline__ std::int64_t advance_major(const I* offsets, std::int64_t nmajor,
                                                      std::int64_t m, std::int64_t k) {
  if (m + 1 >= nmajor || offsets[m + 1] > k) return m;
  std::int64_t lo = m + 1, step = 1;  // offsets[lo] <= k
  while (lo + step < nmajor && offsets[lo + step] <= k) {
    lo += step;
    step *= 2;
  }
  std::int64_t hi = std::min(lo + step, nmajor) - 1;  // the answer lies in [lo, hi]
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (offsets[mid] <= k)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// majors[k] = the major index of entry k, kPer consecutive entries a thread (one 16-byte
/// store): a search from slice 0 for its first entry, then advance_major. With `bad`, the
/// checks, each keeping the first failure: offsets decreasing at k (offsets[k] > offsets[k + 1])
/// → bad[0]; offsets[0] != 0 or offsets[nmajor] != nnz → bad[1] = 0; entry k's index outside
/// [0, nminor) → bad[2]; with `canonical`, entry k + 1 in k's slice not after it → bad[3].
/// Valid offsets are read, else what the entries get is unspecified (the caller throws before
/// using it); every load stays inside the arrays whatever they hold.
template <class I>
__global__ void expand_offsets_kernel(const I* offsets, const I* indices, std::int64_t nmajor,
                                      std::int64_t nminor, std::int64_t nnz, bool canonical,
                                      I* majors, unsigned long long* bad) {
  constexpr int kPer = 16 / sizeof(I);
  const std::int64_t t = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  const std::int64_t threads = std::int64_t{gridDim.x} * blockDim.x;
  if (bad != nullptr) {
    for (std::int64_t k = t; k < nmajor; k += threads)
      if (offsets[k] > offsets[k + 1]) atomicMin(bad, static_cast<unsigned long long>(k));
    if (t == 0 && (offsets[0] != 0 || offsets[nmajor] != nnz)) atomicMin(bad + 1, 0ull);
  }
  for (std::int64_t k0 = t * kPer; k0 < nnz; k0 += threads * kPer) {
    I out[kPer];
    std::int64_t m = advance_major(offsets, nmajor, 0, k0);
#pragma unroll
    for (int p = 0; p < kPer; ++p) {
      const std::int64_t k = k0 + p;
      m = advance_major(offsets, nmajor, m, k);
      out[p] = static_cast<I>(m);
      if (bad == nullptr || k >= nnz) continue;
      const I c = indices[k];
      if (c < 0 || c >= nminor)
        atomicMin(bad + 2, static_cast<unsigned long long>(k));
      else if (canonical && k + 1 < nnz && m < nmajor && k + 1 < offsets[m + 1] &&
               indices[k + 1] <= c)
        atomicMin(bad + 3, static_cast<unsigned long long>(k + 1));
    }
    if (k0 + kPer <= nnz) {
      *reinterpret_cast<int4*>(majors + k0) = *reinterpret_cast<const int4*>(out);
    } else {
      for (int p = 0; k0 + p < nnz; ++p) majors[k0 + p] = out[p];
    }
  }
}

}  // namespace

void device_expand_offsets(const CompressedView& v, void* majors, unsigned long long* bad,
                           cudaStream_t stream) {
  const std::int64_t nmajor = v.major_extent(), nnz = v.desc.nnz;
  if (bad == nullptr && nnz == 0) return;
  const auto go = [&](auto tag) {
    using I = decltype(tag);
    constexpr int kPer = 16 / sizeof(I);
    detail::launch("sparse expand_offsets", expand_offsets_kernel<I>,
                   dim3(blocks_for(std::max(nmajor, (nnz + kPer - 1) / kPer))), dim3(kBlock), 0,
                   stream, static_cast<const I*>(v.offsets), static_cast<const I*>(v.indices),
                   nmajor, v.minor_extent(), nnz, v.desc.canonical, static_cast<I*>(majors), bad);
  };
  if (v.desc.index == IndexType::i32)
    go(std::int32_t{});
  else
    go(std::int64_t{});
}

void device_read_expand_checks(const ExpandCheck* checks, int n, const unsigned long long* words,
                               cudaStream_t stream) {
  unsigned long long host[2 * kExpandCheckWords];
  EWISE_CUDA_CHECK(cudaMemcpyAsync(host, words, n * kExpandCheckWords * sizeof host[0],
                                   cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i) {
    const CompressedView& v = checks[i].view;
    const unsigned long long* bad = host + i * kExpandCheckWords;
    const auto read = [&](const void* p, std::int64_t k) {
      return device_index(p, v.desc.index, k, stream);
    };
    if (bad[0] != ~0ull) {
      const auto k = static_cast<std::int64_t>(bad[0]);
      throw_offsets_decrease(checks[i].what, v, k, read(v.offsets, k), read(v.offsets, k + 1));
    }
    if (bad[1] != ~0ull)
      throw_offsets_ends(checks[i].what, v, read(v.offsets, 0), read(v.offsets, v.major_extent()));
    if (bad[2] != ~0ull) {
      const auto k = static_cast<std::int64_t>(bad[2]);
      throw_index_out_of_range(checks[i].what, v, k, read(checks[i].majors, k), read(v.indices, k));
    }
    if (bad[3] != ~0ull) {
      const auto k = static_cast<std::int64_t>(bad[3]);
      throw_slice_not_increasing(checks[i].what, v, k, read(checks[i].majors, k),
                                 read(v.indices, k - 1), read(v.indices, k));
    }
  }
}

}  // namespace ewise::sparse_detail
