// ewise/detail/launch.cuh — the one path every ewise kernel launch goes through.
#pragma once

#include <cuda_runtime.h>

#include <utility>

#include "ewise/detail/check_launch.hpp"
#include "ewise/error.hpp"

namespace ewise::detail {

/// Launches `kernel<<<grid, block, smem, stream>>>(args...)` and checks it.
template <class... Params, class... Args>
void launch(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block,
            std::size_t smem, cudaStream_t stream, Args&&... args) {
  kernel<<<grid, block, smem, stream>>>(std::forward<Args>(args)...);
  check_launch(name, stream, __FILE__, __LINE__);
}

}  // namespace ewise::detail
