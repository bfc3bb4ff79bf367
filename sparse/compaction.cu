// sparse/compaction.cu — Compaction, SinglePassTiles and RunHeads (compaction.cuh).
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <utility>

#include "compaction.cuh"
#include "ewise/error.hpp"

namespace ewise::sparse_detail {

// ---- count → scan → write ------------------------------------------------------------------

namespace {

std::size_t exclusive_sum_temp_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  EWISE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, static_cast<const std::int64_t*>(nullptr),
                                                 static_cast<std::int64_t*>(nullptr), n));
  return bytes;
}

std::vector<std::size_t> compaction_pieces(std::int64_t tiles, const std::vector<std::size_t>& extra) {
  const auto words = static_cast<std::size_t>(tiles + 1) * sizeof(std::int64_t);
  std::vector<std::size_t> pieces{words, words, exclusive_sum_temp_bytes(tiles + 1)};
  pieces.insert(pieces.end(), extra.begin(), extra.end());
  return pieces;
}

}  // namespace

Compaction::Compaction(std::int64_t n, cudaStream_t stream, const std::vector<std::size_t>& extra)
    : n_(n), tiles_(tiles_for(n)), stream_(stream), ws_(compaction_pieces(tiles_, extra), stream) {
  EWISE_EXPECTS(n > 0, "sparse compaction: no entries");
}

void Compaction::scan(Status& status, int slot) {
  auto* offsets = ws_.get<std::int64_t>(1);
  std::size_t temp_bytes = ws_.bytes(2);
  EWISE_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(ws_.get(2), temp_bytes, counts(), offsets,
                                                 tiles_ + 1, stream_));
  EWISE_CUDA_CHECK(cudaMemcpyAsync(status.total_slot(slot), offsets + tiles_, sizeof(std::int64_t),
                                   cudaMemcpyDeviceToDevice, stream_));
}

std::int64_t Compaction::scan_total(Status& status, int slot) {
  scan(status, slot);
  status.read();
  return status.total(slot);
}

// ---- single pass ---------------------------------------------------------------------------

std::size_t SinglePassTiles::bytes(std::int64_t tiles) {
  std::size_t state_bytes = 0;
  EWISE_CUDA_CHECK(State::AllocationSize(static_cast<int>(tiles), state_bytes));
  return (state_bytes + 15) / 16 * 16 + sizeof(unsigned long long);  // the ticket after them
}

SinglePassTiles::SinglePassTiles(void* memory, std::int64_t n_tiles) : tiles(n_tiles) {
  std::size_t state_bytes = 0;
  EWISE_CUDA_CHECK(State::AllocationSize(static_cast<int>(tiles), state_bytes));
  EWISE_CUDA_CHECK(state.Init(static_cast<int>(tiles), memory, state_bytes));
  ticket = reinterpret_cast<unsigned long long*>(static_cast<std::byte*>(memory) +
                                                 (state_bytes + 15) / 16 * 16);
}

namespace {

__global__ void reset_tiles_kernel(SinglePassTiles tiles) { tiles.reset(); }

}  // namespace

void SinglePassTiles::launch_reset(cudaStream_t stream) const {
  detail::launch("sparse reset_tiles", reset_tiles_kernel,
                 dim3(static_cast<unsigned>((tiles + kBlock - 1) / kBlock)), dim3(kBlock), 0,
                 stream, *this);
}

// ---- run heads -----------------------------------------------------------------------------

namespace {

struct IsRunHead {
  KeySeq keys;
  __device__ bool operator()(std::int64_t j) const { return j == 0 || keys[j] != keys[j - 1]; }
};

/// The DeviceSelect of RunHeads; `temp == nullptr` asks for the temporary size.
void select_run_heads(void* temp, std::size_t& temp_bytes, const KeySeq& keys, std::int64_t n,
                      std::int64_t* heads, std::int64_t* count, cudaStream_t stream) {
  EWISE_CUDA_CHECK(cub::DeviceSelect::If(temp, temp_bytes, thrust::counting_iterator<std::int64_t>(0),
                                         heads, count, n, IsRunHead{keys}, stream));
}

}  // namespace

RunHeads::RunHeads(const KeySeq& keys, std::int64_t n, std::int64_t* count, cudaStream_t stream) {
  std::size_t temp_bytes = 0;
  select_run_heads(nullptr, temp_bytes, keys, n, nullptr, nullptr, stream);
  ws_ = Workspace({static_cast<std::size_t>(n) * sizeof(std::int64_t), temp_bytes}, stream);
  select_run_heads(ws_.get(1), temp_bytes, keys, n, ws_.get<std::int64_t>(0), count, stream);
}

}  // namespace ewise::sparse_detail
