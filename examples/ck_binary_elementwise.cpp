// examples/ck_binary_elementwise.cpp — Composable Kernel's "binary elementwise" example in ewise:
// C = A + B for two f16 matrices of the same shape (M, N).
//   usage: ck_binary_elementwise [M N]     (default 1024 1024)
// Runs on the GPU, or on host views (the CPU reference backend) when there is none.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/half.hpp"

int main(int argc, char** argv) try {
  const std::int64_t M = argc > 2 ? std::atoll(argv[1]) : 1024;
  const std::int64_t N = argc > 2 ? std::atoll(argv[2]) : 1024;
  std::vector<std::uint16_t> a(M * N), b(M * N), c(M * N);  // f16 bit patterns
  for (std::int64_t i = 0; i < M * N; ++i) {
    a[i] = ewise::float_to_f16_bits(static_cast<float>(i % 89) * 0.25f - 11.0f);
    b[i] = ewise::float_to_f16_bits(static_cast<float>(i % 47) * 0.125f);
  }
  // One descriptor serves all three tensors: same dtype, shape and (row-major) strides.
  const auto desc = ewise::TensorDesc::contiguous(ewise::DType::f16, {M, N});

  const bool gpu = ewise::gpu_available();
  if (gpu) {
    const ewise::ConstTensorView ha{a.data(), desc, ewise::Memory::host};
    const ewise::ConstTensorView hb{b.data(), desc, ewise::Memory::host};
    const ewise::DeviceTensor da = ewise::to_device(ha), db = ewise::to_device(hb);
    // The allocating form: a new tensor of the result dtype (f16 here).
    const ewise::DeviceTensor dc = ewise::binary(ewise::BinaryOp::add, da.view(), db.view());
    const ewise::HostTensor hc = ewise::to_host(dc);                             // synchronizes
    std::copy_n(hc.data_as<std::uint16_t>(), c.size(), c.begin());
  } else {
    std::printf("no GPU (%s): running on the CPU reference backend\n",
                ewise::gpu_unavailable_reason().c_str());
    using ewise::ConstTensorView;
    ewise::binary(ewise::BinaryOp::add, ConstTensorView{a.data(), desc, ewise::Memory::host},
                  ConstTensorView{b.data(), desc, ewise::Memory::host},
                  {c.data(), desc, ewise::Memory::host});
  }

  // Verify: computed in f32, rounded once to f16.
  for (std::int64_t i = 0; i < M * N; ++i) {
    const float want = ewise::f16_bits_to_float(a[i]) + ewise::f16_bits_to_float(b[i]);
    if (c[i] != ewise::float_to_f16_bits(want)) {
      std::fprintf(stderr, "mismatch at (%lld,%lld)\n", static_cast<long long>(i / N),
                   static_cast<long long>(i % N));
      return 1;
    }
  }
  std::printf("C(%lld,%lld) = A + B in f16 on the %s: ok\n", static_cast<long long>(M),
              static_cast<long long>(N), gpu ? "GPU" : "CPU");
  return 0;
} catch (const ewise::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
