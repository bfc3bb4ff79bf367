#include "coo_kinds.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "check.hpp"
#include "coo_gen.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "random.hpp"

namespace ewise::bench {
namespace {

constexpr int kThreads = 256;
constexpr int kRowThreads = 64;  // one thread per row or document: spread rows over the SMs

// Salts keep the streams of one seed apart.
constexpr std::uint64_t kValueSalt = 0x5EED7A1E00000011ull;
constexpr std::uint64_t kKeepSalt = 0x5EED0CEE90000012ull;
constexpr std::uint64_t kFreshSalt = 0x5EEDF2E540000013ull;
constexpr std::uint64_t kRowSalt = 0x5EEDB0A000000014ull;
constexpr std::uint64_t kPermSalt = 0x5EEDBE2A00000015ull;
constexpr std::uint64_t kLengthSalt = 0x5EED1E7900000016ull;
constexpr std::uint64_t kPartnerSalt = 0x5EEDBA2700000017ull;

constexpr double kZipf = 1.07;  // words' and embedding rows' popularity law

unsigned grid_for(std::int64_t n, int threads = kThreads) {
  const std::int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 16384 ? (blocks > 0 ? blocks : 1) : 16384);
}

__host__ __device__ float value_at(std::uint64_t seed, std::uint64_t i) {
  detail::RandomSpec s;
  s.seed = seed;
  return static_cast<float>(detail::draw_real(
      s, i, [](double y) { return static_cast<double>(static_cast<float>(y)); }));
}

// Uniform in [0, 1) and in (0, 1] from 64 random bits.
__device__ double uniform0(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }
__device__ double uniform1(std::uint64_t bits) {
  return static_cast<double>((bits >> 11) + 1) * 0x1p-53;
}

// A standard normal from (seed, i) (Box-Muller).
__device__ double normal_at(std::uint64_t seed, std::uint64_t i) {
  const double u1 = uniform1(detail::random_bits(seed, i, 0));
  const double u2 = uniform0(detail::random_bits(seed, i, 1));
  return sqrt(-2.0 * log(u1)) * cospi(2.0 * u2);
}

// A bijection of [0, 2^bits): multiply by odd constants and xor-shift right, each invertible
// on `bits` bits.
struct Scramble {
  std::uint64_t mask = 0, m1 = 1, a1 = 0, m2 = 1;
  unsigned s1 = 1, s2 = 1;

  __host__ __device__ std::uint64_t operator()(std::uint64_t x) const {
    x = (x * m1 + a1) & mask;
    x ^= x >> s1;
    x = (x * m2) & mask;
    x ^= x >> s2;
    return x;
  }
};

Scramble make_scramble(unsigned bits, std::uint64_t seed) {
  Scramble s;
  s.mask = bits >= 64 ? ~0ull : (std::uint64_t{1} << bits) - 1;
  s.m1 = detail::splitmix64(seed) | 1u;
  s.a1 = detail::splitmix64(seed + 1);
  s.m2 = detail::splitmix64(seed + 2) | 1u;
  s.s1 = bits / 2 > 0 ? bits / 2 : 1;
  s.s2 = bits / 3 > 0 ? bits / 3 : 1;
  return s;
}

unsigned log2_exact(std::int64_t n, const char* what) {
  unsigned b = 0;
  while ((std::int64_t{1} << b) < n) ++b;
  EWISE_EXPECTS((std::int64_t{1} << b) == n, what, " ", n, " is not a power of two");
  return b;
}

// ---- graph: R-MAT --------------------------------------------------------------------------

struct Rmat {
  int scale = 0;
  std::uint64_t ta = 0, tab = 0, tabc = 0;  // cumulative a, a+b, a+b+c as fractions of 2^64
};

// Edge (r, c) before the vertex scramble: one quadrant choice per level, a top-left, b top-right,
// c bottom-left, d bottom-right.
__device__ void rmat_edge(const Rmat& g, std::uint64_t seed, std::uint64_t k, std::uint64_t& r,
                          std::uint64_t& c) {
  r = c = 0;
  for (int l = 0; l < g.scale; ++l) {
    const std::uint64_t u = detail::random_bits(seed, k, static_cast<unsigned>(l));
    const std::uint64_t down = u >= g.tab;
    const std::uint64_t right = (u >= g.ta && u < g.tab) || u >= g.tabc;
    r = (r << 1) | down;
    c = (c << 1) | right;
  }
}

// Edge k: with probability keep / 2^53 the source's edge sigma(k), else a fresh edge.
__global__ void graph_kernel(Rmat g, Scramble vertex, Scramble sigma, std::uint64_t source_seed,
                             std::uint64_t fresh_seed, std::uint64_t keep, std::uint64_t value_seed,
                             std::int64_t n, std::int32_t* rows, std::int32_t* cols, float* vals) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const auto uk = static_cast<std::uint64_t>(k);
    std::uint64_t r, c;
    if ((detail::random_bits(fresh_seed ^ kKeepSalt, uk, 0) >> 11) < keep)
      rmat_edge(g, source_seed, sigma(uk), r, c);
    else
      rmat_edge(g, fresh_seed, uk, r, c);
    rows[k] = static_cast<std::int32_t>(vertex(r));
    cols[k] = static_cast<std::int32_t>(vertex(c));
    vals[k] = value_at(value_seed, uk);
  }
}

// ---- wide: rows of log-normal density, columns by geometric gaps ---------------------------

struct Wide {
  std::int64_t nrows = 0, ncols = 0;
  std::uint64_t row_seed = 0;    // the rows' densities (shared by a and b)
  double p0 = 0, sigma = 1, pmax = 1;
  std::uint64_t seed_a = 0, seed_b = 0;
  std::uint64_t keep = 0;        // b keeps an entry of a when its 53-bit hash is below this
  double fresh = 0.5;            // b's fresh entries come at this fraction of the row's density
};

