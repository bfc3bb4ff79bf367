// dense/cpu.hpp — the CPU backend of binary() (cpu.cpp).
#pragma once

#include "ewise/detail/compute.hpp"
#include "ewise/detail/dense/plan.hpp"

namespace ewise::detail {

/// out = a op b on host views as plan_dense planned it (the checks made): the CPU backend,
/// whose results are the CPU reference's (ewise/reference.hpp) bit for bit.
void run_cpu(const CallTypes& types, const DensePlan& plan);

}  // namespace ewise::detail
