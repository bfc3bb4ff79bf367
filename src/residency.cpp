// src/residency.cpp — DeviceOperands (residency.hpp): where each device operand's memory is,
// asked of the CUDA runtime and driver before anything is launched or copied.
#include "residency.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <ostream>

#include "ewise/error.hpp"

#if CUDART_VERSION < 12080
#error "ewise needs CUDA 12.8 or newer (cudaStreamGetDevice)"
#endif

namespace ewise::detail {
namespace {

using Address = std::uintptr_t;

/// The driver calls the checks need, found through the runtime so that ewise does not link
/// libcuda itself.
struct Driver {
  PFN_cuMemGetAddressRange_v3020 address_range = nullptr;
  PFN_cuPointerGetAttribute_v4000 pointer_attribute = nullptr;
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
    find_entry_point("cuMemGetAddressRange", 3020, &found.address_range);
    find_entry_point("cuPointerGetAttribute", 4000, &found.pointer_attribute);
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
/// cuMemMap memory), or the driver's error.
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

/// Whether `p` is in memory cudaIpcGetMemHandle can share: cudaMalloc's, one mapping per
/// allocation (cuMemMap and memory-pool memory is not).
bool legacy_ipc_capable(Address p) {
  int capable = 0;
  return driver().pointer_attribute(&capable, CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                    static_cast<CUdeviceptr>(p)) == CUDA_SUCCESS &&
         capable != 0;
}

/// Whether [lo, hi) lies in `first` (the mapped range holding p) and, for memory mapped piece
/// by piece (cuMemMap), the mapped ranges next to it that share p's reservation: those pieces
/// are one allocation to their user; a cudaMalloc allocation ends where its range does.
bool covered(Address p, Span first, Address lo, Address hi) {
  if (lo >= first.begin && hi <= first.end) return true;
  if (legacy_ipc_capable(p)) return false;
  const Address home = reservation(p);
  if (home == 0) return false;
  Span next;
  for (Address end = first.end; end < hi; end = next.end)
    if (mapped_range(end, &next) != CUDA_SUCCESS || reservation(end) != home) return false;
  for (Address begin = first.begin; begin > lo; begin = next.begin)
    if (mapped_range(begin - 1, &next) != CUDA_SUCCESS || reservation(begin - 1) != home)
      return false;
  return true;
}

/// What the runtime and the driver say about one distinct pointer.
struct Residence {
  const void* data = nullptr;
  bool device = false;  ///< cudaMemoryTypeDevice: the extent must be known
  CUresult range_status = CUDA_SUCCESS;
  Span range;  ///< when range_status is CUDA_SUCCESS
};

/// Queries `o.data` and applies the rules that depend only on the pointer.
Residence query(const DeviceOperands::Operand& o, int current) {
  cudaPointerAttributes attr{};
  EWISE_CUDA_CHECK(cudaPointerGetAttributes(&attr, o.data));
  EWISE_EXPECTS(attr.type != cudaMemoryTypeUnregistered, Named{o},
                " is host memory, not allocated or registered with CUDA (a device view needs "
                "device, managed or mapped pinned memory; host memory runs on Memory::host)");
  EWISE_EXPECTS(attr.type != cudaMemoryTypeDevice || attr.device == current, Named{o},
                " is memory of device ", attr.device, ", but the current device is ", current,
                " (ewise runs on the calling thread's current device: call cudaSetDevice(",
                attr.device, ") first, or copy the operand to device ", current, ")");
  // Pinned host and managed memory: usable where the current device addresses it at this
  // very pointer (devicePointer is null where it cannot address it at all).
  EWISE_EXPECTS(attr.type == cudaMemoryTypeDevice || attr.devicePointer == o.data, Named{o}, " is ",
                attr.type == cudaMemoryTypeManaged ? "managed" : "pinned host",
                " memory that device ", current, " addresses at ", attr.devicePointer,
                ", not at this pointer (map it for the device, e.g. cudaHostRegisterMapped)");
  Residence r;
  r.data = o.data;
  r.device = attr.type == cudaMemoryTypeDevice;
  const auto p = reinterpret_cast<Address>(o.data);
  r.range_status = mapped_range(p, &r.range);
  if (r.range_status == CUDA_ERROR_INVALID_CONTEXT) {
    // No context is current on this thread yet: make the current device's primary context
    // current (what its first launch would do) and ask again.
    EWISE_CUDA_CHECK(cudaSetDevice(current));
    r.range_status = mapped_range(p, &r.range);
  }
  return r;
}

/// The extent rule for one operand. The driver does not know the extent of every registered
/// host or managed allocation: those without one are accepted as they are.
void check_extent(const DeviceOperands::Operand& o, const Residence& r) {
  if (r.range_status != CUDA_SUCCESS) {
    EWISE_EXPECTS(!r.device, Named{o},
                  " is in no mapped device allocation (cuMemGetAddressRange: CUresult ",
                  static_cast<int>(r.range_status), ")");
    return;
  }
  const auto p = reinterpret_cast<Address>(o.data);
  const Address lo = p + static_cast<Address>(o.begin), hi = p + static_cast<Address>(o.end);
  EWISE_EXPECTS(covered(p, r.range, lo, hi), Named{o}, " reaches bytes [",
                reinterpret_cast<const void*>(lo), ", ", reinterpret_cast<const void*>(hi),
                "), outside its allocation [", reinterpret_cast<const void*>(r.range.begin), ", ",
                reinterpret_cast<const void*>(r.range.end), ") (", r.range.end - r.range.begin,
                " bytes)");
}

void check_stream(cudaStream_t stream, int current) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread)
    return;  // the default streams of the current device
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
  Residence seen[kMaxOperands];  // one query per distinct pointer
  int distinct = 0;
  for (int i = 0; i < count_; ++i) {
    const Operand& o = operands_[i];
    int k = 0;
    while (k < distinct && seen[k].data != o.data) ++k;
    if (k == distinct) seen[distinct++] = query(o, current);
    check_extent(o, seen[k]);
  }
}

}  // namespace ewise::detail
