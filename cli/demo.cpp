// `ewise demo`: the canonical workloads, generated, run, verified and timed.
//
// Dense: a same-shape add (the copy-like baseline), a bias add (M,N)+(N), a per-channel scale
// NCHW*(C,1,1) and an N-D broadcast (A,1,C,1)+(1,B,1,D). Sparse: COO * COO at three densities
// against the same product on dense tensors, and COO * row vector.
// On the GPU every result is checked against the CPU reference (and COO results also against
// the dense product). Without a GPU the CPU reference backend runs smaller sizes, and its
// results are cross-checked: broadcast results against the same operation on operands
// expanded to the full shape, COO results against the dense product.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"

namespace ewise::cli {
namespace {

struct DenseCase {
  const char* name;
  BinaryOp op;
  DType dtype;
  Dims a, b;
};

std::vector<DenseCase> dense_cases(bool gpu) {
  // GPU: ~32 M output elements (128 MB of f32), far beyond L2, so times are DRAM-bound.
  if (gpu)
    return {{"same-shape add", BinaryOp::add, DType::f32, {1 << 25}, {1 << 25}},
            {"bias add (M,N)+(N)", BinaryOp::add, DType::f32, {8192, 4096}, {4096}},
            {"channel scale NCHW*(C,1,1)", BinaryOp::mul, DType::f16, {64, 128, 64, 64}, {128, 1, 1}},
            {"N-D (A,1,C,1)+(1,B,1,D)", BinaryOp::add, DType::f32, {16, 1, 128, 1}, {1, 64, 1, 256}}};
  return {{"same-shape add", BinaryOp::add, DType::f32, {1 << 20}, {1 << 20}},
          {"bias add (M,N)+(N)", BinaryOp::add, DType::f32, {1024, 1024}, {1024}},
          {"channel scale NCHW*(C,1,1)", BinaryOp::mul, DType::f16, {8, 32, 32, 32}, {32, 1, 1}},
          {"N-D (A,1,C,1)+(1,B,1,D)", BinaryOp::add, DType::f32, {4, 1, 32, 1}, {1, 16, 1, 64}}};
}

/// A host copy of `t` expanded (broadcast) to `shape`.
HostTensor expand(const HostTensor& t, const Dims& shape) {
  const TensorDesc d = TensorDesc::strided(t.dtype(), shape, broadcast_strides(t.desc(), shape));
  return to_host(ConstTensorView(t.data(), d, Memory::host));
}

const char* op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return "+";
    case BinaryOp::sub: return "-";
    case BinaryOp::mul: return "*";
    case BinaryOp::div: return "/";
    default: return op_name(op);
  }
}

std::string check_text(bool ok, const std::string& report, const char* against) {
  return ok ? std::string("ok (") + against + ")" : "FAILED: " + report;
}

class Demo {
 public:
  Demo(const Backend& backend, cudaStream_t stream) : b_(backend), s_(stream) {}

  void header() {
    seed_ = verify::seed_from_env_or_random();
    if (b_.gpu) {
      const DeviceInfo d = current_device_info();
      copy_gbs_ = copy_bandwidth_gbs(std::size_t{256} << 20, 10, s_);
      std::printf("ewise demo on GPU %d: %s (%d SMs); copy bandwidth %.0f GB/s "
                  "(cudaMemcpy D2D, read + write)\n",
                  d.ordinal, d.name.c_str(), d.sm_count, copy_gbs_);
    } else {
      std::printf("ewise demo on the CPU reference backend (no GPU: %s); smaller sizes\n",
                  gpu_unavailable_reason().c_str());
    }
    std::printf("seed %llu (rerun with EWISE_SEED=%llu to replay); times are medians\n\n",
                static_cast<unsigned long long>(seed_), static_cast<unsigned long long>(seed_));
  }

  void dense() {
    std::printf("%-28s %-26s %-5s %-15s %10s %9s %6s  %s\n", "dense workload", "shapes", "dtype",
                "kernel", "time ms", "GB/s", "%copy", "check");
    for (const DenseCase& c : dense_cases(b_.gpu)) dense_case(c);
    std::printf("\n");
  }

  void sparse() {
    const std::int64_t n = b_.gpu ? 4096 : 1024;
    std::printf("COO * COO against the dense product, %lldx%lld f32, i32 indices; "
                "COO * row vector (%lld,)\n",
                static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(n));
    std::printf("%-8s %9s %9s %9s %-12s %10s %10s %10s %9s  %s\n", "density", "nnz(A)", "nnz(B)",
                "nnz(C)", "algorithm", "COO*COO ms", "COO*row ms", "dense ms", "dense/COO",
                "check");
    for (double density : {0.001, 0.01, 0.1}) sparse_case(n, density);
    std::printf("\n");
  }

