// examples/bias_and_scale.cpp — the two everyday broadcasts, on device memory, on one stream:
//   y = x + bias      x: activations (batch, features), bias: (features,)
//   z = f * scale     f: f16 feature map NCHW (n, c, h, w), scale: f32 per channel (c, 1, 1),
//                     z: f16 — the dtypes mixed in the kernel (f16 * f32 is f32 by NumPy's
//                     rules, cast to z's f16 as it is stored), no conversion pass
// Both calls are asynchronous on `stream`; nothing waits until the results are copied back.
// Without a GPU the same calls run on host views (the CPU reference backend).
#include <cuda_runtime_api.h>

#include <cstdio>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/half.hpp"

int main() try {
  using ewise::DType;
  const std::int64_t batch = 256, features = 1000;     // bias add
  const std::int64_t n = 8, c = 64, h = 28, w = 28;    // per-channel scale, f16

  std::vector<float> x(batch * features), bias(features), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i % 97) - 12.0f;
  for (std::int64_t j = 0; j < features; ++j) bias[j] = 0.5f * static_cast<float>(j % 13) - 3.0f;

  std::vector<std::uint16_t> f(n * c * h * w), z(f.size());  // f16 bit patterns
  std::vector<float> scale(c);
  for (std::size_t i = 0; i < f.size(); ++i)
    f[i] = ewise::float_to_f16_bits(0.125f * static_cast<float>(i % 61) - 3.0f);
  for (std::int64_t k = 0; k < c; ++k) scale[k] = 1.0f + 0.0625f * static_cast<float>(k);

  const auto xd = ewise::TensorDesc::contiguous(DType::f32, {batch, features});
  const auto bd = ewise::TensorDesc::contiguous(DType::f32, {features});
  const auto fd = ewise::TensorDesc::contiguous(DType::f16, {n, c, h, w});
  const auto sd = ewise::TensorDesc::contiguous(DType::f32, {c, 1, 1});

  const bool gpu = ewise::gpu_available();
  if (gpu) {
    cudaStream_t stream = nullptr;
    EWISE_CUDA_CHECK(cudaStreamCreate(&stream));
    {
      // Stream-ordered device allocations, freed (on the stream) when they go out of scope.
      ewise::DeviceTensor dx(DType::f32, {batch, features}, stream), db(DType::f32, {features}, stream),
          dy(DType::f32, {batch, features}, stream);
      ewise::DeviceTensor df(DType::f16, {n, c, h, w}, stream), ds(DType::f32, {c, 1, 1}, stream),
          dz(DType::f16, {n, c, h, w}, stream);
      EWISE_CUDA_CHECK(cudaMemcpyAsync(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice, stream));
      EWISE_CUDA_CHECK(cudaMemcpyAsync(db.data(), bias.data(), db.bytes(), cudaMemcpyHostToDevice, stream));
      EWISE_CUDA_CHECK(cudaMemcpyAsync(df.data(), f.data(), df.bytes(), cudaMemcpyHostToDevice, stream));
      EWISE_CUDA_CHECK(cudaMemcpyAsync(ds.data(), scale.data(), ds.bytes(), cudaMemcpyHostToDevice, stream));

      ewise::binary(ewise::BinaryOp::add, dx.view(), db.view(), dy, {}, stream);  // (B,F) + (F,)
      // (N,C,H,W) f16 * (C,1,1) f32 into f16
      ewise::binary(ewise::BinaryOp::multiply, df.view(), ds.view(), dz, {}, stream);

      EWISE_CUDA_CHECK(cudaMemcpyAsync(y.data(), dy.data(), dy.bytes(), cudaMemcpyDeviceToHost, stream));
      EWISE_CUDA_CHECK(cudaMemcpyAsync(z.data(), dz.data(), dz.bytes(), cudaMemcpyDeviceToHost, stream));
      EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    EWISE_CUDA_CHECK(cudaStreamDestroy(stream));
  } else {
    std::printf("no GPU (%s): running on the CPU reference backend\n",
                ewise::gpu_unavailable_reason().c_str());
    using ewise::Memory;
    using ewise::ConstTensorView;
    ewise::binary(ewise::BinaryOp::add, ConstTensorView{x.data(), xd, Memory::host},
                  ConstTensorView{bias.data(), bd, Memory::host}, {y.data(), xd, Memory::host});
    ewise::binary(ewise::BinaryOp::multiply, ConstTensorView{f.data(), fd, Memory::host},
                  ConstTensorView{scale.data(), sd, Memory::host}, {z.data(), fd, Memory::host});
  }

  // Check: f32 adds are exact IEEE operations; the f16 * f32 products are computed in f32 and
  // rounded to f16.
  for (std::int64_t i = 0; i < batch; ++i)
    for (std::int64_t j = 0; j < features; ++j)
      if (y[i * features + j] != x[i * features + j] + bias[j]) {
        std::fprintf(stderr, "bias add wrong at (%lld,%lld)\n", static_cast<long long>(i),
                     static_cast<long long>(j));
        return 1;
      }
  for (std::size_t i = 0; i < f.size(); ++i) {
    const std::size_t channel = i / (h * w) % c;
    const std::uint16_t want =
        ewise::float_to_f16_bits(ewise::f16_bits_to_float(f[i]) * scale[channel]);
    if (z[i] != want) {
      std::fprintf(stderr, "channel scale wrong at element %zu\n", i);
      return 1;
    }
  }
  std::printf("bias add (%lld,%lld)+(%lld,) and channel scale (%lld,%lld,%lld,%lld)*(%lld,1,1) "
              "on the %s: ok\n",
              static_cast<long long>(batch), static_cast<long long>(features),
              static_cast<long long>(features), static_cast<long long>(n),
              static_cast<long long>(c), static_cast<long long>(h), static_cast<long long>(w),
              static_cast<long long>(c), gpu ? "GPU" : "CPU");
  return 0;
} catch (const ewise::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
