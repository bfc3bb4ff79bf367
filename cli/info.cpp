// `ewise info`: the GPU ewise would use (or that there is none), with a measured copy bandwidth.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "cli.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/coo.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/sparse.hpp"
#include "ewise/tensor.hpp"

namespace ewise::cli {
namespace {

std::string version_text(int v) {  // CUDA encodes 13.0 as 13000
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

}  // namespace

int run_info(const Args& args) {
  (void)args;
  std::cout << "ewise " << EWISE_VERSION << "\n";
  const std::string reason = gpu_unavailable_reason();
  if (!reason.empty()) {
    std::cout << "GPU: none usable (" << reason << ")\n"
              << "     ewise runs on the CPU reference backend (host views); `ewise dense` and\n"
              << "     `ewise sparse` use it automatically, `ewise demo` runs smaller sizes on it.\n";
  } else {
    const DeviceInfo d = current_device_info();
    char line[256];
    std::snprintf(line, sizeof line,
                  "GPU %d: %s, compute capability %d.%d, %d SMs, %.1f GiB memory, %.0f MiB L2\n",
                  d.ordinal, d.name.c_str(), d.compute_major, d.compute_minor, d.sm_count,
                  static_cast<double>(d.global_memory_bytes) / (1 << 30),
                  static_cast<double>(d.l2_bytes) / (1 << 20));
    std::cout << line << "       CUDA driver " << version_text(d.driver_version) << ", runtime "
              << version_text(d.runtime_version) << "\n";
    if (d.memory_clock_khz > 0 && d.memory_bus_bits > 0)
      std::snprintf(line, sizeof line, "       theoretical memory bandwidth %.0f GB/s\n",
                    2.0 * d.memory_clock_khz * 1e3 * d.memory_bus_bits / 8 / 1e9);
    else line[0] = '\0';
    std::cout << line;
    // 256 MiB per buffer: far beyond any L2, small enough for every GPU.
    const std::size_t bytes = std::min<std::size_t>(std::size_t{256} << 20,
                                                    d.global_memory_bytes / 8);
    Stream stream;
    const double gbs = copy_bandwidth_gbs(bytes, 20, stream);
    std::snprintf(line, sizeof line,
                  "       measured copy bandwidth %.0f GB/s (cudaMemcpy device to device of %s, "
                  "read + write, CUDA events, median of 20)\n",
                  gbs, human_bytes(static_cast<double>(bytes)).c_str());
    std::cout << line;
  }
  std::cout << "dtypes:     ";
  for (DType t : kAllDTypes) std::cout << dtype_name(t) << " ";
  std::cout << "(operands of different dtypes promote)\noperations: ";
  for (BinaryOp op : kAllOps) std::cout << op_name(op) << " ";
  std::cout << "(aliases: sub mul div min max)\npromotion:  ";
  for (Promotion p : {Promotion::numpy, Promotion::torch}) std::cout << promotion_name(p) << " ";
  std::cout << "(--promotion; numpy by default)\nsparse:     multiply (COO * COO, COO * dense, "
               "COO * scalar) ";
  for (BinaryOp op : {BinaryOp::add, BinaryOp::subtract, BinaryOp::minimum, BinaryOp::maximum})
    std::cout << op_name(op) << " ";
  std::cout << "(COO OP COO, COO OP dense); values ";
  for (DType t : kSparseDTypes) std::cout << dtype_name(t) << " ";
  std::cout << "\nkernels:    ";
  for (const KernelName& k : kKernelNames) std::cout << k.name << " ";
  std::cout << "\nCOO algorithms: ";
  for (int a = 0; a <= static_cast<int>(CooAlgorithm::hash_merge); ++a)
    std::cout << coo_algorithm_name(static_cast<CooAlgorithm>(a)) << " ";
  std::cout << "\n";
  return 0;
}

}  // namespace ewise::cli
