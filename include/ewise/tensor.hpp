// ewise/tensor.hpp — the tensor descriptor shared by the dense and the sparse halves.
//
// A tensor is a pointer to the element at coordinate (0,...,0) plus a TensorDesc: dtype, rank
// (0..8), int64 shape and int64 strides counted in elements. Stride 0 is a broadcast dimension.
// Negative strides are supported everywhere (a reversed view points at its first logical
// element; the elements it reaches lie at lower addresses).
// Views do not own memory and say where it lives (host or device); the owning tensors live in
// ewise/buffer.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>

namespace ewise {

/// Element types. The first six are the original ones (their values are unchanged); b8 is bool
/// (one byte, 0 or 1), the others NumPy's integer widths. Dense operands may mix dtypes
/// (ewise/promotion.hpp); sparse values are kSparseDTypes (ewise/coo.hpp).
enum class DType : std::uint8_t { f16, bf16, f32, f64, i32, i64, b8, i8, u8, i16, u16, u32, u64 };

inline constexpr DType kAllDTypes[] = {DType::f16, DType::bf16, DType::f32, DType::f64, DType::i32,
                                       DType::i64, DType::b8,   DType::i8,  DType::u8,  DType::i16,
                                       DType::u16, DType::u32,  DType::u64};

namespace detail {
[[noreturn]] void throw_unknown_dtype(DType t);  ///< InvalidArgument for a value outside DType
}  // namespace detail

/// Bytes per element (inline: a dense call's checks and plan ask for it many times).
inline std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::b8:
    case DType::i8:
    case DType::u8: return 1;
    case DType::f16:
    case DType::bf16:
    case DType::i16:
    case DType::u16: return 2;
    case DType::f32:
    case DType::i32:
    case DType::u32: return 4;
    case DType::f64:
    case DType::i64:
    case DType::u64: return 8;
  }
  detail::throw_unknown_dtype(t);
}
/// "f16", "bf16", "f32", "f64", "i32", "i64", "bool", "i8", "u8", "i16", "u16", "u32", "u64"
const char* dtype_name(DType t);
/// The dtype's kind, the order of NumPy's and PyTorch's categories (bool < integer < floating).
enum class DTypeKind : std::uint8_t { boolean, signed_int, unsigned_int, floating };
DTypeKind dtype_kind(DType t);
bool is_floating(DType t);  ///< f16, bf16, f32, f64
bool is_integer(DType t);   ///< signed or unsigned integers (not bool)
/// Parses a dtype name as printed by dtype_name (also "b8" for bool); throws InvalidArgument
/// otherwise.
DType parse_dtype(std::string_view name);

/// Highest supported rank.
inline constexpr int kMaxRank = 8;

/// A fixed-capacity list of up to kMaxRank int64 values: a shape or a list of strides. The
/// members a dense call's checks and plan use per call are inline, their errors out of line.
class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<std::int64_t> values);  ///< throws if more than kMaxRank values
  static Dims of_rank(int rank, std::int64_t fill);   ///< throws if rank is outside 0..kMaxRank
  static Dims from(const std::int64_t* values, int rank);

  int size() const noexcept { return rank_; }
  std::int64_t operator[](int i) const noexcept { return v_[static_cast<std::size_t>(i)]; }
  std::int64_t& operator[](int i) noexcept { return v_[static_cast<std::size_t>(i)]; }
  const std::int64_t* begin() const noexcept { return v_.data(); }
  const std::int64_t* end() const noexcept { return v_.data() + rank_; }
  /// Appends a value; throws InvalidArgument when full.
  void push_back(std::int64_t value) {
    if (rank_ == kMaxRank) throw_full();
    v_[static_cast<std::size_t>(rank_++)] = value;
  }
  /// Product of the values (1 for rank 0); throws InvalidArgument if it overflows int64.
  std::int64_t product() const {
    std::int64_t p = 1;
    for (int i = 0; i < rank_; ++i) {
      if (v_[static_cast<std::size_t>(i)] == 0) return 0;
      if (__builtin_mul_overflow(p, v_[static_cast<std::size_t>(i)], &p)) throw_overflow();
    }
    return p;
  }
  std::string str() const;  ///< "(3,4)", "()" for rank 0, "(5,)" for rank 1

  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    if (a.rank_ != b.rank_) return false;
    for (int i = 0; i < a.rank_; ++i)
      if (a[i] != b[i]) return false;
    return true;
  }
  friend bool operator!=(const Dims& a, const Dims& b) noexcept { return !(a == b); }

 private:
  int rank_ = 0;
  std::array<std::int64_t, kMaxRank> v_{};

  [[noreturn]] void throw_full() const;      ///< push_back's InvalidArgument
  [[noreturn]] void throw_overflow() const;  ///< product's InvalidArgument
};

