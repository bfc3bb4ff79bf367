// Experiment: the rank-5 mix (16,1,32,1,49)+(1,24,1,32,49) by a row pass against ewise today.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>
#include "ewise/dense.hpp"
#include "ewise/detail/fast_divmod.hpp"
using FD = ewise::detail::FastDivmod<unsigned>;
#define CK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(err_)); exit(1);} } while (0)

struct Map { FD ext[4]; int sa[4]; int sb[4]; FD len; };

__device__ __forceinline__ float add(float x, float y) { return x + y; }
__device__ __forceinline__ __nv_bfloat16 add(__nv_bfloat16 x, __nv_bfloat16 y) { return __hadd(x, y); }

// A warp takes 32 rows at a time: lane l finds row r0+l's offsets once (a divmod chain), then
// the warp runs each row with lanes along it (x = lane, lane + 32, ...).
template <class T, int R>
__global__ void __launch_bounds__(256) rowpass(T* __restrict__ out, const T* __restrict__ a,
                                               const T* __restrict__ b, long rows, int L, Map m) {
  const int lane = threadIdx.x & 31;
  const long warp = (long(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long nwarps = (long(gridDim.x) * blockDim.x) >> 5;
  for (long r0 = warp * 32; r0 < rows; r0 += nwarps * 32) {
    unsigned q = unsigned(min(r0 + lane, rows - 1));
    int oa = 0, ob = 0;
#pragma unroll
    for (int d = 0; d < 4; ++d) {
      unsigned qq, c;
      m.ext[d].divmod(q, qq, c);
      q = qq;
      oa += int(c) * m.sa[d];
      ob += int(c) * m.sb[d];
    }
    const int nr = int(min(32L, rows - r0));
    for (int j0 = 0; j0 < nr; j0 += R) {
      T va[R][2], vb[R][2];
      int pa[R], pb[R];
#pragma unroll
      for (int u = 0; u < R; ++u) {
        pa[u] = __shfl_sync(~0u, oa, j0 + u);
        pb[u] = __shfl_sync(~0u, ob, j0 + u);
      }
#pragma unroll
      for (int u = 0; u < R; ++u)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int x = lane + 32 * h;
          if (j0 + u < nr && x < L) { va[u][h] = a[pa[u] + x]; vb[u][h] = b[pb[u] + x]; }
        }
#pragma unroll
      for (int u = 0; u < R; ++u) {
        T* o = out + (r0 + j0 + u) * L;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int x = lane + 32 * h;
          if (j0 + u < nr && x < L) o[x] = add(va[u][h], vb[u][h]);
        }
      }
    }
  }
}