// Ascending columns of one row: each next column is the last + 1 + Geometric(p).
struct GapStream {
  std::uint64_t seed;
  std::uint64_t base;  // row << 32: the row's counters
  double inv_log;      // 1 / log(1 - p)
  std::int64_t ncols;
  std::int64_t j = 0;
  std::int64_t col = -1;

  __device__ GapStream(std::uint64_t s, std::int64_t row, double p, std::int64_t n)
      : seed(s), base(static_cast<std::uint64_t>(row) << 32), inv_log(1.0 / log1p(-p)), ncols(n) {
    next();
  }
  __device__ void next() {
    const double u = uniform1(detail::random_bits(seed, base + static_cast<std::uint64_t>(j++), 0));
    const double gap = floor(log(u) * inv_log);
    col = gap >= static_cast<double>(ncols) ? ncols : col + 1 + static_cast<std::int64_t>(gap);
  }
};

__device__ double wide_density(const Wide& w, std::int64_t r) {
  const double p = w.p0 * exp(w.sigma * normal_at(w.row_seed, static_cast<std::uint64_t>(r)));
  return p < w.pmax ? p : w.pmax;
}

// Calls emit(col) for each column of row r of a (is_b false) or b, ascending.
template <class Emit>
__device__ void wide_row(const Wide& w, std::int64_t r, bool is_b, Emit&& emit) {
  const double p = wide_density(w, r);
  GapStream a(w.seed_a, r, p, w.ncols);
  if (!is_b) {
    for (; a.col < w.ncols; a.next()) emit(a.col);
    return;
  }
  GapStream f(w.seed_b ^ kFreshSalt, r, p * w.fresh, w.ncols);
  const auto kept = [&](std::int64_t col) {
    return (detail::random_bits(w.seed_b ^ kKeepSalt,
                                static_cast<std::uint64_t>(r * w.ncols + col), 0) >> 11) < w.keep;
  };
  while (a.col < w.ncols || f.col < w.ncols) {
    if (a.col < f.col) {
      if (kept(a.col)) emit(a.col);
      a.next();
    } else if (f.col < a.col) {
      emit(f.col);
      f.next();
    } else {  // the same cell in both streams: once
      emit(a.col);
      a.next();
      f.next();
    }
  }
}

__global__ void wide_count_kernel(Wide w, bool is_b, std::int64_t* counts) {
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; r < w.nrows;
       r += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t n = 0;
    wide_row(w, r, is_b, [&](std::int64_t) { ++n; });
    counts[r] = n;
  }
}

__global__ void wide_write_kernel(Wide w, bool is_b, const std::int64_t* offsets,
                                  std::uint64_t value_seed, std::int32_t* rows, std::int32_t* cols,
                                  float* vals) {
  for (std::int64_t r = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; r < w.nrows;
       r += std::int64_t{gridDim.x} * blockDim.x) {
    std::int64_t k = offsets[r];
    wide_row(w, r, is_b, [&](std::int64_t col) {
      rows[k] = static_cast<std::int32_t>(r);
      cols[k] = static_cast<std::int32_t>(col);
      vals[k] = value_at(value_seed, static_cast<std::uint64_t>(r * w.ncols + col));
      ++k;
    });
  }
}

// ---- words: Zipf tokens per document --------------------------------------------------------

// The cumulative distribution of a Zipf law over n ranks: cdf[i] = P(rank <= i), cdf[n - 1] = 1.
DeviceBuffer zipf_cdf(std::int64_t n, double exponent, cudaStream_t stream) {
  std::vector<double> cdf(static_cast<std::size_t>(n));
  double sum = 0;
  for (std::size_t i = 0; i < cdf.size(); ++i) cdf[i] = sum += std::pow(double(i + 1), -exponent);
  for (double& x : cdf) x /= sum;
  cdf.back() = 1.0;
  DeviceBuffer d_cdf(cdf.size() * sizeof(double), stream);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(d_cdf.data(), cdf.data(), d_cdf.size(), cudaMemcpyHostToDevice,
                                   stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));  // the host vector is freed on return
  return d_cdf;
}

