// Device kernels over views of any strides: the harness's random fill and poisoning, and the
// gather that packs a strided view for to_host.
#include <cstring>

#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "strided_device.hpp"

namespace ewise::detail {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void fill_random_kernel(T* data, StridedLayout layout, std::int64_t n, RandomSpec spec) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    T v;
    if constexpr (std::is_integral_v<T>) {
      v = static_cast<T>(draw_int(spec, static_cast<std::uint64_t>(i)));
    } else {
      const double x = draw_real(spec, static_cast<std::uint64_t>(i), [](double y) {
        return static_cast<double>(to_compute(from_compute<T>(static_cast<compute_t<T>>(y))));
      });
      v = from_compute<T>(static_cast<compute_t<T>>(x));
    }
    data[layout.offset(i)] = v;
  }
}

template <class T>
__global__ void poison_kernel(T* data, StridedLayout layout, std::int64_t n, T value) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    data[layout.offset(i)] = value;
}

template <class T>
__global__ void gather_kernel(const T* src, StridedLayout layout, std::int64_t n, T* dst) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    dst[i] = src[layout.offset(i)];
}

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65536 ? blocks : 65536);
}

}  // namespace

StridedLayout layout_of(const TensorDesc& d) {
  StridedLayout l;
  l.rank = d.rank();
  for (int i = 0; i < d.rank(); ++i) {
    l.shape[i] = d.shape[i];
    l.strides[i] = d.strides[i];
  }
  return l;
}

void device_fill_random(const TensorView& v, const RandomSpec& spec, cudaStream_t stream) {
  const std::int64_t n = v.desc.numel();
  if (n == 0) return;
  dispatch_any_dtype(v.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch("fill_random", fill_random_kernel<T>, grid_for(n), kThreads, 0, stream,
           static_cast<T*>(v.data), layout_of(v.desc), n, spec);
  });
}

void device_poison(const TensorView& v, const void* pattern, cudaStream_t stream) {
  const std::int64_t n = v.desc.numel();
  if (n == 0) return;
  dispatch_any_dtype(v.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T value;
    std::memcpy(&value, pattern, sizeof value);
    launch("poison", poison_kernel<T>, grid_for(n), kThreads, 0, stream, static_cast<T*>(v.data),
           layout_of(v.desc), n, value);
  });
}

void device_gather(const ConstTensorView& v, void* dst, cudaStream_t stream) {
  const std::int64_t n = v.desc.numel();
  if (n == 0) return;
  dispatch_any_dtype(v.desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch("gather", gather_kernel<T>, grid_for(n), kThreads, 0, stream,
           static_cast<const T*>(v.data), layout_of(v.desc), n, static_cast<T*>(dst));
  });
}

}  // namespace ewise::detail
