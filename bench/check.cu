#include "check.hpp"

#include <cstring>
#include <random>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/buffer.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "ewise/reference.hpp"
#include "ewise/verify.hpp"

namespace ewise::bench {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 8192 ? (blocks > 0 ? blocks : 1) : 8192);
}

// dst[k] = base[offsets[k]] for words of the element's size.
template <class W>
__global__ void gather_kernel(const W* base, const std::int64_t* offsets, std::int64_t n, W* dst) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    dst[k] = base[offsets[k]];
}

template <class W>
__global__ void count_equal_kernel(const W* p, std::int64_t n, W pattern,
                                   unsigned long long* count) {
  unsigned long long mine = 0;
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    mine += p[k] == pattern;
  if (mine) atomicAdd(count, mine);
}

// Calls f(W{}) with W the unsigned word of the dtype's size.
template <class F>
void with_word(DType t, F&& f) {
  switch (dtype_size(t)) {
    case 1: f(std::uint8_t{}); return;
    case 2: f(std::uint16_t{}); return;
    case 4: f(std::uint32_t{}); return;
    case 8: f(std::uint64_t{}); return;
  }
  EWISE_EXPECTS(false, "no word type for dtype ", dtype_name(t));
}

// Elements of `v` at the given offsets, as a contiguous host tensor of shape (n,).
HostTensor gather(const ConstTensorView& v, const std::vector<std::int64_t>& offsets,
                  cudaStream_t stream) {
  const auto n = static_cast<std::int64_t>(offsets.size());
  HostTensor host(v.desc.dtype, {n});
  DeviceBuffer d_off(offsets.size() * sizeof(std::int64_t), stream);
  DeviceBuffer d_out(host.bytes(), stream);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(d_off.data(), offsets.data(), d_off.size(),
                                   cudaMemcpyHostToDevice, stream));
  with_word(v.desc.dtype, [&](auto w) {
    using W = decltype(w);
    detail::launch("bench_gather", gather_kernel<W>, grid_for(n), kThreads, 0, stream,
                   static_cast<const W*>(v.data), static_cast<const std::int64_t*>(d_off.data()),
                   n, static_cast<W*>(d_out.data()));
  });
  EWISE_CUDA_CHECK(cudaMemcpyAsync(host.data(), d_out.data(), host.bytes(),
                                   cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace

std::int64_t count_poisoned(const ConstTensorView& v, cudaStream_t stream) {
  EWISE_EXPECTS(v.memory == Memory::device && v.desc.is_contiguous(),
                "count_poisoned needs a contiguous device view, got ", v.desc.str());
  const std::int64_t n = v.desc.numel();
  if (n == 0) return 0;
  HostTensor one(v.desc.dtype, {1});
  verify::poison(one.view());
  DeviceBuffer d_count(sizeof(unsigned long long), stream);
  EWISE_CUDA_CHECK(cudaMemsetAsync(d_count.data(), 0, d_count.size(), stream));
  with_word(v.desc.dtype, [&](auto w) {
    using W = decltype(w);
    W pattern;
    std::memcpy(&pattern, one.data(), sizeof pattern);
    detail::launch("bench_count_poisoned", count_equal_kernel<W>, grid_for(n), kThreads, 0,
                   stream, static_cast<const W*>(v.data), n, pattern,
                   static_cast<unsigned long long*>(d_count.data()));
  });
  unsigned long long count = 0;
  EWISE_CUDA_CHECK(cudaMemcpyAsync(&count, d_count.data(), sizeof count, cudaMemcpyDeviceToHost,
                                   stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return static_cast<std::int64_t>(count);
}

std::string verify_dense(BinaryOp op, const ConstTensorView& a, const ConstTensorView& b,
                         const ConstTensorView& out, std::uint64_t seed, cudaStream_t stream,
                         Promotion rule) {
  EWISE_EXPECTS(out.desc.is_contiguous(), "verify_dense needs a contiguous output, got ",
                out.desc.str());
  const std::int64_t n = out.desc.numel();
  const DType t = out.desc.dtype;
  if (n <= kFullCheckLimit) {
    const HostTensor ha = to_host(a, stream), hb = to_host(b, stream);
    HostTensor want(t, out.desc.shape);
    reference_binary(op, ha.view(), hb.view(), want.view(), rule);
    const verify::CompareReport r = verify::compare(out, want.view(), stream);
    if (!r.ok()) throw VerifyError("full check: " + r.str());
    return detail::concat("full ", n);
  }
  const BroadcastPlan plan = make_plan(out.desc, a.desc, b.desc);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  std::vector<std::int64_t> index{0, n - 1};
  while (static_cast<std::int64_t>(index.size()) < kSampleSize + 2) index.push_back(pick(rng));
  std::vector<std::int64_t> off[3];
  for (int k = 0; k < 3; ++k) {
    off[k].reserve(index.size());
    for (const std::int64_t i : index) off[k].push_back(plan.offset(k, i));
  }
  const HostTensor got = gather(out, off[0], stream);
  const HostTensor sa = gather(a, off[1], stream), sb = gather(b, off[2], stream);
  HostTensor want(t, got.shape());
  reference_binary(op, sa.view(), sb.view(), want.view(), rule);
  const verify::CompareReport r = verify::compare(got.view(), want.view());
  if (!r.ok()) throw VerifyError(detail::concat("sample check (entry k = sample k): ", r.str()));
  const std::int64_t unwritten = count_poisoned(out, stream);
  if (unwritten != 0)
    throw VerifyError(detail::concat(unwritten, " of ", n, " output elements never written"));
  return detail::concat("sample ", index.size(), " + poison scan of ", n);
}

}  // namespace ewise::bench
