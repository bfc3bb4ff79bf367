// Dense suites: paper, schedules, patterns.
#include <algorithm>
#include <chrono>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "dense_case.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"
#include "suites.hpp"

namespace ewise::bench {

DenseOperands::DenseOperands(Bench& bench, const DenseSpec& spec, int max_sets)
    : spec_(spec),
      a_desc_(spec.a_transposed
                  ? TensorDesc::strided(spec.dtype, spec.a_shape, {1, spec.a_shape[0]})
                  : TensorDesc::contiguous(spec.dtype, spec.a_shape)),
      b_desc_(TensorDesc::contiguous(spec.dtype, spec.b_shape)),
      out_desc_(TensorDesc::contiguous(spec.dtype, broadcast_shapes(spec.a_shape, spec.b_shape))),
      sets_(bench.sets_for(static_cast<std::size_t>(bytes()), max_sets)),
      a_(spec.dtype, a_desc_.numel() + spec.offset, sets_, true, bench.next_seed(), bench.stream()),
      b_(spec.dtype, b_desc_.numel(), sets_, true, bench.next_seed(), bench.stream()),
      out_(spec.dtype, out_desc_.numel() + spec.offset, sets_, false, 0, bench.stream()) {
  EWISE_EXPECTS(!spec.a_transposed || spec.a_shape.size() == 2,
                "a transposed operand must be a matrix, got ", spec.a_shape.str());
}

double DenseOperands::bytes() const {
  return static_cast<double>(a_desc_.numel() + b_desc_.numel() + out_desc_.numel()) *
         static_cast<double>(dtype_size(spec_.dtype));
}

std::vector<Param> DenseOperands::params() const {
  return {param("op", op_name(spec_.op)), param("a_shape", spec_.a_shape),
          param("b_shape", spec_.b_shape), param("out_shape", out_desc_.shape),
          param("a_transposed", spec_.a_transposed), param("offset", spec_.offset)};
}

Stats time_dense(Bench& bench, const std::string& suite, const DenseOperands& d,
                 const DenseOptions& options, std::vector<Param> extra) {
  const DenseSpec& spec = d.spec();
  const cudaStream_t stream = bench.stream();
  Record r;
  r.suite = suite;
  r.name = spec.name;
  r.impl = kernel_name(options.kernel);
  r.dtype = dtype_name(spec.dtype);
  r.params = d.params();
  r.params.push_back(param("nt", options.threads));
  r.params.push_back(param("nb", options.blocks));
  r.params.push_back(param("sliding_factor", options.sliding_factor));
  for (Param& p : extra) r.params.push_back(std::move(p));
  r.bytes = d.bytes();
  try {
    if (options.kernel == Kernel::automatic)
      r.note = detail::concat("selected ", kernel_name(select_kernel(d.a(0), d.b(0), d.out(0))));
    verify::poison(d.out(0), stream);
    binary(spec.op, d.a(0), d.b(0), d.out(0), options, stream);
  } catch (const InvalidArgument& e) {
    bench.add_untimed(std::move(r), "refused", e.what());
    return {};
  }
  try {
    r.verified = verify_dense(spec.op, d.a(0), d.b(0), d.out(0), bench.next_seed(), stream);
  } catch (const VerifyError& e) {
    bench.add_untimed(std::move(r), "failed", e.what());
    return {};
  }
  r.stats = bench.time(
      [&](std::int64_t i) { binary(spec.op, d.a(i), d.b(i), d.out(i), options, stream); },
      d.sets());
  const Stats st = r.stats;
  bench.add(std::move(r), d.out_numel());
  return st;
}

namespace {

// Most sets a dense case rotates through (a 4-KiB case still gets 4096 * 4 KiB = 16 MiB).
constexpr int kMaxDenseSets = 4096;

DenseOptions with_kernel(Kernel k, int threads = 0, int blocks = 0, int sliding_factor = 0) {
  DenseOptions o;
  o.kernel = k;
  o.threads = threads;
  o.blocks = blocks;
  o.sliding_factor = sliding_factor;
  return o;
}

}  // namespace

// ---- paper ---------------------------------------------------------------------------------

std::vector<Case> paper_suite(Bench& bench) {
  // The paper's workload: a vector of length N applied to a matrix whose other dimension M
  // (the vector's reuse) grows. "row": (M,N) + (1,N), the paper's own layout (Julia is
  // column-major, its N x M matrix with an N x 1 vector is our (M,N) + (1,N)); "col": (N,M) +
  // (N,1). Sizes stop at 2^28 elements (1 GiB per f32 matrix).
  const bool quick = bench.quick();
  const std::vector<std::int64_t> lengths = quick ? std::vector<std::int64_t>{1024}
                                                  : std::vector<std::int64_t>{256, 1024, 4096};
  std::vector<std::int64_t> reuse;
  for (std::int64_t m = 16; m <= (std::int64_t{1} << 18); m *= quick ? 16 : 4) reuse.push_back(m);
  const std::vector<std::string> orients =
      quick ? std::vector<std::string>{"row"} : std::vector<std::string>{"row", "col"};
  const Kernel kernels[] = {Kernel::baseline, Kernel::sliding, Kernel::sliding_shared,
                            Kernel::general, Kernel::automatic};
  std::vector<Case> cases;
  for (const std::string& orient : orients)
    for (const std::int64_t n : lengths)
      for (const std::int64_t m : reuse) {
        if (n * m > (std::int64_t{1} << 28)) continue;
        DenseSpec spec;
        spec.name = detail::concat("vec", n, "_", orient, "_", m);
        spec.op = BinaryOp::add;
        spec.dtype = DType::f32;
        spec.a_shape = orient == "row" ? Dims{m, n} : Dims{n, m};
        spec.b_shape = orient == "row" ? Dims{1, n} : Dims{n, 1};
        const bool sweep = !quick && n == 1024 && m == 65536;
        cases.push_back({spec.name + (sweep ? " (+ sliding factor sweep)" : ""), [&bench, spec,
                                                                                 n, m, orient,
                                                                                 sweep, kernels] {
          const DenseOperands d(bench, spec, kMaxDenseSets);
          const std::vector<Param> p{param("vector_length", n), param("reuse", m),
                                     param("orient", orient)};
          for (const Kernel k : kernels) time_dense(bench, "paper", d, with_kernel(k), p);
          if (!sweep) return;
          for (const Kernel k : {Kernel::sliding, Kernel::sliding_shared})
            for (const int sf : {1, 2, 4, 8, 16, 32, 64, 128})
              time_dense(bench, "paper", d, with_kernel(k, 0, 0, sf), p);
        }});
      }
  return cases;
}

// ---- schedules -----------------------------------------------------------------------------

std::vector<Case> schedules_suite(Bench& bench) {
  // d2ltvm section 5.3: C = A + B with A (n,1) and B (n,n), n = 2^5 .. 2^13 step x4 as in the
  // book, then larger. Each size: both schedules with the book's nt=64, nb=256 and with the
  // library's defaults (0 = kernel default / fill the device), and automatic. At the sweep
  // sizes, nt x nb for both schedules.
  const bool quick = bench.quick();
  const int sms = bench.device().sm_count;
  std::vector<std::int64_t> sizes{32, 128, 512, 2048, 8192, 16384};
  if (!quick) sizes.push_back(32768);
  const std::vector<std::int64_t> sweep_sizes =
      quick ? std::vector<std::int64_t>{} : std::vector<std::int64_t>{2048, 8192};
  std::vector<Case> cases;
  for (const std::int64_t n : sizes) {
    DenseSpec spec;
    spec.name = detail::concat("bcast_add_", n);
    spec.op = BinaryOp::add;
    spec.dtype = DType::f32;
    spec.a_shape = Dims{n, 1};
    spec.b_shape = Dims{n, n};
    const bool sweep = std::find(sweep_sizes.begin(), sweep_sizes.end(), n) != sweep_sizes.end();
    cases.push_back({spec.name + (sweep ? " (+ nt x nb sweep)" : ""), [&bench, spec, n, sweep,
                                                                        sms] {
      const DenseOperands d(bench, spec, kMaxDenseSets);
      const std::vector<Param> p{param("n", n)};
      for (const Kernel k : {Kernel::continuous, Kernel::alternate}) {
        time_dense(bench, "schedules", d, with_kernel(k, 64, 256), p);
        time_dense(bench, "schedules", d, with_kernel(k), p);
      }
      time_dense(bench, "schedules", d, with_kernel(Kernel::automatic), p);
      if (!sweep) return;
      for (const Kernel k : {Kernel::continuous, Kernel::alternate})
        for (const int nt : {32, 64, 128, 256, 512, 1024})
          for (const int nb : {256, sms, 4 * sms, 16 * sms, 64 * sms}) {
            if (nt == 64 && nb == 256) continue;  // timed above
            time_dense(bench, "schedules", d, with_kernel(k, nt, nb), p);
          }
    }});
  }
  return cases;
}

/// Cases of `suite`: one per spec and dtype (the spec's own dtype is replaced), each building its
/// operands once and verifying and timing every kernel of `kernels` on them.
std::vector<Case> dense_cases(Bench& bench, const char* suite, const std::vector<DenseSpec>& specs,
                              const std::vector<DType>& dtypes, const std::vector<Kernel>& kernels) {
  std::vector<Case> cases;
  for (DenseSpec spec : specs)
    for (const DType t : dtypes) {
      spec.dtype = t;
      cases.push_back({detail::concat(spec.name, " ", dtype_name(t)), [&bench, suite, spec, kernels] {
                         const DenseOperands d(bench, spec, kMaxDenseSets);
                         for (const Kernel k : kernels) time_dense(bench, suite, d, with_kernel(k), {});
                       }});
    }
  return cases;
}

// ---- patterns ------------------------------------------------------------------------------

std::vector<Case> patterns_suite(Bench& bench) {
  constexpr std::int64_t S = 16384;
  constexpr DType f32 = DType::f32;  // each case runs in every dtype of the suite
  const std::vector<DenseSpec> patterns = {
      {"same_shape", BinaryOp::add, f32, {S, S}, {S, S}},
      {"scalar", BinaryOp::add, f32, {S, S}, Dims{}},
      {"row_vector", BinaryOp::add, f32, {S, S}, {1, S}},
      {"column_vector", BinaryOp::add, f32, {S, S}, {S, 1}},
      {"outer", BinaryOp::add, f32, {S, 1}, {1, S}},
      {"nchw_channel", BinaryOp::mul, f32, {64, 256, 64, 64}, {1, 256, 1, 1}},
      {"mixed", BinaryOp::add, f32, {64, 1, 256, 1}, {1, 128, 1, 512}},
      {"transposed_row", BinaryOp::add, f32, {S, S}, {1, S}, true},
  };
  const std::vector<DType> dtypes =
      bench.quick() ? std::vector<DType>{DType::f32, DType::bf16}
                    : std::vector<DType>{DType::f32, DType::bf16, DType::f16, DType::f64};
  return dense_cases(bench, "patterns", patterns, dtypes,
                     std::vector<Kernel>(std::begin(kAllKernels), std::end(kAllKernels)));
}

// ---- ml_shapes: odd widths, 16-bit types, short rows ---------------------------------------

/// Shapes of ML models whose rows are not whole aligned 16-byte vectors: vocabulary-sized rows
/// (GPT-2's 50257, LLaMA's 32001), conv bias over NCHW planes of 7x7 to 55x55, feature widths
/// 999 and 1000, an outer product with an odd inner extent, a rank-5 mixed broadcast, and rows
/// that start one element past a 16-byte boundary. automatic, and row_vectorized (the kernel
/// these shapes ran before vectorization across rows) for comparison.
std::vector<Case> ml_shapes_suite(Bench& bench) {
  constexpr DType f32 = DType::f32;  // each case runs in every dtype of the suite
  const std::vector<DenseSpec> shapes = {
      {"vocab50257_bias", BinaryOp::add, f32, {1024, 50257}, {50257}},
      {"vocab32001_row_scale", BinaryOp::mul, f32, {1024, 32001}, {1024, 1}},
      {"conv7x7_bias", BinaryOp::add, f32, {1024, 512, 7, 7}, {1, 512, 1, 1}},
      {"conv14x14_bias", BinaryOp::add, f32, {256, 256, 14, 14}, {1, 256, 1, 1}},
      {"conv28x28_scale", BinaryOp::mul, f32, {128, 128, 28, 28}, {1, 128, 1, 1}},
      {"conv55x55_bias", BinaryOp::add, f32, {64, 96, 55, 55}, {1, 96, 1, 1}},
      {"width999_bias", BinaryOp::add, f32, {32768, 999}, {999}},
      {"width1000_col", BinaryOp::mul, f32, {32768, 1000}, {32768, 1}},
      {"outer_odd", BinaryOp::mul, f32, {8191, 1}, {1, 4097}},
      {"mixed_rank5", BinaryOp::add, f32, {16, 1, 32, 1, 49}, {1, 24, 1, 32, 49}},
      {"misaligned_bias", BinaryOp::add, f32, {16384, 1001}, {1001}, false, 1},
      {"misaligned_same", BinaryOp::sub, f32, {16384, 1001}, {16384, 1001}, false, 1},
  };
  const std::vector<DType> dtypes = bench.quick()
                                        ? std::vector<DType>{DType::f32, DType::bf16}
                                        : std::vector<DType>{DType::f32, DType::bf16, DType::f16};
  return dense_cases(bench, "ml_shapes", shapes, dtypes,
                     {Kernel::automatic, Kernel::row_vectorized});
}

// ---- small: host cost per call, a 1M-element broadcast -------------------------------------

namespace {

__global__ void empty_kernel() {}

/// Calls timed for the host cost of one call, in each of kHostRounds rounds.
constexpr int kHostCalls = 20000;
constexpr int kHostRounds = 5;

/// Host time of one call of `call`, microseconds: a CPU clock around kHostCalls back-to-back
/// calls, the stream synchronized before and after but not inside, so it is what the issuing
/// thread spends (checks, planning, launch) as long as the GPU keeps up with the calls; where a
/// case's kernels take longer than the host's time a call, the launch queue fills and the
/// figure includes the waits for it (an upper bound: the 1M-element bias, whose kernel takes
/// longer than the host's share of a call).
double host_us_per_call(Bench& bench, const std::function<void()>& call) {
  call();
  EWISE_CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < kHostCalls; ++k) call();
  const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
  EWISE_CUDA_CHECK(cudaStreamSynchronize(bench.stream()));
  return took.count() / kHostCalls;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

std::vector<Case> small_suite(Bench& bench) {
  // A bias add on a tensor small enough that the host sets the pace (16 x 256), and a
  // 1M-element one: the first gives ewise's host cost per call beside a bare launch of an empty
  // kernel, both give GPU time against cub and the peers.
  const std::vector<DenseSpec> specs = {
      {"bias_16x256", BinaryOp::add, DType::f32, {16, 256}, {256}},
      {"bias_1M", BinaryOp::add, DType::f32, {1024, 1024}, {1024}},
  };
  const std::vector<DType> dtypes = bench.quick()
                                        ? std::vector<DType>{DType::f32}
                                        : std::vector<DType>{DType::f32, DType::bf16, DType::f16};
  std::vector<Case> cases;
  for (DenseSpec spec : specs)
    for (const DType t : dtypes) {
      spec.dtype = t;
      cases.push_back({detail::concat(spec.name, " ", dtype_name(t)), [&bench, spec] {
        const DenseOperands d(bench, spec, kMaxDenseSets);
        const cudaStream_t stream = bench.stream();
        // Rounds of the two alternate and each figure is its median over the rounds, so that a
        // slow spell of the host falls on both alike rather than on one sample of one.
        std::vector<double> host(kHostRounds), bare(kHostRounds);
        for (int r = 0; r < kHostRounds; ++r) {
          host[r] = host_us_per_call(
              bench, [&] { binary(spec.op, d.a(0), d.b(0), d.out(0), {}, stream); });
          bare[r] = host_us_per_call(bench, [&] { empty_kernel<<<1, 32, 0, stream>>>(); });
          EWISE_CUDA_CHECK(cudaGetLastError());
        }
        time_dense(bench, "small", d, with_kernel(Kernel::automatic),
                   {param("host_us_per_call", median(host)), param("bare_launch_us", median(bare)),
                    param("host_calls", kHostCalls), param("host_rounds", kHostRounds)});
      }});
    }
  return cases;
}

}  // namespace ewise::bench
