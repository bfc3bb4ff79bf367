// sparse/workspace.hpp — temporary device storage of the sparse pipelines: one stream-ordered
// allocation carved into aligned pieces. Host-compilable.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "ewise/buffer.hpp"

namespace ewise::sparse_detail {

/// One stream-ordered device allocation carved into aligned pieces (CUB's alias_temporaries):
/// piece i holds bytes[i] bytes and starts on a 256-byte boundary. Freed on `stream` when the
/// Workspace dies, also during unwinding; work queued on `stream` before that may still use it.
class Workspace {
 public:
  static constexpr std::size_t kAlign = 256;

  Workspace() = default;
  Workspace(const std::vector<std::size_t>& bytes, cudaStream_t stream);

  template <class T = void>
  T* get(std::size_t i) const {
    return reinterpret_cast<T*>(static_cast<std::byte*>(const_cast<void*>(buf_.data())) +
                                offsets_.at(i));
  }
  std::size_t bytes(std::size_t i) const { return sizes_.at(i); }

 private:
  DeviceBuffer buf_;
  std::vector<std::size_t> offsets_, sizes_;
};

}  // namespace ewise::sparse_detail
