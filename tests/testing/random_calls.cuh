// tests/testing/random_calls.cuh — random calls of every ewise operation, each result verified
// against the CPU reference. Shared by tests/test_concurrency.cu (many threads, small sizes) and
// tools/soak.cu (one process, thousands of calls, larger sizes, file round trips).
// CUDA code (the functor entry of ewise/dense.cuh is instantiated here).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <utility>

#include "ewise/broadcast.hpp"
#include "ewise/buffer.hpp"
#include "ewise/dense.cuh"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"

namespace ewise::soak {

/// The operations a RandomCaller exercises; each call picks one.
enum class Call : int {
  dense,            ///< binary(op, a, b, out) with a random op, kernel, dtypes (mixed half of
                    ///< the time), layout, broadcast
  dense_shared,     ///< the same with an input shared (read-only) by every caller
  dense_allocating, ///< DeviceTensor binary(op, a, b)
  dense_functor,    ///< binary(functor, a, b, out) (ewise/dense.cuh)
  coo_multiply,     ///< multiply(COO, COO), random algorithm
  coo_multiply_dense,
  coo_coalesce_csr, ///< coalesce, then coo_to_csr_row_offsets
  coo_to_dense,
  dense_to_coo,
  coo_check_indices,
  npy_round_trip,   ///< write_npy of a device view, read_npy
  mtx_round_trip,   ///< write_mtx of a device COO, read_mtx
  coo_union,        ///< combine(op, COO, COO), random op, fills and drop_zeros
  coo_union_dense,  ///< combine(op, COO, dense, out) or accumulate(op, dense, COO)
};
inline constexpr int kCallKinds = 14;
inline const char* call_name(Call c) {
  static constexpr const char* names[kCallKinds] = {
      "dense",         "dense_shared", "dense_allocating",  "dense_functor",
      "coo_multiply",  "coo_multiply_dense", "coo_coalesce_csr", "coo_to_dense",
      "dense_to_coo",  "coo_check_indices",  "npy_round_trip",   "mtx_round_trip",
      "coo_union",     "coo_union_dense"};
  return names[static_cast<int>(c)];
}

/// Inputs every caller reads at the same time (never written after make_shared_inputs).
struct SharedInputs {
  HostTensor row_host;  ///< (1, 96) f32
  DeviceTensor row;
  HostCoo coo_host;     ///< 96 x 96 f32, unsorted, with duplicates
  DeviceCoo coo;
  /// Recorded once the inputs are on the device. Each caller's stream waits on it (as well as
  /// the device synchronization after them): compute-sanitizer's stream-ordered race tracking
  /// (memcheck --track-stream-ordered-races) goes by stream order only, and reports every read
  /// of them from another stream as a use before allocation otherwise.
  std::shared_ptr<CUevent_st> ready;

  /// Orders `stream`'s later work after the inputs were made.
  void order(cudaStream_t stream) const { EWISE_CUDA_CHECK(cudaStreamWaitEvent(stream, ready.get(), 0)); }
};

inline SharedInputs make_shared_inputs(std::uint64_t seed) {
  SharedInputs s;
  s.row_host = verify::random_tensor(DType::f32, {1, 96}, seed);
  s.row = to_device(s.row_host);
  verify::CooGenOptions o;
  o.unsorted = true;
  o.duplicate_fraction = 0.1;
  s.coo_host = verify::random_coo(96, 96, 0.1, seed + 1, o);
  s.coo = to_device(s.coo_host.view());
  cudaEvent_t ready = nullptr;
  EWISE_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  s.ready.reset(ready, [](cudaEvent_t e) { (void)cudaEventDestroy(e); });
  EWISE_CUDA_CHECK(cudaEventRecord(ready, nullptr));  // to_device used the default stream
  EWISE_CUDA_CHECK(cudaDeviceSynchronize());
  return s;
}

/// b - a: a user functor (compute types float, double, int32_t, int64_t) checked against the
/// reference's sub with the operands swapped. Instantiated for three dtypes (every kernel is
/// compiled per dtype): one computed in float, one in its own float type, one integer.
inline constexpr unsigned kFunctorDTypes = dtype_mask({DType::f16, DType::f64, DType::i32});
struct ReversedSub {
  template <class T>
  EWISE_HD T operator()(T a, T b) const { return ops::Sub{}(b, a); }
};

struct CallerOptions {
  int max_extent_log2 = 6;     ///< dense extents up to 2^this (per dim, rank <= 4) ...
  std::int64_t max_elements = std::int64_t{1} << 20;  ///< ... and at most this many elements
  int max_sparse_dim = 400;    ///< COO shapes up to this per side
  double max_density = 0.2;
  /// Weights of the call kinds (index = Call); 0 leaves a kind out.
  std::array<int, kCallKinds> weights = {4, 2, 1, 1, 3, 1, 1, 1, 1, 1, 0, 0, 2, 1};
  std::string scratch_dir;     ///< for the file round trips (default: the temp directory)
};

/// Makes random calls on one stream and verifies each one.
class RandomCaller {
 public:
  RandomCaller(std::uint64_t seed, const SharedInputs& shared, cudaStream_t stream,
               CallerOptions options = {})
      : rng_(seed), shared_(shared), stream_(stream), options_(std::move(options)) {
    shared_.order(stream_);
    if (options_.scratch_dir.empty())
      options_.scratch_dir = std::filesystem::temp_directory_path().string();
  }

