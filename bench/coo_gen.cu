#include "coo_gen.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "check.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/buffer.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "ewise/ops.hpp"
#include "random.hpp"

namespace ewise::bench {
namespace {

constexpr int kThreads = 256;
constexpr std::uint64_t kValueSalt = 0x5EED7A1E00000001ull;
constexpr std::uint64_t kShuffleSalt = 0x5EED5B0FF1E00002ull;

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 16384 ? (blocks > 0 ? blocks : 1) : 16384);
}

// Membership and values of a generated matrix, as functions of the absolute index.
struct Cells {
  std::uint64_t seed = 0;
  std::uint64_t threshold = 0;  // a cell is stored when its 53-bit hash is below this
  detail::RandomSpec values;

  __device__ bool has(std::int64_t c) const {
    return (detail::random_bits(seed, static_cast<std::uint64_t>(c), 0) >> 11) < threshold;
  }
  template <class T>
  __device__ T value(std::int64_t c) const {
    const double x = detail::draw_real(values, static_cast<std::uint64_t>(c), [](double y) {
      return static_cast<double>(
          detail::to_compute(detail::from_compute<T>(static_cast<detail::compute_t<T>>(y))));
    });
    return detail::from_compute<T>(static_cast<detail::compute_t<T>>(x));
  }
};

Cells cells_of(const CooSpec& s) {
  EWISE_EXPECTS(s.density >= 0 && s.density <= 1, "density ", s.density, " is outside [0, 1]");
  Cells c;
  c.seed = s.seed;
  c.threshold = static_cast<std::uint64_t>(std::floor(s.density * 0x1p53));
  c.values.seed = s.seed ^ kValueSalt;
  return c;
}

struct HasCell {
  Cells cells;
  __device__ bool operator()(std::int64_t c) const { return cells.has(c); }
};

// Cells stored in a (and in b when `both`).
__global__ void count_kernel(Cells a, Cells b, bool both, std::int64_t total,
                             unsigned long long* count) {
  unsigned long long mine = 0;
  for (std::int64_t c = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; c < total;
       c += std::int64_t{gridDim.x} * blockDim.x)
    mine += a.has(c) && (!both || b.has(c));
  if (mine) atomicAdd(count, mine);
}

__global__ void shuffle_keys_kernel(std::uint32_t* keys, std::int64_t n, std::uint64_t seed) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x)
    keys[k] = static_cast<std::uint32_t>(detail::random_bits(seed, static_cast<std::uint64_t>(k), 0));
}

template <class I, class T>
__global__ void write_entries_kernel(const std::int64_t* abs, std::int64_t n, std::int64_t ncols,
                                     Cells cells, I* rows, I* cols, T* vals) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t c = abs[k];
    rows[k] = static_cast<I>(c / ncols);
    cols[k] = static_cast<I>(c % ncols);
    vals[k] = cells.value<T>(c);
  }
}

template <class T>
__device__ bool bits_equal(T x, T y) {
  unsigned char bx[sizeof(T)], by[sizeof(T)];
  memcpy(bx, &x, sizeof(T));
  memcpy(by, &y, sizeof(T));
  for (unsigned i = 0; i < sizeof(T); ++i)
    if (bx[i] != by[i]) return false;
  return true;
}

// The dense operand of a COO ⊙ dense product, as strides over the COO shape.
template <class T>
struct DenseOperand {
  const T* data = nullptr;  // null: the product is COO ⊙ COO
  std::int64_t row_stride = 0, col_stride = 0;
};

template <class I, class T>
__global__ void check_kernel(const I* rows, const I* cols, const T* vals, std::int64_t n,
                             std::int64_t nrows, std::int64_t ncols, Cells a, Cells b,
                             DenseOperand<T> dense, unsigned long long* bad,
                             unsigned long long* first_bad) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = rows[k], c = cols[k];
    bool ok = r >= 0 && r < nrows && c >= 0 && c < ncols;
    if (ok) {
      const std::int64_t cell = r * ncols + c;
      if (k > 0) ok = cell > std::int64_t{rows[k - 1]} * ncols + cols[k - 1];
      ok = ok && a.has(cell) && (dense.data != nullptr || b.has(cell));
      if (ok) {
        const T other = dense.data ? dense.data[r * dense.row_stride + c * dense.col_stride]
                                   : b.value<T>(cell);
        const T want = detail::from_compute<T>(
            ops::Mul{}(detail::to_compute(a.value<T>(cell)), detail::to_compute(other)));
        ok = bits_equal(vals[k], want);
      }
    }
    if (!ok) {
      atomicAdd(bad, 1ull);
      atomicMin(first_bad, static_cast<unsigned long long>(k));
    }
  }
}

