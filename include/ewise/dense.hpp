// ewise/dense.hpp — dense element-wise binary operations with NumPy broadcasting.
//
//   ewise::binary(BinaryOp::add, a, b, out);             // out = a + b, broadcast
//   ewise::binary(BinaryOp::multiply, x, Scalar::weak_float(0.5), x);  // x *= 0.5
//   DeviceTensor c = ewise::binary(BinaryOp::divide, a, b);  // allocating form (NumPy's dtype)
//
// a and b are tensor views or scalars (Operand), of any dtypes; out is a view of any dtype the
// result may be cast to (NumPy's same_kind). The result dtype follows DenseOptions::promotion
// (NumPy 2 by default, or PyTorch: ewise/promotion.hpp); the values are converted to the
// operation's compute type, combined and rounded once to the result dtype, then cast to out's
// dtype, all inside one kernel: no temporary, no cast pass, one launch. Where the views live
// picks the backend: device views run on the GPU (asynchronously, on `stream`), host views run on
// the CPU reference backend (the fallback when there is no GPU; `stream` is ignored, the options
// are checked but no kernel runs). Mixing host and device views throws. A user's own functor:
// ewise/dense.cuh.
// Checks made before anything is launched (each throws InvalidArgument naming the values):
// views valid (null data with elements, bad descriptors; rank over 8 cannot be built: Dims
// throws), the operation defined for the dtypes (op_types), the result castable to out's dtype,
// a Python integer scalar that fits the compute dtype (NumPy's rule), a and b broadcast, out has
// exactly the broadcast shape, out does not overlap itself, out overlaps neither input except
// exactly (in-place, same dtype), device data aligned to its element size, options in range, a
// kernel asked for a plan it cannot run. Empty outputs are a no-op; rank 0 works. Indices and
// offsets are 64-bit where needed (tensors over 2^31 elements work); kernels take a 32-bit path
// when every index and offset fits in int32.
//
// Kernels: operands of one dtype with that dtype's result (the six original dtypes, the
// operations add ... maximum) run every kernel below; any other call (mixed dtypes, a scalar, a
// new dtype or operation) runs the converting kernel (dense/convert.cu), reported as `general`.
//
// How a call runs: the operands' broadcast plan (ewise/broadcast.hpp) has its dims sorted by the
// output's |stride| (outermost first) and is coalesced; kernels see that plan. "Row" below means
// the innermost dim of that plan, "inner stride" an operand's stride along it.
#pragma once

#include "ewise/detail/stream.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "ewise/buffer.hpp"
#include "ewise/memory.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

/// Dense kernels, selectable by name (see README, "Dense kernels"). What each accepts is stated
/// on the plan after sorting and coalescing; asking for a kernel outside it throws.
enum class Kernel : std::uint8_t {
  automatic,       ///< the fastest correct kernel for the plan (default), see select_kernel
  general,         ///< any plan: grid-stride, coordinates from the index by fast divmod,
                   ///< offsets = dot(coordinates, strides) (paper §III.B-C)
  vectorized,      ///< an output contiguous as a whole (in some order of its dims): one flat
                   ///< range of 16-byte stores, scalar head and tail; inputs laid out like the
                   ///< output read as 16-byte vectors, scalars held, others gathered per element
  sliding,         ///< rank 2 with an input that has exactly one zero stride (the vector):
                   ///< each thread loads one vector element and applies it to
                   ///< `sliding_factor` rows (row vector) or columns (column vector) (§III.D)
  sliding_shared,  ///< as sliding, the block's vector elements staged in shared memory (§III.E)
  continuous,      ///< as sliding with out and the other input row-major contiguous; d2ltvm
                   ///< schedule: each of nb*nt threads on one contiguous chunk
  alternate,       ///< same plans; d2ltvm schedule: each thread on elements nb*nt apart
  baseline,        ///< same plans; Knet's kernel z[i] = x[(i/sx)%nx] op y[i], hardware
                   ///< division, kept for comparison
  row_vectorized,  ///< rank >= 1, output inner stride 1, each input inner stride 1 or 0:
                   ///< 16-byte accesses along rows while the other dims broadcast (bias add,
                   ///< column broadcast, per-channel scale, outer product, mixed N-D). 16-byte
                   ///< when rows are a multiple of 16 bytes and every stride-1 operand's rows
                   ///< start 16-byte aligned; element-wise otherwise
  tiled,           ///< rank >= 2: tiles of the innermost dim and another; inputs that run
                   ///< along that other dim (a transposed view) staged through shared memory
                   ///< (asynchronous copies, 3 buffers) so that reads and writes are both
                   ///< coalesced. 16-byte accesses (tiles of 256 bytes a side; 32 x 64 for
                   ///< 8-byte types) when both tiled extents are multiples of 16 bytes, the
                   ///< output's inner stride is 1, one input is staged, with stride 1 along the
                   ///< other dim, the other input's inner stride is 0 or 1 and every operand
                   ///< accessed 16 bytes at a time is 16-byte aligned (its other strides too);
                   ///< element-wise 64 x 64 tiles (32 x 32 for 8-byte types) otherwise
};

