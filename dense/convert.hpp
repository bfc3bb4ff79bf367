// dense/convert.hpp — the converting kernel's launchers (convert.cuh), one instantiation file per
// group of operations so that they compile in parallel.
#pragma once

#include <cuda_runtime_api.h>

#include "ewise/detail/compute.hpp"
#include "ewise/detail/dense/plan.hpp"

namespace ewise::detail {

/// Launches the converting kernel for a call the planner marked `converting`.
void run_converting(const CallTypes& types, const DensePlan& plan, cudaStream_t stream);

// Per group (convert_<group>.cu): add ... maximum; floor_divide ... fmax; the comparisons,
// logical and bitwise operations.
void run_converting_basic(const CallTypes& types, const DensePlan& plan, cudaStream_t stream);
void run_converting_division(const CallTypes& types, const DensePlan& plan, cudaStream_t stream);
void run_converting_predicates(const CallTypes& types, const DensePlan& plan,
                               cudaStream_t stream);

}  // namespace ewise::detail