// Calls f(TypeTag<I>{}, TypeTag<T>{}) for the spec's index type and a floating dtype.
template <class F>
void dispatch_coo(IndexType index, DType dtype, F&& f) {
  EWISE_EXPECTS(is_floating(dtype), "the benchmark's COO generator draws floating values, not ",
                dtype_name(dtype));
  detail::dispatch_dtype(dtype, [&](auto vtag) {
    using T = typename decltype(vtag)::type;
    if constexpr (std::is_floating_point_v<detail::compute_t<T>>) {
      if (index == IndexType::i32) f(detail::TypeTag<std::int32_t>{}, vtag);
      else f(detail::TypeTag<std::int64_t>{}, vtag);
    }
  });
}

std::uint64_t count_cells(const Cells& a, const Cells& b, bool both, std::int64_t total,
                          cudaStream_t stream) {
  DeviceBuffer d_count(sizeof(unsigned long long), stream);
  EWISE_CUDA_CHECK(cudaMemsetAsync(d_count.data(), 0, d_count.size(), stream));
  detail::launch("bench_count_cells", count_kernel, grid_for(total), kThreads, 0, stream, a, b,
                 both, total, static_cast<unsigned long long*>(d_count.data()));
  unsigned long long count = 0;
  EWISE_CUDA_CHECK(cudaMemcpyAsync(&count, d_count.data(), sizeof count, cudaMemcpyDeviceToHost,
                                   stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return count;
}

// Runs the check kernel; throws VerifyError naming the first bad entry.
template <class T>
void run_check(const CooView& out, const Cells& a, const Cells& b, DenseOperand<T> dense,
               std::int64_t want_nnz, cudaStream_t stream) {
  const CooDesc& d = out.desc;
  if (d.nnz != want_nnz)
    throw VerifyError(detail::concat("result has nnz ", d.nnz, ", the generators say ", want_nnz));
  if (d.nnz == 0) return;
  DeviceBuffer d_bad(2 * sizeof(unsigned long long), stream);
  auto* bad = static_cast<unsigned long long*>(d_bad.data());
  const unsigned long long init[2] = {0, std::numeric_limits<unsigned long long>::max()};
  EWISE_CUDA_CHECK(cudaMemcpyAsync(bad, init, sizeof init, cudaMemcpyHostToDevice, stream));
  dispatch_coo(d.index, d.dtype, [&](auto itag, auto vtag) {
    using I = typename decltype(itag)::type;
    using V = typename decltype(vtag)::type;
    if constexpr (std::is_same_v<V, T>)
      detail::launch("bench_check_coo", check_kernel<I, T>, grid_for(d.nnz), kThreads, 0, stream,
                     static_cast<const I*>(out.rows), static_cast<const I*>(out.cols),
                     static_cast<const T*>(out.vals), d.nnz, d.nrows, d.ncols, a, b, dense, bad,
                     bad + 1);
  });
  unsigned long long got[2];
  EWISE_CUDA_CHECK(cudaMemcpyAsync(got, bad, sizeof got, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (got[0] == 0) return;
  const std::size_t isz = index_size(d.index);
  std::int64_t r = 0, c = 0;
  EWISE_CUDA_CHECK(cudaMemcpy(&r, static_cast<const std::byte*>(out.rows) + got[1] * isz, isz,
                              cudaMemcpyDeviceToHost));
  EWISE_CUDA_CHECK(cudaMemcpy(&c, static_cast<const std::byte*>(out.cols) + got[1] * isz, isz,
                              cudaMemcpyDeviceToHost));
  if (isz == 4) {  // sign-extend the 32-bit index read into the low bytes
    r = static_cast<std::int32_t>(r);
    c = static_cast<std::int32_t>(c);
  }
  throw VerifyError(detail::concat(got[0], " of ", d.nnz, " result entries wrong (order, range, ",
                                   "coordinate or value); first is entry ", got[1], " at (", r,
                                   ",", c, ")"));
}

}  // namespace

DeviceCoo generate_coo(const CooSpec& spec, cudaStream_t stream) {
  CooDesc desc{spec.nrows, spec.ncols, 0, spec.index, spec.dtype, !spec.unsorted};
  desc.validate();
  const Cells cells = cells_of(spec);
  const std::int64_t total = spec.nrows * spec.ncols;
  desc.nnz = static_cast<std::int64_t>(count_cells(cells, cells, false, total, stream));
  DeviceCoo coo(desc, stream);
  if (desc.nnz == 0) return coo;

  DeviceBuffer abs(static_cast<std::size_t>(desc.nnz) * sizeof(std::int64_t), stream);
  DeviceBuffer d_num(sizeof(std::int64_t), stream);
  auto* abs_p = static_cast<std::int64_t*>(abs.data());
  std::size_t temp_bytes = 0;
  const thrust::counting_iterator<std::int64_t> all(0);
  EWISE_CUDA_CHECK(cub::DeviceSelect::If(nullptr, temp_bytes, all, abs_p,
                                         static_cast<std::int64_t*>(d_num.data()), total,
                                         HasCell{cells}, stream));
  {
    DeviceBuffer temp(temp_bytes, stream);
    EWISE_CUDA_CHECK(cub::DeviceSelect::If(temp.data(), temp_bytes, all, abs_p,
                                           static_cast<std::int64_t*>(d_num.data()), total,
                                           HasCell{cells}, stream));
  }
  DeviceBuffer shuffled;
  if (spec.unsorted) {
    DeviceBuffer keys(static_cast<std::size_t>(desc.nnz) * 2 * sizeof(std::uint32_t), stream);
    shuffled = DeviceBuffer(abs.size(), stream);
    auto* k_in = static_cast<std::uint32_t*>(keys.data());
    auto* k_out = k_in + desc.nnz;
    detail::launch("bench_shuffle_keys", shuffle_keys_kernel, grid_for(desc.nnz), kThreads, 0,
                   stream, k_in, desc.nnz, spec.seed ^ kShuffleSalt);
    auto* s_out = static_cast<std::int64_t*>(shuffled.data());
    temp_bytes = 0;
    EWISE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k_in, k_out, abs_p,
                                                     s_out, desc.nnz, 0, 32, stream));
    DeviceBuffer temp(temp_bytes, stream);
    EWISE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), temp_bytes, k_in, k_out, abs_p,
                                                     s_out, desc.nnz, 0, 32, stream));
    abs_p = s_out;
  }
  dispatch_coo(spec.index, spec.dtype, [&](auto itag, auto vtag) {
    using I = typename decltype(itag)::type;
    using T = typename decltype(vtag)::type;
    detail::launch("bench_write_coo", write_entries_kernel<I, T>, grid_for(desc.nnz), kThreads, 0,
                   stream, abs_p, desc.nnz, spec.ncols, cells, static_cast<I*>(coo.rows()),
                   static_cast<I*>(coo.cols()), static_cast<T*>(coo.vals()));
  });
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return coo;
}

