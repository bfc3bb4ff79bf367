// cli/main.cpp — the `ewise` command-line tool: its usage text, argument parsing and the
// dispatch to the commands (info.cpp, dense.cpp, sparse.cpp, compare.cpp, demo.cpp).
// Every failure prints one line "ewise: ..." on stderr and exits non-zero (1: the operation
// failed, 2: the command line is wrong); outputs are written atomically, so a failed command
// leaves no output file.
#include <iostream>
#include <new>
#include <string>

#include "cli.hpp"
#include "ewise/error.hpp"

namespace ewise::cli {
namespace {

constexpr const char* kUsage = R"(usage: ewise <command> [options]

commands:
  info                         the GPU (name, SMs, memory, measured copy bandwidth), or that
                               there is none and the CPU reference backend is used; the dtypes,
                               operations, kernels and COO algorithms
  dense OP A B -o C.npy [--promotion numpy|torch] [--kernel NAME] [--device cpu|gpu] [--verify]
                               C = A OP B with NumPy broadcasting. OP: a NumPy binary operation
                               by its name (add, subtract, multiply, divide, floor_divide,
                               remainder, power, minimum, maximum, fmin, fmax, equal, not_equal,
                               less, less_equal, greater, greater_equal, logical_and, logical_or,
                               logical_xor, bitwise_and, bitwise_or, bitwise_xor; sub, mul, div,
                               min and max are aliases). A and B: .npy files of any dtypes, or one
                               of them a number (3, -1e9, 0.5, nan, inf, True) standing for a
                               Python scalar. C has NumPy's result dtype (--promotion torch:
                               PyTorch's); --kernel picks a dense kernel (see `ewise info`)
  sparse multiply A.mtx (B.mtx | D.npy | NUMBER) -o C.mtx [--algorithm NAME] [--device cpu|gpu]
                               C = A * B element-wise (entries stored in both); --algorithm
                               picks a COO algorithm (see `ewise info`). A * D keeps the pattern
                               of A, D broadcasting to A's shape (full, row vector, column
                               vector or scalar); so does A * NUMBER
  sparse add|subtract|minimum|maximum A.mtx B.mtx -o C.mtx [--device cpu|gpu]
                               C = A OP B over the entries stored in either (a missing one
                               counts as 0, so A - B is -B where A stores nothing; zeros kept);
                               add and subtract also take the number 0 for B (C is A)
  sparse add|subtract|minimum|maximum A.mtx D.npy -o C.npy [--device cpu|gpu]
                               C = A OP D as a dense array (A densified with 0), D broadcasts
  compare --shape RxC [--dtype DT] [--op OP] [--density D1,D2,...] [--device cpu|gpu]
          [--json FILE] [--plot FILE.png]
                               dense or COO for this shape, dtype (f32 by default; a COO value
                               dtype), operation (multiply by default, or add, subtract,
                               minimum, maximum) and densities (0.001,0.01,0.1 by default):
                               seeded operands at each density, the dense operation, COO OP COO,
                               COO OP dense and the conversions (dense -> COO, COO -> dense)
                               timed and checked against the dense result; a table, the
                               crossover density and a verdict; --json writes the rows,
                               --plot the time against density (needs python3 with the ewise
                               package and matplotlib)
  compare A.mtx [B.mtx] [--op OP] [--device cpu|gpu] [--json FILE] [--plot FILE.png]
                               the same for your matrix (B: random of A's density and dtype)
  demo [--device cpu|gpu]      generate the canonical workloads, run, verify and time them
  help                         this text

options:
  -o, --output FILE   output file (written atomically: nothing is left behind on failure)
  --device cpu|gpu    default: the GPU when one is usable, else the CPU reference (the summary
                      line says so and why)
  --promotion RULE    numpy (default): the result dtype of operands of different dtypes by
                      NumPy 2's rules; torch: by torch.result_type (int32 and float32 give
                      float32, where NumPy gives float64)
  --verify            dense: also compute on the CPU reference and compare before writing
  --progress          show progress even when stderr is not a terminal
  --quiet             no progress and no summary line
  -h, --help          this text;  --version  the version

Matrix Market input: coordinate real/integer/pattern, general/symmetric/skew-symmetric
(expanded). Values are read as f64 (real, pattern) or i64 (integer); operands of different
dtypes promote by --promotion (an integer and a real operand give f64). Output: general
coordinate, canonical. sparse operations also take the names sub, mul, min and max.
Exit status: 0 success, 1 the operation failed (message names the file and line), 2 usage.
)";

enum Opt : unsigned {
  kOutput = 1,
  kKernel = 2,
  kAlgorithm = 4,
  kDevice = 8,
  kVerify = 16,
  kPromotion = 32,
  kCompare = 64  // --shape, --dtype, --op, --density, --json, --plot
};

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
    else if (arg == "--promotion") a.promotion = take(kPromotion);
    else if (arg == "--shape") a.shape = take(kCompare);
    else if (arg == "--dtype") a.dtype = take(kCompare);
    else if (arg == "--op") a.op = take(kCompare);
    else if (arg == "--density") a.density = take(kCompare);
    else if (arg == "--json") a.json = take(kCompare);
    else if (arg == "--plot") a.plot = take(kCompare);
    else if (arg == "--verify") flag(kVerify), a.verify = true;
    else if (arg == "--quiet" || arg == "-q") flag(0), a.quiet = true;
    else if (arg == "--progress") flag(0), a.progress = true;
    else if (arg.size() > 1 && arg[0] == '-' && !has_value && !parse_scalar(arg))
      throw UsageError("unknown option '" + arg + "' (see ewise --help)");
    else if (has_value)
      throw UsageError("unknown option '" + arg + "' (see ewise --help)");
    else a.positional.push_back(arg);
  }
  if ((allowed & kOutput) && a.output.empty())
    throw UsageError("'" + command + "' needs an output file: -o FILE");
  return a;
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
  if (cmd == "compare") return run_compare(parse_args(argc, argv, 2, kDevice | kCompare, cmd));
  if (cmd == "dense")
    return run_dense(
        parse_args(argc, argv, 2, kOutput | kKernel | kDevice | kVerify | kPromotion, cmd));
  if (cmd == "sparse")
    return run_sparse(
        parse_args(argc, argv, 2, kOutput | kAlgorithm | kDevice | kPromotion, cmd));
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
