// sparse/scale_entries.cu — the pipeline of coalesce and multiply(COO, dense) on the GPU
// (scale_entries.hpp): one pass over a canonical matrix's entries (entries_pass.cuh), or a
// radix sort and one pass over its runs of equal keys (sorted_runs.cuh).
#include <algorithm>
#include <optional>
#include <utility>

#include "drop_zeros.cuh"
#include "entries_pass.cuh"
#include "internal.hpp"
#include "scale_entries.hpp"
#include "sort.cuh"
#include "sorted_runs.cuh"

namespace ewise::sparse_detail {

DeviceCoo scale_entries(const CooView& a, const DenseOperand* dense, const SparseOptions& options,
                        cudaStream_t stream, bool sums) {
  const CooDesc& desc = a.desc;
  const std::int64_t n = desc.nnz;
  CooDesc out_desc = result_desc(desc, n);
  if (sums && (desc.dtype == DType::f16 || desc.dtype == DType::bf16)) out_desc.dtype = DType::f32;
  if (n == 0) return DeviceCoo(CooDesc{out_desc.nrows, out_desc.ncols, 0, out_desc.index,
                                       out_desc.dtype, true}, stream);
  constexpr int kTotal = 0;  // status total slot
  const bool sorts = !desc.canonical;
  // Trusted canonical input without drop_zeros needs no status: the call does not synchronize.
  std::optional<Status> status;
  if (sorts || options.validate_indices || options.drop_zeros) status.emplace(stream);
  unsigned long long* check = status ? status->fused(a, "a", options.validate_indices).words : nullptr;
  // Room for every entry; the sorting path shrinks the count to the runs it keeps.
  DeviceCoo out(out_desc, stream);
  detail::dispatch_dtype(desc.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const DenseFactor<T> factor = dense ? factor_of<T>(*dense) : DenseFactor<T>{};
    with_index(desc.index, [&](auto itag) {
      using I = decltype(itag);
      const auto* rows = static_cast<const I*>(a.rows);
      const auto* cols = static_cast<const I*>(a.cols);
      const auto* vals = static_cast<const T*>(a.vals);
      auto* out_rows = static_cast<I*>(out.rows());
      auto* out_cols = static_cast<I*>(out.cols());
      if (!sorts) {
        auto* out_vals = static_cast<T*>(out.vals());
        launch_entries<T, I>("sparse canonical_entries",
                             {rows, cols, vals, n, desc.nrows, desc.ncols, check, factor,
                              out_rows, out_cols, out_vals},
                             stream);
        return;
      }
      const std::int64_t tiles = tiles_for(n);
      const bool wk = wide_keys(desc);
      SortScratch sort(n, wk, sizeof(T), key_bits(desc), stream, SinglePassTiles::bytes(tiles));
      const SinglePassTiles single_pass(sort.extra(), tiles);
      // sort_input resets the tiles: at least one thread per tile.
      const unsigned grid = std::max(blocks_for(n), static_cast<unsigned>((tiles + kBlock - 1) / kBlock));
      const auto run = [&](auto ktag, auto vtag) {
        using K = decltype(ktag);
        using V = decltype(vtag);
        detail::launch("sparse sort_input", sort_input_kernel<T, I, K>, dim3(grid), dim3(kBlock), 0,
                       stream, rows, cols, vals, n, desc.nrows, desc.ncols, check,
                       static_cast<K*>(sort.keys_in()), static_cast<T*>(sort.vals_in()), single_pass);
        sort.sort();
        const RunsArgs<T, K, I, V> args{static_cast<const K*>(sort.keys()),
                                        static_cast<const T*>(sort.vals()), n,
                                        static_cast<std::uint64_t>(desc.ncols),
                                        static_cast<std::uint64_t>(desc.nrows * desc.ncols),
                                        factor, options.drop_zeros, out_rows, out_cols,
                                        static_cast<V*>(out.vals()), single_pass,
                                        status->total_slot(kTotal)};
        detail::launch("sparse sorted_runs", sorted_runs_kernel<T, K, I, V>,
                       dim3(static_cast<unsigned>(tiles)), dim3(kBlock), 0, stream, args);
      };
      const auto with_value_type = [&](auto ktag) {
        if (sums) run(ktag, detail::compute_t<T>{});
        else run(ktag, T{});
      };
      if (wk) with_value_type(std::uint64_t{});
      else with_value_type(std::uint32_t{});
    });
  });
  // Canonical with drop_zeros: the compaction reads the status (and throws for bad indices).
  if (!sorts && options.drop_zeros) return drop_zero_entries(std::move(out), *status, stream);
  if (status) status->read();  // throws for bad indices
  if (sorts) out.set_nnz(status->total(kTotal));
  return out;
}

}  // namespace ewise::sparse_detail
