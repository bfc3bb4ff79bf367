// `ewise compare`: dense or COO for the user's shape, dtype, operation and densities, or for the
// user's own matrix. For each density: seeded random operands (canonical COO, no zeros stored),
// the dense operation on their dense forms, the sparse forms (COO op COO; COO op dense), the
// conversions a pipeline holding dense data pays (dense -> COO of each operand, COO -> dense of
// the result), every result checked against the dense one; a table, the crossover density
// (interpolated in log-log between the densities that bracket it) and a verdict line; --json
// writes the same rows.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "ewise/coo.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "ewise/memory.hpp"
#include "ewise/sparse.hpp"
#include "ewise/verify.hpp"
#include "io_file.hpp"

namespace ewise::cli {
namespace {

constexpr const char* kUsage =
    "ewise compare (--shape RxC [--dtype DT] [--density D1,D2,...] | A.mtx [B.mtx]) "
    "[--op OP] [--device cpu|gpu] [--json FILE]";

/// One density's measurements (milliseconds, medians).
struct Row {
  double density = 0;
  std::int64_t nnz_a = 0, nnz_b = 0, nnz_c = 0;
  double dense = 0;       ///< the operation on the dense forms
  double coo = 0;         ///< COO op COO
  double coo_dense = 0;   ///< COO op dense (B's dense form)
  double to_coo = 0;      ///< dense -> COO of A and of B
  double to_dense = 0;    ///< COO -> dense of the COO op COO result
  std::string problem;    ///< "" when every form agreed with the dense result
  double speedup() const { return dense / coo; }
  double speedup_converting() const { return dense / (to_coo + coo + to_dense); }
};

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

/// Bytes of memory the backend can give: free device memory, or available host memory.
double available_bytes(const Backend& b) {
  if (b.gpu) {
    std::size_t free_bytes = 0, total = 0;
    EWISE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return static_cast<double>(free_bytes);
  }
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

const char* form_name(BinaryOp op) { return op == BinaryOp::multiply ? "COO*COO" : "COO+COO"; }

class Compare {
 public:
  Compare(const Backend& backend, cudaStream_t stream, BinaryOp op)
      : b_(backend), s_(stream), op_(op) {}

  /// Measures one density on A and B (host COO; copied to the GPU when it runs there).
  Row measure(double density, const HostCoo& A, const HostCoo& B) {
    Row r;
    r.density = density;
    r.nnz_a = A.nnz();
    r.nnz_b = B.nnz();
    if (b_.gpu) {
      const DeviceCoo dA = to_device(A.view(), s_), dB = to_device(B.view(), s_);
      run<DeviceCoo, DeviceTensor>(r, dA.view(), dB.view(), 10);
    } else {
      run<HostCoo, HostTensor>(r, A.view(), B.view(), 3);
    }
    return r;
  }

 private:
  template <class Coo, class Tensor>
  void run(Row& r, const CooView& A, const CooView& B, int reps) {
    const SparseOptions o;
    const IndexType index = A.desc.index;
    const Tensor Da = coo_to_dense<Tensor>(A, o, s_), Db = coo_to_dense<Tensor>(B, o, s_);
    Tensor Dc(A.desc.dtype, {A.desc.nrows, A.desc.ncols}, s_);
    binary(op_, Da.view(), Db.view(), Dc.view(), {}, s_);
    const auto sparse = [&] {
      return op_ == BinaryOp::multiply ? multiply<Coo>(A, B, o, s_) : combine<Coo>(op_, A, B, o, s_);
    };
    const Coo C = sparse();
    r.nnz_c = C.nnz();
    // Every form against the dense result, bit for bit (the same operation on the same
    // values), and the conversions' round trip against A's dense form.
    const auto check = [&](const char* what, const ConstTensorView& got, const ConstTensorView& want) {
      const verify::CompareReport rep = verify::compare(got, want, s_);
      if (!rep.ok() && r.problem.empty()) r.problem = std::string(what) + ": " + rep.str();
    };
    check(form_name(op_), coo_to_dense<Tensor>(C.view(), o, s_).view(), Dc.view());
    if (op_ == BinaryOp::multiply)
      check("COO*dense", coo_to_dense<Tensor>(multiply<Coo>(A, Db.view(), o, s_).view(), o, s_).view(),
            Dc.view());
    else
      check("COO+dense", combine<Tensor>(op_, A, Db.view(), o, s_).view(), Dc.view());
    check("dense->COO->dense of A",
          coo_to_dense<Tensor>(dense_to_coo<Coo>(Da.view(), index, s_).view(), o, s_).view(),
          Da.view());
    r.dense = time_ms(b_, s_, reps, [&] { binary(op_, Da.view(), Db.view(), Dc.view(), {}, s_); });
    r.coo = time_ms(b_, s_, reps, [&] { sparse(); });
    r.coo_dense = time_ms(b_, s_, reps, [&] {
      if (op_ == BinaryOp::multiply) multiply<Coo>(A, Db.view(), o, s_);
      else combine<Tensor>(op_, A, Db.view(), o, s_);
    });
    r.to_coo = time_ms(b_, s_, reps, [&] {
      dense_to_coo<Coo>(Da.view(), index, s_);
      dense_to_coo<Coo>(Db.view(), index, s_);
    });
    r.to_dense = time_ms(b_, s_, reps, [&] { coo_to_dense<Tensor>(C.view(), o, s_); });
  }

  Backend b_;
  cudaStream_t s_;
  BinaryOp op_;
};

/// The density where `speedup` crosses 1, interpolated in log-log between the rows that
/// bracket it; nothing when it does not cross in the range.
std::optional<double> crossover(const std::vector<Row>& rows, double (Row::*speedup)() const) {
  for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
    const double s0 = std::log((rows[i].*speedup)()), s1 = std::log((rows[i + 1].*speedup)());
    if ((s0 >= 0) == (s1 >= 0) || s0 == s1) continue;
    const double d0 = std::log(rows[i].density), d1 = std::log(rows[i + 1].density);
    return std::exp(d0 + (0 - s0) * (d1 - d0) / (s1 - s0));
  }
  return std::nullopt;
}

std::string percent(double density) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", density * 100);
  return buf;
}

/// One line on where the sparse form wins against dense for `speedup`.
std::string verdict(const std::vector<Row>& rows, double (Row::*speedup)() const,
                    const std::string& form) {
  const auto x = crossover(rows, speedup);
  const double first = (rows.front().*speedup)(), last = (rows.back().*speedup)();
  char buf[256];
  if (x) {
    const bool sparse_low = first > 1;
    std::snprintf(buf, sizeof buf, "%s is faster than dense %s %s density (crossover interpolated)",
                  form.c_str(), sparse_low ? "below" : "above", percent(*x).c_str());
  } else if (rows.size() == 1) {
    std::snprintf(buf, sizeof buf, "%s is %.2fx %s than dense at %s density", form.c_str(),
                  first >= 1 ? first : 1 / first, first >= 1 ? "faster" : "slower",
                  percent(rows.front().density).c_str());
  } else {
    const bool wins = first >= 1;
    std::snprintf(buf, sizeof buf, "%s is %s than dense at every density from %s to %s (%.2fx to %.2fx)",
                  form.c_str(), wins ? "faster" : "slower", percent(rows.front().density).c_str(),
                  percent(rows.back().density).c_str(), first, last);
  }
  return buf;
}

std::string json_text(const std::string& device, std::int64_t nrows, std::int64_t ncols,
                      DType dtype, BinaryOp op, std::uint64_t seed, const std::vector<Row>& rows,
                      const std::string& verdict_line, const std::string& verdict_converting) {
  std::ostringstream j;
  j.precision(9);
  const auto cross = [&](double (Row::*speedup)() const) {
    const auto x = crossover(rows, speedup);
    return x ? std::to_string(*x) : std::string("null");
  };
  const auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
    return q + "\"";
  };
  j << "{\"device\": " << quoted(device) << ", \"shape\": [" << nrows << ", " << ncols
    << "], \"dtype\": \"" << dtype_name(dtype) << "\", \"op\": \"" << op_name(op)
    << "\", \"seed\": " << seed << ",\n \"rows\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    j << (i ? ",\n  " : "\n  ") << "{\"density\": " << r.density << ", \"nnz_a\": " << r.nnz_a
      << ", \"nnz_b\": " << r.nnz_b << ", \"nnz_c\": " << r.nnz_c << ", \"dense_ms\": " << r.dense
      << ", \"coo_ms\": " << r.coo << ", \"coo_dense_ms\": " << r.coo_dense
      << ", \"to_coo_ms\": " << r.to_coo << ", \"to_dense_ms\": " << r.to_dense
      << ", \"speedup\": " << r.speedup() << ", \"speedup_converting\": "
      << r.speedup_converting() << ", \"verified\": " << (r.problem.empty() ? "true" : "false")
      << "}";
  }
  j << "],\n \"crossover\": " << cross(&Row::speedup)
    << ", \"crossover_converting\": " << cross(&Row::speedup_converting)
    << ",\n \"verdict\": " << quoted(verdict_line)
    << ", \"verdict_converting\": " << quoted(verdict_converting) << "}\n";
  return j.str();
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
  const BinaryOp op = parse_sparse_op(a.op.value_or("multiply"), kUsage);
  std::int64_t nrows = 0, ncols = 0;
  DType dtype = DType::f32;
  std::vector<double> densities;
  if (!from_file) {
    std::tie(nrows, ncols) = parse_shape(*a.shape);
    if (a.dtype) dtype = parse_name([&] { return parse_dtype(*a.dtype); });
    if (!is_sparse_dtype(dtype))
      throw UsageError(std::string("--dtype ") + dtype_name(dtype) +
                       ": COO values are f16, bf16, f32, f64, i32 or i64");
    densities = parse_densities(a.density.value_or("0.001,0.01,0.1"));
  }
  const Backend backend = choose_backend(a.device);
  std::optional<HostCoo> fileA, fileB;
  if (from_file) {
    fileA = io::read_mtx(a.positional[0]);
    nrows = fileA->desc().nrows;
    ncols = fileA->desc().ncols;
    dtype = fileA->desc().dtype;
    if (a.positional.size() == 2) {
      fileB = io::read_mtx(a.positional[1]);
      EWISE_EXPECTS(fileB->desc().nrows == nrows && fileB->desc().ncols == ncols, a.positional[0],
                    " is ", nrows, "x", ncols, " but ", a.positional[1], " is ",
                    fileB->desc().nrows, "x", fileB->desc().ncols);
      EWISE_EXPECTS(fileB->desc().dtype == dtype, a.positional[0], " holds ", dtype_name(dtype),
                    " values but ", a.positional[1], " holds ", dtype_name(fileB->desc().dtype));
    }
    densities = {static_cast<double>(fileA->nnz()) / (static_cast<double>(nrows) * ncols)};
  }
  // The dense forms (A, B, the result and one conversion's) must fit, checked before anything
  // is allocated.
  const double dense_bytes = static_cast<double>(nrows) * static_cast<double>(ncols) *
                             static_cast<double>(dtype_size(dtype));
  const double need = 4 * dense_bytes, have = available_bytes(backend);
  if (need > have)
    throw UsageError("--shape " + std::to_string(nrows) + "x" + std::to_string(ncols) + " " +
                     dtype_name(dtype) + ": the dense forms need " + human_bytes(need) + ", " +
                     backend.description() + " has " + human_bytes(have) + " available");
  const IndexType index = nrows - 1 > INT32_MAX || ncols - 1 > INT32_MAX ? IndexType::i64 : IndexType::i32;
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::optional<Stream> stream;
  if (backend.gpu) stream.emplace();
  Compare compare(backend, stream ? static_cast<cudaStream_t>(*stream) : nullptr, op);
  const std::string device = backend.gpu ? current_device_info().name : backend.label();
  if (!a.quiet)
    std::printf("ewise compare on %s: %s %lldx%lld, %s; seed %llu (EWISE_SEED=%llu replays)%s\n",
                backend.description().c_str(), dtype_name(dtype), static_cast<long long>(nrows),
                static_cast<long long>(ncols), op_name(op), static_cast<unsigned long long>(seed),
                static_cast<unsigned long long>(seed),
                from_file ? (", A = " + a.positional[0]).c_str() : "");
  const std::string form = form_name(op);
  std::printf("%-9s %10s %10s %10s %10s %11s %8s %13s %8s %10s %11s %9s  %s\n", "density",
              "nnz(A)", "nnz(B)", "nnz(C)", "dense ms", (form + " ms").c_str(), "speedup",
              (op == BinaryOp::multiply ? "COO*dense ms" : "COO+dense ms"), "speedup",
              "to COO ms", "to dense ms", "w/ conv.", "check");
  std::vector<Row> rows;
  int failures = 0;
  std::uint64_t next = seed;
  verify::CooGenOptions g;  // canonical, no zeros stored
  g.index = fileA ? fileA->desc().index : index;
  g.dtype = dtype;
  for (double density : densities) {
    // A matrix file is made canonical first (duplicates summed), as a pipeline would hold it.
    const HostCoo A = fileA ? coalesce<HostCoo>(fileA->view())
                            : verify::random_coo(nrows, ncols, density, ++next, g);
    const HostCoo B = fileB ? coalesce<HostCoo>(fileB->view())
                            : verify::random_coo(nrows, ncols, density, ++next, g);
    const Row r = compare.measure(density, A, B);
    failures += r.problem.empty() ? 0 : 1;
    std::printf("%-9s %10lld %10lld %10lld %10.3f %11.3f %7.2fx %13.3f %7.2fx %10.3f %11.3f %8.2fx  %s\n",
                percent(density).c_str(), static_cast<long long>(r.nnz_a),
                static_cast<long long>(r.nnz_b), static_cast<long long>(r.nnz_c), r.dense, r.coo,
                r.speedup(), r.coo_dense, r.dense / r.coo_dense, r.to_coo, r.to_dense,
                r.speedup_converting(),
                r.problem.empty() ? "ok (= dense)" : ("FAILED: " + r.problem).c_str());
    std::fflush(stdout);
    rows.push_back(r);
  }
  const std::string line = verdict(rows, &Row::speedup, form);
  const std::string line_converting = verdict(rows, &Row::speedup_converting, form + " with the conversions");
  std::printf("%s\n%s\n", line.c_str(), line_converting.c_str());
  if (a.json) {
    detail::AtomicOutputFile f(*a.json);
    f.write(json_text(device, nrows, ncols, dtype, op, seed, rows, line, line_converting));
    f.commit();
  }
  if (failures == 0) return 0;
  std::fflush(stdout);
  std::cerr << "ewise: compare: " << failures << " of " << rows.size()
            << " densities gave results that differ from the dense one\n";
  return 1;
}

}  // namespace ewise::cli
