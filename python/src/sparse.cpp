// python/src/sparse.cpp — the sparse entry points of `ewise._ewise` (CPU backend: the Python
// layer hands them SciPy's COO arrays). A result's arrays are handed to NumPy without a copy:
// the HostCoo moves into a capsule that owns them.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <string>
#include <utility>

#include "ewise/sparse.hpp"
#include "views.hpp"

namespace ewise::python {
namespace {

// A COO operand as the Python layer passes it: three 1-D arrays and a shape. Holding the
// arrays keeps their producers alive for the call.
struct Coo {
  InArray rows, cols, vals;
  std::int64_t nrows, ncols;

  CooView view() const {
    return coo_view(const_view(rows), const_view(cols), const_view(vals), nrows, ncols);
  }
};

// A NumPy array over one of the result's arrays (n elements), owned by `owner`. A null array
// (nnz 0) gets a pointer NumPy can hold, to no elements.
nb::object numpy_array(const void* data, std::size_t n, nb::dlpack::dtype dtype,
                       nb::handle owner) {
  static const std::int64_t kNothing = 0;
  const std::size_t shape[1] = {n};
  return nb::ndarray<nb::numpy>(const_cast<void*>(data != nullptr ? data : &kNothing), 1, shape,
                                owner, nullptr, dtype)
      .cast();
}

// (rows, cols, vals) NumPy arrays over the result's own memory.
nb::tuple to_python(HostCoo&& result) {
  auto* owned = new HostCoo(std::move(result));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<HostCoo*>(p); });
  const auto n = static_cast<std::size_t>(owned->nnz());
  const nb::dlpack::dtype index = dlpack_dtype(
      owned->desc().index == IndexType::i32 ? DType::i32 : DType::i64);
  return nb::make_tuple(numpy_array(owned->rows(), n, index, owner),
                        numpy_array(owned->cols(), n, index, owner),
                        numpy_array(owned->vals(), n, dlpack_dtype(owned->desc().dtype), owner));
}

// The algorithm travels by name, as the C++ API prints it.
std::string algorithm_of(const SparseOptions& o) { return coo_algorithm_name(o.algorithm); }
void set_algorithm(SparseOptions& o, const std::string& name) {
  o.algorithm = parse_coo_algorithm(name);
}

}  // namespace

void bind_sparse(nb::module_& m) {
  nb::class_<Coo>(m, "Coo", "a COO operand: row, column and value arrays and a shape")
      .def(nb::init<InArray, InArray, InArray, std::int64_t, std::int64_t>(), nb::arg("rows"),
           nb::arg("cols"), nb::arg("vals"), nb::arg("nrows"), nb::arg("ncols"));

  nb::class_<SparseOptions>(m, "SparseOptions", "ewise::SparseOptions (memory left default)")
      .def(nb::init<>())
      .def_prop_rw("algorithm", &algorithm_of, &set_algorithm)
      .def_rw("validate_indices", &SparseOptions::validate_indices)
      .def_rw("drop_zeros", &SparseOptions::drop_zeros)
      .def_rw("fill_a", &SparseOptions::fill_a)
      .def_rw("fill_b", &SparseOptions::fill_b);

  m.def("multiply", [](const Coo& a, const Coo& b, const SparseOptions& o) {
    const CooView va = a.view(), vb = b.view();
    return to_python(multiply<HostCoo>(va, vb, o));
  }, "a ⊙ b (COO ⊙ COO): (rows, cols, vals) of the canonical result");
  m.def("multiply_dense", [](const Coo& a, const InArray& dense, const SparseOptions& o) {
    const CooView va = a.view();
    return to_python(multiply<HostCoo>(va, const_view(dense), o));
  }, "a ⊙ dense in a's pattern: (rows, cols, vals) of the canonical result");
  m.def("combine", [](const std::string& op, const Coo& a, const Coo& b,
                      const SparseOptions& o) {
    const CooView va = a.view(), vb = b.view();
    return to_python(combine<HostCoo>(parse_op(op), va, vb, o));
  }, "a op b over the union (COO ⊕ COO): (rows, cols, vals) of the canonical result");
  m.def("combine_dense", [](const std::string& op, const Coo& a, const InArray& dense,
                            const OutArray& out, const SparseOptions& o) {
    combine(parse_op(op), a.view(), const_view(dense), view(out), o);
  }, "out = op(densify(a), dense)");
  m.def("accumulate", [](const std::string& op, const OutArray& dense, const Coo& a,
                         const SparseOptions& o) {
    accumulate(parse_op(op), view(dense), a.view(), o);
  }, "dense = op(dense, a) at a's coordinates, in place");
}

}  // namespace ewise::python
