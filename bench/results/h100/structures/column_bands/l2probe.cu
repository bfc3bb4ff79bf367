// Probe: COO (x) row-vector / full dense entries pass with cache-hint variants.
//  l2probe  -> prints a table: shape, variant, median us, agreement with variant 0
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <thrust/device_vector.h>
#include <thrust/sort.h>
#include <thrust/unique.h>
#include <thrust/transform.h>
#include <thrust/copy.h>
#include <thrust/equal.h>
#include <thrust/iterator/counting_iterator.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)

__host__ __device__ inline unsigned long long mix(unsigned long long x) {
  x += 0x9e3779b97f4a7c15ull; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull; return x ^ (x >> 31);
}
constexpr int kBlock = 256;

__device__ __forceinline__ float ld_last(const float* p, unsigned long long pol) {
  float v; asm volatile("ld.global.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(pol)); return v;
}
__device__ __forceinline__ float ld_na(const float* p) {
  float v; asm volatile("ld.global.L1::no_allocate.f32 %0, [%1];" : "=f"(v) : "l"(p)); return v;
}
__device__ __forceinline__ float ld_last_na(const float* p, unsigned long long pol) {
  float v; asm volatile("ld.global.L1::no_allocate.L2::cache_hint.f32 %0, [%1], %2;" : "=f"(v) : "l"(p), "l"(pol)); return v;
}

// V: 0 plain; 1 streaming (.cs) entries + .cs stores; 2 = 1 + gather evict_last policy;
//    3 = 1 + gather L1::no_allocate; 4 = .cs stores only; 5 = gather evict_last only; 6 = 1 + evict_last + no_allocate
//    7 = 1 + gather evict_last fraction 0.5
template <int V>
__global__ void __launch_bounds__(kBlock) entries(const int* rows, const int* cols, const float* vals, long long n,
    long long nrows, long long ncols, unsigned long long* check, const float* d, long long rs, long long cs,
    int* orow, int* ocol, float* oval) {
  const unsigned lane = threadIdx.x & 31;
  unsigned long long pol = 0;
  if (V == 2 || V == 5 || V == 6) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
  if (V == 7) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 0.5;" : "=l"(pol));
  constexpr bool S = V == 1 || V == 2 || V == 3 || V == 6 || V == 7;
  for (long long i0 = (long long)blockIdx.x * kBlock; i0 < n; i0 += (long long)gridDim.x * kBlock) {
    const long long i = i0 + threadIdx.x;
    const bool live = i < n;
    int r = 0, c = 0, pr = 0, pc = 0; float v = 0;
    if (live) {
      if (S) { r = __ldcs(rows + i); c = __ldcs(cols + i); v = __ldcs(vals + i); }
      else { r = rows[i]; c = cols[i]; v = vals[i]; }
      if (check && i > 0) { pr = rows[i - 1]; pc = cols[i - 1]; }
    }
    const bool in = r >= 0 && r < nrows && c >= 0 && c < ncols;
    if (check) {
      const bool after = pr < r || (pr == r && pc < c);
      const unsigned out = __ballot_sync(0xffffffffu, live && !in);
      const unsigned order = __ballot_sync(0xffffffffu, live && in && i > 0 && !after);
      if (out && lane == (unsigned)(__ffs(out) - 1)) atomicMin(check, (unsigned long long)i);
      if (order && lane == (unsigned)(__ffs(order) - 1)) atomicMin(check + 1, (unsigned long long)i);
    }
    if (!live) continue;
    float x = 0;
    if (in) {
      const float* p = d + r * rs + c * cs;
      if (V == 2 || V == 5 || V == 7) x = ld_last(p, pol);
      else if (V == 3) x = ld_na(p);
      else if (V == 6) x = ld_last_na(p, pol);
      else x = *p;
    }
    const float o = v * x;
    const bool st = V != 0 && V != 5;
    if (orow) { if (st) { __stcs(orow + i, r); __stcs(ocol + i, c); } else { orow[i] = r; ocol[i] = c; } }
    if (st) __stcs(oval + i, o); else oval[i] = o;
  }
}

// Banded: block (band, chunk) handles the entries of its storage-order chunk whose column lies in
// its band (the last band takes every column past the others, and bad ones).
template <int ITEMS, bool HINT>
__global__ void __launch_bounds__(kBlock) banded(const int* rows, const int* cols, const float* vals, long long n,
    long long nrows, long long ncols, unsigned long long* check, const float* d, long long rs, long long cs,
    int* orow, int* ocol, float* oval, int bands, int shift, unsigned nchunks) {
  const unsigned lane = threadIdx.x & 31;
  const int band = blockIdx.x / nchunks;
  const long long chunk = blockIdx.x % nchunks;
  unsigned long long pol = 0;
  if (HINT) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = chunk * (kBlock * ITEMS) + k * kBlock + threadIdx.x;
    const bool live0 = i < n;
    int c = live0 ? __ldcs(cols + i) : 0;
    int b = (c >= 0 && c < ncols) ? min(c >> shift, bands - 1) : bands - 1;
    const bool live = live0 && b == band;
    int r = 0, pr = 0, pc = 0; float v = 0;
    if (live) {
      r = __ldcs(rows + i); v = __ldcs(vals + i);
      if (check && i > 0) { pr = rows[i - 1]; pc = cols[i - 1]; }
    }
    const bool in = r >= 0 && r < nrows && c >= 0 && c < ncols;
    if (check) {
      const bool after = pr < r || (pr == r && pc < c);
      const unsigned out = __ballot_sync(0xffffffffu, live && !in);
      const unsigned order = __ballot_sync(0xffffffffu, live && in && i > 0 && !after);
      if (out && lane == (unsigned)(__ffs(out) - 1)) atomicMin(check, (unsigned long long)i);
      if (order && lane == (unsigned)(__ffs(order) - 1)) atomicMin(check + 1, (unsigned long long)i);
    }
    if (!live) continue;
    float x = 0;
    if (in) { const float* p = d + r * rs + c * cs; x = HINT ? ld_last(p, pol) : *p; }
    if (orow) { __stcs(orow + i, r); __stcs(ocol + i, c); }
    __stcs(oval + i, v * x);
  }
}

