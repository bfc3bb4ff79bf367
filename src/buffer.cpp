#include "ewise/buffer.hpp"

#include <cstring>
#include <utility>

#include "element.hpp"
#include "ewise/error.hpp"

namespace ewise {

DeviceBuffer::DeviceBuffer(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
  if (bytes == 0) return;
  EWISE_CUDA_CHECK(cudaMallocAsync(&ptr_, bytes, stream));
  bytes_ = bytes;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      stream_(other.stream_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    stream_ = other.stream_;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() noexcept {
  // A destructor cannot throw; a failing free means the context is already broken, and the
  // error stays pending for the next checked call to report.
  if (ptr_ != nullptr) (void)cudaFreeAsync(ptr_, stream_);
  ptr_ = nullptr;
  bytes_ = 0;
}

HostBuffer::HostBuffer(std::size_t bytes, cudaStream_t /*stream*/)
    : ptr_(bytes ? new std::byte[bytes] : nullptr), bytes_(bytes) {}

namespace {

// Copies the bytes a view reaches into `dst` as a contiguous tensor. `span` holds the view's
// memory from min_offset to max_offset, already on the host.
void gather(const std::byte* span_base, const TensorDesc& d, void* dst) {
  const std::size_t elem = dtype_size(d.dtype);
  auto* out = static_cast<std::byte*>(dst);
  detail::for_each_coord(d.shape, [&](std::int64_t i, const Dims& c) {
    std::memcpy(out + i * static_cast<std::int64_t>(elem),
                span_base + detail::dot(c, d.strides) * static_cast<std::int64_t>(elem), elem);
  });
}

}  // namespace

HostTensor to_host(const ConstTensorView& v, cudaStream_t stream) {
  check_view(v, "tensor");
  HostTensor out(v.desc.dtype, v.desc.shape);
  if (out.numel() == 0) return out;
  const std::int64_t elem = static_cast<std::int64_t>(dtype_size(v.desc.dtype));
  const std::int64_t lo = v.desc.min_offset(), hi = v.desc.max_offset();
  const auto* first = static_cast<const std::byte*>(v.data) + lo * elem;
  const auto span_bytes = static_cast<std::size_t>((hi - lo + 1) * elem);
  if (v.memory == Memory::host) {
    gather(static_cast<const std::byte*>(v.data), v.desc, out.data());
    return out;
  }
  if (v.desc.is_contiguous() && lo == 0) {
    EWISE_CUDA_CHECK(cudaMemcpyAsync(out.data(), v.data, out.bytes(), cudaMemcpyDeviceToHost, stream));
    EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
    return out;
  }
  HostBuffer span(span_bytes);
  EWISE_CUDA_CHECK(cudaMemcpyAsync(span.data(), first, span_bytes, cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  gather(static_cast<const std::byte*>(span.data()) - lo * elem, v.desc, out.data());
  return out;
}

DeviceTensor to_device(const ConstTensorView& v, cudaStream_t stream) {
  const HostTensor host = to_host(v, stream);
  DeviceTensor out(host.dtype(), host.shape(), stream);
  if (out.bytes() == 0) return out;
  EWISE_CUDA_CHECK(cudaMemcpyAsync(out.data(), host.data(), out.bytes(), cudaMemcpyHostToDevice, stream));
  // The source is pageable host memory that dies with this function: wait for the copy.
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace ewise