// The rank a uniform u in [0, 1) falls on: the first whose cdf exceeds u.
__device__ std::int64_t zipf_rank(const double* cdf, std::int64_t n, double u) {
  std::int64_t lo = 0, hi = n - 1;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (cdf[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

struct Words {
  std::int64_t docs = 0, vocab = 0;
  double mu = 0, sigma = 0;
  std::int64_t max_len = 512;
  std::uint64_t length_seed = 0, token_seed = 0, value_seed = 0;
  Scramble word;        // popularity rank -> word id
  const double* cdf;    // zipf_cdf over the vocabulary
};

__global__ void words_length_kernel(Words w, std::int64_t* lengths) {
  for (std::int64_t d = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; d < w.docs;
       d += std::int64_t{gridDim.x} * blockDim.x) {
    const double x = exp(w.mu + w.sigma * normal_at(w.length_seed, static_cast<std::uint64_t>(d)));
    const double len = 1.0 + floor(x);
    lengths[d] = len >= static_cast<double>(w.max_len) ? w.max_len : static_cast<std::int64_t>(len);
  }
}

__global__ void words_token_kernel(Words w, const std::int64_t* offsets,
                                   const std::int64_t* lengths, std::int32_t* rows,
                                   std::int32_t* cols, float* vals) {
  for (std::int64_t d = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; d < w.docs;
       d += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t off = offsets[d], len = lengths[d];
    for (std::int64_t t = 0; t < len; ++t) {
      const auto k = static_cast<std::uint64_t>(off + t);
      const double u = uniform0(detail::random_bits(w.token_seed, k, 0));
      const std::int64_t rank = zipf_rank(w.cdf, w.vocab, u);
      rows[off + t] = static_cast<std::int32_t>(d);
      cols[off + t] = static_cast<std::int32_t>(w.word(static_cast<std::uint64_t>(rank)));
      vals[off + t] = value_at(w.value_seed, k);
    }
  }
}

// ---- embedding: a sparse gradient of an embedding table --------------------------------------

struct Embedding {
  std::int64_t tokens = 0, vocab = 0, dim = 0;
  std::uint64_t token_seed = 0, value_seed = 0;
  Scramble row;       // popularity rank -> row id
  const double* cdf;  // zipf_cdf over the vocabulary
};

// Entry k is column k % dim of token k / dim's row.
__global__ void embedding_kernel(Embedding e, std::int32_t* rows, std::int32_t* cols,
                                 float* vals) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < e.tokens * e.dim;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const auto t = static_cast<std::uint64_t>(k / e.dim);
    const double u = uniform0(detail::random_bits(e.token_seed, t, 0));
    rows[k] = static_cast<std::int32_t>(
        e.row(static_cast<std::uint64_t>(zipf_rank(e.cdf, e.vocab, u))));
    cols[k] = static_cast<std::int32_t>(k % e.dim);
    vals[k] = value_at(e.value_seed, static_cast<std::uint64_t>(k));
  }
}

// ---- sizes ----------------------------------------------------------------------------------

struct Shape {
  std::int64_t nrows, ncols;
  std::int64_t count;  // graph: edges; wide: mean entries a row; embedding: tokens; else -
};

Shape kind_shape(Kind kind, KindSize size) {
  const int s = size == KindSize::full ? 0 : size == KindSize::quick ? 1 : 2;
  switch (kind) {
    case Kind::graph: {  // nodes, nodes, edges: Graph500's edge factor 16
      const std::int64_t scale[] = {20, 14, 13}, edges[] = {24, 18, 17};
      return {std::int64_t{1} << scale[s], std::int64_t{1} << scale[s],
              std::int64_t{1} << edges[s]};
    }
    case Kind::wide: {  // rows, columns, mean entries a row
      const Shape w[] = {{4096, std::int64_t{1} << 24, 2930},
                         {1024, std::int64_t{1} << 22, 256},
                         {256, std::int64_t{1} << 20, 400}};
      return w[s];
    }
    case Kind::words: {  // documents, vocabulary
      const Shape w[] = {{1000000, std::int64_t{1} << 17, 0},
                         {65536, std::int64_t{1} << 15, 0},
                         {8192, std::int64_t{1} << 14, 0}};
      return w[s];
    }
    case Kind::mask: {  // the weight matrix
      const Shape w[] = {{8192, 12288, 0}, {2048, 3072, 0}, {1024, 1024, 0}};
      return w[s];
    }
    case Kind::embedding: {  // vocabulary, dimension, tokens
      const Shape w[] = {{std::int64_t{1} << 20, 64, std::int64_t{1} << 18},
                         {std::int64_t{1} << 14, 32, std::int64_t{1} << 12},
                         {std::int64_t{1} << 12, 32, std::int64_t{1} << 11}};
      return w[s];
    }
  }
  return {0, 0, 0};
}

DeviceCoo new_coo(std::int64_t nrows, std::int64_t ncols, std::int64_t nnz, bool canonical,
                  cudaStream_t stream) {
  return DeviceCoo(CooDesc{nrows, ncols, nnz, IndexType::i32, DType::f32, canonical}, stream);
}

std::int64_t read_i64(const std::int64_t* p, cudaStream_t stream) {
  std::int64_t v = 0;
  EWISE_CUDA_CHECK(cudaMemcpyAsync(&v, p, sizeof v, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return v;
}

// Exclusive prefix sum of n counts into offsets; returns the total.
std::int64_t exclusive_sum(const std::int64_t* counts, std::int64_t* offsets, std::int64_t n,
                           cudaStream_t stream) {
  std::size_t temp_bytes = 0;
  EWISE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, temp_bytes, counts, offsets, n, stream));
  {
    DeviceBuffer temp(temp_bytes, stream);
    EWISE_CUDA_CHECK(
        cub::DeviceScan::ExclusiveSum(temp.data(), temp_bytes, counts, offsets, n, stream));
  }
  return read_i64(offsets + n - 1, stream) + read_i64(counts + n - 1, stream);
}

KindPair generate_graph(const Shape& sh, std::uint64_t seed, cudaStream_t stream) {
  Rmat g;
  g.scale = static_cast<int>(log2_exact(sh.nrows, "graph nodes"));
  const double a = 0.57, b = 0.19, c = 0.19;  // d = 0.05 (Graph500)
  g.ta = static_cast<std::uint64_t>(a * 0x1p64);
  g.tab = static_cast<std::uint64_t>((a + b) * 0x1p64);
  g.tabc = static_cast<std::uint64_t>((a + b + c) * 0x1p64);
  const Scramble vertex = make_scramble(static_cast<unsigned>(g.scale), seed ^ kPermSalt);
  const Scramble sigma = make_scramble(log2_exact(sh.count, "graph edges"), seed ^ kPartnerSalt);
  const std::uint64_t seed_b = detail::splitmix64(seed ^ kPartnerSalt);
  const auto keep = static_cast<std::uint64_t>(0.8 * 0x1p53);
  KindPair p;
  p.a = new_coo(sh.nrows, sh.ncols, sh.count, false, stream);
  p.b = new_coo(sh.nrows, sh.ncols, sh.count, false, stream);
  const auto run = [&](DeviceCoo& m, std::uint64_t fresh, std::uint64_t kept) {
    detail::launch("bench_graph", graph_kernel, grid_for(sh.count), kThreads, 0, stream, g, vertex,
                   sigma, seed, fresh, kept, fresh ^ kValueSalt, sh.count,
                   static_cast<std::int32_t*>(m.rows()), static_cast<std::int32_t*>(m.cols()),
                   static_cast<float*>(m.vals()));
  };
  run(p.a, seed, 0);
  run(p.b, seed_b, keep);
  p.description = detail::concat(
      "R-MAT a,b,c,d = 0.57,0.19,0.19,0.05 on 2^", g.scale, " nodes, ", sh.count,
      " edges in draw order (duplicates, self loops), vertex ids scrambled; b: 80% of a's edges "
      "(in another order) + 20% fresh");
  return p;
}

KindPair generate_wide(const Shape& sh, std::uint64_t seed, cudaStream_t stream) {
  Wide w;
  w.nrows = sh.nrows;
  w.ncols = sh.ncols;
  w.row_seed = seed ^ kRowSalt;
  w.sigma = 1.0;
  const double mean_p = static_cast<double>(sh.count) / static_cast<double>(sh.ncols);
  w.p0 = mean_p / std::exp(0.5 * w.sigma * w.sigma);  // E[p0 exp(sigma z)] = mean_p
  w.pmax = std::min(1.0, 32 * mean_p);
  w.seed_a = seed;
  w.seed_b = detail::splitmix64(seed ^ kPartnerSalt);
  w.keep = static_cast<std::uint64_t>(0.5 * 0x1p53);
  w.fresh = 0.5;
  KindPair p;
  DeviceBuffer counts(static_cast<std::size_t>(w.nrows) * sizeof(std::int64_t), stream);
  DeviceBuffer offsets(counts.size(), stream);
  auto* cnt = static_cast<std::int64_t*>(counts.data());
  auto* off = static_cast<std::int64_t*>(offsets.data());
  for (const bool is_b : {false, true}) {
    detail::launch("bench_wide_count", wide_count_kernel, grid_for(w.nrows, kRowThreads),
                   kRowThreads, 0, stream, w, is_b, cnt);
    const std::int64_t nnz = exclusive_sum(cnt, off, w.nrows, stream);
    DeviceCoo m = new_coo(w.nrows, w.ncols, nnz, true, stream);
    detail::launch("bench_wide_write", wide_write_kernel, grid_for(w.nrows, kRowThreads),
                   kRowThreads, 0, stream, w, is_b, off, (is_b ? w.seed_b : w.seed_a) ^ kValueSalt,
                   static_cast<std::int32_t*>(m.rows()), static_cast<std::int32_t*>(m.cols()),
                   static_cast<float*>(m.vals()));
    (is_b ? p.b : p.a) = std::move(m);
  }
  p.description = detail::concat(
      sh.nrows, " x ", sh.ncols, ", row densities log-normal (sigma 1) around ", sh.count,
      " entries a row, columns by geometric gaps, canonical; b: each entry of a kept with "
      "probability 1/2 + fresh entries at half the row's density");
  return p;
}

KindPair generate_words(const Shape& sh, std::uint64_t seed, cudaStream_t stream) {
  const DeviceBuffer d_cdf = zipf_cdf(sh.ncols, kZipf, stream);
  Words w;
  w.docs = sh.nrows;
  w.vocab = sh.ncols;
  w.mu = std::log(8.0);
  w.sigma = 0.8;
  w.word = make_scramble(log2_exact(sh.ncols, "vocabulary"), seed ^ kPermSalt);
  w.cdf = static_cast<const double*>(d_cdf.data());
  DeviceBuffer lengths(static_cast<std::size_t>(w.docs) * sizeof(std::int64_t), stream);
  DeviceBuffer offsets(lengths.size(), stream);
  auto* len = static_cast<std::int64_t*>(lengths.data());
  auto* off = static_cast<std::int64_t*>(offsets.data());
  KindPair p;
  for (const bool is_b : {false, true}) {
    const std::uint64_t s = is_b ? detail::splitmix64(seed ^ kPartnerSalt) : seed;
    w.length_seed = s ^ kLengthSalt;
    w.token_seed = s;
    w.value_seed = s ^ kValueSalt;
    detail::launch("bench_words_length", words_length_kernel, grid_for(w.docs), kThreads, 0,
                   stream, w, len);
    const std::int64_t nnz = exclusive_sum(len, off, w.docs, stream);
    DeviceCoo m = new_coo(w.docs, w.vocab, nnz, false, stream);
    detail::launch("bench_words_tokens", words_token_kernel, grid_for(w.docs, kRowThreads),
                   kRowThreads, 0, stream, w, off, len, static_cast<std::int32_t*>(m.rows()),
                   static_cast<std::int32_t*>(m.cols()), static_cast<float*>(m.vals()));
    (is_b ? p.b : p.a) = std::move(m);
  }
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));  // d_cdf is freed on return
  p.description = detail::concat(
      sh.nrows, " documents x ", sh.ncols, " words, 1 + floor(exp(N(ln 8, 0.8))) tokens a "
      "document (at most 512), words Zipf(1.07) by popularity, ids scrambled; token stream "
      "(sorted by document, duplicates); b: a second draw");
  return p;
}

