#include "harness.hpp"

#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "check.hpp"
#include "ewise/detail/types.cuh"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"

#ifndef EWISE_BENCH_COMMIT
#define EWISE_BENCH_COMMIT "unknown"
#endif

namespace ewise::bench {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string commit() {
  if (const char* c = std::getenv("EWISE_COMMIT"); c && *c) return c;
  return EWISE_BENCH_COMMIT;
}

// One line from nvidia-smi about the current GPU's clocks, or why there is none.
std::string nvidia_smi_clocks(int ordinal) {
  const std::string cmd = detail::concat(
      "nvidia-smi -i ", ordinal,
      " --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,"
      "temperature.gpu,pstate --format=csv,noheader 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return "nvidia-smi not available";
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.empty() ? "nvidia-smi gave no output" : "sm cur,max / mem cur,max / power / temp / pstate: " + out;
}

class Event {
 public:
  Event() { EWISE_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() { (void)cudaEventDestroy(e_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : e_(o.e_) { o.e_ = nullptr; }
  cudaEvent_t get() const noexcept { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

float elapsed_ms(const Event& a, const Event& b) {
  float ms = 0;
  EWISE_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

// Same-shape add for the cub::DeviceTransform reference, in ewise's arithmetic.
struct CubAdd {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return detail::from_compute<T>(ops::Add{}(detail::to_compute(a), detail::to_compute(b)));
  }
};

int device_attribute(cudaDeviceAttr attr, int ordinal) {
  int v = 0;
  EWISE_CUDA_CHECK(cudaDeviceGetAttribute(&v, attr, ordinal));
  return v;
}

std::string iso_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Param param(const std::string& key, double v) { return {key, json_number(v)}; }
Param param(const std::string& key, std::int64_t v) { return {key, std::to_string(v)}; }
Param param(const std::string& key, int v) { return {key, std::to_string(v)}; }
Param param(const std::string& key, const std::string& v) { return {key, json_string(v)}; }
Param param(const std::string& key, const char* v) { return {key, json_string(v)}; }
Param param(const std::string& key, bool v) { return {key, v ? "true" : "false"}; }
Param param(const std::string& key, const Dims& v) {
  std::string s = "[";
  for (int i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return {key, s + "]"};
}

Arena::Arena(DType dtype, std::int64_t elems, int sets, bool fill, std::uint64_t seed,
             cudaStream_t stream, const verify::GenOptions& gen)
    : elem_(dtype_size(dtype)), sets_(sets) {
  EWISE_EXPECTS(sets >= 1 && elems >= 0, "arena of ", sets, " sets of ", elems, " elements");
  const auto align = static_cast<std::int64_t>(256 / elem_);
  stride_ = (elems + align - 1) / align * align;
  buf_ = DeviceTensor(dtype, {std::max<std::int64_t>(stride_ * sets, 1)}, stream);
  base_ = static_cast<std::byte*>(buf_.data());
  if (fill) verify::fill_random(buf_.view(), seed, gen, stream);
}

Bench::Bench(const Options& options)
    : options_(options), info_(current_device_info()), seed_state_(options.seed),
      start_s_(now_s()) {
  EWISE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  sm_clock_khz_ = device_attribute(cudaDevAttrClockRate, info_.ordinal);
  smi_ = nvidia_smi_clocks(info_.ordinal);
  started_ = iso_now();
}

Bench::~Bench() { (void)cudaStreamDestroy(stream_); }

std::uint64_t Bench::next_seed() {
  seed_state_ += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = seed_state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

int Bench::sets_for(std::size_t footprint_bytes, int cap) const {
  const double target = 3.0 * static_cast<double>(info_.l2_bytes);
  const double fp = std::max<double>(static_cast<double>(footprint_bytes), 1.0);
  if (fp >= target) return 1;
  return static_cast<int>(std::min<double>(std::ceil(target / fp), cap));
}

Stats Bench::time(const std::function<void(std::int64_t)>& op, int sets, bool sync_pattern) {
  // Warm-up: 3 launches, the last timed; launches under 100 us are re-estimated over 5.
  std::int64_t i = 0;
  op(i++);
  op(i++);
  Event e0, e1;
  const auto timed = [&](int count) {
    EWISE_CUDA_CHECK(cudaEventRecord(e0.get(), stream_));
    for (int k = 0; k < count; ++k) op(i++);
    EWISE_CUDA_CHECK(cudaEventRecord(e1.get(), stream_));
    EWISE_CUDA_CHECK(cudaEventSynchronize(e1.get()));
    return elapsed_ms(e0, e1) / count;
  };
  double est_ms = timed(1);
  if (est_ms < 0.1) est_ms = std::max<double>(timed(5), 1e-4);
  const int batch = static_cast<int>(std::clamp(std::ceil(0.1 / est_ms), 1.0, 4096.0));

  // Back to back: runs samples of batch calls with no synchronization in between.
  const int runs = std::max(options_.runs, 20);
  std::vector<Event> starts(runs), stops(runs);
  const double wall0 = now_s();
  for (int s = 0; s < runs; ++s) {
    EWISE_CUDA_CHECK(cudaEventRecord(starts[s].get(), stream_));
    for (int j = 0; j < batch; ++j) op(i++);
    EWISE_CUDA_CHECK(cudaEventRecord(stops[s].get(), stream_));
  }
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const double wall1 = now_s();
  const auto median = [](std::vector<double>& t) {
    std::sort(t.begin(), t.end());
    const std::size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
  };
  std::vector<double> t(runs);
  for (int s = 0; s < runs; ++s) t[s] = elapsed_ms(starts[s], stops[s]) / batch;
  Stats st;
  st.median_ms = median(t);
  st.min_ms = t.front();
  st.max_ms = t.back();
  st.runs = runs;
  st.batch = batch;
  st.sets = sets;
  st.wall_ms = (wall1 - wall0) * 1e3 / (static_cast<double>(runs) * batch);

  // Synchronizing: each call followed by cudaStreamSynchronize; the host clock runs from just
  // before the call to the synchronization's return (the stop event's record is inside it).
  if (sync_pattern) {
    const int n = static_cast<int>(std::clamp(
        std::floor(kSyncBudgetMs / std::max(st.median_ms, 1e-4)), static_cast<double>(kMinSyncRuns),
        static_cast<double>(runs)));
    std::vector<double> gpu(n), wall(n);
    for (int s = 0; s < n; ++s) {
      EWISE_CUDA_CHECK(cudaEventRecord(e0.get(), stream_));
      const double w0 = now_s();
      op(i++);
      EWISE_CUDA_CHECK(cudaEventRecord(e1.get(), stream_));
      EWISE_CUDA_CHECK(cudaStreamSynchronize(stream_));
      wall[s] = (now_s() - w0) * 1e3;
      gpu[s] = elapsed_ms(e0, e1);
    }
    st.sync_gpu_ms = median(gpu);
    st.sync_wall_ms = median(wall);
    st.sync_runs = n;
  }
  return st;
}

double Bench::copy_bandwidth(double bytes_moved) {
  const auto it = copy_cache_.find(bytes_moved);
  if (it != copy_cache_.end()) return it->second;
  const auto half = static_cast<std::int64_t>(std::ceil(bytes_moved / 2));
  const int sets = sets_for(static_cast<std::size_t>(2 * half), 4096);
  const Arena src(DType::i32, (half + 3) / 4, sets, true, next_seed(), stream_);
  const Arena dst(DType::i32, (half + 3) / 4, sets, false, 0, stream_);
  const Stats st = time(
      [&](std::int64_t i) {
        EWISE_CUDA_CHECK(cudaMemcpyAsync(dst.at(i), src.at(i), static_cast<std::size_t>(half),
                                         cudaMemcpyDeviceToDevice, stream_));
      },
      sets, false);
  const double bw = 2.0 * static_cast<double>(half) / (st.median_ms * 1e-3);
  copy_cache_[bytes_moved] = bw;
  return bw;
}

double Bench::cub_add_bandwidth(DType dtype, std::int64_t numel) {
  const auto key = std::make_pair(static_cast<int>(dtype), numel);
  const auto it = cub_cache_.find(key);
  if (it != cub_cache_.end()) return it->second;
  const std::size_t bytes = 3 * static_cast<std::size_t>(numel) * dtype_size(dtype);
  const int sets = sets_for(bytes, 4096);
  const Arena a(dtype, numel, sets, true, next_seed(), stream_);
  const Arena b(dtype, numel, sets, true, next_seed(), stream_);
  const Arena out(dtype, numel, sets, false, 0, stream_);
  const TensorDesc desc = TensorDesc::contiguous(dtype, {numel});
  Stats st;
  detail::dispatch_any_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto run = [&](std::int64_t i) {
      EWISE_CUDA_CHECK(cub::DeviceTransform::Transform(
          ::cuda::std::make_tuple(static_cast<const T*>(a.at(i)), static_cast<const T*>(b.at(i))),
          static_cast<T*>(out.at(i)), numel, CubAdd{}, stream_));
    };
    const TensorView o{out.at(0), desc, Memory::device};
    verify::poison(o, stream_);
    run(0);
    verify_dense(BinaryOp::add, ConstTensorView(a.at(0), desc, Memory::device),
                 ConstTensorView(b.at(0), desc, Memory::device), o, next_seed(), stream_);
    st = time(run, sets, false);
  });
  const double bw = static_cast<double>(bytes) / (st.median_ms * 1e-3);
  cub_cache_[key] = bw;
  return bw;
}

void Bench::add_untimed(Record r, const char* status, const char* why) {
  r.status = status;
  r.note = why;
  add(std::move(r), 0);
}

void Bench::add(Record r, std::int64_t cub_numel) {
  if (r.status == "ok") {
    r.gbps = r.bytes / (r.stats.median_ms * 1e-3) / 1e9;
    r.copy_gbps = copy_bandwidth(r.bytes) / 1e9;
    r.copy_fraction = r.gbps / r.copy_gbps;
    if (cub_numel > 0) {
      r.cub_gbps = cub_add_bandwidth(parse_dtype(r.dtype), cub_numel) / 1e9;
      r.cub_fraction = r.gbps / r.cub_gbps;
    }
  } else if (r.status == "failed") {
    ++failures_;
  }
  // One line per record: name, dtype, implementation with its non-default parameters, then
  // the figures or the outcome; notes (refusal reasons can be long) are cut to one line.
  std::string impl = r.impl;
  for (const Param& p : r.params)
    if ((p.key == "nt" || p.key == "nb" || p.key == "sliding_factor") && p.json != "0")
      impl += " " + (p.key == "sliding_factor" ? std::string("sf") : p.key) + "=" + p.json;
  std::string note = r.status != "failed" && r.note.size() > 110 ? r.note.substr(0, 107) + "..."
                                                                  : r.note;
  char line[512];
  if (r.status == "ok") {
    const std::string cub =
        r.cub_gbps > 0 ? detail::concat(std::round(r.cub_fraction * 100) / 100) : "-";
    std::snprintf(line, sizeof line,
                  "  %-30s %-5s %-24s %10.4f ms %8.1f GB/s  copy %5.2f  cub %5s  sets %-4d"
                  " wall %.4f sync %.4f/%.4f",
                  r.name.c_str(), r.dtype.c_str(), impl.c_str(), r.stats.median_ms, r.gbps,
                  r.copy_fraction, cub.c_str(), r.stats.sets, r.stats.wall_ms,
                  r.stats.sync_gpu_ms, r.stats.sync_wall_ms);
  } else {
    std::snprintf(line, sizeof line, "  %-30s %-5s %-24s %s", r.name.c_str(), r.dtype.c_str(),
                  impl.c_str(),
                  r.status == "summary" ? "" : r.status == "refused" ? "refused:" : "FAILED:");
  }
  std::printf("%s %s\n", line, note.c_str());
  std::fflush(stdout);
  records_.push_back(std::move(r));
}

void Bench::run_suite(const std::string& suite, const std::vector<Case>& cases) {
  suites_.push_back(suite);
  std::printf("\n== suite %s: %zu cases ==\n", suite.c_str(), cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    if (cases[k].label.find(options_.case_filter) == std::string::npos) continue;
    std::printf("[%s %zu/%zu, %.1f s] %s\n", suite.c_str(), k + 1, cases.size(),
                now_s() - start_s_, cases[k].label.c_str());
    std::fflush(stdout);
    try {
      cases[k].run();
    } catch (const std::exception& e) {  // an unexpected error: count it, go on with the rest
      ++failures_;
      std::printf("  CASE FAILED: %s\n", e.what());
    }
  }
}

void Bench::print_header() const {
  const DeviceInfo& d = info_;
  std::printf("ewise_bench\n");
  std::printf("device   %s (sm_%d%d, %d SMs, %.1f GiB, L2 %.1f MiB, bus %d bit)\n",
              d.name.c_str(), d.compute_major, d.compute_minor, d.sm_count,
              static_cast<double>(d.global_memory_bytes) / (1 << 30),
              static_cast<double>(d.l2_bytes) / (1 << 20), d.memory_bus_bits);
  std::printf("clocks   SM max %d MHz, memory max %d MHz (theoretical %.0f GB/s)\n",
              sm_clock_khz_ / 1000, d.memory_clock_khz / 1000, theoretical_gbps());
  std::printf("         %s\n", smi_.c_str());
  std::printf("driver   %d, runtime %d\n", d.driver_version, d.runtime_version);
  std::printf("commit   %s\n", commit().c_str());
  std::printf("seed     %llu (EWISE_SEED=%llu replays it)\n",
              static_cast<unsigned long long>(options_.seed),
              static_cast<unsigned long long>(options_.seed));
  std::printf("mode     %s, median of %d timed samples per case\n",
              options_.quick ? "quick" : "full", std::max(options_.runs, 20));
  std::fflush(stdout);
}

double Bench::theoretical_gbps() const {
  return 2.0 * info_.memory_clock_khz * 1e3 * info_.memory_bus_bits / 8 / 1e9;
}

void Bench::write_outputs() const {
  if (!options_.json_path.empty()) {
    std::ofstream f(options_.json_path);
    EWISE_EXPECTS(f.good(), "cannot write ", options_.json_path);
    const DeviceInfo& d = info_;
    std::string suites = "[";
    for (std::size_t k = 0; k < suites_.size(); ++k)
      suites += (k ? "," : "") + json_string(suites_[k]);
    suites += "]";
    f << "{\n\"meta\": {"
      << "\"program\": \"ewise_bench\", \"commit\": " << json_string(commit())
      << ", \"started\": " << json_string(started_)
      << ", \"device\": " << json_string(d.name) << ", \"sm\": \"sm_" << d.compute_major
      << d.compute_minor << "\", \"sm_count\": " << d.sm_count
      << ", \"memory_bytes\": " << d.global_memory_bytes << ", \"l2_bytes\": " << d.l2_bytes
      << ", \"sm_clock_max_mhz\": " << sm_clock_khz_ / 1000
      << ", \"mem_clock_max_mhz\": " << d.memory_clock_khz / 1000
      << ", \"memory_bus_bits\": " << d.memory_bus_bits
      << ", \"theoretical_gbps\": " << json_number(theoretical_gbps())
      << ", \"nvidia_smi\": " << json_string(smi_) << ", \"driver\": " << d.driver_version
      << ", \"runtime\": " << d.runtime_version << ", \"seed\": " << options_.seed
      << ", \"quick\": " << (options_.quick ? "true" : "false")
      << ", \"runs\": " << std::max(options_.runs, 20) << ", \"suites\": " << suites
      << ", \"sync_budget_ms\": " << json_number(kSyncBudgetMs)
      << ", \"inputs_dir\": " << json_string(options_.inputs_dir)
      << ", \"failures\": " << failures_ << ", \"elapsed_s\": " << json_number(now_s() - start_s_)
      << "},\n\"results\": [\n";
    for (std::size_t k = 0; k < records_.size(); ++k) {
      const Record& r = records_[k];
      f << "{\"suite\": " << json_string(r.suite) << ", \"name\": " << json_string(r.name)
        << ", \"impl\": " << json_string(r.impl) << ", \"dtype\": " << json_string(r.dtype)
        << ", \"status\": " << json_string(r.status) << ", \"note\": " << json_string(r.note)
        << ", \"verified\": " << json_string(r.verified) << ", \"params\": {";
      for (std::size_t p = 0; p < r.params.size(); ++p)
        f << (p ? ", " : "") << json_string(r.params[p].key) << ": " << r.params[p].json;
      f << "}, \"bytes\": " << json_number(r.bytes)
        << ", \"median_ms\": " << json_number(r.stats.median_ms)
        << ", \"min_ms\": " << json_number(r.stats.min_ms)
        << ", \"max_ms\": " << json_number(r.stats.max_ms) << ", \"runs\": " << r.stats.runs
        << ", \"batch\": " << r.stats.batch << ", \"sets\": " << r.stats.sets
        << ", \"wall_ms\": " << json_number(r.stats.wall_ms)
        << ", \"sync_gpu_ms\": " << json_number(r.stats.sync_gpu_ms)
        << ", \"sync_wall_ms\": " << json_number(r.stats.sync_wall_ms)
        << ", \"sync_runs\": " << r.stats.sync_runs
        << ", \"gbps\": " << json_number(r.gbps) << ", \"copy_gbps\": " << json_number(r.copy_gbps)
        << ", \"copy_fraction\": " << json_number(r.copy_fraction)
        << ", \"cub_gbps\": " << (r.cub_gbps > 0 ? json_number(r.cub_gbps) : "null")
        << ", \"cub_fraction\": " << (r.cub_gbps > 0 ? json_number(r.cub_fraction) : "null")
        << "}" << (k + 1 < records_.size() ? "," : "") << "\n";
    }
    f << "]\n}\n";
    EWISE_EXPECTS(f.good(), "error writing ", options_.json_path);
  }
  if (!options_.csv_path.empty()) {
    std::ofstream f(options_.csv_path);
    EWISE_EXPECTS(f.good(), "cannot write ", options_.csv_path);
    f << "suite,name,impl,dtype,status,params,bytes,median_ms,min_ms,max_ms,runs,batch,sets,"
         "wall_ms,sync_gpu_ms,sync_wall_ms,sync_runs,gbps,copy_gbps,copy_fraction,cub_gbps,"
         "cub_fraction,verified,note\n";
    const auto quoted = [](const std::string& s) {
      std::string out = "\"";
      for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
      return out + "\"";
    };
    for (const Record& r : records_) {
      std::string params;
      for (const Param& p : r.params) params += (params.empty() ? "" : ";") + p.key + "=" + p.json;
      f << r.suite << ',' << r.name << ',' << r.impl << ',' << r.dtype << ',' << r.status << ','
        << quoted(params) << ',' << json_number(r.bytes) << ','
        << json_number(r.stats.median_ms) << ',' << json_number(r.stats.min_ms) << ','
        << json_number(r.stats.max_ms) << ',' << r.stats.runs << ',' << r.stats.batch << ','
        << r.stats.sets << ',' << json_number(r.stats.wall_ms) << ','
        << json_number(r.stats.sync_gpu_ms) << ',' << json_number(r.stats.sync_wall_ms) << ','
        << r.stats.sync_runs << ',' << json_number(r.gbps) << ',' << json_number(r.copy_gbps) << ','
        << json_number(r.copy_fraction) << ',' << json_number(r.cub_gbps) << ','
        << json_number(r.cub_fraction) << ',' << quoted(r.verified) << ',' << quoted(r.note)
        << '\n';
    }
    EWISE_EXPECTS(f.good(), "error writing ", options_.csv_path);
  }
}

}  // namespace ewise::bench
