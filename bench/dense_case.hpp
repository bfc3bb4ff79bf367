// bench/dense_case.hpp — a dense benchmark case: operands in rotated sets, verified then timed.
#pragma once

#include <string>
#include <vector>

#include "ewise/broadcast.hpp"
#include "ewise/dense.hpp"
#include "harness.hpp"

namespace ewise::bench {

/// out = a op b over a_shape and b_shape (NumPy broadcasting); a may be the transposed view of
/// a contiguous matrix (strides (1, rows)).
struct DenseSpec {
  std::string name;
  BinaryOp op = BinaryOp::add;
  DType dtype = DType::f32;
  Dims a_shape, b_shape;
  bool a_transposed = false;
  /// a and out start this many elements past a 16-byte boundary (b stays aligned).
  std::int64_t offset = 0;
};

/// The operands of a DenseSpec: random inputs and an output, in as many sets as rotation needs.
class DenseOperands {
 public:
  DenseOperands(Bench& bench, const DenseSpec& spec, int max_sets);

  const DenseSpec& spec() const noexcept { return spec_; }
  int sets() const noexcept { return sets_; }
  ConstTensorView a(std::int64_t i) const { return {shifted(a_, i), a_desc_, Memory::device}; }
  ConstTensorView b(std::int64_t i) const { return {b_.at(i), b_desc_, Memory::device}; }
  TensorView out(std::int64_t i) const { return {shifted(out_, i), out_desc_, Memory::device}; }
  std::int64_t out_numel() const { return out_desc_.numel(); }
  /// Bytes moved by one operation: each input read once, the output written once.
  double bytes() const;
  /// op, shapes and layout as record parameters (what peers.py needs to rebuild the case).
  std::vector<Param> params() const;

 private:
  void* shifted(const Arena& arena, std::int64_t i) const {
    return static_cast<std::byte*>(arena.at(i)) +
           spec_.offset * static_cast<std::int64_t>(dtype_size(spec_.dtype));
  }

  DenseSpec spec_;
  TensorDesc a_desc_, b_desc_, out_desc_;
  int sets_;
  Arena a_, b_, out_;
};

/// Verifies (kernel refusals recorded as "refused") and times one kernel on the operands.
/// Returns the timing (runs == 0 when refused or failed).
Stats time_dense(Bench& bench, const std::string& suite, const DenseOperands& d,
                 const DenseOptions& options, std::vector<Param> extra);

}  // namespace ewise::bench
