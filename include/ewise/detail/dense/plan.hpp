// ewise/detail/dense/plan.hpp — the dense planner: from the operands, the options and the
// device's properties to a complete launch description. Pure host code (dense/plan.cpp): no
// CUDA call, nothing touches device memory. Used by ewise::binary on device views
// (dense/dense.cpp) and on host views (the CPU backend runs the plan's BroadcastPlan), by the
// functor entry (ewise/dense.cuh), select_kernel, kernel_supports and the plan fuzz target.
//
// Two steps, both pure, filling one DensePlan in place (a call's host cost: no plan is copied):
//   check_dense  every check binary() makes (plan_binary, options, device alignment), the plan's
//                dims sorted by the output's |stride| (outermost first, so a transposed output
//                still writes along its innermost dim) and coalesced, the index width, and the
//                kernel: automatic's choice, or the named one once the plan is within what it
//                accepts (else InvalidArgument naming the kernel, the operands and why). Nothing
//                here depends on the device: it sets the plan's DenseCall part.
//   plan_launch  the kernel's plan_<kernel> rule (dense/plan.cpp) gives its family's fields,
//                threads and grid from the checked call and the device's properties.
// The device entry checks before it asks CUDA for the device's properties, so an invalid call
// throws InvalidArgument even on a machine without a GPU.
//
// Grids: the planner decides how many blocks a launch needs and how they are capped
// (DenseOptions::blocks, else one full wave). The one fact it cannot know on the host is how
// many blocks of the compiled kernel instantiation fit on a multiprocessor at once (it depends
// on the registers the compiler gave that instantiation): the launcher asks CUDA for it
// (cudaOccupancyMaxActiveBlocksPerMultiprocessor) and GridPlan::blocks finishes the grid.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "ewise/broadcast.hpp"
#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/detail/dense/policy.hpp"
#include "ewise/detail/device_props.hpp"
#include "ewise/tensor.hpp"

namespace ewise::detail {

/// A checked dense call: what check_dense decided, independent of the device.
struct DenseCall {
  Kernel kernel = Kernel::general;  ///< resolved: never Kernel::automatic
  DType dtype = DType::f32;         ///< out's
  /// The call runs the converting kernel (dense/convert.cu: mixed dtypes, a scalar, a dtype or
  /// operation beyond the same-dtype kernels'); kernel is then `general`.
  bool converting = false;
  BroadcastPlan plan;      ///< sorted and coalesced; rank >= 1 unless numel == 0
  std::int64_t numel = 0;  ///< 0: nothing to do
  void* out = nullptr;     ///< element (0,...,0) of each operand
  const void* a = nullptr;  ///< nullptr for a scalar operand
  const void* b = nullptr;
  bool wide = false;     ///< 64-bit indices: numel or an operand's offset span exceeds int32
  DenseOptions options;  ///< as given (checked)
};

/// CUDA's limit on gridDim.x.
inline constexpr std::int64_t kMaxGridX = 2147483647;

/// The grid of a grid-stride kernel: `need` blocks cover the work. With DenseOptions::blocks
/// (`cap`) at most that many; else the 16-byte kernels (vectorized, row_vectorized) launch all
/// `need` blocks (`covers_work`) unless vectorized gathers an input other than by segments
/// (then kGatherWaves full waves), and the others at most one full wave (a wave: blocks
/// resident per SM x sm_count): see kVectorGridCoversWork and kGatherWaves in policy.hpp for
/// the figures.
struct GridPlan {
  std::int64_t need = 1;     ///< blocks that cover the work, at least 1
  std::int64_t cap = 0;      ///< DenseOptions::blocks; 0: none
  int sm_count = 1;
  bool covers_work = false;  ///< no wave cap: every block of `need` (within CUDA's grid limit)
  int waves = 1;             ///< else at most this many full waves

