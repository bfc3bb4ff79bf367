// src/compare.cpp — ewise::compare (ewise/compare.hpp). For each density: seeded random operands
// (canonical COO, no zeros stored) or the user's matrices made canonical, the dense operation on
// their dense forms, the sparse forms (COO op COO; COO op dense), the conversions a pipeline
// holding dense data pays (dense -> COO of each operand, COO -> dense of the result), every
// result checked against the dense one bit for bit (the same operation on the same values).
#include "ewise/compare.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "ewise/verify.hpp"
#include "timing.hpp"

namespace ewise {
namespace {

bool coo_op(BinaryOp op) {
  return op == BinaryOp::multiply || op == BinaryOp::add || op == BinaryOp::subtract ||
         op == BinaryOp::minimum || op == BinaryOp::maximum;
}

/// Bytes the backend can give: free device memory, or available host memory.
double available_bytes(Memory memory) {
  if (memory == Memory::device) {
    std::size_t free_bytes = 0, total = 0;
    EWISE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return static_cast<double>(free_bytes);
  }
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) *
         static_cast<double>(sysconf(_SC_PAGESIZE));
}

/// A stream owned for one compare() call on the GPU (none on the CPU).
class OwnStream {
 public:
  explicit OwnStream(bool gpu) {
    if (gpu) EWISE_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  OwnStream(const OwnStream&) = delete;
  OwnStream& operator=(const OwnStream&) = delete;
  ~OwnStream() {
    if (s_) (void)cudaStreamDestroy(s_);
  }
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

/// Fills r's times, nnz(C) and problem for A op B on one backend (Coo, Tensor: its types).
template <class Coo, class Tensor>
void measure(CompareRow& r, BinaryOp op, const CooView& A, const CooView& B, bool gpu,
             cudaStream_t s) {
  const int reps = gpu ? 10 : 3;
  const SparseOptions o;
  const IndexType index = A.desc.index;
  const Tensor Da = coo_to_dense<Tensor>(A, o, s), Db = coo_to_dense<Tensor>(B, o, s);
  Tensor Dc(A.desc.dtype, {A.desc.nrows, A.desc.ncols}, s);
  binary(op, Da.view(), Db.view(), Dc.view(), {}, s);
  const auto sparse = [&] {
    return op == BinaryOp::multiply ? multiply<Coo>(A, B, o, s) : combine<Coo>(op, A, B, o, s);
  };
  const auto with_dense = [&] {
    return op == BinaryOp::multiply
               ? coo_to_dense<Tensor>(multiply<Coo>(A, Db.view(), o, s).view(), o, s)
               : combine<Tensor>(op, A, Db.view(), o, s);
  };
  const Coo C = sparse();
  r.nnz_c = C.nnz();
  const auto check = [&](const std::string& what, const ConstTensorView& got,
                         const ConstTensorView& want) {
    const verify::CompareReport rep = verify::compare(got, want, s);
    if (!rep.ok() && r.problem.empty()) r.problem = what + ": " + rep.str();
  };
  const std::string form = op == BinaryOp::multiply ? "COO*" : "COO+";
  check(form + "COO", coo_to_dense<Tensor>(C.view(), o, s).view(), Dc.view());
  check(form + "dense", with_dense().view(), Dc.view());
  check("dense->COO->dense of A",
        coo_to_dense<Tensor>(dense_to_coo<Coo>(Da.view(), index, s).view(), o, s).view(),
        Da.view());
  r.dense_ms =
      detail::median_ms(gpu, s, reps, [&] { binary(op, Da.view(), Db.view(), Dc.view(), {}, s); });
  r.coo_ms = detail::median_ms(gpu, s, reps, [&] { sparse(); });
  r.coo_dense_ms = detail::median_ms(gpu, s, reps, [&] {
    if (op == BinaryOp::multiply)
      multiply<Coo>(A, Db.view(), o, s);
    else
      combine<Tensor>(op, A, Db.view(), o, s);
  });
  r.to_coo_ms = detail::median_ms(gpu, s, reps, [&] {
    dense_to_coo<Coo>(Da.view(), index, s);
    dense_to_coo<Coo>(Db.view(), index, s);
  });
  r.to_dense_ms = detail::median_ms(gpu, s, reps, [&] { coo_to_dense<Tensor>(C.view(), o, s); });
}

std::optional<double> crossing(const std::vector<CompareRow>& rows,
                               double (CompareRow::*speedup)() const) {
  for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
    const double s0 = std::log((rows[i].*speedup)()), s1 = std::log((rows[i + 1].*speedup)());
    if ((s0 >= 0) == (s1 >= 0) || s0 == s1) continue;
    const double d0 = std::log(rows[i].density), d1 = std::log(rows[i + 1].density);
    return std::exp(d0 + (0 - s0) * (d1 - d0) / (s1 - s0));
  }
  return std::nullopt;
}

std::string verdict_of(const std::vector<CompareRow>& rows, double (CompareRow::*speedup)() const,
                       const std::string& form) {
  if (rows.empty()) return form + ": nothing measured";
  const auto x = crossing(rows, speedup);
  const double first = (rows.front().*speedup)(), last = (rows.back().*speedup)();
  char buf[256];
  if (x) {
    std::snprintf(buf, sizeof buf, "%s is faster than dense %s %s density (crossover interpolated)",
                  form.c_str(), first > 1 ? "below" : "above", density_text(*x).c_str());
  } else if (rows.size() == 1) {
    std::snprintf(buf, sizeof buf, "%s is %.2fx %s than dense at %s density", form.c_str(),
                  first >= 1 ? first : 1 / first, first >= 1 ? "faster" : "slower",
                  density_text(rows.front().density).c_str());
  } else {
    std::snprintf(
        buf, sizeof buf, "%s is %s than dense at every density from %s to %s (%.2fx to %.2fx)",
        form.c_str(), first >= 1 ? "faster" : "slower", density_text(rows.front().density).c_str(),
        density_text(rows.back().density).c_str(), first, last);
  }
  return buf;
}

/// The spec with its shape and dtype taken from A when given, and its densities sorted.
CompareSpec resolved(const CompareSpec& spec) {
  CompareSpec s = spec;
  if (s.a) {
    check_view(*s.a, "a");
    s.nrows = s.a->desc.nrows;
    s.ncols = s.a->desc.ncols;
    s.dtype = s.a->desc.dtype;
    const double cells = static_cast<double>(s.nrows) * static_cast<double>(s.ncols);
    s.densities = {cells > 0 ? static_cast<double>(s.a->desc.nnz) / cells : 0};
  }
  std::sort(s.densities.begin(), s.densities.end());
  s.densities.erase(std::unique(s.densities.begin(), s.densities.end()), s.densities.end());
  return s;
}

}  // namespace

std::string density_text(double density) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", density * 100);
  return buf;
}

