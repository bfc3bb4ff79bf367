// examples/consumer/main.cpp — built against an installed ewise (see CMakeLists.txt next to it).
// Runs a broadcast multiply and a COO product on the GPU (or on host views without one) and
// checks both against ewise's CPU reference with the verification harness; on a GPU also a
// custom functor compiled by nvcc in this project (functor.cu). The host API comes from the
// umbrella header ewise/ewise.hpp; functor.cu includes ewise/dense.cuh, which it leaves out.
#include <cstdio>

#include <ewise/ewise.hpp>

#include "functor.hpp"

int main() try {
  const std::uint64_t seed = ewise::verify::seed_from_env_or_random();
  const ewise::HostTensor a = ewise::verify::random_tensor(ewise::DType::f32, {300, 200}, seed);
  const ewise::HostTensor b = ewise::verify::random_tensor(ewise::DType::f32, {300, 1}, seed + 1);
  const ewise::HostCoo x = ewise::verify::random_coo(300, 200, 0.1, seed + 2);
  const ewise::HostCoo y = ewise::verify::random_coo(300, 200, 0.1, seed + 3);

  ewise::HostTensor want(ewise::DType::f32, {300, 200});
  ewise::reference_binary(ewise::BinaryOp::multiply, a.view(), b.view(), want);
  const ewise::HostCoo want_coo = ewise::reference_multiply(x.view(), y.view());

  ewise::HostTensor got;
  ewise::HostCoo got_coo;
  const bool gpu = ewise::gpu_available();
  if (gpu) {
    const ewise::DeviceTensor da = ewise::to_device(a), db = ewise::to_device(b);
    got = ewise::to_host(ewise::binary(ewise::BinaryOp::multiply, da.view(), db.view()));
    const ewise::DeviceCoo dx = ewise::to_device(x.view()), dy = ewise::to_device(y.view());
    got_coo = ewise::to_host(ewise::multiply(dx.view(), dy.view()).view());
    const ewise::HostTensor mid = ewise::to_host(midpoint(da, db));
    for (std::int64_t i = 0; i < mid.numel(); ++i) {
      const float want_mid = (a.data_as<float>()[i] + b.data_as<float>()[i / 200]) * 0.5f;
      if (mid.data_as<float>()[i] != want_mid) {
        std::fprintf(stderr, "custom functor: element %lld wrong\n", static_cast<long long>(i));
        return 1;
      }
    }
  } else {
    got = ewise::HostTensor(ewise::DType::f32, {300, 200});
    ewise::binary(ewise::BinaryOp::multiply, a.view(), b.view(), got);
    got_coo = ewise::multiply<ewise::HostCoo>(x.view(), y.view());
  }
  const auto dense_report = ewise::verify::compare(got, want);
  const auto coo_report = ewise::verify::compare_coo(got_coo.view(), want_coo.view(),
                                                     ewise::verify::default_tolerance(ewise::DType::f32));
  std::printf("installed ewise on the %s (seed %llu): dense %s; COO %s\n", gpu ? "GPU" : "CPU",
              static_cast<unsigned long long>(seed), dense_report.str().c_str(),
              coo_report.str().c_str());
  return dense_report.ok() && coo_report.ok() ? 0 : 1;
} catch (const ewise::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