template <int ITEMS, bool HINT = false>
__global__ void __launch_bounds__(kBlock) banded2(const int* rows, const int* cols, const float* vals, long long n,
    long long nrows, long long ncols, unsigned long long* check, const float* d, long long rs, long long cs,
    int* orow, int* ocol, float* oval, int bands, int bw, unsigned nchunks) {
  const unsigned lane = threadIdx.x & 31;
  const int band = blockIdx.x / nchunks;
  const long long chunk = blockIdx.x % nchunks;
  unsigned long long pol = 0;
  if (HINT) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
#pragma unroll
  for (int k = 0; k < ITEMS; ++k) {
    const long long i = chunk * (kBlock * ITEMS) + k * kBlock + threadIdx.x;
    const bool live0 = i < n;
    int c = live0 ? __ldcs(cols + i) : 0;
    int b = (c >= 0 && c < ncols) ? min(c / bw, bands - 1) : bands - 1;
    const bool live = live0 && b == band;
    int r = 0, pr = 0, pc = 0; float v = 0;
    if (live) {
      r = __ldcs(rows + i); v = __ldcs(vals + i);
      if (check && i > 0) { pr = rows[i - 1]; pc = cols[i - 1]; }
    }
    const bool in = r >= 0 && r < nrows && c >= 0 && c < ncols;
    if (check) {
      const bool after = pr < r || (pr == r && pc < c);
      const unsigned out = __ballot_sync(0xffffffffu, live && !in);
      const unsigned order = __ballot_sync(0xffffffffu, live && in && i > 0 && !after);
      if (out && lane == (unsigned)(__ffs(out) - 1)) atomicMin(check, (unsigned long long)i);
      if (order && lane == (unsigned)(__ffs(order) - 1)) atomicMin(check + 1, (unsigned long long)i);
    }
    if (!live) continue;
    float x = 0;
    if (in) { const float* p = d + r * rs + c * cs; x = HINT ? ld_last(p, pol) : *p; }
    if (orow) { __stcs(orow + i, r); __stcs(ocol + i, c); }
    __stcs(oval + i, v * x);
  }
}

struct Shape { const char* name; long long nr, nc, nnz; bool full; };

