// ewise/buffer.hpp — owning memory: RAII buffers and owning tensors.
//
// DeviceBuffer allocates from a MemoryResource (ewise/memory.hpp: the one given, else the
// device's default, else ewise's pool) on a stream and frees on the same stream, so it is
// stream-ordered: the memory may be used by work queued on that stream before the destructor
// runs. It is move-only and cannot leak when an exception unwinds. The resource and the stream
// the buffer frees on must outlive it: to keep a buffer past its stream, give it another one
// with set_stream first (CUDA cannot free on a destroyed stream: cudaFreeAsync on one may crash
// the process). HostBuffer is the same class over host memory (BasicBuffer), so code templated
// on the buffer serves both.
#pragma once

#include "ewise/detail/stream.hpp"

#include <cstddef>

#include "ewise/memory.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

/// Owning, move-only memory of kind M. Device memory is stream-ordered: allocated on `stream`
/// from a MemoryResource and freed on the same stream. Host memory comes from malloc (the
/// stream and the resource are ignored), so code templated on the buffer serves both; from
/// 4 MiB up it is aligned to 2 MiB with huge-page advice, and when freed it is kept for the
/// next buffer of its size rounded to 2 MiB (at most 256 MiB kept in all).
template <Memory M>
class BasicBuffer {
 public:
  static constexpr Memory memory = M;

  BasicBuffer() = default;
  /// Allocates `bytes` on `stream` from `memory` (nullptr: the current device's default
  /// resource). 0 bytes allocates nothing and makes no CUDA call. Throws what the resource
  /// throws (CudaError from ewise's pool).
  explicit BasicBuffer(std::size_t bytes, cudaStream_t stream = nullptr,
                       MemoryResource* memory = nullptr);
  BasicBuffer(BasicBuffer&& other) noexcept;
  BasicBuffer& operator=(BasicBuffer&& other) noexcept;
  BasicBuffer(const BasicBuffer&) = delete;
  BasicBuffer& operator=(const BasicBuffer&) = delete;
  ~BasicBuffer();

  void* data() noexcept { return ptr_; }
  const void* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }
  cudaStream_t stream() const noexcept { return stream_; }
  /// Frees the memory on `stream` instead of the stream it was allocated on, so that the buffer
  /// may outlive that stream. The caller orders `stream` after the work that uses the buffer
  /// (e.g. with an event), as for any stream-ordered free.
  void set_stream(cudaStream_t stream) noexcept { stream_ = stream; }
  /// The resource the memory came from (nullptr for an empty buffer and for host memory).
  MemoryResource* resource() const noexcept { return memory_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  cudaStream_t stream_ = nullptr;
  MemoryResource* memory_ = nullptr;
};

/// Stream-ordered device allocation.
using DeviceBuffer = BasicBuffer<Memory::device>;
/// Host allocation with DeviceBuffer's interface (the stream is ignored).
using HostBuffer = BasicBuffer<Memory::host>;

/// A tensor that owns its memory: always contiguous (row-major), so its view is contiguous.
template <class Buffer>
class BasicTensor {
 public:
  BasicTensor() = default;
  /// A contiguous tensor of `shape`, allocated on `stream` from `memory` (device tensors; see
  /// DeviceBuffer).
  BasicTensor(DType dtype, const Dims& shape, cudaStream_t stream = nullptr,
              MemoryResource* memory = nullptr)
      : desc_(TensorDesc::contiguous(dtype, shape)),
        buf_(static_cast<std::size_t>(desc_.numel()) * dtype_size(dtype), stream, memory) {}

  const TensorDesc& desc() const noexcept { return desc_; }
  DType dtype() const noexcept { return desc_.dtype; }
  const Dims& shape() const noexcept { return desc_.shape; }
  std::int64_t numel() const { return desc_.numel(); }
  std::size_t bytes() const noexcept { return buf_.size(); }
  void* data() noexcept { return buf_.data(); }
  const void* data() const noexcept { return buf_.data(); }
  template <class T>
  T* data_as() noexcept { return static_cast<T*>(buf_.data()); }
  template <class T>
  const T* data_as() const noexcept { return static_cast<const T*>(buf_.data()); }

  /// See DeviceBuffer::set_stream (nothing to do for host tensors).
  void set_stream(cudaStream_t stream) noexcept { buf_.set_stream(stream); }

  TensorView view() noexcept { return {buf_.data(), desc_, Buffer::memory}; }
  ConstTensorView view() const noexcept { return {buf_.data(), desc_, Buffer::memory}; }
  operator TensorView() noexcept { return view(); }             // NOLINT
  operator ConstTensorView() const noexcept { return view(); }  // NOLINT

 private:
  TensorDesc desc_;
  Buffer buf_;
};

using DeviceTensor = BasicTensor<DeviceBuffer>;
using HostTensor = BasicTensor<HostBuffer>;

/// Copies any view (host or device, any strides) into a new contiguous host tensor.
/// Synchronizes `stream` when the view is on the device; a strided device view is first
/// gathered on the device (a temporary of numel elements on `stream`), so only its elements
/// are copied, never the memory between them.
HostTensor to_host(const ConstTensorView& v, cudaStream_t stream = nullptr);
/// Copies any view into a new contiguous device tensor, allocated from `memory` (see
/// DeviceBuffer) and ordered on `stream`.
DeviceTensor to_device(const ConstTensorView& v, cudaStream_t stream = nullptr,
                       MemoryResource* memory = nullptr);

}  // namespace ewise
