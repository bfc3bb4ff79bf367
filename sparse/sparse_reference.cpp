// sparse/sparse_reference.cpp — the public CPU reference (ewise/sparse_reference.hpp): the host
// forms of ewise/sparse.hpp (api.cpp: each check once, the operands promoted, then the CPU
// backend of sparse/reference.cpp), on host views.
#include "ewise/sparse_reference.hpp"

#include "ewise/error.hpp"
#include "ewise/sparse.hpp"

namespace ewise {
namespace {

/// Throws unless m is a host view (the reference's operands; the others must share its memory).
void require_host(const CooView& m, const char* what) {
  EWISE_EXPECTS(m.memory == Memory::host, "the CPU reference needs host views; ", what,
                " is in device memory");
}

}  // namespace

HostCoo reference_multiply(const CooView& a, const CooView& b, const SparseOptions& options) {
  require_host(a, "a");  // b must share a's memory
  return multiply<HostCoo>(a, b, options);
}

HostCoo reference_multiply(const CooView& a, const ConstTensorView& dense,
                           const SparseOptions& options) {
  require_host(a, "a");
  return multiply<HostCoo>(a, dense, options);
}

void reference_multiply_values(const CooView& a, const ConstTensorView& dense,
                               const TensorView& out_vals, const SparseOptions& options) {
  require_host(a, "a");
  multiply_values(a, dense, out_vals, options);
}

HostCoo reference_combine(BinaryOp op, const CooView& a, const CooView& b,
                          const SparseOptions& options) {
  require_host(a, "a");
  return combine<HostCoo>(op, a, b, options);
}

void reference_combine(BinaryOp op, const CooView& a, const ConstTensorView& dense,
                       const TensorView& out, const SparseOptions& options) {
  require_host(a, "a");
  combine(op, a, dense, out, options);
}

void reference_accumulate(BinaryOp op, const TensorView& dense, const CooView& a,
                          const SparseOptions& options) {
  require_host(a, "a");
  accumulate(op, dense, a, options);
}

HostCoo reference_coalesce(const CooView& a, const SparseOptions& options) {
  require_host(a, "a");
  return coalesce<HostCoo>(a, options);
}

HostCoo reference_dense_to_coo(const ConstTensorView& dense, IndexType index) {
  EWISE_EXPECTS(dense.memory == Memory::host, "the CPU reference needs host views; dense is in ",
                "device memory");
  return dense_to_coo<HostCoo>(dense, index);
}

HostTensor reference_coo_to_dense(const CooView& a) {
  require_host(a, "a");
  return coo_to_dense<HostTensor>(a);
}

HostTensor reference_coo_to_csr_row_offsets(const CooView& a) {
  require_host(a, "a");
  return coo_to_csr_row_offsets<HostTensor>(a);
}

}  // namespace ewise
