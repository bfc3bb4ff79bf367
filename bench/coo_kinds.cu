#include "coo_kinds.hpp"

#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>

#include "coo_device.cuh"
#include "coo_draw.cuh"
#include "coo_gen.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"

namespace ewise::bench {
namespace {

constexpr int kRowThreads = 64;  // one thread per row or document: spread rows over the SMs

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

struct Words {
  std::int64_t docs = 0, vocab = 0;
  double mu = 0, sigma = 0;
  std::int64_t max_len = 512;
  std::uint64_t length_seed = 0, token_seed = 0, value_seed = 0;
  ZipfIds word;  // over the vocabulary
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
      rows[off + t] = static_cast<std::int32_t>(d);
      cols[off + t] = static_cast<std::int32_t>(w.word(u));
      vals[off + t] = value_at(w.value_seed, k);
    }
  }
}

// ---- embedding: a sparse gradient of an embedding table --------------------------------------

struct Embedding {
  std::int64_t tokens = 0, vocab = 0, dim = 0;
  std::uint64_t token_seed = 0, value_seed = 0;
  ZipfIds row;  // over the vocabulary
};

// Entry k is column k % dim of token k / dim's row.
__global__ void embedding_kernel(Embedding e, std::int32_t* rows, std::int32_t* cols,
                                 float* vals) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < e.tokens * e.dim;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const auto t = static_cast<std::uint64_t>(k / e.dim);
    const double u = uniform0(detail::random_bits(e.token_seed, t, 0));
    rows[k] = static_cast<std::int32_t>(e.row(u));
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
  const ZipfLaw vocabulary(sh.ncols, seed ^ kPermSalt, stream);
  Words w;
  w.docs = sh.nrows;
  w.vocab = sh.ncols;
  w.mu = std::log(8.0);
  w.sigma = 0.8;
  w.word = vocabulary.ids;
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
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));  // the law's CDF is freed on return
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
  const ZipfLaw vocabulary(sh.nrows, seed ^ kPermSalt, stream);
  Embedding e;
  e.tokens = sh.count;
  e.vocab = sh.nrows;
  e.dim = sh.ncols;
  e.row = vocabulary.ids;
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
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));  // the law's CDF is freed on return
  p.description = detail::concat(
      "gradient of a ", sh.nrows, " x ", sh.ncols, " embedding table: ", sh.count,
      " tokens, rows Zipf(1.07) by popularity, ids scrambled, each token a full row of ",
      sh.ncols, " entries, in token order (unsorted, duplicates); b: a second draw");
  return p;
}

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

}  // namespace ewise::bench
