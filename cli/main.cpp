// cli/main.cpp — the `ewise` command-line tool: argument parsing, `dense` and `sparse`.
// Every failure prints one line "ewise: ..." on stderr and exits non-zero (1: the operation
// failed, 2: the command line is wrong); outputs are written atomically, so a failed command
// leaves no output file.
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>

#include "cli.hpp"
#include "element.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/verify.hpp"

namespace ewise::cli {
namespace {

constexpr const char* kUsage = R"(usage: ewise <command> [options]

commands:
  info                         the GPU (name, SMs, memory, measured copy bandwidth), or that
                               there is none and the CPU reference backend is used
  dense OP A.npy B.npy -o C.npy [--kernel NAME] [--device cpu|gpu] [--verify]
                               C = A OP B with NumPy broadcasting; OP is add, sub, mul, div,
                               min or max; A and B need the same dtype (f16, bf16, f32, f64,
                               i32, i64); --kernel picks a dense kernel (see `ewise info`)
  sparse mul A.mtx B.mtx -o C.mtx [--algorithm NAME] [--device cpu|gpu]
                               C = A * B element-wise (entries stored in both); --algorithm
                               picks a COO algorithm (see `ewise info`)
  sparse mul A.mtx D.npy -o C.mtx [--device cpu|gpu]
                               C = A * D element-wise, keeping the pattern of A; D broadcasts
                               to A's shape (full, row vector, column vector or scalar)
  sparse add|sub|min|max A.mtx B.mtx -o C.mtx [--device cpu|gpu]
                               C = A OP B over the entries stored in either (a missing one
                               counts as 0, so A - B is -B where A stores nothing; zeros kept)
  sparse add|sub|min|max A.mtx D.npy -o C.npy [--device cpu|gpu]
                               C = A OP D as a dense array (A densified with 0), D broadcasts
  demo [--device cpu|gpu]      generate the canonical workloads, run, verify and time them
  help                         this text

options:
  -o, --output FILE   output file (written atomically: nothing is left behind on failure)
  --device cpu|gpu    default: the GPU when one is usable, else the CPU reference (the summary
                      line says so and why)
  --verify            dense: also compute on the CPU reference and compare before writing
  --progress          show progress even when stderr is not a terminal
  --quiet             no progress and no summary line
  -h, --help          this text;  --version  the version

Matrix Market input: coordinate real/integer/pattern, general/symmetric/skew-symmetric
(expanded). Values are read as f64 (real, pattern) or i64 (integer); a sparse product of an
integer and a real operand is computed in f64. Output: general coordinate, canonical.
Exit status: 0 success, 1 the operation failed (message names the file and line), 2 usage.
)";

/// A wrong command line (exit status 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum Opt : unsigned { kOutput = 1, kKernel = 2, kAlgorithm = 4, kDevice = 8, kVerify = 16 };

/// Parses argv[first..] allowing the options in `allowed` (plus --quiet and --progress).
Args parse_args(int argc, char** argv, int first, unsigned allowed, const std::string& command) {
  Args a;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool has_value = false;
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      value = arg.substr(arg.find('=') + 1);
      arg = arg.substr(0, arg.find('='));
      has_value = true;
    }
    const auto take = [&](unsigned bit) -> std::string {
      if (!(allowed & bit))
        throw UsageError(arg + " is not an option of '" + command + "' (see ewise --help)");
      if (has_value) return value;
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    const auto flag = [&](unsigned bit) {
      if (bit && !(allowed & bit))
        throw UsageError(arg + " is not an option of '" + command + "' (see ewise --help)");
      if (has_value) throw UsageError(arg + " takes no value");
    };
    if (arg == "-o" || arg == "--output") a.output = take(kOutput);
    else if (arg == "--kernel") a.kernel = take(kKernel);
    else if (arg == "--algorithm") a.algorithm = take(kAlgorithm);
    else if (arg == "--device") a.device = take(kDevice);
    else if (arg == "--verify") flag(kVerify), a.verify = true;
    else if (arg == "--quiet" || arg == "-q") flag(0), a.quiet = true;
    else if (arg == "--progress") flag(0), a.progress = true;
    else if (arg.size() > 1 && arg[0] == '-' && !has_value)
      throw UsageError("unknown option '" + arg + "' (see ewise --help)");
    else if (has_value)
      throw UsageError("unknown option '" + arg + "' (see ewise --help)");
    else a.positional.push_back(arg);
  }
  if ((allowed & kOutput) && a.output.empty())
    throw UsageError("'" + command + "' needs an output file: -o FILE");
  return a;
}