KindPair generate_mask(const Shape& sh, std::uint64_t seed, cudaStream_t stream) {
  CooSpec spec{sh.nrows, sh.ncols, 0.1, seed, IndexType::i32, DType::f32, false};
  KindPair p;
  p.a = generate_coo(spec, stream);
  spec.seed = detail::splitmix64(seed ^ kPartnerSalt);
  p.b = generate_coo(spec, stream);
  p.description = detail::concat(sh.nrows, " x ", sh.ncols,
                                 ", every cell kept with probability 0.1, canonical; b: a second "
                                 "draw");
  return p;
}

KindPair generate_embedding(const Shape& sh, std::uint64_t seed, cudaStream_t stream) {
  const DeviceBuffer d_cdf = zipf_cdf(sh.nrows, kZipf, stream);
  Embedding e;
  e.tokens = sh.count;
  e.vocab = sh.nrows;
  e.dim = sh.ncols;
  e.row = make_scramble(log2_exact(sh.nrows, "vocabulary"), seed ^ kPermSalt);
  e.cdf = static_cast<const double*>(d_cdf.data());
  KindPair p;
  for (const bool is_b : {false, true}) {
    const std::uint64_t s = is_b ? detail::splitmix64(seed ^ kPartnerSalt) : seed;
    e.token_seed = s;
    e.value_seed = s ^ kValueSalt;
    DeviceCoo m = new_coo(e.vocab, e.dim, e.tokens * e.dim, false, stream);
    detail::launch("bench_embedding", embedding_kernel, grid_for(e.tokens * e.dim), kThreads, 0,
                   stream, e, static_cast<std::int32_t*>(m.rows()),
                   static_cast<std::int32_t*>(m.cols()), static_cast<float*>(m.vals()));
    (is_b ? p.b : p.a) = std::move(m);
  }
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));  // d_cdf is freed on return
  p.description = detail::concat(
      "gradient of a ", sh.nrows, " x ", sh.ncols, " embedding table: ", sh.count,
      " tokens, rows Zipf(1.07) by popularity, ids scrambled, each token a full row of ",
      sh.ncols, " entries, in token order (unsorted, duplicates); b: a second draw");
  return p;
}

