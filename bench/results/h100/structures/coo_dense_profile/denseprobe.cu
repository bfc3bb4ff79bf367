// Probe (not part of the project): canonical COO ⊙ COO and COO + COO through ewise on two
// structures drawn here, for Nsight Compute and for A/B of tile policies.
//   spprobe mask|graph [reps]
#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/merge.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/unique.h>
#include <cstdio>
#include <cstring>
#include <vector>
#include <algorithm>
#include "ewise/ewise.hpp"
#include <nvtx3/nvToolsExt.h>
#include <thrust/shuffle.h>
#include <thrust/random.h>
using namespace ewise;

__host__ __device__ inline unsigned long long mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull; return x ^ (x >> 31);
}
struct Keep { unsigned long long seed; unsigned permille;
  __device__ bool operator()(long long c) const { return mix(c ^ seed) % 1000 < permille; } };
struct Rnd { unsigned long long seed, mask;
  __device__ long long operator()(long long i) const { return (long long)(mix(i * 7919 + seed) & mask); } };

struct Mat { thrust::device_vector<int> r, c; thrust::device_vector<float> v; long long nr, nc; bool canonical = true; };
Mat from_keys(const thrust::device_vector<long long>& k, long long nr, long long nc) {
  Mat m; m.nr = nr; m.nc = nc; size_t n = k.size();
  m.r.resize(n); m.c.resize(n); m.v.resize(n);
  thrust::transform(k.begin(), k.end(), m.r.begin(), [nc] __device__(long long x) { return (int)(x / nc); });
  thrust::transform(k.begin(), k.end(), m.c.begin(), [nc] __device__(long long x) { return (int)(x % nc); });
  thrust::transform(k.begin(), k.end(), m.v.begin(), [] __device__(long long x) { return 0.5f + (float)(mix(x) % 1000) * 1e-3f; });
  return m;
}
CooView view(const Mat& m) {
  long long n = (long long)m.r.size();
  ConstTensorView r{thrust::raw_pointer_cast(m.r.data()), TensorDesc::contiguous(DType::i32, {n}), Memory::device};
  ConstTensorView c{thrust::raw_pointer_cast(m.c.data()), TensorDesc::contiguous(DType::i32, {n}), Memory::device};
  ConstTensorView v{thrust::raw_pointer_cast(m.v.data()), TensorDesc::contiguous(DType::f32, {n}), Memory::device};
  return coo_view(r, c, v, m.nr, m.nc, m.canonical);
}

int main(int argc, char** argv) {
  // COO (x) dense on the canonical 10% mask: full dense weight and row vector, allocating and
  // values-only, checked and unchecked.
  const bool wide = argc > 1 && !strcmp(argv[1], "wide");
  long long nr = wide ? 4096 : 8192, nc = wide ? (1ll << 24) : 12288, cells = nr * nc;
  thrust::device_vector<long long> ka;
  if (wide) {  // 4096 x 2^24, 12M uniform entries (the wide kind's size; its row vector is 64 MiB)
    ka.resize(12000000);
    thrust::transform(thrust::counting_iterator<long long>(0), thrust::counting_iterator<long long>(12000000), ka.begin(), Rnd{5, (1ll << 36) - 1});
    thrust::sort(ka.begin(), ka.end()); ka.erase(thrust::unique(ka.begin(), ka.end()), ka.end());
  } else {
    ka.resize(cells / 9);
    auto e = thrust::copy_if(thrust::counting_iterator<long long>(0), thrust::counting_iterator<long long>(cells), ka.begin(), Keep{1, 100});
    ka.resize(e - ka.begin());
  }
  Mat a = from_keys(ka, nr, nc);
  thrust::device_vector<float> full(wide ? 1 : cells, 1.5f), row(nc, 0.5f), out(ka.size());
  ConstTensorView dfull{thrust::raw_pointer_cast(full.data()), TensorDesc::contiguous(DType::f32, {nr, nc}), Memory::device};
  ConstTensorView drow{thrust::raw_pointer_cast(row.data()), TensorDesc::contiguous(DType::f32, {1, nc}), Memory::device};
  TensorView dout{thrust::raw_pointer_cast(out.data()), TensorDesc::contiguous(DType::f32, {(long long)ka.size()}), Memory::device};
  cudaStream_t s; cudaStreamCreate(&s);
  SparseOptions unchecked; unchecked.validate_indices = false;
  const char* names[] = {"full", "row", "values_full", "values_row", "values_full_unchecked"};
  for (int c = 0; c < 5; ++c) {
    if (wide && c != 1 && c != 3) continue;
    auto call = [&] {
      if (c == 0) { DeviceCoo o = multiply(view(a), dfull, {}, s); }
      else if (c == 1) { DeviceCoo o = multiply(view(a), drow, {}, s); }
      else if (c == 2) multiply_values(view(a), dfull, dout, {}, s);
      else if (c == 3) multiply_values(view(a), drow, dout, {}, s);
      else multiply_values(view(a), dfull, dout, unchecked, s);
    };
    for (int i = 0; i < 3; ++i) call();
    cudaStreamSynchronize(s);
    nvtxRangePushA(names[c]); call(); cudaStreamSynchronize(s); nvtxRangePop();
  }
  printf("%s nnz", wide ? "wide" : "mask"); printf(" %zu done %s\n", ka.size(), cudaGetErrorString(cudaGetLastError())); return 0;
  printf("mask nnz %zu done %s\n", ka.size(), cudaGetErrorString(cudaGetLastError()));
}
