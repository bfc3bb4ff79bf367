// examples/sparse_pipeline.cpp — a sparse-dense pipeline on COO matrices:
//   scaled = features ⊙ weights    features: COO (samples, vocab) of counts,
//                                  weights: a dense row vector (vocab,) broadcast over rows
//   kept   = scaled ⊙ mask         mask: COO (samples, vocab): only coordinates stored in both
// Results are canonical COO (sorted by row, then column; no duplicates). Runs on the GPU, or on
// host COO views (the CPU reference backend) when there is none.
#include <cstdio>
#include <cstring>
#include <vector>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"

namespace {

constexpr std::int64_t kSamples = 500, kVocab = 2000;

bool has_feature(std::int64_t i, std::int64_t j) { return (i * 7 + j * 3) % 10 < 2; }
float count(std::int64_t i, std::int64_t j) { return static_cast<float>(1 + (i + j) % 5); }
bool in_mask(std::int64_t i, std::int64_t j) { return (i + 2 * j) % 4 == 0; }
float weight(std::int64_t j) { return 0.5f + static_cast<float>(j % 9) * 0.25f; }

/// A host COO matrix of the coordinates where `present` holds, in row-major order (so canonical).
template <class Present, class Value>
ewise::HostCoo make_coo(Present present, Value value) {
  std::vector<std::int32_t> rows, cols;
  std::vector<float> vals;
  for (std::int64_t i = 0; i < kSamples; ++i)
    for (std::int64_t j = 0; j < kVocab; ++j)
      if (present(i, j)) {
        rows.push_back(static_cast<std::int32_t>(i));
        cols.push_back(static_cast<std::int32_t>(j));
        vals.push_back(value(i, j));
      }
  ewise::CooDesc d;
  d.nrows = kSamples;
  d.ncols = kVocab;
  d.nnz = static_cast<std::int64_t>(vals.size());
  d.index = ewise::IndexType::i32;
  d.dtype = ewise::DType::f32;
  d.canonical = true;  // row-major order without duplicates: we vouch for it
  ewise::HostCoo m(d);
  std::memcpy(m.rows(), rows.data(), rows.size() * sizeof(std::int32_t));
  std::memcpy(m.cols(), cols.data(), cols.size() * sizeof(std::int32_t));
  std::memcpy(m.vals(), vals.data(), vals.size() * sizeof(float));
  return m;
}

}  // namespace

int main() try {
  const ewise::HostCoo features = make_coo(has_feature, count);
  const ewise::HostCoo mask = make_coo(in_mask, [](std::int64_t, std::int64_t) { return 1.0f; });
  ewise::HostTensor weights(ewise::DType::f32, {kVocab});
  for (std::int64_t j = 0; j < kVocab; ++j) weights.data_as<float>()[j] = weight(j);

  ewise::HostCoo kept;
  const bool gpu = ewise::gpu_available();
  if (gpu) {
    cudaStream_t stream = nullptr;
    EWISE_CUDA_CHECK(cudaStreamCreate(&stream));
    {
      const ewise::DeviceCoo f = ewise::to_device(features.view(), stream);
      const ewise::DeviceCoo m = ewise::to_device(mask.view(), stream);
      const ewise::DeviceTensor w = ewise::to_device(weights.view(), stream);
      const ewise::DeviceCoo scaled = ewise::multiply(f.view(), w.view(), {}, stream);
      const ewise::DeviceCoo result = ewise::multiply(scaled.view(), m.view(), {}, stream);
      kept = ewise::to_host(result.view(), stream);
    }
    EWISE_CUDA_CHECK(cudaStreamDestroy(stream));
  } else {
    std::printf("no GPU (%s): running on the CPU reference backend\n",
                ewise::gpu_unavailable_reason().c_str());
    const ewise::HostCoo scaled = ewise::multiply<ewise::HostCoo>(features.view(), weights.view());
    kept = ewise::multiply<ewise::HostCoo>(scaled.view(), mask.view());
  }

  // Verify: one entry per coordinate present in both, in row-major order, value count * weight.
  std::int64_t k = 0;
  const auto* rows = static_cast<const std::int32_t*>(kept.rows());
  const auto* cols = static_cast<const std::int32_t*>(kept.cols());
  const auto* vals = static_cast<const float*>(kept.vals());
  for (std::int64_t i = 0; i < kSamples; ++i)
    for (std::int64_t j = 0; j < kVocab; ++j) {
      if (!has_feature(i, j) || !in_mask(i, j)) continue;
      if (k >= kept.nnz() || rows[k] != i || cols[k] != j || vals[k] != count(i, j) * weight(j)) {
        std::fprintf(stderr, "entry %lld wrong: expected (%lld,%lld)\n", static_cast<long long>(k),
                     static_cast<long long>(i), static_cast<long long>(j));
        return 1;
      }
      ++k;
    }
  if (k != kept.nnz() || !kept.desc().canonical) {
    std::fprintf(stderr, "expected %lld canonical entries, got %lld\n", static_cast<long long>(k),
                 static_cast<long long>(kept.nnz()));
    return 1;
  }
  std::printf("features (%lld,%lld) nnz %lld * weights, * mask nnz %lld -> nnz %lld on the %s: ok\n",
              static_cast<long long>(kSamples), static_cast<long long>(kVocab),
              static_cast<long long>(features.nnz()), static_cast<long long>(mask.nnz()),
              static_cast<long long>(kept.nnz()), gpu ? "GPU" : "CPU");
  return 0;
} catch (const ewise::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 1;
}