  int finish() const {
    if (failures_ == 0) {
      std::printf("all %d results verified\n", checks_);
      return 0;
    }
    std::fflush(stdout);
    std::cerr << "ewise: demo: " << failures_ << " of " << checks_
              << " results failed verification\n";
    return 1;
  }

 private:
  void record(bool ok) {
    ++checks_;
    failures_ += ok ? 0 : 1;
  }

  // Inputs: random values (no zeros) generated where they are used, host copies for checks.
  HostTensor host_random(DType t, const Dims& shape) {
    return verify::random_tensor(t, shape, ++seed_);
  }

  void dense_case(const DenseCase& c) {
    const Dims shape = broadcast_shapes(c.a, c.b);
    HostTensor ha, hb;
    std::string check, kernel = "reference";
    double ms = 0;
    if (b_.gpu) {
      DeviceTensor da(c.dtype, c.a, s_), db(c.dtype, c.b, s_);
      verify::fill_random(da.view(), ++seed_, {}, s_);
      verify::fill_random(db.view(), ++seed_, {}, s_);
      ha = to_host(da.view(), s_);
      hb = to_host(db.view(), s_);
      DeviceTensor dc(c.dtype, shape, s_);
      verify::poison(dc.view(), s_);
      kernel = kernel_name(select_kernel(da.view(), db.view(), dc.view()));
      binary(c.op, da.view(), db.view(), dc.view(), {}, s_);
      HostTensor want(c.dtype, shape);
      reference_binary(c.op, ha.view(), hb.view(), want.view());
      const DeviceTensor dwant = to_device(want.view(), s_);  // compare on the GPU: faster
      const verify::CompareReport r = verify::compare(dc.view(), dwant.view(), s_);
      record(r.ok());
      check = check_text(r.ok(), r.str(), "= CPU reference");
      ms = time_ms(b_, s_, 10, [&] { binary(c.op, da.view(), db.view(), dc.view(), {}, s_); });
    } else {
      ha = host_random(c.dtype, c.a);
      hb = host_random(c.dtype, c.b);
      HostTensor got(c.dtype, shape);
      verify::poison(got.view());
      binary(c.op, ha.view(), hb.view(), got.view());
      const HostTensor ea = expand(ha, shape), eb = expand(hb, shape);
      HostTensor want(c.dtype, shape);
      binary(c.op, ea.view(), eb.view(), want.view());
      const verify::CompareReport r = verify::compare(got.view(), want.view());
      record(r.ok());
      check = check_text(r.ok(), r.str(), "= expanded operands");
      HostTensor out(c.dtype, shape);
      ms = time_ms(b_, s_, 3, [&] { binary(c.op, ha.view(), hb.view(), out.view()); });
    }
    const double bytes =
        static_cast<double>((ha.numel() + hb.numel() + shape.product()) *
                            static_cast<std::int64_t>(dtype_size(c.dtype)));
    const double gbs = bytes / (ms * 1e6);
    char pct[16] = "-";
    if (b_.gpu) std::snprintf(pct, sizeof pct, "%.0f%%", 100 * gbs / copy_gbs_);
    std::printf("%-28s %-26s %-5s %-15s %10.3f %9.2f %6s  %s\n", c.name,
                (c.a.str() + op_symbol(c.op) + c.b.str()).c_str(), dtype_name(c.dtype), kernel.c_str(), ms,
                gbs, pct, check.c_str());
    std::fflush(stdout);
  }

