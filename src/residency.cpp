// src/residency.cpp — DeviceOperands (residency.hpp): where each device operand's memory is,
// looked up among ewise's own allocations or asked of the CUDA driver before anything is
// launched or copied.
#include "residency.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <iterator>
#include <ostream>

#include "checked.hpp"
#include "ewise/error.hpp"
#include "own_allocations.hpp"

#if CUDART_VERSION < 12080
#error "ewise needs CUDA 12.8 or newer (cudaStreamGetDevice)"
#endif

namespace ewise::detail {
namespace {

using Address = std::uintptr_t;

/// The driver calls the checks need, found through the runtime so that ewise does not link
/// libcuda itself.
struct Driver {
  PFN_cuCtxGetCurrent_v4000 current_context = nullptr;
  PFN_cuPointerGetAttributes_v7000 pointer_attributes = nullptr;
  PFN_cuPointerGetAttribute_v4000 pointer_attribute = nullptr;
  PFN_cuMemGetAddressRange_v3020 address_range = nullptr;
};

template <class Fn>
void find_entry_point(const char* symbol, unsigned version, Fn* fn) {
  cudaDriverEntryPointQueryResult found{};
  EWISE_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, reinterpret_cast<void**>(fn), version,
                                                    cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess)
    throw_cuda(cudaErrorSymbolNotFound, symbol, __FILE__, __LINE__);
}

/// Looked up once (a failed lookup throws and is tried again by the next call).
const Driver& driver() {
  static const Driver d = [] {
    Driver found;
    find_entry_point("cuCtxGetCurrent", 4000, &found.current_context);
    find_entry_point("cuPointerGetAttributes", 7000, &found.pointer_attributes);
    find_entry_point("cuPointerGetAttribute", 4000, &found.pointer_attribute);
    find_entry_point("cuMemGetAddressRange", 3020, &found.address_range);
    return found;
  }();
  return d;
}

/// An operand as messages name it: "a vals at 0x7f...".
struct Named {
  const DeviceOperands::Operand& o;
};
std::ostream& operator<<(std::ostream& os, const Named& n) {
  os << n.o.what;
  if (*n.o.part) os << ' ' << n.o.part;
  return os << " at " << n.o.data;
}

/// A half-open byte range [begin, end).
struct Span {
  Address begin = 0, end = 0;
};

/// The mapped range holding `p` (cuMemGetAddressRange: a cudaMalloc allocation, one piece of
/// cuMemMap or pool memory), or the driver's error.
CUresult mapped_range(Address p, Span* out) {
  CUdeviceptr base = 0;
  std::size_t size = 0;
  const CUresult r = driver().address_range(&base, &size, static_cast<CUdeviceptr>(p));
  if (r == CUDA_SUCCESS) *out = {static_cast<Address>(base), static_cast<Address>(base + size)};
  return r;
}

/// The start of the address reservation holding `p` (for cuMemMap memory, the cuMemAddressReserve
/// range its pieces share), or 0 when the driver knows none.
Address reservation(Address p) {
  CUdeviceptr start = 0;
  if (driver().pointer_attribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 static_cast<CUdeviceptr>(p)) != CUDA_SUCCESS)
    return 0;
  return static_cast<Address>(start);
}

/// What is known of one distinct pointer: the live allocation of ewise's pools holding it, or
/// else what the driver says (one cuPointerGetAttributes call, and for memory other than
/// cudaMalloc's one cuMemGetAddressRange).
struct Residence {
  const void* data = nullptr;
  /// In a live allocation of ewise's pools (own_allocations.hpp): `own_allocation` is that
  /// allocation, exactly, on the current device; the driver was not asked and the fields below
  /// keep their defaults.
  bool own = false;
  Span own_allocation;
  // The attributes asked for (zero where the driver knows nothing of the pointer). Booleans
  // are read into zeroed ints, whatever width the driver writes.
  unsigned memory_type = 0;     ///< CUmemorytype; 0: memory CUDA did not allocate or register
  int managed = 0;              ///< cudaMallocManaged memory
  int ordinal = -1;             ///< the device the memory was allocated or registered against
  CUdeviceptr device_pointer = 0;  ///< where the current device addresses it; 0: nowhere
  /// cudaMalloc memory (cudaIpcGetMemHandle can share it): the range below is exactly its
  /// allocation. For pool and cuMemMap memory it is the whole address reservation, of which
  /// only pieces may be mapped (an 8 MiB reservation for a 2 MiB mapped piece, H100).
  int ipc_capable = 0;
  CUdeviceptr range_start = 0;  ///< the allocation or the reservation holding the pointer
  std::size_t range_size = 0;
  // Memory other than cudaMalloc's: the mapped piece holding the pointer.
  CUresult piece_status = CUDA_SUCCESS;
  Span piece;  ///< when piece_status is CUDA_SUCCESS

