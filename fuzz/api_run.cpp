// fuzz/api_run.cpp — running a decoded call (api_call.hpp) on host views or on device copies
// of its operands, and reading what it left behind.
#include <cstring>
#include <deque>
#include <string>
#include <type_traits>
#include <utility>

#include "api_call.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"

namespace ewise::fuzz {
namespace {

/// Copies of a call's buffers in one memory; pointers stay valid while it lives.
class Space {
 public:
  Space(Memory memory, cudaStream_t stream) : memory_(memory), stream_(stream) {}
  /// A copy of `bytes` (nullptr when empty).
  void* put(const std::vector<std::uint8_t>& bytes) {
    if (bytes.empty()) return nullptr;
    if (memory_ == Memory::host) return host_.emplace_back(bytes).data();
    DeviceBuffer& b = device_.emplace_back(bytes.size(), stream_);
    EWISE_CUDA_CHECK(cudaMemcpyAsync(b.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice, stream_));
    return b.data();
  }
  std::vector<std::uint8_t> get(const void* p, std::size_t n) const {
    std::vector<std::uint8_t> out(n);
    if (n == 0 || p == nullptr) return out;
    if (memory_ == Memory::host) {
      std::memcpy(out.data(), p, n);
    } else {
      EWISE_CUDA_CHECK(cudaMemcpyAsync(out.data(), p, n, cudaMemcpyDeviceToHost, stream_));
      EWISE_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    return out;
  }
  CooView coo(const CooBytes& m) {
    void* r = put(m.rows);
    void* c = put(m.cols);
    void* v = put(m.vals);
    if (m.null_arrays) r = c = v = nullptr;
    return {r, c, v, m.desc, memory_};
  }
  Memory memory() const { return memory_; }

 private:
  Memory memory_;
  cudaStream_t stream_;
  std::deque<std::vector<std::uint8_t>> host_;
  std::deque<DeviceBuffer> device_;
};

template <class Coo>
HostCoo host_coo(Coo&& m, cudaStream_t stream) {
  if constexpr (std::is_same_v<std::decay_t<Coo>, HostCoo>) return std::forward<Coo>(m);
  else return to_host(m.view(), stream);
}

template <class Tensor>
HostTensor host_tensor(Tensor&& t, cudaStream_t stream) {
  if constexpr (std::is_same_v<std::decay_t<Tensor>, HostTensor>) return std::forward<Tensor>(t);
  else return to_host(t.view(), stream);
}

template <class Coo, class Tensor>
void run_in(const ApiCall& c, Space& space, void* arena, ApiResult& r, void*& out_vals,
            std::size_t& out_bytes, cudaStream_t s) {
  const std::size_t elem = dtype_size(c.dtype);
  const auto at = [&](const ArenaView& v) {
    return TensorView{static_cast<std::uint8_t*>(arena) + v.offset * static_cast<std::int64_t>(elem),
                      v.desc, space.memory()};
  };
  const auto coo_result = [&](Coo&& m) {
    r.coo = host_coo(std::move(m), s);
    r.has_coo = true;
  };
  const auto tensor_result = [&](Tensor&& t) {
    r.tensor = host_tensor(std::move(t), s);
    r.has_tensor = true;
  };
  switch (c.op) {
    case ApiOp::multiply_coo:
      return coo_result(multiply<Coo>(space.coo(c.a), space.coo(c.b), c.sparse, s));
    case ApiOp::multiply_dense:
      return coo_result(multiply<Coo>(space.coo(c.a), at(c.x), c.sparse, s));
    case ApiOp::multiply_values: {
      const CooView a = space.coo(c.a);
      const std::vector<std::uint8_t> zeros(
          static_cast<std::size_t>(c.out_vals_len) * dtype_size(c.out_vals_dtype));
      out_vals = space.put(zeros);
      out_bytes = zeros.size();
      const TensorView out{out_vals, TensorDesc::contiguous(c.out_vals_dtype, Dims{c.out_vals_len}),
                           space.memory()};
      if (c.out_vals_len > 0) verify::poison(out, s);
      return multiply_values(a, at(c.x), out, c.sparse, s);
    }
    case ApiOp::multiply_values_into_a: {
      const CooView a = space.coo(c.a);
      out_vals = const_cast<void*>(a.vals);
      out_bytes = c.a.null_arrays ? 0 : c.a.vals.size();
      const TensorView out{out_vals, TensorDesc::contiguous(c.a.desc.dtype, Dims{c.a.desc.nnz}),
                           space.memory()};
      return multiply_values(a, at(c.x), out, c.sparse, s);
    }
    case ApiOp::coalesce: return coo_result(coalesce<Coo>(space.coo(c.a), c.sparse, s));
    case ApiOp::coo_to_dense: return tensor_result(coo_to_dense<Tensor>(space.coo(c.a), c.sparse, s));
    case ApiOp::dense_to_coo:
      return coo_result(dense_to_coo<Coo>(at(c.x), c.dense_to_coo_index, s));
    case ApiOp::csr_row_offsets:
      return tensor_result(coo_to_csr_row_offsets<Tensor>(space.coo(c.a), c.sparse, s));
    case ApiOp::check_indices: return check_indices(space.coo(c.a), "a", s);
    case ApiOp::binary: {
      TensorView out = at(c.out);
      if (c.out_poisoned && c.out.desc.numel() > 0) verify::poison(out, s);
      return binary(c.binop, at(c.x), c.y_scalar ? Operand(c.scalar) : Operand(at(c.y)), out,
                    c.dense, s);
    }
    case ApiOp::combine_coo:
      return coo_result(combine<Coo>(c.binop, space.coo(c.a), space.coo(c.b), c.sparse, s));
    case ApiOp::combine_dense:
      return tensor_result(combine<Tensor>(c.binop, space.coo(c.a), at(c.x), c.sparse, s));
    case ApiOp::combine_dense_out: {
      const CooView a = space.coo(c.a);
      TensorView out = at(c.out);
      if (c.out_poisoned && c.out.desc.numel() > 0) verify::poison(out, s);
      return combine(c.binop, a, at(c.x), out, c.sparse, s);
    }
    case ApiOp::accumulate: return accumulate(c.binop, at(c.x), space.coo(c.a), c.sparse, s);
  }
}

}  // namespace

ApiResult run_api_call(const ApiCall& c, Memory memory, cudaStream_t stream) {
  ApiResult r;
  Space space(memory, stream);
  void* arena = space.put(c.arena);
  void* out_vals = nullptr;
  std::size_t out_bytes = 0;
  try {
    if (memory == Memory::host) run_in<HostCoo, HostTensor>(c, space, arena, r, out_vals, out_bytes, stream);
    else run_in<DeviceCoo, DeviceTensor>(c, space, arena, r, out_vals, out_bytes, stream);
  } catch (const InvalidArgument& e) {
    r.rejected = true;
    r.error = e.what();
    r.has_coo = r.has_tensor = false;
  }
  r.arena = space.get(arena, c.arena.size());
  r.out_vals = space.get(out_vals, out_bytes);
  return r;
}

bool tiled_shared_memory_refusal(const ApiCall& c, const ApiResult& r) {
  return c.op == ApiOp::binary && c.dense.kernel == Kernel::tiled && r.rejected &&
         r.error.find("bytes of shared memory per block") != std::string::npos;
}

}  // namespace ewise::fuzz