// ---- oracle ---------------------------------------------------------------------------------

__global__ void keys_kernel(const std::int32_t* rows, const std::int32_t* cols, std::int64_t n,
                            std::int64_t ncols, std::uint64_t* keys, std::uint32_t* index) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    keys[k] = static_cast<std::uint64_t>(std::int64_t{rows[k]} * ncols + cols[k]);
    index[k] = static_cast<std::uint32_t>(k);
  }
}

struct RunHead {
  const std::uint64_t* keys;
  __device__ bool operator()(std::int64_t k) const { return k == 0 || keys[k] != keys[k - 1]; }
};

// Run j of equal keys: its values summed one after another in storage order (the stable sort
// kept it), in f32 as ewise does.
__global__ void sum_runs_kernel(const std::uint64_t* keys, const std::uint32_t* index,
                                const float* vals, const std::int64_t* starts, std::int64_t runs,
                                std::int64_t n, std::int64_t* out_keys, float* out_vals) {
  for (std::int64_t j = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; j < runs;
       j += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t s = starts[j], e = j + 1 < runs ? starts[j + 1] : n;
    float acc = vals[index[s]];
    for (std::int64_t q = s + 1; q < e; ++q) acc = ops::Add{}(acc, vals[index[q]]);
    out_keys[j] = static_cast<std::int64_t>(keys[s]);
    out_vals[j] = acc;
  }
}

// pos[k] = position of a's key k in b's keys, or -1.
__global__ void search_kernel(const std::int64_t* a_keys, std::int64_t na,
                              const std::int64_t* b_keys, std::int64_t nb, std::int64_t* pos) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < na;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t key = a_keys[k];
    std::int64_t lo = 0, hi = nb;
    while (lo < hi) {
      const std::int64_t mid = (lo + hi) / 2;
      if (b_keys[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    pos[k] = lo < nb && b_keys[lo] == key ? lo : -1;
  }
}

struct Found {
  const std::int64_t* pos;
  __device__ bool operator()(std::int64_t k) const { return pos[k] >= 0; }
};

__global__ void gather_product_kernel(const std::int64_t* sel, std::int64_t n,
                                      const std::int64_t* pos, const std::int64_t* a_keys,
                                      const float* a_vals, const float* b_vals,
                                      std::int64_t* out_keys, float* out_vals) {
  for (std::int64_t j = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; j < n;
       j += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t k = sel[j];
    out_keys[j] = a_keys[k];
    out_vals[j] = ops::Mul{}(a_vals[k], b_vals[pos[k]]);
  }
}

__global__ void scale_kernel(const std::int64_t* keys, const float* vals, std::int64_t n,
                             std::int64_t ncols, const float* dense, std::int64_t rs,
                             std::int64_t cs, std::int64_t* out_keys, float* out_vals) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = keys[k] / ncols, c = keys[k] % ncols;
    out_keys[k] = keys[k];
    out_vals[k] = ops::Mul{}(vals[k], dense[r * rs + c * cs]);
  }
}

__global__ void split_kernel(const std::int64_t* keys, const float* vals, std::int64_t n,
                             std::int64_t ncols, std::int32_t* rows, std::int32_t* cols,
                             float* out_vals) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    rows[k] = static_cast<std::int32_t>(keys[k] / ncols);
    cols[k] = static_cast<std::int32_t>(keys[k] % ncols);
    out_vals[k] = vals[k];
  }
}

// Keys of two canonical oracle matrices one after the other; index k: a's entry k, or b's
// entry k - na.
__global__ void concat_keys_kernel(const std::int64_t* a_keys, std::int64_t na,
                                   const std::int64_t* b_keys, std::int64_t nb,
                                   std::uint64_t* keys, std::uint32_t* index) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < na + nb;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    keys[k] = static_cast<std::uint64_t>(k < na ? a_keys[k] : b_keys[k - na]);
    index[k] = static_cast<std::uint32_t>(k);
  }
}

// Run j of equal keys of the concatenation (one entry of a, of b, or both): x + y, a missing
// operand counting as its fill, +0 (combine's documented value).
__global__ void union_runs_kernel(const std::uint64_t* keys, const std::uint32_t* index,
                                  const float* a_vals, const float* b_vals, std::int64_t na,
                                  const std::int64_t* starts, std::int64_t runs, std::int64_t n,
                                  std::int64_t* out_keys, float* out_vals) {
  for (std::int64_t j = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; j < runs;
       j += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t s = starts[j], e = j + 1 < runs ? starts[j + 1] : n;
    float x = 0.0f, y = 0.0f;
    for (std::int64_t q = s; q < e; ++q) {
      const std::int64_t i = index[q];
      if (i < na) x = a_vals[i];
      else y = b_vals[i - na];
    }
    out_keys[j] = static_cast<std::int64_t>(keys[s]);
    out_vals[j] = ops::Add{}(x, y);
  }
}

// The dense result where a stores nothing: dense itself (accumulate) or fill + dense = +0 + dense
// (combine).
__global__ void dense_base_kernel(const float* dense, std::int64_t n, bool in_place, float* out) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    out[k] = in_place ? dense[k] : ops::Add{}(0.0f, dense[k]);
}