  struct Result {
    Call call = Call::dense;
    std::string problem;  ///< empty when the result was verified
  };

  /// One random call; never throws (an exception is reported as the problem).
  /// With EWISE_TRACE_CALLS set, each call's start and end go to stderr with a number unique in
  /// the process: the calls of a hung run are the ones that started and did not end.
  Result step() {
    static const bool trace = std::getenv("EWISE_TRACE_CALLS") != nullptr;
    static std::atomic<int> serial{0};
    Result r;
    r.call = pick_call();
    const int id = serial++;
    if (trace) std::fprintf(stderr, "[trace] %d start %s stream %p\n", id, call_name(r.call), static_cast<void*>(stream_));
    try {
      r.problem = run(r.call);
    } catch (const std::exception& e) {
      r.problem = std::string("threw: ") + e.what();
    }
    if (trace) std::fprintf(stderr, "[trace] %d end\n", id);
    return r;
  }

  /// One call of the given kind (throws what the call throws).
  std::string run(Call c) {
    switch (c) {
      case Call::dense: return dense_case(false, false);
      case Call::dense_shared: return dense_case(true, false);
      case Call::dense_allocating: return dense_allocating();
      case Call::dense_functor: return dense_case(false, true);
      case Call::coo_multiply: return coo_multiply();
      case Call::coo_multiply_dense: return coo_multiply_dense();
      case Call::coo_coalesce_csr: return coo_coalesce_csr();
      case Call::coo_to_dense: return coo_to_dense_case();
      case Call::dense_to_coo: return dense_to_coo_case();
      case Call::coo_check_indices: return coo_check_indices();
      case Call::npy_round_trip: return npy_round_trip();
      case Call::mtx_round_trip: return mtx_round_trip();
      case Call::coo_union: return coo_union();
      case Call::coo_union_dense: return coo_union_dense();
    }
    return "unknown call kind";
  }

 private:
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::uint64_t next_seed() { return rng_(); }
  /// The six original dtypes: sparse values and the file formats' round trips take them.
  DType any_dtype() { return kAllDTypes[pick(0, 5)]; }
  DType any_dense_dtype() { return kAllDTypes[pick(0, static_cast<int>(std::size(kAllDTypes)) - 1)]; }

  /// A random operation defined for operand dtypes a and b under NumPy's rules (add where the
  /// one drawn is not: bool subtract, bitwise on floats), and the dtype it returns.
  struct DenseOp {
    BinaryOp op;
    DType a, b, result;
  };
  DenseOp dense_op(DType a, DType b) {
    DenseOp d{kAllOps[pick(0, static_cast<int>(std::size(kAllOps)) - 1)], a, b, a};
    try {
      d.result = op_types(d.op, Promotion::numpy, {a}, {b}).result;
    } catch (const InvalidArgument&) {
      d.op = BinaryOp::add;
      d.result = op_types(d.op, Promotion::numpy, {a}, {b}).result;
    }
    return d;
  }
  /// dense_op of two random dtypes, equal half of the time.
  DenseOp any_dense_op() {
    const DType a = any_dense_dtype();
    return dense_op(a, pick(0, 1) ? a : any_dense_dtype());
  }
  IndexType any_index() { return pick(0, 1) ? IndexType::i32 : IndexType::i64; }

