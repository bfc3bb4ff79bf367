// src/verify_device.hpp — device kernels behind the harness (verify_device.cu).
#pragma once

#include <cuda_runtime_api.h>

#include "ewise/tensor.hpp"
#include "random.hpp"

namespace ewise::detail {

StridedLayout layout_of(const TensorDesc& d);
/// Element i (row-major) of the view gets the harness's random value (seed, i).
void device_fill_random(const TensorView& v, const RandomSpec& spec, cudaStream_t stream);
/// Every element of the view gets the dtype-sized `pattern`.
void device_poison(const TensorView& v, const void* pattern, cudaStream_t stream);

}  // namespace ewise::detail
