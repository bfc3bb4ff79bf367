// sparse/workspace.cpp — Workspace (workspace.hpp).
#include "workspace.hpp"

namespace ewise::sparse_detail {

Workspace::Workspace(const std::vector<std::size_t>& bytes, cudaStream_t stream) {
  std::size_t total = 0;
  for (std::size_t b : bytes) {
    offsets_.push_back(total);
    sizes_.push_back(b);
    total += (b + kAlign - 1) / kAlign * kAlign;
  }
  buf_ = DeviceBuffer(total, stream);
}

}  // namespace ewise::sparse_detail