  Call pick_call() {
    const auto& w = options_.weights;
    std::discrete_distribution<int> d(w.begin(), w.end());
    return static_cast<Call>(d(rng_));
  }

  // ---- dense --------------------------------------------------------------------------------

  /// A random device operand of `shape`: contiguous, transposed (last two dims), reversed
  /// (negative strides) or misaligned by one element; filled with random values.
  TensorView make_operand(DeviceBuffer& storage, DType t, const Dims& shape) {
    const int r = shape.size();
    const int layout = pick(0, 3);
    Dims stored = shape;
    const bool transposed = layout == 1 && r >= 2;
    if (transposed) std::swap(stored[r - 1], stored[r - 2]);
    TensorDesc d = TensorDesc::contiguous(t, stored);
    const std::int64_t offset = layout == 3 ? 1 : 0;
    const std::size_t elem = dtype_size(t);
    storage = DeviceBuffer(static_cast<std::size_t>(d.numel() + offset) * elem, stream_);
    auto* base = static_cast<std::byte*>(storage.data()) + offset * static_cast<std::int64_t>(elem);
    if (transposed) {
      std::swap(d.shape[r - 1], d.shape[r - 2]);
      std::swap(d.strides[r - 1], d.strides[r - 2]);
    }
    if (layout == 2 && d.numel() > 0) {  // reversed along every dim
      base += d.max_offset() * static_cast<std::int64_t>(elem);
      for (int i = 0; i < r; ++i) d.strides[i] = -d.strides[i];
    }
    TensorView v{base, d, Memory::device};
    verify::fill_random(v, next_seed(), {}, stream_);
    return v;
  }

  /// A full shape and two input shapes that broadcast to it.
  std::pair<Dims, Dims> input_shapes(const Dims& full) {
    const auto one = [&] {
      Dims s;
      const int drop = pick(0, full.size() - 1);
      for (int d = drop; d < full.size(); ++d) s.push_back(pick(0, 3) == 0 ? 1 : full[d]);
      return s;
    };
    Dims a = one();
    return {a, one()};
  }

  Dims random_full_shape() {
    Dims full;
    const int rank = pick(1, 4);
    for (int d = 0; d < rank; ++d) full.push_back(pick(1, 1 << pick(0, options_.max_extent_log2)));
    while (full.product() > options_.max_elements) {  // halve the largest extent
      int big = 0;
      for (int d = 1; d < rank; ++d) big = full[d] > full[big] ? d : big;
      full[big] = (full[big] + 1) / 2;
    }
    return full;
  }

  /// Exact, but power on floats: CUDA's pow and libm's differ in the last bit (ewise/ops.hpp).
  static verify::Tolerance tolerance_of(BinaryOp op, DType result) {
    return op == BinaryOp::power && is_floating(result) ? verify::default_tolerance(result)
                                                        : verify::Tolerance{};
  }

  std::string compare_dense(const ConstTensorView& got, const HostTensor& want,
                            const std::string& what, verify::Tolerance tolerance = {}) {
    const verify::CompareReport r = verify::compare(got, want.view(), tolerance, stream_);
    return r.ok() ? "" : what + ": " + r.str();
  }

