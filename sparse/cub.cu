// sparse/cub.cu — every CUB device-wide algorithm the sparse pipelines use, instantiated once.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "ewise/error.hpp"
#include "internal.hpp"

namespace ewise::sparse_detail {

std::size_t exclusive_sum_temp_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  EWISE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const std::int64_t*>(nullptr),
                                                 static_cast<std::int64_t*>(nullptr), n));
  return bytes;
}

void exclusive_sum(void* temp, std::size_t temp_bytes, const std::int64_t* in, std::int64_t* out,
                   std::int64_t n, cudaStream_t stream) {
  EWISE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp, temp_bytes, in, out, n, stream));
}

namespace {

// One radix sort for a key and value width; `temp == nullptr` asks for the temporary size.
template <class Key, class Val>
void sort_pairs_as(void* temp, std::size_t& temp_bytes, SortBuffers& buf, std::int64_t n,
                   int end_bit, cudaStream_t stream) {
  cub::DoubleBuffer<Key> keys(static_cast<Key*>(buf.keys[buf.selector]),
                              static_cast<Key*>(buf.keys[buf.selector ^ 1]));
  cub::DoubleBuffer<Val> vals(static_cast<Val*>(buf.vals[buf.selector]),
                              static_cast<Val*>(buf.vals[buf.selector ^ 1]));
  EWISE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, vals, n, 0, end_bit, stream));
  if (temp == nullptr) return;
  // CUB flips keys and values together; the selectors agree.
  buf.selector = keys.Current() == static_cast<Key*>(buf.keys[0]) ? 0 : 1;
}

/// Calls f(Key{}, Val{}) for 32- or 64-bit keys and 2-, 4- or 8-byte values (sorted as bits).
template <class F>
void with_widths(bool wide_keys, std::size_t val_bytes, F&& f) {
  const auto with_val = [&](auto key) {
    switch (val_bytes) {
      case 2: f(key, std::uint16_t{}); return;
      case 4: f(key, std::uint32_t{}); return;
      case 8: f(key, std::uint64_t{}); return;
      default: EWISE_EXPECTS(false, "sort_pairs: values of ", val_bytes, " bytes");
    }
  };
  if (wide_keys) with_val(std::uint64_t{});
  else with_val(std::uint32_t{});
}

}  // namespace

std::size_t sort_pairs_temp_bytes(std::int64_t n, bool wide_keys, std::size_t val_bytes, int end_bit) {
  std::size_t bytes = 0;
  SortBuffers none;
  with_widths(wide_keys, val_bytes, [&](auto k, auto v) {
    sort_pairs_as<decltype(k), decltype(v)>(nullptr, bytes, none, n, end_bit, nullptr);
  });
  return bytes;
}

void sort_pairs(void* temp, std::size_t temp_bytes, SortBuffers& buf, std::int64_t n,
                bool wide_keys, std::size_t val_bytes, int end_bit, cudaStream_t stream) {
  EWISE_EXPECTS(temp != nullptr, "sort_pairs: no temporary storage");
  with_widths(wide_keys, val_bytes, [&](auto k, auto v) {
    sort_pairs_as<decltype(k), decltype(v)>(temp, temp_bytes, buf, n, end_bit, stream);
  });
}

}  // namespace ewise::sparse_detail
