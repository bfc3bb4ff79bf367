#include "coo_oracle.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>

#include "coo_device.cuh"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"

namespace ewise::bench {
namespace {

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

}  // namespace ewise::bench