// The dense result at a's keys: dense + a (accumulate) or a + dense (combine).
__global__ void dense_scatter_kernel(const std::int64_t* keys, const float* vals, std::int64_t n,
                                     const float* dense, bool in_place, float* out) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t c = keys[k];
    out[c] = in_place ? ops::Add{}(dense[c], vals[k]) : ops::Add{}(vals[k], dense[c]);
  }
}

__device__ bool same_bits(float x, float y) {
  std::uint32_t bx, by;
  memcpy(&bx, &x, sizeof bx);
  memcpy(&by, &y, sizeof by);
  return bx == by;
}

__device__ void report(bool ok, std::int64_t k, unsigned long long* bad) {
  if (ok) return;
  atomicAdd(bad, 1ull);
  atomicMin(bad + 1, static_cast<unsigned long long>(k));
}

__global__ void equal_kernel(const std::int32_t* rows, const std::int32_t* cols, const float* vals,
                             std::int64_t n, std::int64_t ncols, const std::int64_t* keys,
                             const float* want, unsigned long long* bad) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    report(std::int64_t{rows[k]} * ncols + cols[k] == keys[k] && same_bits(vals[k], want[k]), k,
           bad);
}

__global__ void values_kernel(const std::int32_t* rows, const std::int32_t* cols,
                              const float* vals, std::int64_t n, const float* dense,
                              std::int64_t rs, std::int64_t cs, const float* out,
                              unsigned long long* bad) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    report(same_bits(out[k], ops::Mul{}(vals[k], dense[rows[k] * rs + cols[k] * cs])), k, bad);
}

__global__ void dense_equal_kernel(const float* got, const float* want, std::int64_t n,
                                   unsigned long long* bad) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    report(same_bits(got[k], want[k]), k, bad);
}

void expect_i32_f32(const CooDesc& d, const char* what) {
  EWISE_EXPECTS(d.index == IndexType::i32 && d.dtype == DType::f32 &&
                    d.nnz < (std::int64_t{1} << 31),
                what, ": the structures oracle takes i32/f32 matrices under 2^31 entries, got ",
                d.str());
}

OracleCoo new_oracle(std::int64_t nrows, std::int64_t ncols, std::int64_t nnz,
                     cudaStream_t stream) {
  OracleCoo o;
  o.nrows = nrows;
  o.ncols = ncols;
  o.nnz = nnz;
  o.keys = DeviceBuffer(static_cast<std::size_t>(nnz) * sizeof(std::int64_t), stream);
  o.vals = DeviceBuffer(static_cast<std::size_t>(nnz) * sizeof(float), stream);
  return o;
}

// Indices k in [0, n) with pred(k), in order; returns how many.
template <class Pred>
std::int64_t select_indices(std::int64_t n, Pred pred, std::int64_t* out, cudaStream_t stream) {
  DeviceBuffer d_num(sizeof(std::int64_t), stream);
  auto* num = static_cast<std::int64_t*>(d_num.data());
  const thrust::counting_iterator<std::int64_t> all(0);
  std::size_t temp_bytes = 0;
  EWISE_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, all, out, num, n, pred, stream));
  {
    DeviceBuffer temp(temp_bytes, stream);
    EWISE_CUDA_CHECK(
        cub::DeviceSelect::If(temp.data(), temp_bytes, all, out, num, n, pred, stream));
  }
  return read_i64(num, stream);
}

// The first bad entry's description, or "" when none.
std::string first_bad(DeviceBuffer& d_bad, std::int64_t n, cudaStream_t stream,
                      const char* what = "entries") {
  unsigned long long got[2];
  EWISE_CUDA_CHECK(cudaMemcpyAsync(got, d_bad.data(), sizeof got, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (got[0] == 0) return "";
  return detail::concat(got[0], " of ", n, " ", what, " differ; the first is number ", got[1]);
}

DeviceBuffer bad_counter(cudaStream_t stream) {
  DeviceBuffer d_bad(2 * sizeof(unsigned long long), stream);
  const unsigned long long init[2] = {0, std::numeric_limits<unsigned long long>::max()};
  EWISE_CUDA_CHECK(
      cudaMemcpyAsync(d_bad.data(), init, sizeof init, cudaMemcpyHostToDevice, stream));
  return d_bad;
}

// Element strides of a dense operand broadcast to (nrows, ncols).
std::pair<std::int64_t, std::int64_t> dense_strides(const ConstTensorView& dense,
                                                    std::int64_t nrows, std::int64_t ncols) {
  EWISE_EXPECTS(dense.memory == Memory::device && dense.desc.dtype == DType::f32,
                "the structures oracle takes a device f32 dense operand, got ", dense.desc.str());
  const Dims s = broadcast_strides(dense.desc, Dims{nrows, ncols});
  return {s[0], s[1]};
}

// keys[0, n) with their index[0, n) stably radix-sorted into keys[n, 2n) and index[n, 2n) (only
// the bits `cells` needs), and the start of every run of equal keys.
struct SortedRuns {
  DeviceBuffer starts_buf;
  std::int64_t runs = 0;

  SortedRuns(std::uint64_t* keys, std::uint32_t* index, std::int64_t n, std::int64_t cells,
             cudaStream_t stream)
      : starts_buf(static_cast<std::size_t>(n) * sizeof(std::int64_t), stream) {
    int end_bit = 1;
    while (end_bit < 64 && (std::uint64_t{1} << end_bit) < static_cast<std::uint64_t>(cells))
      ++end_bit;
    std::size_t temp_bytes = 0;
    EWISE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys, keys + n, index,
                                                     index + n, n, 0, end_bit, stream));
    {
      DeviceBuffer temp(temp_bytes, stream);
      EWISE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, keys, keys + n,
                                                       index, index + n, n, 0, end_bit, stream));
    }
    runs = select_indices(n, RunHead{keys + n}, starts(), stream);
  }
  std::int64_t* starts() { return static_cast<std::int64_t*>(starts_buf.data()); }
};

}  // namespace

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::graph: return "graph";
    case Kind::wide: return "wide";
    case Kind::words: return "words";
    case Kind::mask: return "mask";
    case Kind::embedding: return "embedding";
  }
  return "?";
}