/// The kernels' names, in enum order: the one table behind kernel_name, parse_kernel,
/// kAllKernels and the command-line tool.
struct KernelName {
  Kernel kernel;
  const char* name;
};
inline constexpr KernelName kKernelNames[] = {
    {Kernel::automatic, "automatic"},
    {Kernel::general, "general"},
    {Kernel::vectorized, "vectorized"},
    {Kernel::sliding, "sliding"},
    {Kernel::sliding_shared, "sliding_shared"},
    {Kernel::continuous, "continuous"},
    {Kernel::alternate, "alternate"},
    {Kernel::baseline, "baseline"},
    {Kernel::row_vectorized, "row_vectorized"},
    {Kernel::tiled, "tiled"},
};

/// Every kernel, in enum order (automatic first).
inline constexpr auto kAllKernels = [] {
  std::array<Kernel, std::size(kKernelNames)> all{};
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = kKernelNames[i].kernel;
  return all;
}();

/// The kernel's name in kKernelNames ("unknown" for a value outside the enum).
const char* kernel_name(Kernel k);
/// Parses a kernel name as printed by kernel_name; throws InvalidArgument otherwise.
Kernel parse_kernel(std::string_view name);

/// Kernel choice and tunables. Each tunable is 0 (the default) or positive; a tunable a kernel
/// does not use is ignored.
struct DenseOptions {
  Kernel kernel = Kernel::automatic;
  /// sliding, sliding_shared: rows (row vector) or columns (column vector) per thread. 0 picks
  /// the smallest factor that still fills the device about twice.
  int sliding_factor = 0;
  /// Threads per block (nt): a multiple of 32 in 32..1024; 0 = 256. The tiled kernel always
  /// runs 256 threads.
  int threads = 0;
  /// Blocks (nb) of the grid-stride kernels (general, vectorized, row_vectorized, tiled,
  /// continuous, alternate, baseline), capped at what the work needs; 0 = enough to fill the
  /// device once. The sliding kernels' grid follows from sliding_factor.
  int blocks = 0;
  /// Whose promotion rules give the result dtype and the compute type (ewise/promotion.hpp).
  Promotion promotion = Promotion::numpy;
  /// Device memory of the allocating forms' result (ewise/memory.hpp); nullptr: the device's
  /// default resource (ewise's pool unless set). The in-place forms allocate nothing.
  MemoryResource* memory = nullptr;
};

/// out = a ⊙ b with broadcasting (a scalar broadcasts as a rank-0 tensor). See the file comment
/// for the checks made. Asynchronous on `stream` for device views; synchronous (CPU) for host
/// views. At least one of a and b is a view.
void binary(BinaryOp op, const Operand& a, const Operand& b, const TensorView& out,
            const DenseOptions& options = {}, cudaStream_t stream = nullptr);

/// Allocating form: returns a new contiguous device tensor of the broadcast shape and the result
/// dtype (op_types under options.promotion), allocated and computed on `stream`. The views
/// among a and b must be device views.
DeviceTensor binary(BinaryOp op, const Operand& a, const Operand& b,
                    const DenseOptions& options = {}, cudaStream_t stream = nullptr);

/// The kernel `automatic` picks for these operands (host or device views; nothing runs):
/// vectorized for rank <= 1 plans with a contiguous output; row_vectorized when every inner
/// stride is 0 or 1 (output 1) and rows are whole, 16-byte aligned vectors; tiled when the
/// output's inner stride is 1, an input's is neither 0 nor 1, and that input has stride +-1
/// along another dim (a transposed view, with or without a vector operand), both dims at least
/// 16 long; vectorized for other outputs contiguous as a whole (odd widths, misaligned starts,
/// short rows, outer products: the inputs gathered) except rows of >= 256 elements of 4 bytes or
/// more with an input read along them in full; row_vectorized element-wise for other inner
/// strides 0 or 1; sliding for other rank-2 plans with a vector; general otherwise.
/// Throws InvalidArgument for operands binary() would reject.
Kernel select_kernel(const ConstTensorView& a, const ConstTensorView& b, const TensorView& out);

/// True when `kernel` can run these operands (automatic always can), as the same-dtype
/// operations add ... maximum run them on views of one of the six dtypes those kernels are
/// built for (any other call: the overload below). Throws InvalidArgument for operands binary()
/// would reject. It does not ask the device: on device views binary() also
/// refuses a named tiled kernel whose tiles do not fit the device's shared memory (two staged
/// 4-byte inputs need 96 KiB a block; Hopper allows 227 KiB).
bool kernel_supports(Kernel kernel, const ConstTensorView& a, const ConstTensorView& b,
                     const TensorView& out);

/// The same for op(a, b) into out under `promotion`: a call that runs the converting kernel
/// (mixed dtypes, a scalar, an operation or dtype beyond the same-dtype kernels', see the file
/// comment) supports automatic and general only. Throws InvalidArgument for operands binary()
/// would reject.
bool kernel_supports(Kernel kernel, BinaryOp op, const Operand& a, const Operand& b,
                     const TensorView& out, Promotion promotion = Promotion::numpy);

}  // namespace ewise
