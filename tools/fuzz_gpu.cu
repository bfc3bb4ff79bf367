// tools/fuzz_gpu.cu — the GPU differential fuzzer: random byte strings from a seeded generator,
// each decoded by the api fuzz entry's decoder (fuzz/api_call.hpp) into one public dense or
// sparse call, run on device views (operands copied to the device, outputs poisoned first) and
// on host views (the CPU backend); the two must agree exactly.
//
//   ewise_fuzz_gpu [--seconds S] [--seed X] [--out DIR] [--cases N]
//
// For every case: the host call is first checked against the api entry's independent oracle
// (api_entry), then the device call against the host call: both throw InvalidArgument (and
// leave the outputs as they were: poisoned out_vals, a.vals, the dense arena), or both succeed
// with bit-identical results (descriptor, canonical flag, indices, value bits NaN included,
// every byte of the dense arena). Documented differences allowed: multiply(COO, COO) with
// bitmap_merge over its bitmap limit or linear_search over its work limit throws only on the
// GPU (ewise/sparse.hpp), a named tiled kernel refused on a device whose shared memory
// cannot hold its tiles (ewise/dense.hpp, kernel_supports), and binary's power with an f64
// result within 2 ulp of the host's (ewise/ops.hpp: libm's and CUDA's pow are both faithful,
// not always equal). After every InvalidArgument on the device no CUDA error may be
// pending and a normal call must still give the right result.
// On a mismatch it prints the seed, the case number, the decoded call and what differs, writes
// the input bytes to DIR/fuzz_gpu-<seed>-<case>.bin (add it to fuzz/corpus/api/ when the host
// entry fails on it too) and exits 1. Stops after S seconds (default 60) or N cases. Prints a
// summary: cases, accepted, rejected and allowed differences per operation.
// Deterministic given --seed (the case sequence; how many run depends on the time).
#include <cuda_runtime_api.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "api_call.hpp"
#include "api_oracle.hpp"
#include "entries.hpp"
#include "internal.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"
#include "testing/tool_options.hpp"