KindPair generate_kind(Kind kind, KindSize size, std::uint64_t seed, cudaStream_t stream) {
  const Shape sh = kind_shape(kind, size);
  KindPair p;
  switch (kind) {
    case Kind::graph: p = generate_graph(sh, seed, stream); break;
    case Kind::wide: p = generate_wide(sh, seed, stream); break;
    case Kind::words: p = generate_words(sh, seed, stream); break;
    case Kind::mask: p = generate_mask(sh, seed, stream); break;
    case Kind::embedding: p = generate_embedding(sh, seed, stream); break;
  }
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return p;
}

OracleCoo oracle_coalesce(const CooView& a, cudaStream_t stream) {
  expect_i32_f32(a.desc, "oracle_coalesce");
  const std::int64_t n = a.desc.nnz;
  if (n == 0) return new_oracle(a.desc.nrows, a.desc.ncols, 0, stream);
  DeviceBuffer keys(static_cast<std::size_t>(n) * sizeof(std::uint64_t) * 2, stream);
  DeviceBuffer index(static_cast<std::size_t>(n) * sizeof(std::uint32_t) * 2, stream);
  auto* k_in = static_cast<std::uint64_t*>(keys.data());
  auto* k_out = k_in + n;
  auto* i_in = static_cast<std::uint32_t*>(index.data());
  auto* i_out = i_in + n;
  detail::launch("bench_oracle_keys", keys_kernel, grid_for(n), kThreads, 0, stream,
                 static_cast<const std::int32_t*>(a.rows), static_cast<const std::int32_t*>(a.cols),
                 n, a.desc.ncols, k_in, i_in);
  SortedRuns sorted(k_in, i_in, n, a.desc.nrows * a.desc.ncols, stream);
  OracleCoo o = new_oracle(a.desc.nrows, a.desc.ncols, sorted.runs, stream);
  detail::launch("bench_oracle_sum_runs", sum_runs_kernel, grid_for(sorted.runs), kThreads, 0,
                 stream, k_out, i_out, static_cast<const float*>(a.vals), sorted.starts(),
                 sorted.runs, n, static_cast<std::int64_t*>(o.keys.data()),
                 static_cast<float*>(o.vals.data()));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return o;
}

OracleCoo oracle_union(const OracleCoo& a, const OracleCoo& b, cudaStream_t stream) {
  EWISE_EXPECTS(a.nrows == b.nrows && a.ncols == b.ncols, "oracle_union: shapes differ");
  const std::int64_t n = a.nnz + b.nnz;
  if (n == 0) return new_oracle(a.nrows, a.ncols, 0, stream);
  DeviceBuffer keys(static_cast<std::size_t>(n) * sizeof(std::uint64_t) * 2, stream);
  DeviceBuffer index(static_cast<std::size_t>(n) * sizeof(std::uint32_t) * 2, stream);
  auto* k_in = static_cast<std::uint64_t*>(keys.data());
  auto* i_in = static_cast<std::uint32_t*>(index.data());
  detail::launch("bench_oracle_concat", concat_keys_kernel, grid_for(n), kThreads, 0, stream,
                 static_cast<const std::int64_t*>(a.keys.data()), a.nnz,
                 static_cast<const std::int64_t*>(b.keys.data()), b.nnz, k_in, i_in);
  SortedRuns sorted(k_in, i_in, n, a.nrows * a.ncols, stream);
  OracleCoo o = new_oracle(a.nrows, a.ncols, sorted.runs, stream);
  detail::launch("bench_oracle_union_runs", union_runs_kernel, grid_for(sorted.runs), kThreads, 0,
                 stream, k_in + n, i_in + n, static_cast<const float*>(a.vals.data()),
                 static_cast<const float*>(b.vals.data()), a.nnz, sorted.starts(), sorted.runs, n,
                 static_cast<std::int64_t*>(o.keys.data()), static_cast<float*>(o.vals.data()));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return o;
}

