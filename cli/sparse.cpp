// `ewise sparse`: COO operations on Matrix Market files with a COO, dense (.npy) or scalar
// second operand, on the GPU or the CPU reference.
#include <iostream>
#include <optional>
#include <string>

#include "cli.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "ewise/promotion.hpp"
#include "ewise/sparse.hpp"

namespace ewise::cli {
namespace {

std::string shape_of(const CooDesc& d) {
  return std::to_string(d.nrows) + "x" + std::to_string(d.ncols);
}

}  // namespace

int run_sparse(const Args& a) {
  const std::string usage =
      "ewise sparse multiply|add|subtract|minimum|maximum A.mtx (B.mtx | D.npy | NUMBER) "
      "-o (C.mtx | C.npy) [--promotion numpy|torch] [--algorithm NAME] [--device cpu|gpu]";
  expect_positional(a, 3, usage);
  const std::string& name = a.positional[0];
  const BinaryOp op = parse_sparse_op(name, usage);
  const bool mul = op == BinaryOp::multiply;
  const std::string& pa = a.positional[1];
  const std::string& pb = a.positional[2];
  const std::optional<Scalar> scalar = scalar_operand(pb);
  const bool dense_b = !scalar && ends_with(pb, ".npy");
  // COO + dense is dense: it is written as .npy; every other result is a COO matrix (.mtx).
  const bool dense_out = dense_b && !mul;
  if (dense_out && !ends_with(a.output, ".npy"))
    throw UsageError("sparse " + name + " of a COO and a dense operand is dense: -o FILE.npy");
  const Backend backend = choose_backend(a.device);
  SparseOptions options;
  options.promotion = promotion_of(a);
  if (a.algorithm) {
    options.algorithm = parse_name([&] { return parse_coo_algorithm(*a.algorithm); });
    EWISE_EXPECTS(mul && !dense_b && !scalar,
                  "--algorithm applies to COO * COO (sparse multiply of two .mtx), ", "not to ",
                  name, "(", pa, ", ", pb, ")");
    EWISE_EXPECTS(backend.gpu, "--algorithm ", *a.algorithm,
                  " applies to the GPU; the CPU reference has one algorithm");
  }
  const Progress progress(a);
  io::MtxReadOptions ro;
  ro.progress = progress.percent("reading " + pa);
  const HostCoo A = io::read_mtx(pa, ro);

  HostCoo C;
  HostTensor D_out;
  double ms = 0;
  std::string algorithm = "reference";
  std::optional<Stream> owned;
  if (backend.gpu) owned.emplace();
  const cudaStream_t s = owned ? static_cast<cudaStream_t>(*owned) : nullptr;

  if (scalar) {
    const std::string ctx = name + "(" + pa + " " + shape_of(A.desc()) + ", " + pb + ")";
    progress.stage("computing " + ctx + " on the " + backend.label());
    C = with_context(ctx, [&] {
      if (!backend.gpu) {
        HostCoo r;
        ms = time_once(backend, s, [&] {
          r = mul ? multiply<HostCoo>(A.view(), *scalar, options)
                  : combine<HostCoo>(op, A.view(), *scalar, options);
        });
        return r;
      }
      const DeviceCoo dA = to_device(A.view(), s);
      DeviceCoo r;
      ms = time_once(backend, s, [&] {
        r = mul ? multiply<DeviceCoo>(dA.view(), *scalar, options, s)
                : combine<DeviceCoo>(op, dA.view(), *scalar, options, s);
      });
      return to_host(r.view(), s);
    });
  } else if (dense_b) {
    progress.stage("reading " + pb);
    const HostTensor D = io::read_npy(pb);
    const std::string ctx = name + "(" + pa + " " + shape_of(A.desc()) + ", " + pb + " " +
                            D.shape().str() + ")";
    progress.stage("computing " + ctx + " on the " + backend.label());
    with_context(ctx, [&] {
      if (!backend.gpu) {
        ms = time_once(backend, s, [&] {
          if (mul) C = multiply<HostCoo>(A.view(), D.view(), options);
          else D_out = combine<HostTensor>(op, A.view(), D.view(), options);
        });
        return;
      }
      const DeviceCoo dA = to_device(A.view(), s);
      const DeviceTensor dD = to_device(D.view(), s);
      DeviceCoo r;
      DeviceTensor rd;
      ms = time_once(backend, s, [&] {
        if (mul) r = multiply<DeviceCoo>(dA.view(), dD.view(), options, s);
        else rd = combine<DeviceTensor>(op, dA.view(), dD.view(), options, s);
      });
      if (mul) C = to_host(r.view(), s);
      else D_out = to_host(rd.view(), s);
    });
  } else {
    ro.progress = progress.percent("reading " + pb);
    const HostCoo B = io::read_mtx(pb, ro);
    EWISE_EXPECTS(A.desc().nrows == B.desc().nrows && A.desc().ncols == B.desc().ncols, pa,
                  " is ", shape_of(A.desc()), " but ", pb, " is ", shape_of(B.desc()),
                  "; COO ", mul ? "*" : name, " COO needs equal shapes");
    const std::string ctx = name + "(" + pa + ", " + pb + ")";
    progress.stage("computing " + ctx + " (" + shape_of(A.desc()) + ", nnz " +
                   std::to_string(A.nnz()) + " and " + std::to_string(B.nnz()) + ") on the " +
                   backend.label());
    C = with_context(ctx, [&] {
      if (!backend.gpu) {
        HostCoo r;
        ms = time_once(backend, s, [&] {
          r = mul ? multiply<HostCoo>(A.view(), B.view(), options)
                  : combine<HostCoo>(op, A.view(), B.view(), options);
        });
        return r;
      }
      const DeviceCoo dA = to_device(A.view(), s), dB = to_device(B.view(), s);
      algorithm = mul ? coo_algorithm_name(
                            select_coo_algorithm(dA.view(), dB.view(), options.algorithm))
                      : "merge";
      DeviceCoo r;
      ms = time_once(backend, s, [&] {
        r = mul ? multiply<DeviceCoo>(dA.view(), dB.view(), options, s)
                : combine<DeviceCoo>(op, dA.view(), dB.view(), options, s);
      });
      return to_host(r.view(), s);
    });
  }
  progress.stage("writing " + a.output);
  if (dense_out) io::write_npy(a.output, D_out.view());
  else io::write_mtx(a.output, C.view());
  if (!a.quiet) {
    std::cout << a.output << ": ";
    if (dense_out) std::cout << dtype_name(D_out.dtype()) << " " << D_out.shape().str();
    else std::cout << dtype_name(C.desc().dtype) << " " << shape_of(C.desc()) << " nnz " << C.nnz();
    std::cout << " = " << name << "(" << pa << ", " << pb << ") on " << backend.description()
              << (backend.gpu && !dense_b && !scalar ? " (algorithm " + algorithm + ")"
                                                     : std::string())
              << ", " << ms_text(ms) << " ms\n";
  }
  return 0;
}

}  // namespace ewise::cli