namespace {

using namespace ewise;
using namespace ewise::fuzz;
using Bytes = std::vector<std::uint8_t>;

struct Args {
  double seconds = 60;
  std::uint64_t seed = 1;
  std::int64_t cases = 0;
  std::string out = ".";
};

constexpr const char* kUsage = "[--seconds S] [--seed X] [--out DIR] [--cases N]";

Args parse_args(int argc, char** argv) {
  Args a;
  tools::parse_options(argc, argv, "ewise_fuzz_gpu", kUsage, [&](const std::string& k, const char* v) {
    if (k == "--seconds") a.seconds = std::atof(v);
    else if (k == "--seed") a.seed = std::strtoull(v, nullptr, 10);
    else if (k == "--cases") a.cases = std::atoll(v);
    else if (k == "--out") a.out = v;
    else return false;
    return true;
  });
  if (a.seconds <= 0 || a.cases < 0) tools::exit_usage("ewise_fuzz_gpu", kUsage, "bad option value");
  return a;
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// A random input: 16 to 2063 bytes, mostly small bytes (the decoder's benign and common
/// choices) with uniform ones mixed in.
Bytes random_input(std::uint64_t& rng) {
  Bytes b(16 + splitmix64(rng) % 2048);
  const std::uint64_t small_bias = splitmix64(rng) % 4;  // 0: uniform bytes ... 3: mostly small
  for (auto& x : b) {
    const std::uint64_t r = splitmix64(rng);
    x = static_cast<std::uint8_t>(r % 4 < small_bias ? (r >> 8) % 16 : r >> 8);
  }
  return b;
}

/// The documented GPU-only limits of multiply(COO, COO) (ewise/sparse.hpp).
bool gpu_only_limit(const ApiCall& c) {
  if (c.op != ApiOp::multiply_coo) return false;
  const CooDesc& a = c.a.desc;
  const CooDesc& b = c.b.desc;
  if (c.sparse.algorithm == CooAlgorithm::bitmap_merge)
    return static_cast<__int128>(a.nrows) * a.ncols / 8 > kBitmapMaxBytes;
  if (c.sparse.algorithm == CooAlgorithm::linear_search)
    return static_cast<__int128>(a.nnz) * b.nnz > kLinearSearchMaxWork;
  return false;
}

std::string first_difference(const Bytes& got, const Bytes& want) {
  if (got.size() != want.size())
    return std::to_string(got.size()) + " bytes, host " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      char s[96];
      std::snprintf(s, sizeof s, "byte %zu: device 0x%02x, host 0x%02x", i, got[i], want[i]);
      return s;
    }
  return {};
}

Bytes bytes_of(const void* p, std::size_t n) {
  Bytes b(n);
  if (n) std::memcpy(b.data(), p, n);
  return b;
}

/// binary's power with an f64 result: the device's output elements within 2 ulp of the host's
/// (same sign, finite, at most 2 representable values apart) are taken as the host's. Returns
/// how many differed so.
std::int64_t forgive_power_ulps(const ApiCall& c, ApiResult& d, const ApiResult& h) {
  if (c.op != ApiOp::binary || c.binop != BinaryOp::power || d.rejected ||
      c.out.desc.dtype != DType::f64 || binary_types(c).result != DType::f64)
    return 0;
  const auto elem = static_cast<std::int64_t>(dtype_size(c.dtype));
  std::int64_t forgiven = 0;
  for_each_coord(c.out.desc.shape, [&](const Dims& coord) {
    const auto at = static_cast<std::size_t>(c.out.offset * elem + offset_at(c.out.desc, coord) * 8);
    std::uint64_t g, w;
    double gd, wd;
    std::memcpy(&g, d.arena.data() + at, 8);
    std::memcpy(&w, h.arena.data() + at, 8);
    std::memcpy(&gd, &g, 8);
    std::memcpy(&wd, &w, 8);
    const std::uint64_t apart = g > w ? g - w : w - g;
    if (g == w || (g >> 63) != (w >> 63) || apart > 2 || !std::isfinite(gd) || !std::isfinite(wd))
      return;
    std::memcpy(d.arena.data() + at, &w, 8);
    ++forgiven;
  });
  return forgiven;
}

/// Empty when the device result equals the host result exactly; else what differs.
std::string compare(const ApiResult& d, const ApiResult& h) {
  std::string why;
  if (!(why = first_difference(d.arena, h.arena)).empty()) return "dense arena: " + why;
  if (!(why = first_difference(d.out_vals, h.out_vals)).empty()) return "out_vals: " + why;
  if (d.rejected) return {};
  if (d.has_coo != h.has_coo || d.has_tensor != h.has_tensor) return "result kind";
  if (d.has_coo) {
    const CooDesc &g = d.coo.desc(), &w = h.coo.desc();
    if (g.str() != w.str()) return "result " + g.str() + ", host " + w.str();
    const std::size_t n = static_cast<std::size_t>(g.nnz), is = index_size(g.index);
    if (!(why = first_difference(bytes_of(d.coo.rows(), n * is), bytes_of(h.coo.rows(), n * is))).empty())
      return "rows: " + why;
    if (!(why = first_difference(bytes_of(d.coo.cols(), n * is), bytes_of(h.coo.cols(), n * is))).empty())
      return "cols: " + why;
    const std::size_t vs = n * dtype_size(g.dtype);
    if (!(why = first_difference(bytes_of(d.coo.vals(), vs), bytes_of(h.coo.vals(), vs))).empty())
      return "vals: " + why;
  }
  if (d.has_tensor) {
    const TensorDesc &g = d.tensor.desc(), &w = h.tensor.desc();
    if (g.str() != w.str()) return "result tensor " + g.str() + ", host " + w.str();
    const std::size_t n = static_cast<std::size_t>(g.numel()) * dtype_size(g.dtype);
    if (!(why = first_difference(bytes_of(d.tensor.data(), n), bytes_of(h.tensor.data(), n))).empty())
      return "result tensor: " + why;
  }
  return {};
}

/// After a refused device call: no CUDA error pending, and a normal call gives the right result.
std::string device_still_works(cudaStream_t stream) {
  const cudaError_t pending = cudaGetLastError();
  if (pending != cudaSuccess)
    return std::string("CUDA error pending after InvalidArgument: ") + cudaGetErrorName(pending);
  const float xs[3] = {1.5f, -2.0f, 4.0f}, ys[3] = {0.5f, 3.0f, -1.0f};
  const auto desc = TensorDesc::contiguous(DType::f32, Dims{3});
  const DeviceTensor x = to_device(ConstTensorView(xs, desc, Memory::host), stream);
  const DeviceTensor y = to_device(ConstTensorView(ys, desc, Memory::host), stream);
  const DeviceTensor z = binary(BinaryOp::add, x.view(), y.view(), {}, stream);
  const HostTensor h = to_host(z.view(), stream);
  const float* got = h.data_as<float>();
  if (got[0] != 2.0f || got[1] != 1.0f || got[2] != 3.0f) return "a normal call after InvalidArgument gave a wrong result";
  return {};
}

struct Counts {
  std::int64_t cases = 0, accepted = 0, rejected = 0, allowed = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  if (!gpu_available()) {
    std::fprintf(stderr, "ewise_fuzz_gpu: no GPU\n");
    return 2;
  }
  cudaStream_t stream;
  EWISE_CUDA_CHECK(cudaStreamCreate(&stream));
  std::printf("ewise_fuzz_gpu: seed %llu, %.0f s, device %s\n",
              static_cast<unsigned long long>(args.seed), args.seconds,
              current_device_info().name.c_str());
  std::fflush(stdout);
  std::array<Counts, kApiOpCount> counts{};
  std::uint64_t rng = args.seed;
  const auto start = std::chrono::steady_clock::now();
  std::int64_t n = 0;
  for (;; ++n) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed >= args.seconds || (args.cases > 0 && n >= args.cases)) break;
    const Bytes input = random_input(rng);
    const ApiCall call = decode_api_call(input.data(), input.size());
    std::string problem;
    ApiResult host, device;
    try {
      api_entry(input.data(), input.size());  // the host call against the oracle
      host = run_api_call(call, Memory::host);
      device = run_api_call(call, Memory::device, stream);
    } catch (const Violation& v) {
      problem = std::string("host result against the oracle: ") + v.what();
    } catch (const std::exception& e) {
      problem = std::string("exception other than InvalidArgument: ") + e.what();
    }
    Counts& c = counts[static_cast<int>(call.op)];
    ++c.cases;
    if (problem.empty()) {
      if (host.rejected != device.rejected) {
        if (!host.rejected && (gpu_only_limit(call) || tiled_shared_memory_refusal(call, device)))
          ++c.allowed;
        else
          problem = std::string("host ") + (host.rejected ? "rejected (" + host.error + ")" : "accepted") +
                    ", device " + (device.rejected ? "rejected (" + device.error + ")" : "accepted");
        if (problem.empty() && device.rejected) problem = device_still_works(stream);
      } else {
        ++(host.rejected ? c.rejected : c.accepted);
        if (forgive_power_ulps(call, device, host) > 0) ++c.allowed;
        problem = compare(device, host);
        if (problem.empty() && device.rejected) problem = device_still_works(stream);
      }
    }
    if (!problem.empty()) {
      const std::string path = args.out + "/fuzz_gpu-" + std::to_string(args.seed) + "-" +
                               std::to_string(n) + ".bin";
      std::ofstream(path, std::ios::binary)
          .write(reinterpret_cast<const char*>(input.data()), static_cast<std::streamsize>(input.size()));
      std::printf("MISMATCH seed %llu case %lld: %s\ncall: %s\ninput written to %s\n",
                  static_cast<unsigned long long>(args.seed), static_cast<long long>(n),
                  problem.c_str(), call.str().c_str(), path.c_str());
      return 1;
    }
  }
  Counts total;
  for (int op = 0; op < kApiOpCount; ++op) {
    const Counts& c = counts[op];
    std::printf("  %-24s %8lld cases %8lld accepted %8lld rejected %6lld allowed GPU/host differences\n",
                api_op_name(static_cast<ApiOp>(op)), static_cast<long long>(c.cases),
                static_cast<long long>(c.accepted), static_cast<long long>(c.rejected),
                static_cast<long long>(c.allowed));
    total.cases += c.cases;
    total.accepted += c.accepted;
    total.rejected += c.rejected;
    total.allowed += c.allowed;
  }
  std::printf("ewise_fuzz_gpu: seed %llu: %lld cases (%lld accepted, %lld rejected, %lld allowed "
              "differences), 0 mismatches\n",
              static_cast<unsigned long long>(args.seed), static_cast<long long>(total.cases),
              static_cast<long long>(total.accepted), static_cast<long long>(total.rejected),
              static_cast<long long>(total.allowed));
  EWISE_CUDA_CHECK(cudaStreamDestroy(stream));
  return 0;
}