std::string CompareResult::form() const { return op == BinaryOp::multiply ? "COO*COO" : "COO+COO"; }
std::optional<double> CompareResult::crossover() const {
  return crossing(rows, &CompareRow::speedup);
}
std::optional<double> CompareResult::crossover_converting() const {
  return crossing(rows, &CompareRow::speedup_converting);
}
std::string CompareResult::verdict() const {
  return verdict_of(rows, &CompareRow::speedup, form());
}
std::string CompareResult::verdict_converting() const {
  return verdict_of(rows, &CompareRow::speedup_converting, form() + " with the conversions");
}
int CompareResult::failures() const {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(),
                                        [](const CompareRow& r) { return !r.problem.empty(); }));
}

std::string CompareResult::json() const {
  std::ostringstream j;
  j.precision(9);
  const auto number = [](std::optional<double> x) {
    if (!x) return std::string("null");
    std::ostringstream n;
    n.precision(9);
    n << *x;
    return n.str();
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
    const CompareRow& r = rows[i];
    j << (i ? ",\n  " : "\n  ") << "{\"density\": " << r.density << ", \"nnz_a\": " << r.nnz_a
      << ", \"nnz_b\": " << r.nnz_b << ", \"nnz_c\": " << r.nnz_c
      << ", \"dense_ms\": " << r.dense_ms << ", \"coo_ms\": " << r.coo_ms
      << ", \"coo_dense_ms\": " << r.coo_dense_ms << ", \"to_coo_ms\": " << r.to_coo_ms
      << ", \"to_dense_ms\": " << r.to_dense_ms << ", \"speedup\": " << r.speedup()
      << ", \"speedup_converting\": " << r.speedup_converting()
      << ", \"verified\": " << (r.problem.empty() ? "true" : "false") << "}";
  }
  j << "],\n \"crossover\": " << number(crossover())
    << ", \"crossover_converting\": " << number(crossover_converting())
    << ",\n \"verdict\": " << quoted(verdict())
    << ", \"verdict_converting\": " << quoted(verdict_converting()) << "}\n";
  return j.str();
}