  bool device() const { return memory_type == CU_MEMORYTYPE_DEVICE && !managed; }
  /// The range answer is the allocation itself.
  bool exact_range() const { return ipc_capable != 0 && range_size != 0; }
  Span range() const {
    return {static_cast<Address>(range_start), static_cast<Address>(range_start + range_size)};
  }
};

/// Whether [lo, hi) lies in `r.piece` (the mapped piece holding p) or, for memory mapped piece
/// by piece (cuMemMap, pools), in it and the mapped pieces next to it that share p's
/// reservation: those pieces are one allocation to their user.
bool covered(const Residence& r, Address lo, Address hi) {
  if (lo >= r.piece.begin && hi <= r.piece.end) return true;
  const auto home = static_cast<Address>(r.range_start);
  if (home == 0) return false;
  Span next;
  for (Address end = r.piece.end; end < hi; end = next.end)
    if (mapped_range(end, &next) != CUDA_SUCCESS || reservation(end) != home) return false;
  for (Address begin = r.piece.begin; begin > lo; begin = next.begin)
    if (mapped_range(begin - 1, &next) != CUDA_SUCCESS || reservation(begin - 1) != home)
      return false;
  return true;
}

/// The current-device rule for device memory of device `ordinal`.
void expect_current_device(const DeviceOperands::Operand& o, int ordinal, int current) {
  EWISE_EXPECTS(ordinal == current, Named{o}, " is memory of device ", ordinal,
                ", but the current device is ", current,
                " (ewise runs on the calling thread's current device: call cudaSetDevice(",
                ordinal, ") first, or copy the operand to device ", current, ")");
}

/// Looks `o.data` up among the live allocations of ewise's pools; false when none holds it. One
/// that does is device memory of the allocation's device, so only the current-device rule
/// applies to the pointer.
bool find_own(const DeviceOperands::Operand& o, int current, Residence* r) {
  OwnAllocation a;
  if (!own_allocations().find(reinterpret_cast<Address>(o.data), &a)) return false;
  expect_current_device(o, a.device, current);
  r->data = o.data;
  r->own = true;
  r->own_allocation = {a.begin, a.end};
  return true;
}

