// examples/custom_functor.cu — your own element-wise operation, with ewise's broadcasting and
// kernels (ewise/dense.cuh; compile with nvcc). Here: the squared difference of every row of a
// matrix from a reference row, (x - m)^2, as used in a variance.
// Device views only: without a GPU this example says so and exits with status 77 (skipped).
#include <cstdio>
#include <vector>

#include "ewise/dense.cuh"
#include "ewise/device.hpp"
#include "ewise/error.hpp"

// Called in device code with the compute type of the dtype: float for f16, bf16 and f32.
struct SquaredDifference {
  __device__ float operator()(float x, float m) const {
    const float d = x - m;
    return d * d;
  }
};

int main() try {
  if (!ewise::gpu_available()) {
    std::printf("skipped: no GPU (%s); functors run on the GPU only\n",
                ewise::gpu_unavailable_reason().c_str());
    return 77;
  }
  const std::int64_t rows = 1000, cols = 300;
  std::vector<float> x(rows * cols), m(cols), out(rows * cols);
  for (std::int64_t i = 0; i < rows * cols; ++i) x[i] = static_cast<float>(i % 101) * 0.5f;
  for (std::int64_t j = 0; j < cols; ++j) m[j] = static_cast<float>(j % 7) * 3.0f;

  cudaStream_t stream = nullptr;
  EWISE_CUDA_CHECK(cudaStreamCreate(&stream));
  {
    ewise::DeviceTensor dx(ewise::DType::f32, {rows, cols}, stream);
    ewise::DeviceTensor dm(ewise::DType::f32, {cols}, stream);
    ewise::DeviceTensor dout(ewise::DType::f32, {rows, cols}, stream);
    EWISE_CUDA_CHECK(cudaMemcpyAsync(dx.data(), x.data(), dx.bytes(), cudaMemcpyHostToDevice, stream));
    EWISE_CUDA_CHECK(cudaMemcpyAsync(dm.data(), m.data(), dm.bytes(), cudaMemcpyHostToDevice, stream));
    // Instantiate the kernels for f32 only (each dtype in the mask compiles every kernel for F).
    ewise::binary<ewise::dtype_mask({ewise::DType::f32})>(SquaredDifference{}, dx, dm, dout, {},
                                                          stream);
    EWISE_CUDA_CHECK(cudaMemcpyAsync(out.data(), dout.data(), dout.bytes(), cudaMemcpyDeviceToHost, stream));
    EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  EWISE_CUDA_CHECK(cudaStreamDestroy(stream));

  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) {
      const float d = x[i * cols + j] - m[j];
      if (out[i * cols + j] != d * d) {
        std::fprintf(stderr, "mismatch at (%lld,%lld)\n", static_cast<long long>(i),
                     static_cast<long long>(j));
        return 1;
      }
    }
  std::printf("(x - m)^2 for x (%lld,%lld), m (%lld,) with a custom functor on the GPU: ok\n",
              static_cast<long long>(rows), static_cast<long long>(cols),
              static_cast<long long>(cols));
  return 0;
} catch (const ewise::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
