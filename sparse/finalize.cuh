// sparse/finalize.cuh — finalize: the result of a sequence's runs of equal keys, each run's
// values summed (and multiplied by the sum of its match's run in another sequence), rounded once
// and written to a COO result or a dense table (finalize.cu); finalize_entry, one output's work,
// for kernels that know the run and its match themselves (merge.cu).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/detail/types.cuh"
#include "ewise/ops.hpp"
#include "keys.cuh"
#include "run_sums.cuh"
#include "sort.cuh"

namespace ewise::sparse_detail {

enum class Factor : std::uint8_t { none, sparse };
enum class MatchIndex : std::uint8_t { position, storage };

/// Output u comes from the run of equal keys starting at position heads[u] (u when heads is
/// null) of the sequence q: its values summed in sequence order, times the factor (the sum of
/// the matching run of s), rounded once, written at (row, col) to slot u of the COO arrays or
/// to out_dense. Made by sums() or products(), then to_coo() or to_dense().
struct FinalizeArgs {
  std::int64_t nout = 0;
  const std::int64_t* heads = nullptr;
  EntrySeq q;  ///< the sequence whose runs become outputs
  Factor factor = Factor::none;
  const std::int64_t* matchpos = nullptr;  ///< s position of each q run's match, indexed by
  MatchIndex match_index = MatchIndex::position;  ///< the run's position or storage index
  EntrySeq s;  ///< unsorted: every later equal key belongs to the run
  IndexArray out_rows, out_cols;
  void* out_vals = nullptr;
  void* out_dense = nullptr;  ///< when set: row-major nrows x ncols, instead of the COO arrays

  /// Each run of q summed.
  static FinalizeArgs sums(const EntrySeq& q, const std::int64_t* heads, std::int64_t nout);
  /// Each run of q summed, times the sum of its matching run of s, which starts at s position
  /// matchpos[the q run's position or storage index, as `index` says] (kernels that know the
  /// match themselves pass no matchpos).
  static FinalizeArgs products(const EntrySeq& q, const EntrySeq& s, const std::int64_t* heads,
                               std::int64_t nout, const std::int64_t* matchpos, MatchIndex index);
  FinalizeArgs& to_coo(DeviceCoo& out);
  FinalizeArgs& to_dense(void* dense);
};
void finalize(const FinalizeArgs& args, DType dtype, cudaStream_t stream);

/// Output u of finalize: the q run starting at sequence position j, matched (Factor::sparse)
/// at s position p. For kernels that know j and p themselves (heads and matchpos unused).
template <class T>
__device__ void finalize_entry(const FinalizeArgs& a, std::int64_t u, std::int64_t j, std::int64_t p) {
  using C = detail::compute_t<T>;
  const auto* qv = static_cast<const T*>(a.q.vals);
  std::int64_t row, col;
  a.q.coords(j, row, col);
  const std::uint64_t ncols = a.q.keys.ncols;
  const std::uint64_t key = static_cast<std::uint64_t>(row) * ncols + static_cast<std::uint64_t>(col);
  C acc = detail::to_compute(qv[a.q.storage(j)]);
  if (!a.q.unique)
    for (std::int64_t jj = j + 1; jj < a.q.n && a.q.keys[jj] == key; ++jj)
      acc = ops::Add{}(acc, detail::to_compute(qv[a.q.storage(jj)]));
  if (a.factor == Factor::sparse) acc = ops::Mul{}(acc, run_sum<T>(a.s, p, key));
  if (a.out_dense) {
    static_cast<T*>(a.out_dense)[row * static_cast<std::int64_t>(ncols) + col] = detail::from_compute<T>(acc);
  } else {
    a.out_rows.set(u, row);
    a.out_cols.set(u, col);
    static_cast<T*>(a.out_vals)[u] = detail::from_compute<T>(acc);
  }
}

}  // namespace ewise::sparse_detail
