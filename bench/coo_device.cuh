// bench/coo_device.cuh — what the structure kinds' generators (coo_kinds.cu) and the device
// oracle (coo_oracle.cu, coo_check.cu) share: launch sizes, i32/f32 COO allocation, a value read
// back, and the oracle's operand requirements.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <utility>

#include "ewise/broadcast.hpp"
#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/error.hpp"
#include "ewise/tensor.hpp"

namespace ewise::bench {

inline constexpr int kThreads = 256;

/// Blocks of `threads` for n items, at least 1 and at most 16384 (the kernels stride over the
/// rest).
inline unsigned grid_for(std::int64_t n, int threads = kThreads) {
  const std::int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 16384 ? (blocks > 0 ? blocks : 1) : 16384);
}

/// An i32/f32 DeviceCoo of nnz entries, uninitialized.
inline DeviceCoo new_coo(std::int64_t nrows, std::int64_t ncols, std::int64_t nnz,
                         bool canonical, cudaStream_t stream) {
  return DeviceCoo(CooDesc{nrows, ncols, nnz, IndexType::i32, DType::f32, canonical}, stream);
}

/// *p, read back (synchronizes the stream).
inline std::int64_t read_i64(const std::int64_t* p, cudaStream_t stream) {
  std::int64_t v = 0;
  EWISE_CUDA_CHECK(cudaMemcpyAsync(&v, p, sizeof v, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return v;
}

/// The oracle takes i32/f32 matrices of fewer than 2^31 entries.
inline void expect_i32_f32(const CooDesc& d, const char* what) {
  EWISE_EXPECTS(d.index == IndexType::i32 && d.dtype == DType::f32 &&
                    d.nnz < (std::int64_t{1} << 31),
                what, ": the structures oracle takes i32/f32 matrices under 2^31 entries, got ",
                d.str());
}

/// Element strides of a device f32 dense operand broadcast to (nrows, ncols).
inline std::pair<std::int64_t, std::int64_t> dense_strides(const ConstTensorView& dense,
                                                           std::int64_t nrows,
                                                           std::int64_t ncols) {
  EWISE_EXPECTS(dense.memory == Memory::device && dense.desc.dtype == DType::f32,
                "the structures oracle takes a device f32 dense operand, got ", dense.desc.str());
  const Dims s = broadcast_strides(dense.desc, Dims{nrows, ncols});
  return {s[0], s[1]};
}

}  // namespace ewise::bench
