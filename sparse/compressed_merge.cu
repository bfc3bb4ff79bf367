// sparse/compressed_merge.cu — the intersection (multiply) and the union (combine) of two
// canonical compressed operands of one format on the GPU, merged as they are stored: the single
// pass of single_pass.cuh over their offsets and indices, their checks read back with its total.
#include <utility>

#include "drop_zeros.cuh"
#include "ewise/error.hpp"
#include "internal.hpp"
#include "single_pass.cuh"

namespace ewise::sparse_detail {
namespace {

/// v as single_pass_merge reads it: a COO view in v's orientation, its rows null and its
/// columns the minor indices.
CooView merged_view(const CompressedView& v) {
  CooDesc d = v.desc;
  d.nrows = v.major_extent();
  d.ncols = v.minor_extent();
  return {nullptr, v.indices, v.vals, d, v.memory};
}

/// The staging's range and order checks of v (merged_view), into the words of Status slot
/// `slot` from its third (none unless validate).
EntryCheck merged_check(const CooView& v, Status& status, int slot, bool validate) {
  EntryCheck c;
  c.nrows = v.desc.nrows;
  c.ncols = v.desc.ncols;
  c.canonical = true;
  if (validate) c.words = status.compressed_slot(slot) + 2;
  return c;
}

}  // namespace

void read_compressed_status(const CompressedPair& c, Status& status, bool validate,
                            const char* what, cudaStream_t stream) {
  status.read();
  if (validate)
    for (int slot = 0; slot < 2; ++slot)
      throw_expand_check(slot == c.q_slot ? c.q : c.s, status.compressed_words(slot), stream);
  if (status.total(kBadSplitSlot) == -1) return;
  if (validate) {
    // Only a broken promise in tiles that staged nothing splits so: the operands' whole
    // checks name it.
    DeviceBuffer words(sizeof(unsigned long long) * 2 * kExpandCheckWords, stream);
    EWISE_CUDA_CHECK(cudaMemsetAsync(words.data(), 0xFF, words.size(), stream));
    auto* w = static_cast<unsigned long long*>(words.data());
    ExpandCheck checks[2] = {c.q_slot == 0 ? c.q : c.s, c.q_slot == 0 ? c.s : c.q};
    DeviceBuffer majors[2];
    for (int i = 0; i < 2; ++i) {
      const CompressedView& v = checks[i].view;
      majors[i] = DeviceBuffer(static_cast<std::size_t>(v.desc.nnz) * index_size(v.desc.index),
                               stream);
      device_expand_offsets(v, majors[i].data(), w + i * kExpandCheckWords, stream);
      checks[i].majors = majors[i].data();
    }
    device_read_expand_checks(checks, 2, w, stream);
  }
  EWISE_EXPECTS(!validate, what, ": an operand marked canonical is not sorted");
}

DeviceCoo device_compressed_merge(const CompressedView& a, const CompressedView& b,
                                  const UnionArgs* u, const SparseOptions& options,
                                  cudaStream_t stream) {
  Status status(stream);
  const bool validate = options.validate_indices;
  // The intersection's Q has the fewer entries (its outputs are Q positions); the union's is a.
  const bool q_is_a = u != nullptr || a.desc.nnz <= b.desc.nnz;
  const int q_slot = q_is_a ? 0 : 1;
  const CompressedView& q = q_is_a ? a : b;
  const CompressedView& s = q_is_a ? b : a;
  const CooView vq = merged_view(q), vs = merged_view(s);
  const CompressedPair pair{{q, nullptr, q_is_a ? "a" : "b"},
                            {s, nullptr, q_is_a ? "b" : "a"},
                            validate ? status.compressed_slot(q_slot) : nullptr,
                            validate ? status.compressed_slot(1 - q_slot) : nullptr,
                            q_slot};
  const EntryCheck qc = merged_check(vq, status, q_slot, validate),
                   sc = merged_check(vs, status, 1 - q_slot, validate);
  DeviceCoo out =
      u ? single_pass_merge<SetOp::unite, true>(
              vq, vs, [&](auto f) { with_union_op(u->op, f); }, u->fill_a, u->fill_b, qc, sc,
              validate, "combine", status, stream, &pair)
        : single_pass_merge<SetOp::intersect, true>(
              vq, vs, [](auto f) { f(ops::Mul{}); }, 0.0, 0.0, qc, sc, validate, "multiply",
              status, stream, &pair);
  return options.drop_zeros ? drop_zero_entries(std::move(out), status, stream) : std::move(out);
}

}  // namespace ewise::sparse_detail
