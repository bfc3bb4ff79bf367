// `ewise compare`: dense or COO for the user's shape, dtype, operation and densities, or for the
// user's own matrix: the command line, the table and the files around ewise::compare
// (ewise/compare.hpp, src/compare.cpp), which measures and checks.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli.hpp"
#include "ewise/compare.hpp"
#include "ewise/coo.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "ewise/verify.hpp"
#include "io_file.hpp"

namespace ewise::cli {
namespace {

constexpr const char* kUsage =
    "ewise compare (--shape RxC [--dtype DT] [--density D1,D2,...] | A.mtx [B.mtx]) "
    "[--op OP] [--device cpu|gpu] [--json FILE] [--plot FILE.png]";

/// Runs `python3 args...` (no shell) and waits; its exit status, or -1 when it did not start or
/// was killed. quiet: its output goes to /dev/null.
int run_python(const std::vector<std::string>& args, bool quiet) {
  std::vector<char*> argv{const_cast<char*>("python3")};
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (quiet) {
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, "python3", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The plot is Python's (ewise._compare, matplotlib): whether python3 can import both.
void check_plot_tools(const std::string& plot) {
  if (run_python({"-c", "import ewise._compare, matplotlib"}, true) != 0)
    throw UsageError("--plot " + plot + " needs python3 with the ewise package (on PYTHONPATH) "
                     "and matplotlib: python3 -c 'import ewise._compare, matplotlib' failed");
}

/// "RxC" as (rows, cols), both positive.
std::pair<std::int64_t, std::int64_t> parse_shape(const std::string& s) {
  const std::size_t x = s.find('x');
  const auto number = [&](const std::string& t) -> std::int64_t {
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(t, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != t.size() || v <= 0)
      throw UsageError("--shape " + s + ": expected ROWSxCOLS of positive integers (4096x4096)");
    return v;
  };
  if (x == std::string::npos) number("");
  return {number(s.substr(0, x)), number(s.substr(x + 1))};
}

/// The comma-separated densities, each in (0, 1], ascending and without repeats.
std::vector<double> parse_densities(const std::string& s) {
  std::vector<double> d;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || !(v > 0 && v <= 1))
      throw UsageError("--density " + s + ": '" + item + "' is not a density in (0, 1]");
    d.push_back(v);
  }
  if (d.empty()) throw UsageError("--density needs at least one value in (0, 1]");
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  return d;
}

}  // namespace

int run_compare(const Args& a) {
  const bool from_file = !a.positional.empty();
  if (a.positional.size() > 2) throw UsageError("usage: " + std::string(kUsage));
  if (from_file == a.shape.has_value())
    throw UsageError(from_file ? "--shape and a matrix file exclude each other; " + std::string(kUsage)
                               : "compare needs --shape RxC or a matrix file; " + std::string(kUsage));
  if (from_file && (a.density || a.dtype))
    throw UsageError("--density and --dtype are those of the matrix file's; " + std::string(kUsage));
  CompareSpec spec;
  spec.op = parse_sparse_op(a.op.value_or("multiply"), kUsage);
  if (!from_file) {
    std::tie(spec.nrows, spec.ncols) = parse_shape(*a.shape);
    if (a.dtype) spec.dtype = parse_name([&] { return parse_dtype(*a.dtype); });
    if (!is_sparse_dtype(spec.dtype))
      throw UsageError(std::string("--dtype ") + dtype_name(spec.dtype) +
                       ": COO values are f16, bf16, f32, f64, i32 or i64");
    spec.densities = parse_densities(a.density.value_or("0.001,0.01,0.1"));
  }
  const Backend backend = choose_backend(a.device);
  spec.memory = backend.gpu ? Memory::device : Memory::host;
  std::optional<HostCoo> fileA, fileB;
  CooView viewA, viewB;
  if (from_file) {
    fileA = io::read_mtx(a.positional[0]);
    viewA = fileA->view();
    spec.a = &viewA;
    if (a.positional.size() == 2) {
      fileB = io::read_mtx(a.positional[1]);
      const CooDesc &da = fileA->desc(), &db = fileB->desc();
      EWISE_EXPECTS(db.nrows == da.nrows && db.ncols == da.ncols, a.positional[0], " is ",
                    da.nrows, "x", da.ncols, " but ", a.positional[1], " is ", db.nrows, "x",
                    db.ncols);
      EWISE_EXPECTS(db.dtype == da.dtype, a.positional[0], " holds ", dtype_name(da.dtype),
                    " values but ", a.positional[1], " holds ", dtype_name(db.dtype));
      viewB = fileB->view();
      spec.b = &viewB;
    }
  }
  // A drawn shape whose dense forms do not fit is a wrong command line: refused (exit 2)
  // before anything is allocated.
  try {
    check_compare(spec);
  } catch (const InvalidArgument& e) {
    if (from_file) throw;
    throw UsageError(std::string("--shape ") + *a.shape + ": " + message_of(e));
  }
  if (a.plot) check_plot_tools(*a.plot);
  spec.seed = verify::seed_from_env_or_random();
  const std::int64_t nrows = from_file ? fileA->desc().nrows : spec.nrows;
  const std::int64_t ncols = from_file ? fileA->desc().ncols : spec.ncols;
  const DType dtype = from_file ? fileA->desc().dtype : spec.dtype;
  if (!a.quiet)
    std::printf("ewise compare on %s: %s %lldx%lld, %s; seed %llu (EWISE_SEED=%llu replays)%s\n",
                backend.description().c_str(), dtype_name(dtype), static_cast<long long>(nrows),
                static_cast<long long>(ncols), op_name(spec.op),
                static_cast<unsigned long long>(spec.seed),
                static_cast<unsigned long long>(spec.seed),
                from_file ? (", A = " + a.positional[0]).c_str() : "");
  const std::string form = spec.op == BinaryOp::multiply ? "COO*COO" : "COO+COO";
  std::printf("%-9s %10s %10s %10s %10s %11s %8s %13s %8s %10s %11s %9s  %s\n", "density",
              "nnz(A)", "nnz(B)", "nnz(C)", "dense ms", (form + " ms").c_str(), "speedup",
              (spec.op == BinaryOp::multiply ? "COO*dense ms" : "COO+dense ms"), "speedup",
              "to COO ms", "to dense ms", "w/ conv.", "check");
  const CompareResult result = compare(spec, [](const CompareRow& r) {
    std::printf("%-9s %10lld %10lld %10lld %10.3f %11.3f %7.2fx %13.3f %7.2fx %10.3f %11.3f %8.2fx  %s\n",
                density_text(r.density).c_str(), static_cast<long long>(r.nnz_a),
                static_cast<long long>(r.nnz_b), static_cast<long long>(r.nnz_c), r.dense_ms,
                r.coo_ms, r.speedup(), r.coo_dense_ms, r.dense_ms / r.coo_dense_ms, r.to_coo_ms,
                r.to_dense_ms, r.speedup_converting(),
                r.problem.empty() ? "ok (= dense)" : ("FAILED: " + r.problem).c_str());
    std::fflush(stdout);
  });
  std::printf("%s\n%s\n", result.verdict().c_str(), result.verdict_converting().c_str());
  if (a.json) {
    detail::AtomicOutputFile f(*a.json);
    f.write(result.json());
    f.commit();
  }
  if (a.plot) {
    // The rows for the plot in a file beside it, removed after.
    const std::string rows = *a.plot + ".rows.json";
    {
      detail::AtomicOutputFile f(rows);
      f.write(result.json());
      f.commit();
    }
    const int status = run_python({"-m", "ewise._compare", rows, *a.plot}, false);
    std::remove(rows.c_str());
    if (status != 0)
      throw std::runtime_error("--plot " + *a.plot + ": python3 -m ewise._compare " +
                               (status < 0 ? "did not run" : "exited with " + std::to_string(status)));
  }
  const int failures = result.failures();
  if (failures == 0) return 0;
  std::fflush(stdout);
  std::cerr << "ewise: compare: " << failures << " of " << result.rows.size()
            << " densities gave results that differ from the dense one\n";
  return 1;
}

}  // namespace ewise::cli