// A warp takes chunks of C = 256 * U elements (16-byte aligned): each row of the chunk with lanes
// along it, results into the warp's shared buffer (2-byte stores there), then the chunk stored as
// 16-byte vectors.
template <class T, int U>
__global__ void __launch_bounds__(256) staged(T* __restrict__ out, const T* __restrict__ a,
                                              const T* __restrict__ b, long n, int L, Map m) {
  constexpr int V = 16 / sizeof(T);
  constexpr int C = 32 * V * U;
  __shared__ __align__(16) T buf[8][C];
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  T* sb = buf[wib];
  const long warp = (long(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long nwarps = (long(gridDim.x) * blockDim.x) >> 5;
  const long rows = n / L;
  for (long e0 = warp * C; e0 < n; e0 += nwarps * C) {
    const long rf = m.len.div(unsigned(e0));
    unsigned q = unsigned(min(rf + lane, rows - 1));
    int oa = 0, ob = 0;
#pragma unroll
    for (int d = 0; d < 4; ++d) {
      unsigned qq, c;
      m.ext[d].divmod(q, qq, c);
      q = qq;
      oa += int(c) * m.sa[d];
      ob += int(c) * m.sb[d];
    }
    const long e1 = min(e0 + C, n);
    const int nr = int(m.len.div(unsigned(e1 - 1)) - rf + 1);
    for (int j = 0; j < nr; ++j) {
      const int pa = __shfl_sync(~0u, oa, j), pb = __shfl_sync(~0u, ob, j);
      const long rs = (rf + j) * L;  // the row's first element
      const int xs = int(max(0L, e0 - rs)), xe = int(min(long(L), e1 - rs));
      T* dst = sb + (rs - e0);
      for (int x = xs + lane; x < xe; x += 32) dst[x] = add(a[pa + x], b[pb + x]);
    }
    __syncwarp();
    using P = int4;
    const P* src = reinterpret_cast<const P*>(sb);
    P* o = reinterpret_cast<P*>(out + e0);
    const int nv = int((e1 - e0) / V);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = lane + 32 * u;
      if (v < nv) o[v] = src[v];
    }
    __syncwarp();
  }
}


// A warp takes chunks of C = 256 * U elements (16-byte aligned); lane l takes elements
// e0 + l + 32k (k < 8U), each element's row stepped from the last (rows of L >= 32: at most one
// row end a step), the row's offsets shuffled from the warp's row table; every load first, then
// the results into the warp's shared buffer, then the chunk stored as 16-byte vectors.
template <class T, int U>
__global__ void __launch_bounds__(256) flat(T* __restrict__ out, const T* __restrict__ a,
                                            const T* __restrict__ b, long n, int L, Map m) {
  constexpr int V = 16 / sizeof(T);
  constexpr int C = 32 * V * U, K = V * U;
  __shared__ __align__(16) T buf[8][C];
  const int lane = threadIdx.x & 31, wib = threadIdx.x >> 5;
  T* sb = buf[wib];
  const long warp = (long(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const long nwarps = (long(gridDim.x) * blockDim.x) >> 5;
  const long rows = n / L;
  for (long e0 = warp * C; e0 < n; e0 += nwarps * C) {
    unsigned rf, x0;
    m.len.divmod(unsigned(e0), rf, x0);
    unsigned q = unsigned(min(long(rf) + lane, rows - 1));
    int oa = 0, ob = 0;
#pragma unroll
    for (int d = 0; d < 4; ++d) {
      unsigned qq, c;
      m.ext[d].divmod(q, qq, c);
      q = qq;
      oa += int(c) * m.sa[d];
      ob += int(c) * m.sb[d];
    }
    // lane's first element: x = x0 + lane, row 0 of the table (+1 past the row's end)
    int x = int(x0) + lane, j = 0;
    if (x >= L) { x -= L; j = 1; }
    T va[K], vb[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
      const int pa = __shfl_sync(~0u, oa, j), pb = __shfl_sync(~0u, ob, j);
      if (e0 + lane + 32 * k < n) { va[k] = a[pa + x]; vb[k] = b[pb + x]; }
      x += 32;
      if (x >= L) { x -= L; ++j; }
    }
#pragma unroll
    for (int k = 0; k < K; ++k) sb[lane + 32 * k] = add(va[k], vb[k]);
    __syncwarp();
    using P = int4;
    const P* src = reinterpret_cast<const P*>(sb);
    P* o = reinterpret_cast<P*>(out + e0);
    const int nv = int((min(e0 + C, n) - e0) / V);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int v = lane + 32 * u;
      if (v < nv) o[v] = src[v];
    }
    __syncwarp();
  }
}

template <class F> float time_ms(F f, int reps = 20, int samples = 15) {
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  for (int i = 0; i < 5; ++i) f();
  std::vector<float> t;
  for (int k = 0; k < samples; ++k) {
    cudaEventRecord(s); for (int i = 0; i < reps; ++i) f(); cudaEventRecord(e);
    CK(cudaEventSynchronize(e)); float ms; cudaEventElapsedTime(&ms, s, e); t.push_back(ms / reps);
  }
  std::sort(t.begin(), t.end()); return t[t.size() / 2];
}

template <class T> void run(ewise::DType dt, const char* name) {
  const int I = 16, J = 24, K = 32, Lk = 32, L = 49;
  const long n = long(I) * J * K * Lk * L, na = long(I) * K * L, nb = long(J) * Lk * L;
  const long rows = n / L;
  T *a, *b, *o1, *o2;
  CK(cudaMalloc(&a, na * sizeof(T))); CK(cudaMalloc(&b, nb * sizeof(T)));
  CK(cudaMalloc(&o1, n * sizeof(T))); CK(cudaMalloc(&o2, n * sizeof(T)));
  std::mt19937 g(7); std::uniform_real_distribution<float> u(-2, 2);
  std::vector<T> ha(na), hb(nb);
  for (auto& v : ha) v = T(u(g)); for (auto& v : hb) v = T(u(g));
  CK(cudaMemcpy(a, ha.data(), na * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(b, hb.data(), nb * sizeof(T), cudaMemcpyHostToDevice));
  using namespace ewise;
  ConstTensorView va{a, TensorDesc::contiguous(dt, Dims{I, 1, K, 1, L}), Memory::device};
  ConstTensorView vb{b, TensorDesc::contiguous(dt, Dims{1, J, 1, Lk, L}), Memory::device};
  TensorView vo{o1, TensorDesc::contiguous(dt, Dims{I, J, K, Lk, L}), Memory::device};
  Map m{{FD(Lk), FD(K), FD(J), FD(I)}, {0, L, 0, K * L}, {L, 0, Lk * L, 0}, FD(L)};
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const double bytes = double(n) * sizeof(T);
  auto report = [&](const char* what, float ms, double by) {
    printf("%-5s %-28s %8.4f ms  %7.1f GB/s\n", name, what, ms, by / ms / 1e6);
  };
  report("ewise binary", time_ms([&] { binary(BinaryOp::add, va, vb, vo); }), bytes);
  report("memset (fill)", time_ms([&] { cudaMemsetAsync(o2, 0, n * sizeof(T)); }), bytes);
  report("copy (read+write)", time_ms([&] { cudaMemcpyAsync(o2, o1, n * sizeof(T), cudaMemcpyDeviceToDevice); }), 2 * bytes);
  for (int bpsm : {8, 16}) {
    for (int R : {2}) {
      const int blocks = sms * bpsm;
      auto k = [&] {
        if (R == 1) rowpass<T, 1><<<blocks, 256>>>(o2, a, b, rows, L, m);
        if (R == 2) rowpass<T, 2><<<blocks, 256>>>(o2, a, b, rows, L, m);
        if (R == 4) rowpass<T, 4><<<blocks, 256>>>(o2, a, b, rows, L, m);
      };
      CK(cudaMemset(o2, 0xff, n * sizeof(T))); k(); CK(cudaDeviceSynchronize());
      const bool same = [&] {
        std::vector<T> h1(n), h2(n);
        cudaMemcpy(h1.data(), o1, n * sizeof(T), cudaMemcpyDeviceToHost);
        cudaMemcpy(h2.data(), o2, n * sizeof(T), cudaMemcpyDeviceToHost);
        return std::memcmp(h1.data(), h2.data(), n * sizeof(T)) == 0; }();
      char label[64]; snprintf(label, sizeof label, "rowpass R=%d blocks/SM=%d %s", R, bpsm, same ? "" : "DIFF");
      report(label, time_ms(k), bytes);
    }
  }
  for (int bpsm : {4, 8, 16}) {
    for (int U : {1, 2, 4}) {
      const int blocks = sms * bpsm;
      auto k = [&] {
        if (U == 1) flat<T, 1><<<blocks, 256>>>(o2, a, b, n, L, m);
        if (U == 2) flat<T, 2><<<blocks, 256>>>(o2, a, b, n, L, m);
        if (U == 4) flat<T, 4><<<blocks, 256>>>(o2, a, b, n, L, m);
      };
      CK(cudaMemset(o2, 0xff, n * sizeof(T))); k(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
      const bool same = [&] {
        std::vector<T> h1(n), h2(n);
        cudaMemcpy(h1.data(), o1, n * sizeof(T), cudaMemcpyDeviceToHost);
        cudaMemcpy(h2.data(), o2, n * sizeof(T), cudaMemcpyDeviceToHost);
        return std::memcmp(h1.data(), h2.data(), n * sizeof(T)) == 0; }();
      char label[64]; snprintf(label, sizeof label, "flat U=%d blocks/SM=%d %s", U, bpsm, same ? "" : "DIFF");
      report(label, time_ms(k), bytes);
    }
  }
  cudaFree(a); cudaFree(b); cudaFree(o1); cudaFree(o2);
}

int main(int argc, char** argv) {
  const bool bf16_only = argc > 1 && std::strcmp(argv[1], "bf16") == 0;
  if (!bf16_only) run<float>(ewise::DType::f32, "f32");
  run<__nv_bfloat16>(ewise::DType::bf16, "bf16");
}
