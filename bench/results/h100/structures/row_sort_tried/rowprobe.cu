// Probe (not part of the project): COO*COO and COO+COO of two unsorted matrices whose rows are
// stored in order (columns random within a row), for the row-sort thresholds.
//   rowprobe n:L [n:L ...]   (n entries an operand, L mean entries a row; 2^20 columns)
#include <thrust/device_vector.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "ewise/ewise.hpp"
using namespace ewise;

__host__ __device__ inline unsigned long long mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull; return x ^ (x >> 31);
}
struct Mat { thrust::device_vector<int> r, c; thrust::device_vector<float> v; long long nr, nc; };
Mat draw(long long n, long long nr, long long nc, unsigned long long seed) {
  Mat m; m.nr = nr; m.nc = nc; m.r.resize(n); m.c.resize(n); m.v.resize(n);
  thrust::transform(thrust::counting_iterator<long long>(0), thrust::counting_iterator<long long>(n), m.r.begin(),
                    [=] __device__(long long i) { return (int)(mix(i * 3 + seed) % (unsigned long long)nr); });
  thrust::sort(m.r.begin(), m.r.end());
  thrust::transform(thrust::counting_iterator<long long>(0), thrust::counting_iterator<long long>(n), m.c.begin(),
                    [=] __device__(long long i) { return (int)(mix(i * 5 + seed * 7) % (unsigned long long)nc); });
  thrust::transform(thrust::counting_iterator<long long>(0), thrust::counting_iterator<long long>(n), m.v.begin(),
                    [=] __device__(long long i) { return 0.5f + (float)(mix(i + seed) % 1000) * 1e-3f; });
  return m;
}
CooView view(const Mat& m) {
  long long n = (long long)m.r.size();
  ConstTensorView r{thrust::raw_pointer_cast(m.r.data()), TensorDesc::contiguous(DType::i32, {n}), Memory::device};
  ConstTensorView c{thrust::raw_pointer_cast(m.c.data()), TensorDesc::contiguous(DType::i32, {n}), Memory::device};
  ConstTensorView v{thrust::raw_pointer_cast(m.v.data()), TensorDesc::contiguous(DType::f32, {n}), Memory::device};
  return coo_view(r, c, v, m.nr, m.nc, false);
}
int main(int argc, char** argv) {
  cudaStream_t s; cudaStreamCreate(&s);
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int k = 1; k < argc; ++k) {
    long long n = 0, L = 0; sscanf(argv[k], "%lld:%lld", &n, &L);
    const long long nr = std::max(1ll, n / L), nc = 1 << 20;
    Mat a = draw(n, nr, nc, 11), b = draw(n, nr, nc, 12);
    cudaDeviceSynchronize();
    const int reps = n <= (1 << 18) ? 200 : 30;
    printf("n %lld L %lld rows %lld", n, L, nr);
    for (int op = 0; op < 2; ++op) {
      auto call = [&] { DeviceCoo o = op == 0 ? multiply(view(a), view(b), {}, s) : combine(BinaryOp::add, view(a), view(b), {}, s); };
      for (int i = 0; i < 3; ++i) call();
      std::vector<double> t, w;
      for (int i = 0; i < reps; ++i) {
        auto h0 = std::chrono::steady_clock::now();
        cudaEventRecord(e0, s); call(); cudaEventRecord(e1, s); cudaEventSynchronize(e1);
        w.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - h0).count());
        float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms);
      }
      std::sort(t.begin(), t.end()); std::sort(w.begin(), w.end());
      printf("  %s %.4f (wall %.4f)", op == 0 ? "mul" : "add", t[t.size() / 2], w[w.size() / 2]);
    }
    printf("\n");
    fflush(stdout);
  }
  printf("done %s\n", cudaGetErrorString(cudaGetLastError()));
}
