// Sparse suites: sparse (COO multiply by algorithm, COO ⊙ dense) and crossover (dense multiply
// vs COO multiply as density grows).
//
// Inputs are generated on the device (coo_gen.hpp). Time is from the inputs in device memory to
// the finished canonical output, everything included: index validation (on by default),
// sorting, temporaries, the output's allocation and the synchronizations multiply makes.
//
// Verification before timing: when both operands have at most kCpuCheckLimit entries, the
// result is compared with the CPU reference (reference_multiply) in full. Larger results are
// checked entry by entry on the device against the generators (coordinates, order, bit-exact
// values, nnz), and the same algorithm on a smaller instance of the same density and order
// (about kCpuCheckLimit entries per operand) is compared with the CPU reference.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "coo_gen.hpp"
#include "dense_case.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "suites.hpp"

namespace ewise::bench {
namespace {

constexpr int kMaxSparseSets = 32;
constexpr std::int64_t kCpuCheckLimit = 100000;
constexpr std::uint64_t kSetSeedStep = 0x100000001B3ull;

const char* order_name(bool unsorted) { return unsorted ? "unsorted" : "canonical"; }

double entry_bytes(const CooSpec& s) {
  return static_cast<double>(2 * index_size(s.index) + dtype_size(s.dtype));
}

CooSpec resized(CooSpec s, std::int64_t side) {
  s.nrows = s.ncols = side;
  return s;
}

CooSpec reseeded(CooSpec s, int set) {
  s.seed += kSetSeedStep * static_cast<std::uint64_t>(set);
  return s;
}

// A side length for a square instance with about kCpuCheckLimit entries at this density.
std::int64_t small_side(const CooSpec& s) {
  const auto side = static_cast<std::int64_t>(std::sqrt(static_cast<double>(kCpuCheckLimit) /
                                                        std::max(s.density, 1e-12)));
  return std::clamp<std::int64_t>(side, 64, s.nrows);
}

// Operands a (and b) in rotated sets: set s is drawn with seeds shifted by s.
struct SparseInputs {
  CooSpec a, b;
  std::vector<DeviceCoo> A, B;
  int sets() const { return static_cast<int>(A.size()); }
};

SparseInputs make_inputs(Bench& bench, const CooSpec& a, const CooSpec* b) {
  SparseInputs in;
  in.a = a;
  in.b = b ? *b : a;
  in.A.push_back(generate_coo(a, bench.stream()));
  if (b) in.B.push_back(generate_coo(*b, bench.stream()));
  const double footprint =
      static_cast<double>(in.A[0].nnz() + (b ? 2 * in.B[0].nnz() : in.A[0].nnz())) *
      entry_bytes(a);
  const int sets = bench.sets_for(static_cast<std::size_t>(footprint), kMaxSparseSets);
  for (int s = 1; s < sets; ++s) {
    in.A.push_back(generate_coo(reseeded(a, s), bench.stream()));
    if (b) in.B.push_back(generate_coo(reseeded(*b, s), bench.stream()));
  }
  return in;
}

void require_match(const verify::CooCompareReport& r, const char* what) {
  if (!r.ok() || !r.got_canonical || r.got_nnz != r.want_nnz)
    throw VerifyError(detail::concat(what, ": ", r.str()));
}

// a ⊙ b with `options` checked as described in the file comment.
std::string verify_multiply(Bench& bench, const SparseInputs& in, const SparseOptions& options) {
  const cudaStream_t stream = bench.stream();
  const auto cpu_check = [&](const DeviceCoo& a, const DeviceCoo& b, const char* what) {
    const DeviceCoo got = multiply(a.view(), b.view(), options, stream);
    const HostCoo want = reference_multiply(to_host(a.view(), stream), to_host(b.view(), stream));
    require_match(verify::compare_coo(got.view(), want.view(),
                                      verify::default_tolerance(in.a.dtype), stream),
                  what);
    return want.nnz();
  };
  if (in.A[0].nnz() <= kCpuCheckLimit && in.B[0].nnz() <= kCpuCheckLimit) {
    const std::int64_t nnz = cpu_check(in.A[0], in.B[0], "CPU reference");
    return detail::concat("CPU reference in full (result nnz ", nnz, ")");
  }
  const DeviceCoo got = multiply(in.A[0].view(), in.B[0].view(), options, stream);
  const std::string device = check_coo_product(got.view(), in.a, in.b, stream);
  const std::int64_t side = small_side(in.a);
  const DeviceCoo sa = generate_coo(resized(in.a, side), stream);
  const DeviceCoo sb = generate_coo(resized(in.b, side), stream);
  const std::int64_t nnz = cpu_check(sa, sb, "CPU reference on the smaller instance");
  return detail::concat(device, "; CPU reference in full on a ", side, "x", side,
                        " instance (result nnz ", nnz, ")");
}

std::string verify_dense_multiply(Bench& bench, const SparseInputs& in, const DeviceTensor& dense,
                                  const Dims& small_dense_shape) {
  const cudaStream_t stream = bench.stream();
  const auto cpu_check = [&](const DeviceCoo& a, const ConstTensorView& d, const char* what) {
    const DeviceCoo got = multiply(a.view(), d, {}, stream);
    const HostTensor hd = to_host(d, stream);
    const HostCoo want = reference_multiply(to_host(a.view(), stream), hd.view());
    require_match(verify::compare_coo(got.view(), want.view(),
                                      verify::default_tolerance(in.a.dtype), stream),
                  what);
    return want.nnz();
  };
  if (in.A[0].nnz() <= kCpuCheckLimit) {
    const std::int64_t nnz = cpu_check(in.A[0], dense.view(), "CPU reference");
    return detail::concat("CPU reference in full (result nnz ", nnz, ")");
  }
  const DeviceCoo got = multiply(in.A[0].view(), dense.view(), {}, stream);
  const std::string device =
      check_coo_dense_product(got.view(), in.a, in.A[0].nnz(), dense.view(), stream);
  const std::int64_t side = small_side(in.a);
  const DeviceCoo sa = generate_coo(resized(in.a, side), stream);
  Dims shape = small_dense_shape;
  for (int k = 0; k < shape.size(); ++k)
    if (shape[k] != 1) shape[k] = side;
  DeviceTensor sd(in.a.dtype, shape, stream);
  verify::fill_random(sd.view(), bench.next_seed(), {}, stream);
  const std::int64_t nnz = cpu_check(sa, sd.view(), "CPU reference on the smaller instance");
  return detail::concat(device, "; CPU reference in full on a ", side, "x", side,
                        " instance (result nnz ", nnz, ")");
}

std::vector<Param> coo_params(const SparseInputs& in, const char* op) {
  return {param("op", op),
          param("rows", in.a.nrows),
          param("cols", in.a.ncols),
          param("density", in.a.density),
          param("input", order_name(in.a.unsorted)),
          param("index", index_name(in.a.index)),
          param("nnz_a", in.A[0].nnz())};
}

// Verifies and times multiply(a, b) with one algorithm; returns the timing (runs == 0 when
// refused or failed).
Stats time_multiply(Bench& bench, const std::string& suite, const std::string& name,
                    const SparseInputs& in, CooAlgorithm algorithm, bool validate) {
  const cudaStream_t stream = bench.stream();
  SparseOptions options;
  options.algorithm = algorithm;
  options.validate_indices = validate;
  Record r;
  r.suite = suite;
  r.name = name;
  r.impl = std::string(coo_algorithm_name(algorithm)) + (validate ? "" : "_novalidate");
  r.dtype = dtype_name(in.a.dtype);
  r.params = coo_params(in, "coo*coo");
  r.params.push_back(param("nnz_b", in.B[0].nnz()));
  r.params.push_back(param("algorithm", coo_algorithm_name(algorithm)));
  r.params.push_back(param("validate_indices", validate));
  try {
    const CooAlgorithm runs = select_coo_algorithm(in.A[0].view(), in.B[0].view(), algorithm);
    if (algorithm == CooAlgorithm::automatic)
      r.note = detail::concat("selected ", coo_algorithm_name(runs));
  } catch (const InvalidArgument& e) {
    bench.add_untimed(std::move(r), "refused", e.what());
    return {};
  }
  try {
    r.verified = verify_multiply(bench, in, options);
  } catch (const VerifyError& e) {
    bench.add_untimed(std::move(r), "failed", e.what());
    return {};
  }
  const std::int64_t nnz_out = multiply(in.A[0].view(), in.B[0].view(), options, stream).nnz();
  r.params.push_back(param("nnz_out", nnz_out));
  r.bytes = static_cast<double>(in.A[0].nnz() + in.B[0].nnz() + nnz_out) * entry_bytes(in.a);
  r.stats = bench.time(
      [&](std::int64_t i) {
        const int s = static_cast<int>(i % in.sets());
        const DeviceCoo c = multiply(in.A[s].view(), in.B[s].view(), options, stream);
      },
      in.sets());
  const Stats st = r.stats;
  bench.add(std::move(r), 0);
  return st;
}

struct DensePattern {
  const char* name;
  bool rows, cols;  // whether the dense operand spans the rows / the columns
};

void time_dense_multiply(Bench& bench, const std::string& name, const SparseInputs& in,
                         const DensePattern& p) {
  const cudaStream_t stream = bench.stream();
  Dims shape;
  if (p.rows || p.cols) shape = Dims{p.rows ? in.a.nrows : 1, p.cols ? in.a.ncols : 1};
  DeviceTensor dense(in.a.dtype, shape, stream);
  verify::fill_random(dense.view(), bench.next_seed(), {}, stream);
  Record r;
  r.suite = "sparse";
  r.name = name;
  r.impl = "coo_dense";
  r.dtype = dtype_name(in.a.dtype);
  r.params = coo_params(in, "coo*dense");
  r.params.push_back(param("dense", p.name));
  r.params.push_back(param("dense_shape", shape));
  try {
    r.verified = verify_dense_multiply(bench, in, dense, shape);
  } catch (const VerifyError& e) {
    bench.add_untimed(std::move(r), "failed", e.what());
    return;
  }
  const std::int64_t nnz = in.A[0].nnz();
  r.params.push_back(param("nnz_out", nnz));
  // Reads a's entries and, of the dense operand, at most one element per entry.
  r.bytes = 2.0 * static_cast<double>(nnz) * entry_bytes(in.a) +
            static_cast<double>(std::min(nnz, dense.numel()) * dtype_size(in.a.dtype));
  r.stats = bench.time(
      [&](std::int64_t i) {
        const DeviceCoo c =
            multiply(in.A[static_cast<int>(i % in.sets())].view(), dense.view(), {}, stream);
      },
      in.sets());
  bench.add(std::move(r), 0);
}

std::string density_name(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

}  // namespace

// ---- sparse --------------------------------------------------------------------------------

std::vector<Case> sparse_suite(Bench& bench) {
  const bool quick = bench.quick();
  const std::vector<std::int64_t> sides =
      quick ? std::vector<std::int64_t>{16384} : std::vector<std::int64_t>{16384, 32768};
  const std::vector<double> densities =
      quick ? std::vector<double>{1e-3, 1e-2} : std::vector<double>{1e-4, 1e-3, 1e-2, 1e-1};
  const std::vector<double> dense_densities =
      quick ? std::vector<double>{1e-2} : std::vector<double>{1e-3, 1e-2, 1e-1};
  const std::vector<DensePattern> patterns =
      quick ? std::vector<DensePattern>{{"full", true, true}, {"row", false, true}}
            : std::vector<DensePattern>{{"full", true, true},
                                        {"row", false, true},
                                        {"column", true, false},
                                        {"scalar", false, false}};
  std::vector<Case> cases;
  for (const std::int64_t side : sides)
    for (const double density : densities)
      for (const bool unsorted : {true, false}) {
        const std::string name =
            detail::concat("coo_mul_", side, "_", density_name(density), "_", order_name(unsorted));
        cases.push_back({name, [&bench, side, density, unsorted, name] {
                           CooSpec a{side, side, density, bench.next_seed(), IndexType::i32,
                                     DType::f32, unsorted};
                           CooSpec b = a;
                           b.seed = bench.next_seed();
                           const SparseInputs in = make_inputs(bench, a, &b);
                           for (const CooAlgorithm alg :
                                {CooAlgorithm::automatic, CooAlgorithm::sort_search,
                                 CooAlgorithm::merge, CooAlgorithm::bitmap_merge,
                                 CooAlgorithm::hash_merge, CooAlgorithm::linear_search})
                             time_multiply(bench, "sparse", name, in, alg, true);
                           time_multiply(bench, "sparse", name, in, CooAlgorithm::automatic, false);
                         }});
      }
  for (const std::int64_t side : sides)
    for (const double density : dense_densities)
      for (const bool unsorted : {true, false}) {
        const std::string name = detail::concat("coo_dense_", side, "_", density_name(density),
                                                "_", order_name(unsorted));
        cases.push_back({name, [&bench, side, density, unsorted, name, patterns] {
                           const CooSpec a{side, side, density, bench.next_seed(), IndexType::i32,
                                           DType::f32, unsorted};
                           const SparseInputs in = make_inputs(bench, a, nullptr);
                           for (const DensePattern& p : patterns)
                             time_dense_multiply(bench, name + "_" + p.name, in, p);
                         }});
      }
  return cases;
}

// ---- crossover -----------------------------------------------------------------------------

std::vector<Case> crossover_suite(Bench& bench) {
  // Dense multiply of two (S,S) f32 matrices against COO multiply (automatic) of two (S,S)
  // matrices of one density, from unsorted and from canonical inputs.
  constexpr std::int64_t S = 16384;
  const std::vector<double> densities =
      bench.quick() ? std::vector<double>{1e-4, 1e-2, 1e-1, 0.5}
                    : std::vector<double>{1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2,
                                          2e-2, 5e-2, 0.1,  0.2,  0.3,  0.5};
  struct Point {
    double density, ms[2];  // [0] unsorted, [1] canonical; 0 when not timed
  };
  struct State {
    double dense_ms = 0;
    std::vector<Point> points;
  };
  auto state = std::make_shared<State>();
  std::vector<Case> cases;
  cases.push_back({"dense multiply (16384,16384) f32", [&bench, state] {
                     DenseSpec spec;
                     spec.name = "dense_mul";
                     spec.op = BinaryOp::mul;
                     spec.dtype = DType::f32;
                     spec.a_shape = Dims{S, S};
                     spec.b_shape = Dims{S, S};
                     const DenseOperands d(bench, spec, 1);
                     state->dense_ms =
                         time_dense(bench, "crossover", d, DenseOptions{}, {}).median_ms;
                   }});
  for (const double density : densities)
    cases.push_back({detail::concat("COO multiply at density ", density_name(density)),
                     [&bench, state, density] {
                       Point p{density, {0, 0}};
                       CooSpec a{S, S, density, bench.next_seed(), IndexType::i32, DType::f32, true};
                       CooSpec b = a;
                       b.seed = bench.next_seed();
                       for (const bool unsorted : {true, false}) {
                         a.unsorted = b.unsorted = unsorted;
                         const SparseInputs in = make_inputs(bench, a, &b);
                         const std::string name =
                             detail::concat("coo_mul_", density_name(density), "_",
                                            order_name(unsorted));
                         p.ms[unsorted ? 0 : 1] =
                             time_multiply(bench, "crossover", name, in, CooAlgorithm::automatic,
                                           true)
                                 .median_ms;
                       }
                       state->points.push_back(p);
                     }});
  cases.push_back({"crossover densities", [&bench, state] {
                     for (const int k : {0, 1}) {
                       Record r;
                       r.suite = "crossover";
                       r.name = detail::concat("crossover_", order_name(k == 0));
                       r.impl = "automatic";
                       r.dtype = "f32";
                       r.status = "summary";
                       r.params = {param("dense_ms", state->dense_ms),
                                   param("input", order_name(k == 0))};
                       // First density where COO is no faster than dense; interpolated in
                       // log(density) vs log(time) with the point before it.
                       const Point* prev = nullptr;
                       double cross = -1;
                       for (const Point& p : state->points) {
                         if (p.ms[k] <= 0 || state->dense_ms <= 0) continue;
                         if (p.ms[k] >= state->dense_ms) {
                           if (!prev) {
                             cross = 0;
                           } else {
                             const double x0 = std::log(prev->density), x1 = std::log(p.density);
                             const double y0 = std::log(prev->ms[k]), y1 = std::log(p.ms[k]);
                             const double y = std::log(state->dense_ms);
                             cross = std::exp(x0 + (y - y0) * (x1 - x0) / (y1 - y0));
                           }
                           break;
                         }
                         prev = &p;
                       }
                       if (cross > 0) {
                         r.params.push_back(param("crossover_density", cross));
                         r.note = detail::concat("COO stops beating dense (", state->dense_ms,
                                                 " ms) at density ~", density_name(cross));
                       } else if (cross == 0) {
                         r.note = "COO never beats dense at the densities measured";
                       } else {
                         r.note = "COO beats dense at every density measured";
                       }
                       bench.add(std::move(r), 0);
                     }
                   }});
  return cases;
}

}  // namespace ewise::bench