  /// Whether blocks() needs the kernel's resident blocks per SM.
  bool needs_occupancy() const { return cap == 0 && !covers_work; }
  /// The blocks to launch, given `resident_per_sm` blocks of the kernel per SM (read only when
  /// needs_occupancy(); at least 1 counts).
  unsigned blocks(int resident_per_sm) const {
    const std::int64_t wave = std::int64_t{std::max(resident_per_sm, 1)} * sm_count * waves;
    const std::int64_t limit = cap > 0 ? cap : covers_work ? kMaxGridX : wave;
    return static_cast<unsigned>(std::clamp<std::int64_t>(need, 1, limit));
  }
};

/// How the vectorized kernel reads an input.
enum class VectorAccess : std::uint8_t {
  vector,  ///< laid out like the output, at the same offset within 16 bytes: 16-byte loads
  scalar,  ///< every stride 0: one value, held in a register
  gather,  ///< anything else: element by element through its strides
};

/// vectorized (the output contiguous as a whole): the output is one flat range of 16-byte
/// vectors between a scalar head and tail.
struct VectorizedPlan {
  std::int64_t head = 0;     ///< leading scalar elements (out + head is 16-byte aligned)
  std::int64_t vectors = 0;  ///< 16-byte vectors after the head; the rest is a scalar tail
  VectorAccess a = VectorAccess::vector, b = VectorAccess::vector;
  /// Gathered inputs read by rows (vectorized.cuh's gather_rows): each one's stride along the
  /// innermost dim is 0 or 1, and that dim has at least a vector's elements. Else gather.
  bool rows = false;
  /// Gathered offsets from a row table a warp builds once a chunk (vectorized.cuh's RowTable),
  /// not from divmod chains a vector: at ranks from kRowTableRank, where a warp's chunk of
  /// 32 * vector_unroll vectors lies in at most 32 rows wherever it starts (row length >
  /// (chunk elements - 2) / 31).
  bool row_table = false;
  /// Rows mode over rows of at least segment_min_vectors, at most one input gathered along
  /// them with stride 1 and 32-bit indices: each warp runs segments of segment_vectors vectors
  /// inside one row (vectorized.cuh's GatherMode::segments), row_segments of them a row (the
  /// vectors inside a row but its first and last: at most floor(row / V) - 2).
  bool segments = false;
  std::int64_t row_segments = 0;
  /// Segments whose inputs are small (neither read as vectors: an outer product, a scalar and a
  /// row): the output, the one large stream, is stored evict-first (st.global.cs). H200
  /// ml_shapes, outer product 8191 x 4097: 4-6% less time; where an input is read as vectors (a
  /// bias, lab) 5-10% more, hence not there.
  bool evict_first = false;
  /// An input is gathered: each vector's elements are found through the plan's strides.
  bool gathers() const { return a == VectorAccess::gather || b == VectorAccess::gather; }
};

/// row_vectorized (output inner stride 1, input inner strides 1 or 0).
struct RowPlan {
  /// Elements per access: 16 bytes' worth when rows are a multiple of 16 bytes and every
  /// stride-1 operand's rows start 16-byte aligned, else 1.
  int vector = 1;
  std::int64_t per_row_vectors = 0;  ///< accesses per row
  std::int64_t rows = 0;             ///< numel / row length
  /// Chunks of 32 * vector_unroll accesses, one per warp and iteration. Runs: each row is cut
  /// into per_row_chunks chunks; else the chunks cut the row-major sequence of all accesses.
  bool runs = false;
  std::int64_t per_row_chunks = 0;
  std::int64_t chunks = 0;
  bool a_full = true, b_full = true;  ///< inner stride 1 (else 0: one value per row)
};

/// tiled (rank >= 2): tiles of the innermost dim (columns) and `tile_dim` (rows).
struct TiledPlan {
  int tile_dim = 0;  ///< the plan dim nearest the innermost where an input has stride +-1
  /// Inputs staged through shared memory: stride along tile_dim smaller than along the
  /// innermost dim (a transposed view).
  bool staged_a = false, staged_b = false;
  /// 16-byte units (tile_shape(element size, true)): both tiled extents are multiples of the
  /// vector width, the output's inner stride is 1, at most one input is staged, with stride 1
  /// along tile_dim, the other input's inner stride is 0 or 1, every operand accessed 16 bytes
  /// at a time is 16-byte aligned with its other strides multiples of the width, and the
  /// staged buffers fit the device's shared memory. Else element-wise tiles.
  bool vector = false;
  std::int64_t row_tiles = 0, col_tiles = 0;  ///< tiles along tile_dim and the innermost dim
  std::int64_t tiles = 0;                     ///< over all batches (the other dims)
  std::int64_t shared_bytes = 0;              ///< dynamic shared memory per block
};

/// The matrix-vector kernels (sliding, sliding_shared, continuous, alternate, baseline): the
/// plan is (rows, cols) = (shape[0], shape[1]) and one input, the vector, has one zero stride.
struct MatrixVectorPlan {
  int vector_operand = 0;   ///< 1 = a, 2 = b
  bool row_vector = false;  ///< the vector runs along cols (broadcast over rows); else rows
  // sliding, sliding_shared: blocks of (32, threads / 32); each thread applies its vector element
  // to sliding_factor rows (row vector) or columns (column vector).
  int sliding_factor = 1;
  std::int64_t tiles_x = 0, tiles_y = 0;  ///< block tiles along cols and rows
  unsigned grid_x = 1, grid_y = 1;        ///< tiles_x and tiles_y within the grid's limits
};

/// Everything a dense launch needs. Only the kernel's own family's fields are set.
struct DensePlan : DenseCall {
  int threads = 0;  ///< threads per block
  GridPlan grid;    ///< grid-stride kernels (all but sliding, sliding_shared)
  VectorizedPlan vectorized;
  RowPlan row;
  TiledPlan tiled;
  MatrixVectorPlan matrix_vector;
};

/// Every check binary() makes but the dtypes' (check_types) and the device-independent
/// decisions: a plan whose DenseCall part is set and whose launch fields are left to
/// plan_launch; throws InvalidArgument. `types`: the call's checked dtypes (a scalar operand's
/// view is a rank-0 placeholder in out's memory); null for views of one dtype (select_kernel,
/// kernel_supports, the functor entry), which run the same-dtype kernels when that dtype is one
/// of the six they are built for.
DensePlan check_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                      const DenseOptions& options, const CallTypes* types = nullptr);

