// src/strided_device.hpp — device kernels over views of any strides (strided_device.cu): the
// harness's random fill and poisoning, and the gather behind to_host of a strided view.
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
/// Copies the view's elements in row-major order into the contiguous device buffer `dst`
/// (numel elements of the view's dtype). Only the elements move, never the gaps between them.
void device_gather(const ConstTensorView& v, void* dst, cudaStream_t stream);

}  // namespace ewise::detail
