// sparse/finalize.cu — FinalizeArgs and finalize (finalize.cuh).
#include "ewise/detail/launch.cuh"
#include "finalize.cuh"
#include "policy.hpp"

namespace ewise::sparse_detail {

FinalizeArgs FinalizeArgs::sums(const EntrySeq& q, const std::int64_t* heads, std::int64_t nout) {
  FinalizeArgs a;
  a.nout = nout;
  a.heads = heads;
  a.q = q;
  return a;
}

FinalizeArgs FinalizeArgs::products(const EntrySeq& q, const EntrySeq& s, const std::int64_t* heads,
                                    std::int64_t nout, const std::int64_t* matchpos, MatchIndex index) {
  FinalizeArgs a = sums(q, heads, nout);
  a.factor = Factor::sparse;
  a.matchpos = matchpos;
  a.match_index = index;
  a.s = s;
  return a;
}

FinalizeArgs& FinalizeArgs::to_coo(DeviceCoo& out) {
  out_rows = index_array(out.rows(), out.desc().index);
  out_cols = index_array(out.cols(), out.desc().index);
  out_vals = out.vals();
  return *this;
}

FinalizeArgs& FinalizeArgs::to_dense(void* dense) {
  out_dense = dense;
  return *this;
}

namespace {

template <class T>
__global__ void finalize_kernel(FinalizeArgs a) {
  for (std::int64_t u = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; u < a.nout;
       u += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t j = a.heads ? a.heads[u] : u;
    std::int64_t p = 0;
    if (a.factor == Factor::sparse)
      p = a.matchpos[a.match_index == MatchIndex::storage ? a.q.storage(j) : j];
    finalize_entry<T>(a, u, j, p);
  }
}

}  // namespace

void finalize(const FinalizeArgs& args, DType dtype, cudaStream_t stream) {
  if (args.nout == 0) return;
  detail::dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    detail::launch("sparse finalize", finalize_kernel<T>, dim3(blocks_for(args.nout)), dim3(kBlock),
                   0, stream, args);
  });
}

}  // namespace ewise::sparse_detail