std::ostream& operator<<(std::ostream& os, const Dims& d);

/// Shape and strides (in elements) of a tensor of one dtype.
struct TensorDesc {
  DType dtype = DType::f32;
  Dims shape;
  Dims strides;

  /// Row-major contiguous layout of the given shape (validated).
  static TensorDesc contiguous(DType dtype, const Dims& shape);
  /// Any layout; validated (see validate()).
  static TensorDesc strided(DType dtype, const Dims& shape, const Dims& strides);

  int rank() const noexcept { return shape.size(); }
  std::int64_t numel() const { return shape.product(); }
  bool is_contiguous() const noexcept;  ///< row-major dense (dims of extent 1 may have any stride)
  /// Lowest and highest element offset the tensor reaches (numel() must be > 0).
  std::int64_t min_offset() const noexcept {
    std::int64_t off = 0;
    for (int i = 0; i < rank(); ++i)
      if (strides[i] < 0) off += (shape[i] - 1) * strides[i];
    return off;
  }
  std::int64_t max_offset() const noexcept {
    std::int64_t off = 0;
    for (int i = 0; i < rank(); ++i)
      if (strides[i] > 0) off += (shape[i] - 1) * strides[i];
    return off;
  }
  /// True when no two coordinates can map to the same element (required of an output), by a
  /// conservative test: with the dims of extent > 1 sorted by |stride|, each |stride| must
  /// exceed the reach of the inner ones (sum of |stride| * (extent - 1)). Some layouts whose
  /// offsets are all distinct fail it (e.g. (4,4,4,4) with strides (193,49,13,3)); none passes
  /// it whose offsets repeat.
  bool is_non_overlapping() const;
  /// Throws InvalidArgument when the rank is over kMaxRank, strides and shape differ in rank, an
  /// extent is negative, or numel or any offset (in bytes) would overflow int64.
  void validate() const;
  std::string str() const;  ///< "f32(3,4) strides (4,1)"
};

/// Where a view's memory lives. A device view's elements must be memory the calling thread's
/// current device can address at its pointer: allocated on that device (cudaMalloc, a memory
/// pool, cuMemMap), managed, or mapped pinned host memory. Every entry point checks this, and
/// that its stream is the current device's, before it launches or copies anything: plain host
/// memory, another device's memory or bytes past the end of the allocation throw
/// InvalidArgument instead of faulting the kernel.
enum class Memory : std::uint8_t { host, device };
const char* memory_name(Memory m);

/// Non-owning view of a writable tensor.
struct TensorView {
  void* data = nullptr;
  TensorDesc desc;
  Memory memory = Memory::device;
};

/// Non-owning view of a read-only tensor.
struct ConstTensorView {
  const void* data = nullptr;
  TensorDesc desc;
  Memory memory = Memory::device;

  ConstTensorView() = default;
  ConstTensorView(const void* d, TensorDesc t, Memory m) : data(d), desc(t), memory(m) {}
  ConstTensorView(const TensorView& v) : data(v.data), desc(v.desc), memory(v.memory) {}  // NOLINT
};

/// Throws InvalidArgument unless the view's descriptor is valid and its data pointer is non-null
/// (a null pointer is accepted when the view has no elements). `what` names the argument.
void check_view(const ConstTensorView& v, const char* what);

}  // namespace ewise
