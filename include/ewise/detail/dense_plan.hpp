// ewise/detail/dense_plan.hpp — the host half of a dense launch: validation, planning, kernel
// choice and launch configuration. Shared by ewise::binary (built-in ops, compiled into the
// library) and the functor entry in ewise/dense.cuh (instantiated in the user's code).
//
// Planning, in order: plan_binary() (every operand check), options checked, dims sorted by the
// output's |stride| (outermost first) so a transposed output still writes along its innermost
// dim, coalesced, the kernel resolved (automatic: select; named: accepted or InvalidArgument),
// index width and vector alignment decided. Nothing here launches or touches device memory;
// configure_dense() is the only function that asks the CUDA runtime anything.
#pragma once

#include <cstdint>
#include <string>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "ewise/tensor.hpp"

namespace ewise::detail {

/// Default threads per block of every dense kernel (nt).
inline constexpr int kDenseThreads = 256;
/// Smallest extent of both tiled dims for which `automatic` picks the tiled kernel.
inline constexpr int kMinTiledExtent = 16;
/// Bytes per vector access of the vectorized kernels.
inline constexpr int kVectorBytes = 16;

/// Everything a dense launch needs, decided on the host.
struct DenseLaunch {
  Kernel kernel = Kernel::general;  ///< resolved: never Kernel::automatic
  DType dtype = DType::f32;
  BroadcastPlan plan;      ///< sorted and coalesced; rank >= 1 unless numel() == 0
  std::int64_t numel = 0;  ///< 0: nothing to do
  void* out = nullptr;     ///< element (0,...,0) of each operand
  const void* a = nullptr;
  const void* b = nullptr;
  bool wide = false;  ///< 64-bit indices: numel or an operand's offset span exceeds int32
  /// vectorized: leading scalar elements before the first 16-byte aligned output address (numel
  /// when the inputs' alignment differs from the output's, so everything runs scalar).
  std::int64_t head = 0;
  /// row_vectorized: every row starts 16-byte aligned for each stride-1 operand and the row
  /// length is a multiple of the vector width, so 16-byte accesses are used.
  bool row_vector_ok = false;
  // Matrix-vector kernels (sliding .. baseline): the plan is (rows, cols) = (shape[0], shape[1]).
  int vector_operand = 0;   ///< 1 = a, 2 = b: the operand with one zero stride
  bool row_vector = false;  ///< the vector runs along cols (broadcast over rows); else along rows
  // tiled: the plan dim tiled together with the innermost one; staged operands go through
  // shared memory (their stride along tile_dim is smaller than along the innermost dim).
  int tile_dim = 0;
  bool staged_a = false, staged_b = false;
  /// tiled: 16-byte units. Both tiled extents are multiples of the vector width; the output has
  /// inner stride 1; at most one input is staged, with stride 1 along the tile dim; the other
  /// input has inner stride 0 or 1; and every operand read or written in 16-byte units (the
  /// output, the staged input, a stride-1 input) is 16-byte aligned with its other strides
  /// multiples of the width.
  bool tile_vector_ok = false;
  // Launch configuration: the options' values; prepare_dense sets threads and sliding_factor
  // when they are 0, and sm_count.
  int threads = 0;         ///< threads per block
  int blocks = 0;          ///< grid of the grid-stride kernels; 0 = the kernel's resident blocks
  int sliding_factor = 0;  ///< rows (cols) per thread of the sliding kernels
  int sm_count = 0;        ///< multiprocessors of the current device
  std::int64_t max_shared = 0;  ///< shared memory bytes a block may opt in to on that device
};

/// Why `kernel` cannot run the sorted, coalesced plan `p`, or "" when it can. Also sets the
/// kernel-specific fields of `launch` when it can (vector operand, tile dim, ...).
std::string kernel_rejects(Kernel kernel, const BroadcastPlan& p, DenseLaunch* launch);

/// All checks and the plan; throws InvalidArgument. No CUDA call is made.
DenseLaunch plan_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                       const DenseOptions& options);

/// plan_dense, then requires device views and fills the launch configuration from the current
/// device (multiprocessor count, shared memory): the last step before a launch.
DenseLaunch prepare_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                          const DenseOptions& options);

/// The contiguous device output of the allocating forms: checks a and b (device views, one
/// dtype, shapes broadcast) and allocates their broadcast shape on `stream`.
DeviceTensor allocate_dense_output(const ConstTensorView& a, const ConstTensorView& b,
                                   cudaStream_t stream);

}  // namespace ewise::detail
