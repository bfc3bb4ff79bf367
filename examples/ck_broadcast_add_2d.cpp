// examples/ck_broadcast_add_2d.cpp — Composable Kernel's "broadcast_add_2d_amn_bn" in ewise:
// C(M, N) = A(M, N) + B(N), the row vector B broadcast over every row, in f32.
//   usage: ck_broadcast_add_2d [M N]       (default 1024 768)
// Runs on the GPU, or on host views (the CPU reference backend) when there is none.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"

int main(int argc, char** argv) try {
  const std::int64_t M = argc > 2 ? std::atoll(argv[1]) : 1024;
  const std::int64_t N = argc > 2 ? std::atoll(argv[2]) : 768;
  std::vector<float> a(M * N), b(N), c(M * N);
  for (std::int64_t i = 0; i < M * N; ++i) a[i] = static_cast<float>(i % 1013) * 0.5f;
  for (std::int64_t j = 0; j < N; ++j) b[j] = static_cast<float>(j) * -0.25f;
  const auto ad = ewise::TensorDesc::contiguous(ewise::DType::f32, {M, N});
  const auto bd = ewise::TensorDesc::contiguous(ewise::DType::f32, {N});  // or {1, N}: the same

  const bool gpu = ewise::gpu_available();
  const ewise::ConstTensorView ha{a.data(), ad, ewise::Memory::host};
  const ewise::ConstTensorView hb{b.data(), bd, ewise::Memory::host};
  if (gpu) {
    const ewise::DeviceTensor da = ewise::to_device(ha), db = ewise::to_device(hb);
    ewise::DeviceTensor dc(ewise::DType::f32, {M, N});
    // The automatic choice keeps A's rows vectorized while B is broadcast.
    std::printf("kernel: %s\n", ewise::kernel_name(ewise::select_kernel(da, db, dc)));
    ewise::binary(ewise::BinaryOp::add, da.view(), db.view(), dc);
    const ewise::HostTensor hc = ewise::to_host(dc);
    std::copy_n(hc.data_as<float>(), c.size(), c.begin());
  } else {
    std::printf("no GPU (%s): running on the CPU reference backend\n",
                ewise::gpu_unavailable_reason().c_str());
    ewise::binary(ewise::BinaryOp::add, ha, hb, {c.data(), ad, ewise::Memory::host});
  }

  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < N; ++j)
      if (c[i * N + j] != a[i * N + j] + b[j]) {
        std::fprintf(stderr, "mismatch at (%lld,%lld)\n", static_cast<long long>(i),
                     static_cast<long long>(j));
        return 1;
      }
  std::printf("C(%lld,%lld) = A(%lld,%lld) + B(%lld) on the %s: ok\n", static_cast<long long>(M),
              static_cast<long long>(N), static_cast<long long>(M), static_cast<long long>(N),
              static_cast<long long>(N), gpu ? "GPU" : "CPU");
  return 0;
} catch (const ewise::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