void expect_positional(const Args& a, std::size_t n, const std::string& usage) {
  if (a.positional.size() != n) throw UsageError("usage: " + usage);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Runs f; an InvalidArgument it throws is rethrown with `context` in front of its message.
template <class F>
auto with_context(const std::string& context, F&& f) {
  try {
    return f();
  } catch (const InvalidArgument& e) {
    std::string msg = e.what();
    if (msg.rfind("ewise: ", 0) == 0) msg.erase(0, 7);
    throw InvalidArgument(context + ": " + msg, e.file(), e.line());
  }
}

// ---- dtype conversion for mixed sparse operands -----------------------------------------

bool is_integer(DType t) { return t == DType::i32 || t == DType::i64; }

/// Converts n values to f64 or i64 (the only targets: the sparse commands compute in f64
/// when any operand is floating, else in i64).
void convert_values(DType from, const void* src, DType to, void* dst, std::int64_t n) {
  const auto* s = static_cast<const std::byte*>(src);
  auto* d = static_cast<std::byte*>(dst);
  const auto fs = static_cast<std::int64_t>(dtype_size(from));
  for (std::int64_t i = 0; i < n; ++i) {
    if (to == DType::f64) detail::store_raw(d + 8 * i, detail::load_double(from, s + fs * i));
    else detail::store_raw(d + 8 * i, detail::load_int(from, s + fs * i));
  }
}

HostTensor tensor_as(const HostTensor& t, DType to) {
  if (t.dtype() == to) return to_host(t.view());
  HostTensor out(to, t.shape());
  convert_values(t.dtype(), t.data(), to, out.data(), t.numel());
  return out;
}

HostCoo coo_as(const HostCoo& m, DType to) {
  if (m.desc().dtype == to) return to_host(m.view());
  CooDesc d = m.desc();
  d.dtype = to;
  HostCoo out(d);
  const std::size_t ib = static_cast<std::size_t>(d.nnz) * index_size(d.index);
  if (ib) {
    std::memcpy(out.rows(), m.rows(), ib);
    std::memcpy(out.cols(), m.cols(), ib);
  }
  convert_values(m.desc().dtype, m.vals(), to, out.vals(), d.nnz);
  return out;
}

std::string shape_of(const CooDesc& d) {
  return std::to_string(d.nrows) + "x" + std::to_string(d.ncols);
}

// ---- dense -----------------------------------------------------------------------------------

int run_dense(const Args& a) {
  expect_positional(a, 3, "ewise dense OP A.npy B.npy -o C.npy [--kernel NAME] [--device cpu|gpu]");
  const BinaryOp op = parse_op(a.positional[0]);
  const std::string& pa = a.positional[1];
  const std::string& pb = a.positional[2];
  const Backend backend = choose_backend(a.device);
  DenseOptions options;
  if (a.kernel) {
    options.kernel = parse_kernel(*a.kernel);
    EWISE_EXPECTS(backend.gpu, "--kernel ", *a.kernel,
                  " applies to the GPU; the CPU reference has one loop");
  }
  const Progress progress(a);
  progress.stage("reading " + pa);
  const HostTensor A = io::read_npy(pa);
  progress.stage("reading " + pb);
  const HostTensor B = io::read_npy(pb);
  EWISE_EXPECTS(A.dtype() == B.dtype(), pa, " holds ", dtype_name(A.dtype()), " but ", pb,
                " holds ", dtype_name(B.dtype()), "; both operands need the same dtype");
  const Dims shape = with_context(pa + " " + A.shape().str() + " and " + pb + " " +
                                      B.shape().str(),
                                  [&] { return broadcast_shapes(A.shape(), B.shape()); });
  const std::string ctx = std::string(op_name(op)) + "(" + pa + ", " + pb + ")";
  progress.stage("computing " + ctx + " " + shape.str() + " " + dtype_name(A.dtype()) +
                 " on the " + backend.label());

  HostTensor C;
  double ms = 0;
  std::string kernel = "reference";
  if (backend.gpu) {
    const Stream stream;
    const DeviceTensor dA = to_device(A.view(), stream), dB = to_device(B.view(), stream);
    DeviceTensor dC(A.dtype(), shape, stream);
    kernel = kernel_name(options.kernel == Kernel::automatic
                             ? select_kernel(dA.view(), dB.view(), dC.view())
                             : options.kernel);
    with_context(ctx, [&] {
      ms = time_once(backend, stream,
                     [&] { binary(op, dA.view(), dB.view(), dC.view(), options, stream); });
    });
    C = to_host(dC.view(), stream);
  } else {
    C = HostTensor(A.dtype(), shape);
    with_context(ctx, [&] {
      ms = time_once(backend, nullptr, [&] { binary(op, A.view(), B.view(), C.view()); });
    });
  }
  if (a.verify) {
    HostTensor want(A.dtype(), shape);
    reference_binary(op, A.view(), B.view(), want.view());
    const verify::CompareReport r = verify::compare(C.view(), want.view());
    EWISE_EXPECTS(r.ok(), "verification against the CPU reference failed: ", r.str());
  }
  progress.stage("writing " + a.output);
  io::write_npy(a.output, C.view());
  if (!a.quiet)
    std::cout << a.output << ": " << dtype_name(C.dtype()) << " " << shape.str() << " = "
              << op_name(op) << "(" << pa << ", " << pb << ") on " << backend.description()
              << (backend.gpu ? " (kernel " + kernel + ")" : std::string()) << ", "
              << ms_text(ms) << " ms" << (a.verify ? ", verified against the CPU reference" : "")
              << "\n";
  return 0;
}

// ---- sparse ----------------------------------------------------------------------------------

int run_sparse(const Args& a) {
  const std::string usage =
      "ewise sparse mul|add|sub|min|max A.mtx (B.mtx | D.npy) -o (C.mtx | C.npy) "
      "[--algorithm NAME] [--device cpu|gpu]";
  expect_positional(a, 3, usage);
  const std::string& name = a.positional[0];
  if (name != "mul" && name != "add" && name != "sub" && name != "min" && name != "max")
    throw UsageError("unknown sparse operation '" + name + "' (mul, add, sub, min, max); " +
                     usage);
  const BinaryOp op = parse_op(name);
  const bool mul = op == BinaryOp::mul;
  const std::string& pa = a.positional[1];
  const std::string& pb = a.positional[2];
  const bool dense_b = ends_with(pb, ".npy");
  // COO + dense is dense: it is written as .npy; every other result is a COO matrix (.mtx).
  const bool dense_out = dense_b && !mul;
  if (dense_out && !ends_with(a.output, ".npy"))
    throw UsageError("sparse " + name + " of a COO and a dense operand is dense: -o FILE.npy");
  const Backend backend = choose_backend(a.device);
  SparseOptions options;
  if (a.algorithm) {
    options.algorithm = parse_coo_algorithm(*a.algorithm);
    EWISE_EXPECTS(mul && !dense_b, "--algorithm applies to COO * COO (sparse mul of two .mtx), ",
                  "not to ", name, "(", pa, ", ", pb, ")");
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
  const Stream* stream = nullptr;
  std::optional<Stream> owned;
  if (backend.gpu) stream = &owned.emplace();
  const cudaStream_t s = stream ? static_cast<cudaStream_t>(*stream) : nullptr;

  if (dense_b) {
    progress.stage("reading " + pb);
    const HostTensor D = io::read_npy(pb);
    const DType t = is_integer(A.desc().dtype) && is_integer(D.dtype()) ? DType::i64 : DType::f64;
    const HostCoo A2 = coo_as(A, t);
    const HostTensor D2 = tensor_as(D, t);
    const std::string ctx = name + "(" + pa + " " + shape_of(A.desc()) + ", " + pb + " " +
                            D.shape().str() + ")";
    progress.stage("computing " + ctx + " on the " + backend.label());
    with_context(ctx, [&] {
      if (!backend.gpu) {
        ms = time_once(backend, s, [&] {
          if (mul) C = multiply<HostCoo>(A2.view(), D2.view(), options);
          else D_out = combine<HostTensor>(op, A2.view(), D2.view(), options);
        });
        return;
      }
      const DeviceCoo dA = to_device(A2.view(), s);
      const DeviceTensor dD = to_device(D2.view(), s);
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
    const DType t = is_integer(A.desc().dtype) && is_integer(B.desc().dtype) ? DType::i64
                                                                            : DType::f64;
    const HostCoo A2 = coo_as(A, t), B2 = coo_as(B, t);
    const std::string ctx = name + "(" + pa + ", " + pb + ")";
    progress.stage("computing " + ctx + " (" + shape_of(A.desc()) + ", nnz " +
                   std::to_string(A.nnz()) + " and " + std::to_string(B.nnz()) + ") on the " +
                   backend.label());
    C = with_context(ctx, [&] {
      if (!backend.gpu) {
        HostCoo r;
        ms = time_once(backend, s, [&] {
          r = mul ? multiply<HostCoo>(A2.view(), B2.view(), options)
                  : combine<HostCoo>(op, A2.view(), B2.view(), options);
        });
        return r;
      }
      const DeviceCoo dA = to_device(A2.view(), s), dB = to_device(B2.view(), s);
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
              << (backend.gpu && !dense_b ? " (algorithm " + algorithm + ")" : std::string())
              << ", " << ms_text(ms) << " ms\n";
  }
  return 0;
}

int dispatch(int argc, char** argv) {
  if (argc < 2) throw UsageError("no command given (see ewise --help)");
  const std::string cmd = argv[1];
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help" || (i == 1 && arg == "help")) {
      std::cout << kUsage;
      return 0;
    }
    if (arg == "--version") {
      std::cout << "ewise " << EWISE_VERSION << "\n";
      return 0;
    }
  }
  if (cmd == "info") return run_info(parse_args(argc, argv, 2, 0, cmd));
  if (cmd == "demo") return run_demo(parse_args(argc, argv, 2, kDevice, cmd));
  if (cmd == "dense")
    return run_dense(parse_args(argc, argv, 2, kOutput | kKernel | kDevice | kVerify, cmd));
  if (cmd == "sparse")
    return run_sparse(parse_args(argc, argv, 2, kOutput | kAlgorithm | kDevice, cmd));
  throw UsageError("unknown command '" + cmd + "' (see ewise --help)");
}

}  // namespace
}  // namespace ewise::cli

int main(int argc, char** argv) {
  try {
    return ewise::cli::dispatch(argc, argv);
  } catch (const ewise::cli::UsageError& e) {
    std::cerr << "ewise: " << e.what() << "\n";
    return 2;
  } catch (const ewise::Error& e) {  // messages already start with "ewise: "
    std::cerr << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "ewise: out of host memory\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "ewise: " << e.what() << "\n";
    return 1;
  }
}
