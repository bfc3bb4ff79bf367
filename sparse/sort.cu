// sparse/sort.cu — SortScratch (the CUB radix sort of every sparse pipeline) and sorted entry
// sequences (sort.cuh).
#include <cub/device/device_radix_sort.cuh>

#include "ewise/detail/launch.cuh"
#include "ewise/error.hpp"
#include "policy.hpp"
#include "sort.cuh"

namespace ewise::sparse_detail {
namespace {

/// Calls f(Key{}, Val{}) for 32- or 64-bit keys and 2-, 4- or 8-byte values (sorted as bits).
template <class F>
void with_widths(bool wide_keys, std::size_t val_bytes, F&& f) {
  const auto with_val = [&](auto key) {
    switch (val_bytes) {
      case 2: f(key, std::uint16_t{}); return;
      case 4: f(key, std::uint32_t{}); return;
      case 8: f(key, std::uint64_t{}); return;
      default: EWISE_EXPECTS(false, "sort: values of ", val_bytes, " bytes");
    }
  };
  if (wide_keys) with_val(std::uint64_t{});
  else with_val(std::uint32_t{});
}

/// The radix sort of (keys[0], vals[0]) into the double buffers; `temp == nullptr` asks for the
/// temporary size. Returns which buffer holds the result (CUB flips keys and values together).
template <class Key, class Val>
int sort_pairs(void* temp, std::size_t& temp_bytes, void* keys0, void* keys1, void* vals0,
               void* vals1, std::int64_t n, int end_bit, cudaStream_t stream) {
  cub::DoubleBuffer<Key> keys(static_cast<Key*>(keys0), static_cast<Key*>(keys1));
  cub::DoubleBuffer<Val> vals(static_cast<Val*>(vals0), static_cast<Val*>(vals1));
  EWISE_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, keys, vals, n, 0, end_bit, stream));
  return keys.selector;
}

}  // namespace

SortScratch::SortScratch(std::int64_t n, bool wide_keys, std::size_t val_bytes, int end_bit,
                         cudaStream_t stream, std::size_t extra_bytes)
    : n_(n), wide_keys_(wide_keys), val_bytes_(val_bytes), end_bit_(end_bit), stream_(stream) {
  std::size_t temp_bytes = 0;
  with_widths(wide_keys, val_bytes, [&](auto k, auto v) {
    sort_pairs<decltype(k), decltype(v)>(nullptr, temp_bytes, nullptr, nullptr, nullptr, nullptr, n,
                                         end_bit, stream);
  });
  const auto kb = static_cast<std::size_t>(n) * (wide_keys ? 8 : 4);
  const auto vb = static_cast<std::size_t>(n) * val_bytes;
  ws_ = Workspace({kb, kb, vb, vb, temp_bytes, extra_bytes}, stream);
}

void SortScratch::sort() {
  std::size_t temp_bytes = ws_.bytes(kTemp);
  with_widths(wide_keys_, val_bytes_, [&](auto k, auto v) {
    selector_ = sort_pairs<decltype(k), decltype(v)>(ws_.get(kTemp), temp_bytes, ws_.get(kKeys),
                                                     ws_.get(kKeys + 1), ws_.get(kVals),
                                                     ws_.get(kVals + 1), n_, end_bit_, stream_);
  });
}

namespace {

/// keys[i] = the key of entry i, and when `vals` is set vals_copy[i] = vals[i]; runs `check`.
template <class W>
__global__ void make_keys_kernel(KeySeq in, std::int64_t n, WordArray keys, const W* vals,
                                 W* vals_copy, EntryCheck check) {
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    check(i);
    keys.set(i, in[i]);
    if (vals) vals_copy[i] = vals[i];
  }
}

}  // namespace

EntrySeq storage_order(const CooView& m) {
  EntrySeq s;
  s.keys = implicit_keys(m);
  s.n = m.desc.nnz;
  s.unique = s.sorted = m.desc.canonical || s.n == 0;
  s.rows = index_array(m.rows, m.desc.index);
  s.cols = index_array(m.cols, m.desc.index);
  s.vals = m.vals;
  return s;
}

SortedSeq sort_entries(const CooView& m, const EntryCheck& check, cudaStream_t stream) {
  SortedSeq s{{}, storage_order(m)};
  const std::int64_t n = s.seq.n;
  if (s.seq.unique) return s;
  const bool wk = wide_keys(m.desc);
  SortScratch sort(n, wk, dtype_size(m.desc.dtype), key_bits(m.desc), stream);
  with_word(m.desc.dtype, [&](auto word) {
    using W = decltype(word);
    detail::launch("sparse make_keys", make_keys_kernel<W>, dim3(blocks_for(n)), dim3(kBlock), 0,
                   stream, s.seq.keys, n, WordArray{sort.keys_in(), wk},
                   static_cast<const W*>(m.vals), static_cast<W*>(sort.vals_in()), check);
  });
  sort.sort();
  s.seq.keys.keys = {sort.keys(), wk};
  s.seq.rows = s.seq.cols = IndexArray{};
  s.seq.vals = sort.vals();
  s.seq.sorted = true;
  s.ws = std::move(sort).release();
  return s;
}

SortedSeq storage_keys(const CooView& m, cudaStream_t stream) {
  SortedSeq s{{}, storage_order(m)};
  const std::int64_t n = s.seq.n;
  if (s.seq.unique) return s;
  const bool wk = wide_keys(m.desc);
  s.ws = Workspace({static_cast<std::size_t>(n) * (wk ? 8 : 4)}, stream);
  detail::launch("sparse make_keys", make_keys_kernel<std::uint32_t>, dim3(blocks_for(n)),
                 dim3(kBlock), 0, stream, s.seq.keys, n, WordArray{s.ws.get(0), wk}, nullptr,
                 nullptr, EntryCheck{});
  s.seq.keys.keys = {s.ws.get(0), wk};
  return s;
}

}  // namespace ewise::sparse_detail
