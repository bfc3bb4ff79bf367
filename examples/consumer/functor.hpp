// examples/consumer/functor.hpp — host declaration of the CUDA code in functor.cu.
#pragma once

#include "ewise/buffer.hpp"

/// (a + b) / 2 with broadcasting, f32 device views, through a custom functor (ewise/dense.cuh).
ewise::DeviceTensor midpoint(const ewise::ConstTensorView& a, const ewise::ConstTensorView& b);
