// `ewise dense`: C = A OP B on .npy files (or a number for one operand), with NumPy's (or
// PyTorch's) result dtype, on the GPU or the CPU reference.
#include <iostream>
#include <optional>
#include <string>

#include "cli.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "ewise/promotion.hpp"
#include "ewise/reference.hpp"
#include "ewise/verify.hpp"

namespace ewise::cli {
namespace {

/// A dense operand on the command line: a .npy file read into host memory, or a number
/// standing for a Python scalar.
struct DenseArg {
  std::string arg;
  std::optional<Scalar> scalar;
  HostTensor host;

  Dims shape() const { return scalar ? Dims{} : host.shape(); }
  std::string text() const { return scalar ? arg : arg + " " + host.shape().str(); }
  Operand on_host() const { return scalar ? Operand(*scalar) : Operand(host.view()); }
  /// The operand on the device: its copy `device` there (empty for a scalar).
  Operand on_device(const DeviceTensor& device) const {
    return scalar ? Operand(*scalar) : Operand(device.view());
  }
};

DenseArg read_dense_arg(const std::string& arg, const Progress& progress) {
  DenseArg d{arg, scalar_operand(arg), {}};
  if (!d.scalar) {
    progress.stage("reading " + arg);
    d.host = io::read_npy(arg);
  }
  return d;
}

}  // namespace

int run_dense(const Args& a) {
  expect_positional(a, 3,
                    "ewise dense OP A B -o C.npy [--promotion numpy|torch] [--kernel NAME] "
                    "[--device cpu|gpu]");
  const BinaryOp op = parse_name([&] { return parse_op(a.positional[0]); });
  const Backend backend = choose_backend(a.device);
  DenseOptions options;
  options.promotion = promotion_of(a);
  if (a.kernel) {
    options.kernel = parse_name([&] { return parse_kernel(*a.kernel); });
    EWISE_EXPECTS(backend.gpu, "--kernel ", *a.kernel,
                  " applies to the GPU; the CPU reference has one loop");
  }
  const Progress progress(a);
  DenseArg A = read_dense_arg(a.positional[1], progress);
  DenseArg B = read_dense_arg(a.positional[2], progress);
  if (A.scalar && B.scalar)
    throw UsageError("dense needs a .npy file among its operands; " + A.arg + " and " + B.arg +
                     " are numbers");
  const Dims shape = with_context(A.text() + " and " + B.text(),
                                  [&] { return broadcast_shapes(A.shape(), B.shape()); });
  const std::string ctx = std::string(op_name(op)) + "(" + A.arg + ", " + B.arg + ")";
  const Promotion rule = options.promotion;
  const DType dtype = with_context(ctx, [&] {
    return op_types(op, rule, A.on_host().type(rule), B.on_host().type(rule)).result;
  });
  progress.stage("computing " + ctx + " " + shape.str() + " " + dtype_name(dtype) + " on the " +
                 backend.label());

  HostTensor C;
  double ms = 0;
  std::string kernel = "reference";
  if (backend.gpu) {
    const Stream stream;
    // The device copies live within the stream's scope: their memory is freed on it.
    const auto copy = [&](const DenseArg& d) {
      return d.scalar ? DeviceTensor() : to_device(d.host.view(), stream);
    };
    const DeviceTensor dA = copy(A), dB = copy(B);
    DeviceTensor dC(dtype, shape, stream);
    with_context(ctx, [&] {
      // Mixed dtypes, scalars and the operations beyond the first six run the converting
      // kernel (general); the others the kernel select_kernel names.
      const bool typed =
          detail::runs_typed(detail::check_types(op, A.on_host(), B.on_host(), dtype, rule));
      kernel = kernel_name(options.kernel != Kernel::automatic ? options.kernel
                           : typed ? select_kernel(dA.view(), dB.view(), dC.view())
                                   : Kernel::general);
      ms = time_once(backend, stream, [&] {
        binary(op, A.on_device(dA), B.on_device(dB), dC.view(), options, stream);
      });
    });
    C = to_host(dC.view(), stream);
  } else {
    C = HostTensor(dtype, shape);
    with_context(ctx, [&] {
      ms = time_once(backend, nullptr,
                     [&] { binary(op, A.on_host(), B.on_host(), C.view(), options); });
    });
  }
  if (a.verify) {
    HostTensor want(dtype, shape);
    reference_binary(op, A.on_host(), B.on_host(), want.view(), rule);
    const verify::CompareReport r = verify::compare(C.view(), want.view());
    EWISE_EXPECTS(r.ok(), "verification against the CPU reference failed: ", r.str());
  }
  progress.stage("writing " + a.output);
  io::write_npy(a.output, C.view());
  if (!a.quiet)
    std::cout << a.output << ": " << dtype_name(C.dtype()) << " " << shape.str() << " = " << ctx
              << " on " << backend.description()
              << (backend.gpu ? " (kernel " + kernel + ")" : std::string()) << ", "
              << ms_text(ms) << " ms" << (a.verify ? ", verified against the CPU reference" : "")
              << "\n";
  return 0;
}

}  // namespace ewise::cli