std::string check_coo_product(const CooView& out, const CooSpec& a, const CooSpec& b,
                              cudaStream_t stream) {
  EWISE_EXPECTS(a.nrows == b.nrows && a.ncols == b.ncols && out.desc.nrows == a.nrows &&
                    out.desc.ncols == a.ncols,
                "check_coo_product: shapes differ");
  const Cells ca = cells_of(a), cb = cells_of(b);
  const auto want = static_cast<std::int64_t>(count_cells(ca, cb, true, a.nrows * a.ncols, stream));
  detail::dispatch_dtype(out.desc.dtype, [&](auto vtag) {
    using T = typename decltype(vtag)::type;
    if constexpr (std::is_floating_point_v<detail::compute_t<T>>)
      run_check<T>(out, ca, cb, DenseOperand<T>{}, want, stream);
  });
  return detail::concat("device check of all ", out.desc.nnz, " entries against the generators");
}

std::string check_coo_dense_product(const CooView& out, const CooSpec& a, std::int64_t nnz_a,
                                    const ConstTensorView& dense, cudaStream_t stream) {
  EWISE_EXPECTS(dense.memory == Memory::device && dense.desc.dtype == a.dtype,
                "check_coo_dense_product: dense operand must be a device tensor of ",
                dtype_name(a.dtype));
  const Dims strides = broadcast_strides(dense.desc, Dims{a.nrows, a.ncols});
  const Cells ca = cells_of(a);
  detail::dispatch_dtype(out.desc.dtype, [&](auto vtag) {
    using T = typename decltype(vtag)::type;
    if constexpr (std::is_floating_point_v<detail::compute_t<T>>)
      run_check<T>(out, ca, ca, DenseOperand<T>{static_cast<const T*>(dense.data), strides[0],
                                                strides[1]},
                   nnz_a, stream);
  });
  return detail::concat("device check of all ", out.desc.nnz, " entries against the generator");
}

}  // namespace ewise::bench