  std::string dense_case(bool shared_input, bool functor) {
    constexpr DType functor_dtypes[] = {DType::f16, DType::f64, DType::i32};
    const DType one = functor ? functor_dtypes[pick(0, 2)] : DType::f32;
    DenseOp d = shared_input ? dense_op(any_dense_dtype(), DType::f32)  // b: the shared f32 row
                             : any_dense_op();
    if (functor) d = {BinaryOp::subtract, one, one, one};  // one dtype: a functor is not promoted
    Dims full = shared_input ? Dims{pick(1, 70), 96} : random_full_shape();
    auto [sa_shape, sb_shape] = input_shapes(full);
    DeviceBuffer sa, sb;
    const ConstTensorView a = make_operand(sa, d.a, sa_shape);
    const ConstTensorView b = shared_input ? ConstTensorView(shared_.row) : make_operand(sb, d.b, sb_shape);
    const Dims out_shape = broadcast_shapes(a.desc.shape, b.desc.shape);
    DeviceBuffer so;
    const TensorView out = make_operand(so, d.result, out_shape);  // any layout; poisoned below
    verify::poison(out, stream_);
    DenseOptions options;
    options.kernel = kAllKernels[pick(0, static_cast<int>(std::size(kAllKernels)) - 1)];
    if (functor ? !kernel_supports(options.kernel, a, b, out)
                : !kernel_supports(options.kernel, d.op, a, b, out))
      options.kernel = Kernel::automatic;
    options.threads = 32 * pick(0, 8);
    if (functor) binary<kFunctorDTypes>(ReversedSub{}, a, b, out, options, stream_);
    else binary(d.op, a, b, out, options, stream_);
    const HostTensor ha = to_host(a, stream_), hb = to_host(b, stream_);
    HostTensor want(d.result, out_shape);
    if (functor) reference_binary(BinaryOp::sub, hb.view(), ha.view(), want.view());
    else reference_binary(d.op, ha.view(), hb.view(), want.view());
    return compare_dense(out, want,
                         std::string("dense ") + (functor ? "functor b-a" : op_name(d.op)) + " " +
                             kernel_name(options.kernel) + " a " + a.desc.str() + " b " +
                             b.desc.str() + " out " + out.desc.str(),
                         tolerance_of(functor ? BinaryOp::subtract : d.op, d.result));
  }

  std::string dense_allocating() {
    const DenseOp d = any_dense_op();
    auto [sa_shape, sb_shape] = input_shapes(random_full_shape());
    DeviceBuffer sa, sb;
    const ConstTensorView a = make_operand(sa, d.a, sa_shape), b = make_operand(sb, d.b, sb_shape);
    const DeviceTensor out = binary(d.op, a, b, {}, stream_);
    const HostTensor ha = to_host(a, stream_), hb = to_host(b, stream_);
    HostTensor want(d.result, out.shape());
    reference_binary(d.op, ha.view(), hb.view(), want.view());
    return compare_dense(out, want, std::string("allocating ") + op_name(d.op) + " " + out.desc().str(),
                         tolerance_of(d.op, d.result));
  }

  // ---- sparse -------------------------------------------------------------------------------

  std::int64_t sparse_dim() { return pick(1, options_.max_sparse_dim); }

  HostCoo random_matrix(std::int64_t nrows, std::int64_t ncols, DType t, IndexType index) {
    verify::CooGenOptions o;
    o.dtype = t;
    o.index = index;
    o.unsorted = pick(0, 1) == 1;
    o.duplicate_fraction = pick(0, 2) == 0 ? 0.2 : 0.0;
    const double density = options_.max_density * pick(0, 100) / 100.0;
    return verify::random_coo(nrows, ncols, density, next_seed(), o);
  }

  std::string check_coo(const DeviceCoo& got, const HostCoo& want, const std::string& what) {
    const verify::CooCompareReport r = verify::compare_coo(got.view(), want.view(), {}, stream_);
    if (r.ok() && r.got_canonical) return "";
    return what + ": " + r.str();
  }

  std::string coo_multiply() {
    const bool shared = pick(0, 3) == 0;
    const std::int64_t nrows = shared ? 96 : sparse_dim(), ncols = shared ? 96 : sparse_dim();
    const DType t = shared ? DType::f32 : any_dtype();
    const IndexType index = shared ? IndexType::i32 : any_index();
    const HostCoo ha = random_matrix(nrows, ncols, t, index);
    const HostCoo hb_own = shared ? HostCoo() : random_matrix(nrows, ncols, t, index);
    const CooView hb = shared ? shared_.coo_host.view() : hb_own.view();
    const DeviceCoo a = to_device(ha.view(), stream_);
    const DeviceCoo b_own = shared ? DeviceCoo() : to_device(hb, stream_);
    const CooView b = shared ? shared_.coo.view() : b_own.view();
    SparseOptions o;
    constexpr CooAlgorithm algorithms[] = {CooAlgorithm::automatic,     CooAlgorithm::sort_search,
                                           CooAlgorithm::merge,         CooAlgorithm::bitmap_merge,
                                           CooAlgorithm::linear_search, CooAlgorithm::hash_merge};
    o.algorithm = algorithms[pick(0, 5)];
    if (o.algorithm == CooAlgorithm::linear_search && ha.nnz() * b.desc.nnz > kLinearSearchMaxWork)
      o.algorithm = CooAlgorithm::automatic;  // refused above that size, by design
    o.drop_zeros = pick(0, 3) == 0;
    const DeviceCoo c = multiply(a.view(), b, o, stream_);
    return check_coo(c, reference_multiply(ha.view(), hb, o),
                     std::string("multiply ") + coo_algorithm_name(o.algorithm) + " " + ha.desc().str());
  }