/// Queries `o.data` and applies the rules that depend only on the pointer.
Residence query(const DeviceOperands::Operand& o, int current) {
  Residence r;
  r.data = o.data;
  const auto p = reinterpret_cast<Address>(o.data);
  CUpointer_attribute attributes[] = {
      CU_POINTER_ATTRIBUTE_MEMORY_TYPE,    CU_POINTER_ATTRIBUTE_IS_MANAGED,
      CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
      CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
      CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* values[] = {&r.memory_type, &r.managed,     &r.ordinal,   &r.device_pointer,
                    &r.ipc_capable, &r.range_start, &r.range_size};
  static_assert(std::size(attributes) == std::size(values));
  // A pointer the driver does not know is no error: its attributes stay zero. The CUresults
  // this call returns have the numbers of the runtime's errors of the same meaning.
  EWISE_CUDA_CHECK(driver().pointer_attributes(static_cast<unsigned>(std::size(attributes)),
                                               attributes, values, static_cast<CUdeviceptr>(p)));
  EWISE_EXPECTS(r.memory_type != 0 || r.managed, Named{o},
                " is host memory, not allocated or registered with CUDA (a device view needs "
                "device, managed or mapped pinned memory; host memory runs on Memory::host)");
  if (r.device()) expect_current_device(o, r.ordinal, current);
  // Pinned host and managed memory: usable where the current device addresses it at this
  // very pointer (the device pointer is null where it cannot address it at all).
  EWISE_EXPECTS(r.device() || r.device_pointer == static_cast<CUdeviceptr>(p), Named{o}, " is ",
                r.managed ? "managed" : "pinned host", " memory that device ", current,
                " addresses at ", reinterpret_cast<const void*>(r.device_pointer),
                ", not at this pointer (map it for the device, e.g. cudaHostRegisterMapped)");
  if (!r.exact_range()) r.piece_status = mapped_range(p, &r.piece);
  return r;
}

/// The extent rule for one operand: its bytes must lie in the allocation of ewise's pools holding
/// its pointer (exactly as allocated), else in the allocation or the mapped pieces the driver
/// names. The driver does not know the extent of every registered host or managed allocation:
/// those without one are accepted as they are.
void check_extent(const DeviceOperands::Operand& o, const Residence& r) {
  const auto p = reinterpret_cast<Address>(o.data);
  const Address lo = p + static_cast<Address>(o.begin), hi = p + static_cast<Address>(o.end);
  Span allocation;  // as the message names it
  bool inside = false;
  if (r.own) {
    allocation = r.own_allocation;
    const int128 first = static_cast<int128>(p) + o.begin, last = static_cast<int128>(p) + o.end;
    inside = first >= static_cast<int128>(allocation.begin) &&
             last <= static_cast<int128>(allocation.end);
  } else if (r.exact_range()) {
    allocation = r.range();
    inside = lo >= allocation.begin && hi <= allocation.end;
  } else if (r.piece_status == CUDA_SUCCESS) {
    allocation = r.piece;
    inside = covered(r, lo, hi);
  } else {
    EWISE_EXPECTS(!r.device(), Named{o},
                  " is in no mapped device allocation (cuMemGetAddressRange: CUresult ",
                  static_cast<int>(r.piece_status), ")");
    return;
  }
  EWISE_EXPECTS(inside, Named{o}, " reaches bytes [", reinterpret_cast<const void*>(lo), ", ",
                reinterpret_cast<const void*>(hi), "), outside its allocation [",
                reinterpret_cast<const void*>(allocation.begin), ", ",
                reinterpret_cast<const void*>(allocation.end), ") (",
                allocation.end - allocation.begin, " bytes)");
}

void check_stream(cudaStream_t stream, int current) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return;  // the default streams of the current device
  // A capturing stream (a CUDA graph being recorded) refuses cudaStreamGetDevice; the capture's
  // own check applies there: a launch into another device's stream fails, and nothing runs.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  EWISE_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone) return;
  int device = -1;
  EWISE_CUDA_CHECK(cudaStreamGetDevice(stream, &device));
  EWISE_EXPECTS(device == current, "stream ", static_cast<const void*>(stream),
                " belongs to device ", device, ", but the current device is ", current,
                " (ewise runs on the calling thread's current device: call cudaSetDevice(", device,
                ") first)");
}

}  // namespace

DeviceOperands& DeviceOperands::add(const ConstTensorView& v, const char* what) {
  if (v.memory != Memory::device || v.desc.numel() == 0) return *this;
  const auto elem = static_cast<std::int64_t>(dtype_size(v.desc.dtype));
  push({v.data, v.desc.min_offset() * elem, (v.desc.max_offset() + 1) * elem, what, ""});
  return *this;
}

DeviceOperands& DeviceOperands::add(const CooView& v, const char* what) {
  if (v.memory != Memory::device || v.desc.nnz == 0) return *this;
  const std::int64_t index_bytes = v.desc.nnz * static_cast<std::int64_t>(index_size(v.desc.index));
  push({v.rows, 0, index_bytes, what, "rows"});
  push({v.cols, 0, index_bytes, what, "cols"});
  push({v.vals, 0, v.desc.nnz * static_cast<std::int64_t>(dtype_size(v.desc.dtype)), what, "vals"});
  return *this;
}

void DeviceOperands::push(const Operand& o) {
  EWISE_EXPECTS(count_ < kMaxOperands, "DeviceOperands holds at most ", kMaxOperands, " arrays");
  operands_[count_++] = o;
}

void DeviceOperands::check(cudaStream_t stream) const {
  int current = 0;
  EWISE_CUDA_CHECK(cudaGetDevice(&current));
  check_stream(stream, current);
  if (count_ == 0) return;
  Residence seen[kMaxOperands];  // one lookup per distinct pointer
  int distinct = 0;
  bool context_current = false;
  for (int i = 0; i < count_; ++i) {
    const Operand& o = operands_[i];
    int k = 0;
    while (k < distinct && seen[k].data != o.data) ++k;
    if (k == distinct) {
      Residence& r = seen[distinct++];
      if (!find_own(o, current, &r)) {
        // The driver answers for the thread's current context (where the device addresses
        // pinned memory, and whether it knows the pointer at all): with none current yet, make
        // the current device's primary context current, as its first launch would.
        if (!context_current) {
          CUcontext context = nullptr;
          EWISE_CUDA_CHECK(driver().current_context(&context));
          if (context == nullptr) EWISE_CUDA_CHECK(cudaSetDevice(current));
          context_current = true;
        }
        r = query(o, current);
      }
    }
    check_extent(o, seen[k]);
  }
}

}  // namespace ewise::detail
