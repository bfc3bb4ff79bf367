// sparse/status.cu — Status (status.cuh) and check_indices on the GPU.
#include <cstring>
#include <iterator>

#include "checks.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "internal.hpp"
#include "policy.hpp"
#include "status.cuh"

namespace ewise::sparse_detail {

namespace {

/// Runs an index check over every entry.
__global__ void check_indices_kernel(EntryCheck check, std::int64_t n) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    check(i);
}


/// Copies `n` int64 words from the device to the host and waits for them.
void read_words(const std::int64_t* device_words, std::int64_t* host, std::size_t n,
                cudaStream_t stream) {
  EWISE_CUDA_CHECK(cudaMemcpyAsync(host, device_words, n * sizeof(std::int64_t),
                                   cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace

std::int64_t device_index(const void* p, IndexType t, std::int64_t k, cudaStream_t stream) {
  std::int64_t v = 0;
  const std::size_t sz = index_size(t);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(&v, static_cast<const std::byte*>(p) + k * static_cast<std::int64_t>(sz),
                                   sz, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (t == IndexType::i32) {
    std::int32_t v32;
    std::memcpy(&v32, &v, 4);
    return v32;
  }
  return v;
}

Status::Status(cudaStream_t stream)
    : stream_(stream), words_(sizeof(host_), stream) {
  EWISE_CUDA_CHECK(cudaMemsetAsync(words_.data(), 0xFF, sizeof(host_), stream));
}

EntryCheck Status::fused(const CooView& m, const char* what, bool enabled) {
  if (!enabled || m.desc.nnz == 0) return EntryCheck{};
  EWISE_EXPECTS(nchecked_ < kChecks, "sparse status: too many checks");
  const int slot = nchecked_++;
  checked_[slot] = m;
  what_[slot] = what;
  return check_of(slot);
}

EntryCheck Status::check_of(int slot) const {
  const CooView& m = checked_[slot];
  EntryCheck c;
  c.rows = index_array(m.rows, m.desc.index);
  c.cols = index_array(m.cols, m.desc.index);
  c.nrows = m.desc.nrows;
  c.ncols = m.desc.ncols;
  c.canonical = m.desc.canonical;
  // Words no check has set stay all ones (-1 as int64).
  c.words = static_cast<unsigned long long*>(const_cast<void*>(words_.data())) + 2 * slot;
  return c;
}

void Status::check(const CooView& m, const char* what, bool enabled) {
  const EntryCheck c = fused(m, what, enabled);
  if (c.words == nullptr) return;
  detail::launch("sparse check_indices", check_indices_kernel, dim3(blocks_for(m.desc.nnz)),
                 dim3(kBlock), 0, stream_, c, m.desc.nnz);
}

unsigned long long* Status::compressed_slot(int i) const {
  return static_cast<unsigned long long*>(const_cast<void*>(words_.data())) + kFirstCompressed +
         i * kExpandCheckWords;
}
std::int64_t* Status::total_slot(int i) const {
  return static_cast<std::int64_t*>(const_cast<void*>(words_.data())) + 2 * kChecks + i;
}

void Status::recheck() {
  for (int s = 0; s < nchecked_; ++s)
    detail::launch("sparse check_indices", check_indices_kernel, dim3(blocks_for(checked_[s].desc.nnz)),
                   dim3(kBlock), 0, stream_, check_of(s), checked_[s].desc.nnz);
  read();
}

void Status::read() {
  read_words(static_cast<const std::int64_t*>(words_.data()), host_, std::size(host_), stream_);
  for (int s = 0; s < nchecked_; ++s) {
    const CooView& m = checked_[s];
    const auto at = [&](std::int64_t k, const void* p) { return device_index(p, m.desc.index, k, stream_); };
    if (const std::int64_t k = host_[2 * s]; k >= 0)
      throw_out_of_range(what_[s], m.desc, k, at(k, m.rows), at(k, m.cols));
    if (const std::int64_t k = host_[2 * s + 1]; k >= 0)
      throw_not_increasing(what_[s], k, at(k - 1, m.rows), at(k - 1, m.cols), at(k, m.rows),
                           at(k, m.cols));
  }
}

void device_check_indices(const CooView& m, const char* what, cudaStream_t stream) {
  Status status(stream);
  status.check(m, what, true);
  status.read();
}

}  // namespace ewise::sparse_detail