/// Completes a plan from check_dense for a device with `props`: the launch fields of its kernel.
void plan_launch(DensePlan& plan, const DeviceProps& props);

/// check_dense, then plan_launch.
DensePlan plan_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                     const DenseOptions& options, const DeviceProps& props,
                     const CallTypes* types = nullptr);

/// The device entry's plan (dense/dense.cpp): check_dense, device views required, then (when
/// there is work) the operands' memory and `stream` checked against the current device (no
/// view may fault the kernel: see src/residency.hpp) and plan_launch with the current device's
/// cached properties.
DensePlan prepare_dense(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out,
                        const DenseOptions& options, cudaStream_t stream,
                        const CallTypes* types = nullptr);

/// The contiguous device output of the allocating forms: checks a and b (device views or
/// scalars, shapes broadcast), their result dtype under options.promotion and `stream` (the
/// current device's) and allocates the broadcast shape on `stream` from options.memory. The
/// binary() call that fills it checks a's and b's memory.
DeviceTensor allocate_dense_output(BinaryOp op, const Operand& a, const Operand& b,
                                   const DenseOptions& options, cudaStream_t stream);
/// The same with the result's dtype given (the functor entry's: its operands' one dtype).
DeviceTensor allocate_dense_output(DType dtype, const Operand& a, const Operand& b,
                                   const DenseOptions& options, cudaStream_t stream);

}  // namespace ewise::detail