  void sparse_case(std::int64_t n, double density) {
    verify::CooGenOptions o;  // i32 indices, f32 values, sorted, no duplicates: canonical
    const HostCoo A = verify::random_coo(n, n, density, ++seed_, o);
    const HostCoo B = verify::random_coo(n, n, density, ++seed_, o);
    const HostTensor row = host_random(DType::f32, {n});
    std::string algorithm = "reference";
    double t_coo = 0, t_row = 0, t_dense = 0;
    std::int64_t nnz_c = 0;
    bool ok = true;
    std::string problems;
    const auto note = [&](bool good, const std::string& what) {
      record(good);
      if (!good) {
        ok = false;
        problems += (problems.empty() ? "" : "; ") + what;
      }
    };
    const verify::Tolerance tol = verify::default_tolerance(DType::f32);
    if (b_.gpu) {
      const DeviceCoo dA = to_device(A.view(), s_), dB = to_device(B.view(), s_);
      const DeviceTensor drow = to_device(row.view(), s_);
      const DeviceTensor dDa = coo_to_dense<DeviceTensor>(dA.view(), {}, s_);
      const DeviceTensor dDb = coo_to_dense<DeviceTensor>(dB.view(), {}, s_);
      DeviceTensor dDc(DType::f32, {n, n}, s_);
      algorithm = coo_algorithm_name(select_coo_algorithm(dA.view(), dB.view()));
      const DeviceCoo C = multiply<DeviceCoo>(dA.view(), dB.view(), {}, s_);
      const DeviceCoo S = multiply<DeviceCoo>(dA.view(), drow.view(), {}, s_);
      binary(BinaryOp::mul, dDa.view(), dDb.view(), dDc.view(), {}, s_);
      nnz_c = C.nnz();
      const HostCoo wantC = reference_multiply(A.view(), B.view());
      const HostCoo wantS = reference_multiply(A.view(), row.view());
      const verify::CooCompareReport rc = verify::compare_coo(C.view(), wantC.view(), tol, s_);
      const verify::CooCompareReport rs = verify::compare_coo(S.view(), wantS.view(), tol, s_);
      note(rc.ok() && rc.got_canonical, "COO*COO: " + rc.str());
      note(rs.ok() && rs.got_canonical, "COO*row: " + rs.str());
      const DeviceTensor dense_of_c = coo_to_dense<DeviceTensor>(C.view(), {}, s_);
      const verify::CompareReport rd = verify::compare(dense_of_c.view(), dDc.view(), s_);
      note(rd.ok(), "COO*COO vs dense: " + rd.str());
      t_coo = time_ms(b_, s_, 5, [&] { multiply<DeviceCoo>(dA.view(), dB.view(), {}, s_); });
      t_row = time_ms(b_, s_, 5, [&] { multiply<DeviceCoo>(dA.view(), drow.view(), {}, s_); });
      t_dense = time_ms(b_, s_, 10, [&] {
        binary(BinaryOp::mul, dDa.view(), dDb.view(), dDc.view(), {}, s_);
      });
    } else {
      const HostTensor Da = coo_to_dense<HostTensor>(A.view()), Db = coo_to_dense<HostTensor>(B.view());
      HostTensor Dc(DType::f32, {n, n}), Ds(DType::f32, {n, n});
      const HostCoo C = multiply<HostCoo>(A.view(), B.view());
      const HostCoo S = multiply<HostCoo>(A.view(), row.view());
      binary(BinaryOp::mul, Da.view(), Db.view(), Dc.view());
      binary(BinaryOp::mul, Da.view(), row.view(), Ds.view());
      nnz_c = C.nnz();
      const verify::CompareReport rc =
          verify::compare(coo_to_dense<HostTensor>(C.view()).view(), Dc.view());
      const verify::CompareReport rs =
          verify::compare(coo_to_dense<HostTensor>(S.view()).view(), Ds.view());
      note(rc.ok() && C.desc().canonical, "COO*COO vs dense: " + rc.str());
      note(rs.ok() && S.desc().canonical, "COO*row vs dense: " + rs.str());
      t_coo = time_ms(b_, s_, 3, [&] { multiply<HostCoo>(A.view(), B.view()); });
      t_row = time_ms(b_, s_, 3, [&] { multiply<HostCoo>(A.view(), row.view()); });
      t_dense = time_ms(b_, s_, 3, [&] { binary(BinaryOp::mul, Da.view(), Db.view(), Dc.view()); });
    }
    char dens[16];
    std::snprintf(dens, sizeof dens, "%g%%", density * 100);
    std::printf("%-8s %9lld %9lld %9lld %-12s %10.3f %10.3f %10.3f %8.1fx  %s\n", dens,
                static_cast<long long>(A.nnz()), static_cast<long long>(B.nnz()),
                static_cast<long long>(nnz_c), algorithm.c_str(), t_coo, t_row, t_dense,
                t_dense / t_coo,
                ok ? (b_.gpu ? "ok (= CPU reference, = dense)" : "ok (= dense product)")
                   : ("FAILED: " + problems).c_str());
    std::fflush(stdout);
  }

  Backend b_;
  cudaStream_t s_;
  std::uint64_t seed_ = 0;
  double copy_gbs_ = 0;
  int checks_ = 0, failures_ = 0;
};

}  // namespace

int run_demo(const Args& args) {
  const Backend backend = choose_backend(args.device);
  std::optional<Stream> stream;
  if (backend.gpu) stream.emplace();
  Demo demo(backend, stream ? static_cast<cudaStream_t>(*stream) : nullptr);
  demo.header();
  demo.dense();
  demo.sparse();
  return demo.finish();
}

}  // namespace ewise::cli