void check_compare(const CompareSpec& spec) {
  EWISE_EXPECTS(spec.memory == Memory::device || spec.memory == Memory::host,
                "compare runs on the GPU (Memory::device) or the CPU backend (Memory::host)");
  EWISE_EXPECTS(coo_op(spec.op), "compare: ", op_name(spec.op),
                " is not an operation COO runs (multiply, add, subtract, minimum, maximum)");
  EWISE_EXPECTS(spec.a || !spec.b, "compare: B is given without A");
  const CompareSpec s = resolved(spec);
  if (spec.a && spec.b) {
    check_view(*spec.b, "b");
    EWISE_EXPECTS(spec.b->desc.nrows == s.nrows && spec.b->desc.ncols == s.ncols &&
                      spec.b->desc.dtype == s.dtype,
                  "compare: A is ", dtype_name(s.dtype), " ", s.nrows, "x", s.ncols, " but B is ",
                  dtype_name(spec.b->desc.dtype), " ", spec.b->desc.nrows, "x", spec.b->desc.ncols);
  }
  EWISE_EXPECTS(
      (!spec.a || spec.a->memory == Memory::host) && (!spec.b || spec.b->memory == Memory::host),
      "compare: the matrices A and B are host COO views");
  EWISE_EXPECTS(s.nrows > 0 && s.ncols > 0, "compare: the shape ", s.nrows, "x", s.ncols,
                " is not positive");
  EWISE_EXPECTS(is_sparse_dtype(s.dtype), "compare: ", dtype_name(s.dtype),
                " is not a COO value dtype (f16, bf16, f32, f64, i32, i64)");
  EWISE_EXPECTS(!s.densities.empty(), "compare: no density given");
  for (double d : s.densities)
    EWISE_EXPECTS(d > 0 && d <= 1, "compare: density ", d, " is not in (0, 1]");
  // The dense forms of A, B, the result and one conversion's.
  const double need = 4 * static_cast<double>(s.nrows) * static_cast<double>(s.ncols) *
                      static_cast<double>(dtype_size(s.dtype));
  const double have = available_bytes(s.memory);
  const auto gb = [](double bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g GB", bytes / 1e9);
    return std::string(buf);
  };
  EWISE_EXPECTS(need <= have, "compare: ", s.nrows, "x", s.ncols, " ", dtype_name(s.dtype),
                ": the dense forms need ", gb(need), ", the ",
                s.memory == Memory::device ? "GPU has " : "host has ", gb(have), " available");
}

CompareResult compare(const CompareSpec& spec,
                      const std::function<void(const CompareRow&)>& on_row) {
  check_compare(spec);
  const CompareSpec s = resolved(spec);
  const bool gpu = s.memory == Memory::device;
  CompareResult result;
  result.device = gpu ? current_device_info().name : "CPU";
  result.nrows = s.nrows;
  result.ncols = s.ncols;
  result.dtype = s.dtype;
  result.op = s.op;
  result.seed = s.seed;
  const OwnStream stream(gpu);
  verify::CooGenOptions g;  // canonical, no zeros stored
  g.index =
      s.a ? s.a->desc.index
          : (s.nrows - 1 > INT32_MAX || s.ncols - 1 > INT32_MAX ? IndexType::i64 : IndexType::i32);
  g.dtype = s.dtype;
  std::uint64_t next = s.seed;
  for (double density : s.densities) {
    // A matrix of the user's is made canonical first (duplicates summed), as a pipeline holds it.
    const HostCoo A =
        s.a ? coalesce<HostCoo>(*s.a) : verify::random_coo(s.nrows, s.ncols, density, ++next, g);
    const HostCoo B =
        s.b ? coalesce<HostCoo>(*s.b) : verify::random_coo(s.nrows, s.ncols, density, ++next, g);
    CompareRow r;
    r.density = density;
    r.nnz_a = A.nnz();
    r.nnz_b = B.nnz();
    if (gpu) {
      const DeviceCoo dA = to_device(A.view(), stream.get()),
                      dB = to_device(B.view(), stream.get());
      measure<DeviceCoo, DeviceTensor>(r, s.op, dA.view(), dB.view(), true, stream.get());
    } else {
      measure<HostCoo, HostTensor>(r, s.op, A.view(), B.view(), false, nullptr);
    }
    if (on_row) on_row(r);
    result.rows.push_back(std::move(r));
  }
  return result;
}

}  // namespace ewise