DeviceTensor oracle_add_dense(const OracleCoo& a, const ConstTensorView& dense, bool in_place,
                              cudaStream_t stream) {
  EWISE_EXPECTS(dense.memory == Memory::device && dense.desc.dtype == DType::f32 &&
                    dense.desc.is_contiguous() && dense.desc.shape == (Dims{a.nrows, a.ncols}),
                "oracle_add_dense: dense must be a contiguous device f32 (", a.nrows, ", ",
                a.ncols, ") tensor, got ", dense.desc.str());
  DeviceTensor out(DType::f32, dense.desc.shape, stream);
  const auto* d = static_cast<const float*>(dense.data);
  const std::int64_t n = dense.desc.numel();
  if (n > 0)
    detail::launch("bench_oracle_dense_base", dense_base_kernel, grid_for(n), kThreads, 0, stream,
                   d, n, in_place, out.data_as<float>());
  if (a.nnz > 0)
    detail::launch("bench_oracle_dense_scatter", dense_scatter_kernel, grid_for(a.nnz), kThreads,
                   0, stream, static_cast<const std::int64_t*>(a.keys.data()),
                   static_cast<const float*>(a.vals.data()), a.nnz, d, in_place,
                   out.data_as<float>());
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

OracleCoo oracle_intersect(const OracleCoo& a, const OracleCoo& b, cudaStream_t stream) {
  EWISE_EXPECTS(a.nrows == b.nrows && a.ncols == b.ncols, "oracle_intersect: shapes differ");
  if (a.nnz == 0 || b.nnz == 0) return new_oracle(a.nrows, a.ncols, 0, stream);
  DeviceBuffer pos(static_cast<std::size_t>(a.nnz) * sizeof(std::int64_t), stream);
  DeviceBuffer sel(pos.size(), stream);
  auto* p = static_cast<std::int64_t*>(pos.data());
  auto* s = static_cast<std::int64_t*>(sel.data());
  const auto* ak = static_cast<const std::int64_t*>(a.keys.data());
  detail::launch("bench_oracle_search", search_kernel, grid_for(a.nnz), kThreads, 0, stream, ak,
                 a.nnz, static_cast<const std::int64_t*>(b.keys.data()), b.nnz, p);
  const std::int64_t n = select_indices(a.nnz, Found{p}, s, stream);
  OracleCoo o = new_oracle(a.nrows, a.ncols, n, stream);
  if (n > 0)
    detail::launch("bench_oracle_product", gather_product_kernel, grid_for(n), kThreads, 0, stream,
                   s, n, p, ak, static_cast<const float*>(a.vals.data()),
                   static_cast<const float*>(b.vals.data()),
                   static_cast<std::int64_t*>(o.keys.data()), static_cast<float*>(o.vals.data()));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return o;
}

OracleCoo oracle_scale(const OracleCoo& a, const ConstTensorView& dense, cudaStream_t stream) {
  const auto [rs, cs] = dense_strides(dense, a.nrows, a.ncols);
  OracleCoo o = new_oracle(a.nrows, a.ncols, a.nnz, stream);
  if (a.nnz > 0)
    detail::launch("bench_oracle_scale", scale_kernel, grid_for(a.nnz), kThreads, 0, stream,
                   static_cast<const std::int64_t*>(a.keys.data()),
                   static_cast<const float*>(a.vals.data()), a.nnz, a.ncols,
                   static_cast<const float*>(dense.data), rs, cs,
                   static_cast<std::int64_t*>(o.keys.data()), static_cast<float*>(o.vals.data()));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return o;
}

DeviceCoo oracle_to_coo(const OracleCoo& a, cudaStream_t stream) {
  DeviceCoo m = new_coo(a.nrows, a.ncols, a.nnz, true, stream);
  if (a.nnz > 0)
    detail::launch("bench_oracle_split", split_kernel, grid_for(a.nnz), kThreads, 0, stream,
                   static_cast<const std::int64_t*>(a.keys.data()),
                   static_cast<const float*>(a.vals.data()), a.nnz, a.ncols,
                   static_cast<std::int32_t*>(m.rows()), static_cast<std::int32_t*>(m.cols()),
                   static_cast<float*>(m.vals()));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return m;
}

std::string check_equal(const CooView& got, const OracleCoo& want, cudaStream_t stream) {
  expect_i32_f32(got.desc, "check_equal");
  if (got.desc.nnz != want.nnz)
    throw VerifyError(detail::concat("result has nnz ", got.desc.nnz, ", the oracle ", want.nnz));
  if (want.nnz > 0) {
    DeviceBuffer bad = bad_counter(stream);
    detail::launch("bench_oracle_equal", equal_kernel, grid_for(want.nnz), kThreads, 0, stream,
                   static_cast<const std::int32_t*>(got.rows),
                   static_cast<const std::int32_t*>(got.cols), static_cast<const float*>(got.vals),
                   want.nnz, want.ncols, static_cast<const std::int64_t*>(want.keys.data()),
                   static_cast<const float*>(want.vals.data()),
                   static_cast<unsigned long long*>(bad.data()));
    const std::string why = first_bad(bad, want.nnz, stream);
    if (!why.empty()) throw VerifyError("against the oracle: " + why);
  }
  return detail::concat("device oracle, all ", want.nnz, " entries bit-exact");
}

std::string check_values(const CooView& a, const ConstTensorView& dense,
                         const ConstTensorView& out_vals, cudaStream_t stream) {
  expect_i32_f32(a.desc, "check_values");
  EWISE_EXPECTS(out_vals.memory == Memory::device && out_vals.desc.dtype == DType::f32 &&
                    out_vals.desc.is_contiguous() && out_vals.desc.numel() == a.desc.nnz,
                "check_values: out_vals must be a contiguous device f32 tensor of nnz elements");
  const auto [rs, cs] = dense_strides(dense, a.desc.nrows, a.desc.ncols);
  if (a.desc.nnz > 0) {
    DeviceBuffer bad = bad_counter(stream);
    detail::launch("bench_oracle_values", values_kernel, grid_for(a.desc.nnz), kThreads, 0, stream,
                   static_cast<const std::int32_t*>(a.rows),
                   static_cast<const std::int32_t*>(a.cols), static_cast<const float*>(a.vals),
                   a.desc.nnz, static_cast<const float*>(dense.data), rs, cs,
                   static_cast<const float*>(out_vals.data),
                   static_cast<unsigned long long*>(bad.data()));
    const std::string why = first_bad(bad, a.desc.nnz, stream);
    if (!why.empty()) throw VerifyError("multiply_values against the oracle: " + why);
  }
  return detail::concat("device oracle, all ", a.desc.nnz, " values bit-exact");
}

std::string check_dense_equal(const ConstTensorView& got, const ConstTensorView& want,
                              cudaStream_t stream) {
  for (const ConstTensorView* v : {&got, &want})
    EWISE_EXPECTS(v->memory == Memory::device && v->desc.dtype == DType::f32 &&
                      v->desc.is_contiguous(),
                  "check_dense_equal takes contiguous device f32 tensors, got ", v->desc.str());
  EWISE_EXPECTS(got.desc.shape == want.desc.shape, "check_dense_equal: shapes differ");
  const std::int64_t n = want.desc.numel();
  if (n > 0) {
    DeviceBuffer bad = bad_counter(stream);
    detail::launch("bench_oracle_dense_equal", dense_equal_kernel, grid_for(n), kThreads, 0,
                   stream, static_cast<const float*>(got.data),
                   static_cast<const float*>(want.data), n,
                   static_cast<unsigned long long*>(bad.data()));
    const std::string why = first_bad(bad, n, stream, "elements");
    if (!why.empty()) throw VerifyError("against the oracle: " + why);
  }
  return detail::concat("device oracle, all ", n, " elements bit-exact");
}

}  // namespace ewise::bench