  std::string coo_multiply_dense() {
    const std::int64_t nrows = sparse_dim(), ncols = sparse_dim();
    const DType t = any_dtype();
    const HostCoo ha = random_matrix(nrows, ncols, t, any_index());
    const Dims shapes[] = {{nrows, ncols}, {1, ncols}, {ncols}, {nrows, 1}, {}};
    const Dims shape = shapes[pick(0, 4)];
    DeviceBuffer storage;
    const ConstTensorView d = make_operand(storage, t, shape);
    const HostTensor hd = to_host(d, stream_);
    const DeviceCoo a = to_device(ha.view(), stream_);
    const DeviceCoo c = multiply(a.view(), d, {}, stream_);
    return check_coo(c, reference_multiply(ha.view(), hd.view()),
                     "multiply by dense " + d.desc.str() + " " + ha.desc().str());
  }

  std::string coo_union() {
    const std::int64_t nrows = sparse_dim(), ncols = sparse_dim();
    const DType t = any_dtype();
    const IndexType index = any_index();
    const HostCoo ha = random_matrix(nrows, ncols, t, index);
    const HostCoo hb = random_matrix(nrows, ncols, t, index);
    const DeviceCoo a = to_device(ha.view(), stream_), b = to_device(hb.view(), stream_);
    constexpr BinaryOp ops[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max};
    const BinaryOp op = ops[pick(0, 3)];
    SparseOptions o;
    o.drop_zeros = pick(0, 3) == 0;
    o.fill_a = pick(-2, 2);
    o.fill_b = pick(-2, 2);
    const DeviceCoo c = combine(op, a.view(), b.view(), o, stream_);
    return check_coo(c, reference_combine(op, ha.view(), hb.view(), o),
                     std::string("combine ") + op_name(op) + " " + ha.desc().str());
  }

  std::string coo_union_dense() {
    const std::int64_t nrows = sparse_dim(), ncols = sparse_dim();
    const DType t = any_dtype();
    const HostCoo ha = random_matrix(nrows, ncols, t, any_index());
    const DeviceCoo a = to_device(ha.view(), stream_);
    constexpr BinaryOp ops[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max};
    const BinaryOp op = ops[pick(0, 3)];
    DeviceBuffer storage;
    const TensorView d = make_operand(storage, t, Dims{nrows, ncols});
    HostTensor want = to_host(ConstTensorView(d), stream_);
    DeviceTensor out(t, Dims{nrows, ncols}, stream_);
    if (pick(0, 1) == 0) {
      SparseOptions o;
      o.fill_a = pick(-2, 2);
      combine(op, a.view(), d, out.view(), o, stream_);
      HostTensor hd = to_host(want.view());
      combine(op, ha.view(), hd.view(), want.view(), o);
      return compare_dense(out, want, std::string("combine dense ") + op_name(op) + " " +
                                          ha.desc().str());
    }
    accumulate(op, d, a.view(), {}, stream_);
    accumulate(op, want.view(), ha.view());
    return compare_dense(ConstTensorView(d), want,
                         std::string("accumulate ") + op_name(op) + " " + ha.desc().str());
  }

  std::string coo_coalesce_csr() {
    const HostCoo ha = random_matrix(sparse_dim(), sparse_dim(), any_dtype(), any_index());
    const DeviceCoo a = to_device(ha.view(), stream_);
    SparseOptions o;
    o.drop_zeros = pick(0, 3) == 0;
    const DeviceCoo c = coalesce(a.view(), o, stream_);
    const HostCoo want = reference_coalesce(ha.view(), o);
    const std::string problem = check_coo(c, want, "coalesce " + ha.desc().str());
    if (!problem.empty()) return problem;
    const DeviceTensor offsets = coo_to_csr_row_offsets(c.view(), {}, stream_);
    return compare_dense(offsets, reference_coo_to_csr_row_offsets(want.view()),
                         "coo_to_csr_row_offsets " + ha.desc().str());
  }