int main() {
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  int pers; CK(cudaDeviceGetAttribute(&pers, cudaDevAttrMaxPersistingL2CacheSize, 0));
  printf("sms %d l2 %d maxpersist %d\n", sms, l2, pers);
  std::vector<Shape> shapes = {
    {"cols_4.5M", 4096, 4500000, 12000000, false},
    {"cols_5M", 4096, 5000000, 12000000, false},
    {"cols_6M", 4096, 6000000, 12000000, false},
    {"cols_2^23", 4096, 1ll << 23, 12000000, false},
  };
  cudaStream_t s; CK(cudaStreamCreate(&s));
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  unsigned long long* chk; CK(cudaMalloc(&chk, 16));
  for (auto& sh : shapes) {
    const long long nr = sh.nr, nc = sh.nc, cells = nr * nc;
    thrust::device_vector<long long> k(sh.nnz);
    unsigned long long seed = 77 + sh.nnz;
    thrust::transform(thrust::counting_iterator<long long>(0), thrust::counting_iterator<long long>(sh.nnz), k.begin(),
      [=] __device__(long long i) { return (long long)(mix(i * 7919 + seed) % (unsigned long long)cells); });
    thrust::sort(k.begin(), k.end()); k.erase(thrust::unique(k.begin(), k.end()), k.end());
    long long n = k.size();
    thrust::device_vector<int> r(n), c(n), orow(n), ocol(n); thrust::device_vector<float> v(n), o0(n), o(n);
    thrust::transform(k.begin(), k.end(), r.begin(), [nc] __device__(long long x) { return (int)(x / nc); });
    thrust::transform(k.begin(), k.end(), c.begin(), [nc] __device__(long long x) { return (int)(x % nc); });
    thrust::transform(k.begin(), k.end(), v.begin(), [] __device__(long long x) { return 0.5f + (float)(mix(x) % 1000) * 1e-3f; });
    k.clear(); k.shrink_to_fit();
    long long dn = sh.full ? cells : nc;
    thrust::device_vector<float> d(dn);
    thrust::transform(thrust::counting_iterator<long long>(0), thrust::counting_iterator<long long>(dn), d.begin(),
      [] __device__(long long i) { return 1.0f + (float)(mix(i) % 997) * 1e-3f; });
    long long rs = sh.full ? nc : 0;
    unsigned grid = (unsigned)std::min<long long>((n + kBlock - 1) / kBlock, (long long)sms * 8 * 4);
    auto P = [](auto& x) { return thrust::raw_pointer_cast(x.data()); };
    for (int form = 0; form < 2; ++form) {  // 0: multiply (indices+vals out, checks), 1: multiply_values unchecked
      for (int V = 0; V < 19; ++V) {
        if (V != 0 && V != 16) continue;
        if (V >= 8 && sh.full) continue;
        auto launch = [&] {
          int* orr = form == 0 ? P(orow) : nullptr; int* occ = form == 0 ? P(ocol) : nullptr;
          unsigned long long* ch = form == 0 ? chk : nullptr;
          float* out = V == 0 ? P(o0) : P(o);
#define L(X) case X: entries<X><<<grid, kBlock, 0, s>>>(P(r), P(c), P(v), n, nr, nc, ch, P(d), rs, 1, orr, occ, out); break;
          if (V >= 14) {  // 14,15: 1 item 16/32 MiB; 16: 4 items 16 MiB; 17: 1 item 24 MiB ; 18: 2 items 16
            const int shift = V == 15 ? 23 : 22;
            int bands = (int)std::max<long long>(1, (nc + (1ll << shift) - 1) >> shift);
            int sh2 = shift;
            if (V == 17) { long long bw = (6ll << 20); bands = (int)((nc + bw - 1) / bw); }
            const int it = V == 16 ? 4 : V == 18 ? 2 : 1;
            const unsigned nchunks = (unsigned)((n + kBlock * it - 1) / (kBlock * it));
            if (V == 17) banded2<1><<<nchunks * bands, kBlock, 0, s>>>(P(r), P(c), P(v), n, nr, nc, ch, P(d), rs, 1, orr, occ, out, bands, 6 << 20, nchunks);
            else if (it == 1) banded<1, false><<<nchunks * bands, kBlock, 0, s>>>(P(r), P(c), P(v), n, nr, nc, ch, P(d), rs, 1, orr, occ, out, bands, sh2, nchunks);
            else if (it == 2) banded<2, false><<<nchunks * bands, kBlock, 0, s>>>(P(r), P(c), P(v), n, nr, nc, ch, P(d), rs, 1, orr, occ, out, bands, sh2, nchunks);
            else banded<4, false><<<nchunks * bands, kBlock, 0, s>>>(P(r), P(c), P(v), n, nr, nc, ch, P(d), rs, 1, orr, occ, out, bands, sh2, nchunks);
          } else if (V >= 8) {
            const int shifts[3] = {21, 22, 23};
            const int shift = shifts[(V - 8) % 3]; const bool hint = V >= 11;
            const int bands = (int)std::max<long long>(1, (nc + (1ll << shift) - 1) >> shift);
            const unsigned nchunks = (unsigned)((n + kBlock * 8 - 1) / (kBlock * 8));
            if (hint) banded<8, true><<<nchunks * bands, kBlock, 0, s>>>(P(r), P(c), P(v), n, nr, nc, ch, P(d), rs, 1, orr, occ, out, bands, shift, nchunks);
            else banded<8, false><<<nchunks * bands, kBlock, 0, s>>>(P(r), P(c), P(v), n, nr, nc, ch, P(d), rs, 1, orr, occ, out, bands, shift, nchunks);
          } else switch (V) { L(0) L(1) L(2) L(3) L(4) L(5) L(6) L(7) }
        };
        CK(cudaMemsetAsync(P(o), 0xff, n * 4, s));
        launch(); launch(); CK(cudaStreamSynchronize(s)); CK(cudaGetLastError());
        std::vector<float> t;
        for (int rep = 0; rep < 15; ++rep) {
          cudaEventRecord(e0, s); launch(); cudaEventRecord(e1, s); CK(cudaEventSynchronize(e1));
          float ms; cudaEventElapsedTime(&ms, e0, e1); t.push_back(ms * 1000);
        }
        std::sort(t.begin(), t.end());
        bool same = V == 0 || thrust::equal(o.begin(), o.end(), o0.begin());
        printf("%-16s form %s V%-2d n %lld  med %.1f us  min %.1f  %s\n", sh.name, form ? "values" : "multiply", V, n, t[t.size() / 2], t[0], same ? "ok" : "MISMATCH");
      }
    }
  }
  return 0;
}
