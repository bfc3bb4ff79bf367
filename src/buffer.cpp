#include "ewise/buffer.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "element.hpp"
#include "residency.hpp"
#include "strided_device.hpp"
#include "ewise/error.hpp"

namespace ewise {

namespace {

/// Host memory from 4 MiB up is aligned to 2 MiB and advised to the kernel as huge-page memory
/// (MADV_HUGEPAGE, as NumPy does for its arrays): where transparent huge pages are on "madvise",
/// as on the 2-core CI machine, a first touch then faults in 2 MiB at once instead of 4 KiB
/// (the union of two 4096² 10% f32 SciPy matrices spent more time in page faults than in its
/// merge). The advice is a hint: where it fails, only speed changes.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugeFrom = std::size_t{4} << 20;

std::size_t huge_rounded(std::size_t bytes) {
  return (bytes + kHugePage - 1) / kHugePage * kHugePage;
}

/// Freed host blocks from kHugeFrom up, kept for the next allocation of the same rounded size
/// (the most recently freed first), up to kHeld bytes in all; past that the oldest go back to
/// the system. A block the system takes back is zeroed page by page when it is touched again:
/// a CSR + CSR union of two 4096² 10% matrices faulted in about 80 MB a call that way, a fifth
/// of its time on one thread, where SciPy's allocations (malloc's heap) fault in none.
class HostBlocks {
 public:
  static constexpr std::size_t kHeld = std::size_t{256} << 20;

  void* take(std::size_t rounded) {
    const std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = blocks_.size(); i-- > 0;)
      if (blocks_[i].bytes == rounded) {
        void* p = blocks_[i].p;
        held_ -= rounded;
        blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
        return p;
      }
    return nullptr;
  }

  void keep(void* p, std::size_t rounded) noexcept {
    std::vector<void*> out;  // freed outside the lock
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (rounded > kHeld) {
        out.push_back(p);
      } else {
        while (held_ + rounded > kHeld) {
          out.push_back(blocks_.front().p);
          held_ -= blocks_.front().bytes;
          blocks_.erase(blocks_.begin());
        }
        try {
          blocks_.push_back({p, rounded});
          held_ += rounded;
        } catch (...) {  // no room to note it: the block goes back instead
          out.push_back(p);
        }
      }
    }
    for (void* q : out) std::free(q);
  }

 private:
  struct Block {
    void* p;
    std::size_t bytes;
  };
  std::mutex mutex_;
  std::vector<Block> blocks_;
  std::size_t held_ = 0;
};

/// The process's cache, never destroyed (buffers may be freed during static destruction).
HostBlocks& host_blocks() {
  static HostBlocks* blocks = new HostBlocks;
  return *blocks;
}

void* host_allocate(std::size_t bytes) {
  void* p = nullptr;
  if (bytes < kHugeFrom) {
    p = std::malloc(bytes);
  } else {
    const std::size_t rounded = huge_rounded(bytes);
    p = host_blocks().take(rounded);
    if (p != nullptr) return p;
    p = std::aligned_alloc(kHugePage, rounded);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p != nullptr) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  }
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void host_free(void* p, std::size_t bytes) noexcept {
  if (bytes < kHugeFrom)
    std::free(p);
  else
    host_blocks().keep(p, huge_rounded(bytes));
}

}  // namespace

template <Memory M>
BasicBuffer<M>::BasicBuffer(std::size_t bytes, cudaStream_t stream, MemoryResource* memory)
    : stream_(stream) {
  if (bytes == 0) return;
  if constexpr (M == Memory::host) {
    (void)memory;
    ptr_ = host_allocate(bytes);
  } else {
    MemoryResource* from = memory != nullptr ? memory : detail::call_memory();
    if (from == nullptr) from = default_memory_resource();
    ptr_ = from->allocate(bytes, stream);
    memory_ = from;
  }
  bytes_ = bytes;
}

template <Memory M>
BasicBuffer<M>::BasicBuffer(BasicBuffer&& other) noexcept
    : ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      stream_(other.stream_),
      memory_(std::exchange(other.memory_, nullptr)) {}

template <Memory M>
BasicBuffer<M>& BasicBuffer<M>::operator=(BasicBuffer&& other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    stream_ = other.stream_;
    memory_ = std::exchange(other.memory_, nullptr);
  }
  return *this;
}

template <Memory M>
BasicBuffer<M>::~BasicBuffer() { release(); }

template <Memory M>
void BasicBuffer<M>::release() noexcept {
  if (ptr_ != nullptr) {
    if constexpr (M == Memory::host) {
      host_free(ptr_, bytes_);
    } else {
      memory_->deallocate(ptr_, bytes_, stream_);
    }
  }
  ptr_ = nullptr;
  bytes_ = 0;
  memory_ = nullptr;
}

template class BasicBuffer<Memory::device>;
template class BasicBuffer<Memory::host>;

namespace {

// Copies the elements of a host view (base pointer `base`) into `dst` in row-major order.
void gather(const std::byte* base, const TensorDesc& d, void* dst) {
  const std::size_t elem = dtype_size(d.dtype);
  auto* out = static_cast<std::byte*>(dst);
  detail::for_each_coord(d.shape, [&](std::int64_t i, const Dims& c) {
    std::memcpy(out + i * static_cast<std::int64_t>(elem),
                base + detail::dot(c, d.strides) * static_cast<std::int64_t>(elem), elem);
  });
}

}  // namespace

HostTensor to_host(const ConstTensorView& v, cudaStream_t stream) {
  check_view(v, "tensor");
  HostTensor out(v.desc.dtype, v.desc.shape);
  if (out.numel() == 0) return out;
  if (v.memory == Memory::host) {
    gather(static_cast<const std::byte*>(v.data), v.desc, out.data());
    return out;
  }
  detail::DeviceOperands().add(v, "tensor").check(stream);
  const void* src = v.data;
  DeviceBuffer packed;  // a strided view is gathered on the device first: only its elements move
  if (!v.desc.is_contiguous()) {
    packed = DeviceBuffer(out.bytes(), stream);
    detail::device_gather(v, packed.data(), stream);
    src = packed.data();
  }
  EWISE_CUDA_CHECK(cudaMemcpyAsync(out.data(), src, out.bytes(), cudaMemcpyDeviceToHost, stream));
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

DeviceTensor to_device(const ConstTensorView& v, cudaStream_t stream, MemoryResource* memory) {
  const HostTensor host = to_host(v, stream);  // checks a device view and the stream
  if (v.memory == Memory::host) detail::DeviceOperands().check(stream);
  DeviceTensor out(host.dtype(), host.shape(), stream, memory);
  if (out.bytes() == 0) return out;
  EWISE_CUDA_CHECK(cudaMemcpyAsync(out.data(), host.data(), out.bytes(), cudaMemcpyHostToDevice, stream));
  // The source is pageable host memory that dies with this function: wait for the copy.
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

}  // namespace ewise