  std::string coo_to_dense_case() {
    const HostCoo ha = random_matrix(sparse_dim(), sparse_dim(), any_dtype(), any_index());
    const DeviceCoo a = to_device(ha.view(), stream_);
    const DeviceTensor d = coo_to_dense(a.view(), {}, stream_);
    return compare_dense(d, reference_coo_to_dense(ha.view()), "coo_to_dense " + ha.desc().str());
  }

  std::string dense_to_coo_case() {
    const HostTensor hd = reference_coo_to_dense(
        random_matrix(sparse_dim(), sparse_dim(), any_dtype(), IndexType::i32).view());
    const IndexType index = any_index();
    // The same values in a random layout: copied in by max(x, x) == x.
    const DeviceTensor contiguous = to_device(hd, stream_);
    DeviceBuffer storage;
    const TensorView d = make_operand(storage, hd.dtype(), hd.shape());
    binary(BinaryOp::max, contiguous.view(), contiguous.view(), d, {}, stream_);
    const DeviceCoo c = dense_to_coo(d, index, stream_);
    return check_coo(c, reference_dense_to_coo(hd.view(), index),
                     "dense_to_coo " + d.desc.str() + " " + index_name(index));
  }

  std::string coo_check_indices() {
    HostCoo h = random_matrix(sparse_dim(), sparse_dim(), DType::f32, any_index());
    const bool corrupt = h.nnz() > 0 && pick(0, 1) == 1;
    std::int64_t bad_entry = -1;
    if (corrupt) {  // one row index out of range
      bad_entry = pick(0, static_cast<int>(h.nnz() - 1));
      if (h.desc().index == IndexType::i32)
        static_cast<std::int32_t*>(h.rows())[bad_entry] = static_cast<std::int32_t>(h.desc().nrows);
      else
        static_cast<std::int64_t*>(h.rows())[bad_entry] = h.desc().nrows;
    }
    const DeviceCoo d = to_device(h.view(), stream_);
    try {
      check_indices(d.view(), "soak", stream_);
    } catch (const InvalidArgument& e) {
      if (!corrupt) return std::string("check_indices rejected a valid matrix: ") + e.what();
      if (std::string(e.what()).find(std::to_string(bad_entry)) == std::string::npos)
        return std::string("check_indices did not name entry ") + std::to_string(bad_entry) + ": " + e.what();
      return "";
    }
    return corrupt ? "check_indices accepted a row index out of range at entry " + std::to_string(bad_entry) : "";
  }

  // ---- files --------------------------------------------------------------------------------

  std::string scratch_path(const char* ext) {
    return (std::filesystem::path(options_.scratch_dir) /
            ("ewise-soak-" + std::to_string(next_seed()) + ext)).string();
  }

  std::string npy_round_trip() {
    const DType t = any_dtype();
    DeviceBuffer storage;
    const ConstTensorView v = make_operand(storage, t, random_full_shape());
    const std::string path = scratch_path(".npy");
    io::NpyWriteOptions o;
    o.fortran_order = pick(0, 1) == 1;
    io::write_npy(path, v, o, stream_);
    const HostTensor back = io::read_npy(path);
    std::filesystem::remove(path);
    return compare_dense(v, back, "npy round trip " + v.desc.str());
  }

  std::string mtx_round_trip() {
    const DType t = pick(0, 1) ? DType::f64 : DType::i64;  // what read_mtx returns
    const HostCoo h = reference_coalesce(random_matrix(sparse_dim(), sparse_dim(), t, any_index()).view());
    const DeviceCoo d = to_device(h.view(), stream_);
    const std::string path = scratch_path(".mtx");
    io::write_mtx(path, d.view(), stream_);
    const HostCoo back = io::read_mtx(path);
    std::filesystem::remove(path);
    const verify::CooCompareReport r = verify::compare_coo(back.view(), h.view(), {});
    return r.ok() ? "" : "mtx round trip " + h.desc().str() + ": " + r.str();
  }

  std::mt19937_64 rng_;
  const SharedInputs& shared_;
  cudaStream_t stream_;
  CallerOptions options_;
};

}  // namespace ewise::soak
