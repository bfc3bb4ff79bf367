// python/src/sparse.cpp — the sparse entry points of `ewise._ewise`. The Python layer hands them
// COO operands as three 1-D arrays, CSR and CSC ones as offsets, indices and values (SciPy's and
// NumPy's on the host; CuPy's and PyTorch's on the GPU) and, for device operands, the
// producer's current stream. The operands' memory picks the backend, as in the C++ API: host
// views run multiply<HostCoo> etc. on the CPU backend, device views multiply<DeviceCoo> on
// `stream`. A result's arrays are handed over without a copy: the result matrix (COO or
// compressed) moves into a capsule that owns them, and NumPy arrays (host) or DLPack-exporting
// nanobind arrays (device; the caller imports them with its framework's from_dlpack) are views
// of it.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "ewise/compare.hpp"
#include "ewise/error.hpp"
#include "ewise/promotion.hpp"
#include "ewise/sparse.hpp"
#include "views.hpp"

namespace ewise::python {
namespace {

// A COO operand as the Python layer passes it: three 1-D arrays, a shape, and whether its
// producer promises canonical order (checked with validate_indices). Holding the arrays keeps
// their producers alive for the call.
struct Coo {
  InArray rows, cols, vals;
  std::int64_t nrows, ncols;
  bool canonical;

  CooView view() const {
    return coo_view(const_view(rows), const_view(cols), const_view(vals), nrows, ncols,
                    canonical);
  }
};

// A CSR or CSC operand as the Python layer passes it: offsets, indices and values, a shape, the
// format ("csr" or "csc"), and whether its producer promises sorted, duplicate-free slices
// (checked with validate_indices).
struct Compressed {
  InArray offsets, indices, vals;
  std::int64_t nrows, ncols;
  std::string format;
  bool canonical;

  CompressedView view() const {
    if (format != "csr" && format != "csc")
      throw nb::value_error(
          ("ewise: unknown compressed format '" + format + "' (csr or csc)").c_str());
    return compressed_view(const_view(offsets), const_view(indices), const_view(vals), nrows,
                           ncols, format == "csr" ? SparseFormat::csr : SparseFormat::csc,
                           canonical);
  }
};

// A row-sparse operand as the Python layer passes it: row indices, an (nnz, width) or (nnz,)
// block of values, the row count, and whether its producer promises rows strictly increasing.
struct Rows {
  InArray rows, vals;
  std::int64_t nrows;
  bool canonical;

  RowSparseView view() const {
    return row_sparse_view(const_view(rows), const_view(vals), nrows, canonical);
  }
};

// A device result and the Python object of the stream its arrays are freed on (the producer's
// stream object; holding it keeps a CuPy stream from being destroyed before the free is
// queued). The matrix is declared last so that it is freed first.
template <class Matrix>
struct DeviceResult {
  nb::object stream_owner;
  Matrix matrix;
};

// A 1-D array of n elements over `data`, owned by `owner`: NumPy's for host memory, nanobind's
// DLPack-exporting array (nb::array_api: __dlpack__, __dlpack_device__) for device memory (on
// the current device).
nb::object array(const void* data, std::size_t n, nb::dlpack::dtype dtype, nb::handle owner,
                 Memory memory) {
  const std::size_t shape[1] = {n};
  if (memory == Memory::host) {
    static const std::int64_t kNothing = 0;  // NumPy needs a pointer, also to no elements
    return nb::ndarray<nb::numpy>(const_cast<void*>(data != nullptr ? data : &kNothing), 1,
                                  shape, owner, nullptr, dtype)
        .cast();
  }
  int device = 0;
  EWISE_CUDA_CHECK(cudaGetDevice(&device));
  return nb::ndarray<nb::array_api>(const_cast<void*>(data), 1, shape, owner, nullptr, dtype,
                                    nb::device::cuda::value, device)
      .cast();
}

// (rows, cols, vals) over the memory of a result owned by `owner`; (None, None, None) for an
// empty device result, whose arrays may be null (the Python layer makes empty arrays of its
// framework).
nb::tuple arrays_of(const CooView& v, nb::handle owner) {
  if (v.memory == Memory::device && v.desc.nnz == 0)
    return nb::make_tuple(nb::none(), nb::none(), nb::none());
  const auto n = static_cast<std::size_t>(v.desc.nnz);
  const nb::dlpack::dtype index =
      dlpack_dtype(v.desc.index == IndexType::i32 ? DType::i32 : DType::i64);
  return nb::make_tuple(array(v.rows, n, index, owner, v.memory),
                        array(v.cols, n, index, owner, v.memory),
                        array(v.vals, n, dlpack_dtype(v.desc.dtype), owner, v.memory));
}

// (offsets, indices, vals) of a compressed result owned by `owner`; (offsets, None, None) for
// an empty device result, whose other arrays may be null.
nb::tuple arrays_of(const CompressedView& v, nb::handle owner) {
  const nb::dlpack::dtype index =
      dlpack_dtype(v.desc.index == IndexType::i32 ? DType::i32 : DType::i64);
  nb::object offsets = array(v.offsets, static_cast<std::size_t>(v.major_extent() + 1), index,
                             owner, v.memory);
  if (v.memory == Memory::device && v.desc.nnz == 0)
    return nb::make_tuple(offsets, nb::none(), nb::none());
  const auto n = static_cast<std::size_t>(v.desc.nnz);
  return nb::make_tuple(offsets, array(v.indices, n, index, owner, v.memory),
                        array(v.vals, n, dlpack_dtype(v.desc.dtype), owner, v.memory));
}

// (rows, vals) of a row-sparse result owned by `owner`, vals 1-D (nnz * ncols); (None, None)
// for an empty device result, whose arrays may be null.
nb::tuple arrays_of(const RowSparseView& v, nb::handle owner) {
  if (v.memory == Memory::device && v.desc.nnz == 0) return nb::make_tuple(nb::none(), nb::none());
  const auto n = static_cast<std::size_t>(v.desc.nnz);
  return nb::make_tuple(
      array(v.rows, n, dlpack_dtype(v.desc.index == IndexType::i32 ? DType::i32 : DType::i64),
            owner, v.memory),
      array(v.vals, n * static_cast<std::size_t>(v.desc.ncols), dlpack_dtype(v.desc.dtype), owner,
            v.memory));
}

template <class Matrix>
nb::tuple to_python(Matrix&& result, nb::object stream_owner) {
  if constexpr (std::is_same_v<Matrix, HostCoo> || std::is_same_v<Matrix, HostCompressed> ||
                std::is_same_v<Matrix, HostRowSparse>) {
    auto* owned = new Matrix(std::move(result));
    nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<Matrix*>(p); });
    return arrays_of(owned->view(), owner);
  } else {
    auto* owned = new DeviceResult<Matrix>{std::move(stream_owner), std::move(result)};
    nb::capsule owner(owned,
                      [](void* p) noexcept { delete static_cast<DeviceResult<Matrix>*>(p); });
    return arrays_of(owned->matrix.view(), owner);
  }
}

// Runs `call(result_tag, stream)` on the backend of `memory` without the GIL and hands its
// matrix to Python: Host for host operands, Device for device operands (HostCoo and DeviceCoo,
// or HostCompressed and DeviceCompressed).
template <class Host, class Device, class Call>
nb::tuple sparse_result(Memory memory, std::uintptr_t stream, nb::object stream_owner, Call call) {
  if (memory == Memory::host) {
    Host result;
    {
      nb::gil_scoped_release release;
      result = call(Host{}, nullptr);
    }
    return to_python(std::move(result), std::move(stream_owner));
  }
  Device result;
  {
    nb::gil_scoped_release release;
    result = call(Device{}, as_stream(stream));
  }
  return to_python(std::move(result), std::move(stream_owner));
}

// The result types of an operand's kind: COO results for COO operands, compressed ones for
// compressed operands.
template <class Operand>
struct Results {
  using Host = HostCoo;
  using Device = DeviceCoo;
};
template <>
struct Results<Compressed> {
  using Host = HostCompressed;
  using Device = DeviceCompressed;
};
template <class Operand, class Call>
nb::tuple result_of(Memory memory, std::uintptr_t stream, nb::object stream_owner, Call call) {
  return sparse_result<typename Results<Operand>::Host, typename Results<Operand>::Device>(
      memory, stream, std::move(stream_owner), call);
}

// The algorithm and the promotion rule travel by name, as the C++ API prints them.
std::string algorithm_of(const SparseOptions& o) { return coo_algorithm_name(o.algorithm); }
void set_algorithm(SparseOptions& o, const std::string& name) {
  o.algorithm = parse_coo_algorithm(name);
}
std::string promotion_of(const SparseOptions& o) { return promotion_name(o.promotion); }
void set_promotion(SparseOptions& o, const std::string& name) {
  for (Promotion p : {Promotion::numpy, Promotion::torch})
    if (name == promotion_name(p)) {
      o.promotion = p;
      return;
    }
  throw nb::value_error(("ewise: unknown promotion rule '" + name + "' (numpy or torch)").c_str());
}

// A Python bool, int or float as the weak scalar NumPy 2 and PyTorch make of it. An int beyond
// int64 is an OverflowError, as NumPy raises for a Python int no dtype of the call holds.
Scalar python_scalar(nb::handle v) {
  if (nb::isinstance<nb::bool_>(v)) return Scalar::weak_bool(nb::cast<bool>(v));
  if (nb::isinstance<nb::float_>(v)) return Scalar::weak_float(nb::cast<double>(v));
  std::int64_t i = 0;
  if (!nb::try_cast<std::int64_t>(v, i)) {
    PyErr_Format(PyExc_OverflowError, "ewise: Python integer %S does not fit int64", v.ptr());
    throw nb::python_error();
  }
  return Scalar::weak_int(i);
}

// The forms every sparse operand takes, for operands of type Operand (Coo or Compressed):
// results as (rows, cols, vals) or (offsets, indices, vals).
// The names of the forms: COO's, and the compressed forms' (names of their own: an overload
// would be tried with a DLPack capsule that the first, failing overload already consumed).
enum Form { kMultiply, kMultiplyDense, kMultiplyScalar, kCombine, kCombineScalar, kCombineDense,
            kAccumulate, kCoalesce, kForms };
constexpr const char* kCooNames[kForms] = {"multiply", "multiply_dense", "multiply_scalar",
                                           "combine", "combine_scalar", "combine_dense",
                                           "accumulate", "coalesce"};
constexpr const char* kCompressedNames[kForms] = {
    "compressed_multiply",       "compressed_multiply_dense", "compressed_multiply_scalar",
    "compressed_combine",        "compressed_combine_scalar", "compressed_combine_dense",
    "compressed_accumulate",     "compressed_coalesce"};

template <class Operand>
void bind_forms(nb::module_& m, const char* const (&names)[kForms]) {
  m.def(names[kMultiply], [](const Operand& a, const Operand& b, const SparseOptions& o,
                       std::uintptr_t stream, nb::object stream_owner) {
    const auto va = a.view(), vb = b.view();
    return result_of<Operand>(va.memory, stream, std::move(stream_owner),
                              [&](auto tag, cudaStream_t s) {
                                return multiply<decltype(tag)>(va, vb, o, s);
                              });
  }, nb::arg("a"), nb::arg("b"), nb::arg("options"), nb::arg("stream"),
     nb::arg("stream_owner").none(), "a ⊙ b: the canonical result's arrays");
  m.def(names[kMultiplyDense], [](const Operand& a, const InArray& dense, const SparseOptions& o,
                             std::uintptr_t stream, nb::object stream_owner) {
    const auto va = a.view();
    const ConstTensorView vd = const_view(dense);
    return result_of<Operand>(va.memory, stream, std::move(stream_owner),
                              [&](auto tag, cudaStream_t s) {
                                return multiply<decltype(tag)>(va, vd, o, s);
                              });
  }, nb::arg("a"), nb::arg("dense"), nb::arg("options"), nb::arg("stream"),
     nb::arg("stream_owner").none(), "a ⊙ dense in a's pattern: the canonical result's arrays");
  m.def(names[kMultiplyScalar], [](const Operand& a, nb::handle value, const SparseOptions& o,
                              std::uintptr_t stream, nb::object stream_owner) {
    const auto va = a.view();
    const Scalar s = python_scalar(value);
    return result_of<Operand>(va.memory, stream, std::move(stream_owner),
                              [&](auto tag, cudaStream_t st) {
                                return multiply<decltype(tag)>(va, s, o, st);
                              });
  }, nb::arg("a"), nb::arg("value"), nb::arg("options"), nb::arg("stream"),
     nb::arg("stream_owner").none(),
     "a ⊙ a Python bool, int or float (weak), a's pattern kept: the result's arrays");
  m.def(names[kCombine], [](const std::string& op, const Operand& a, const Operand& b,
                      const SparseOptions& o, std::uintptr_t stream, nb::object stream_owner) {
    const BinaryOp parsed = parse_op(op);
    const auto va = a.view(), vb = b.view();
    return result_of<Operand>(va.memory, stream, std::move(stream_owner),
                              [&](auto tag, cudaStream_t s) {
                                return combine<decltype(tag)>(parsed, va, vb, o, s);
                              });
  }, nb::arg("op"), nb::arg("a"), nb::arg("b"), nb::arg("options"), nb::arg("stream"),
     nb::arg("stream_owner").none(), "a op b over the union: the canonical result's arrays");
  m.def(names[kCombineScalar], [](const std::string& op, const Operand& a, nb::handle value,
                             const SparseOptions& o, std::uintptr_t stream,
                             nb::object stream_owner) {
    const BinaryOp parsed = parse_op(op);
    const auto va = a.view();
    const Scalar s = python_scalar(value);
    return result_of<Operand>(va.memory, stream, std::move(stream_owner),
                              [&](auto tag, cudaStream_t st) {
                                return combine<decltype(tag)>(parsed, va, s, o, st);
                              });
  }, nb::arg("op"), nb::arg("a"), nb::arg("value"), nb::arg("options"), nb::arg("stream"),
     nb::arg("stream_owner").none(),
     "a op a Python scalar: add or subtract of 0 (a itself); any other value is refused");
  m.def(names[kCombineDense], [](const std::string& op, const Operand& a, const InArray& dense,
                            const OutArray& out, const SparseOptions& o, std::uintptr_t stream) {
    const BinaryOp parsed = parse_op(op);
    const auto va = a.view();
    const ConstTensorView vd = const_view(dense);
    const TensorView vo = view(out);
    nb::gil_scoped_release release;
    combine(parsed, va, vd, vo, o, as_stream(stream));
  }, nb::arg("op"), nb::arg("a"), nb::arg("dense"), nb::arg("out"), nb::arg("options"),
     nb::arg("stream"), "out = op(densify(a), dense)");
  m.def(names[kAccumulate], [](const std::string& op, const OutArray& dense, const Operand& a,
                         const SparseOptions& o, std::uintptr_t stream) {
    const BinaryOp parsed = parse_op(op);
    const TensorView vd = view(dense);
    const auto va = a.view();
    nb::gil_scoped_release release;
    accumulate(parsed, vd, va, o, as_stream(stream));
  }, nb::arg("op"), nb::arg("dense"), nb::arg("a"), nb::arg("options"), nb::arg("stream"),
     "dense = op(dense, a) at a's coordinates, in place");
  m.def(names[kCoalesce], [](const Operand& a, const SparseOptions& o, std::uintptr_t stream,
                             nb::object stream_owner) {
    const auto va = a.view();
    return result_of<Operand>(va.memory, stream, std::move(stream_owner),
                              [&](auto tag, cudaStream_t s) {
                                return coalesce<decltype(tag)>(va, o, s);
                              });
  }, nb::arg("a"), nb::arg("options"), nb::arg("stream"), nb::arg("stream_owner").none(),
     "a's canonical form in its format: the result's arrays");
}

}  // namespace

void bind_sparse(nb::module_& m) {
  nb::class_<Coo>(m, "Coo", "a COO operand: row, column and value arrays, a shape, and whether "
                            "the producer promises canonical order")
      .def(nb::init<InArray, InArray, InArray, std::int64_t, std::int64_t, bool>(),
           nb::arg("rows"), nb::arg("cols"), nb::arg("vals"), nb::arg("nrows"),
           nb::arg("ncols"), nb::arg("canonical"));

  nb::class_<Rows>(m, "Rows", "a row-sparse operand: row indices, an (nnz, width) block of "
                              "values, the row count, and whether the rows are promised "
                              "strictly increasing")
      .def(nb::init<InArray, InArray, std::int64_t, bool>(), nb::arg("rows"), nb::arg("vals"),
           nb::arg("nrows"), nb::arg("canonical"));

  nb::class_<Compressed>(m, "Compressed", "a CSR or CSC operand: offsets, index and value "
                                          "arrays, a shape, the format ('csr' or 'csc'), and "
                                          "whether the producer promises sorted slices")
      .def(nb::init<InArray, InArray, InArray, std::int64_t, std::int64_t, std::string, bool>(),
           nb::arg("offsets"), nb::arg("indices"), nb::arg("vals"), nb::arg("nrows"),
           nb::arg("ncols"), nb::arg("format"), nb::arg("canonical"));

  nb::class_<SparseOptions>(m, "SparseOptions", "ewise::SparseOptions (memory left default)")
      .def(nb::init<>())
      .def_prop_rw("algorithm", &algorithm_of, &set_algorithm)
      .def_rw("validate_indices", &SparseOptions::validate_indices)
      .def_rw("drop_zeros", &SparseOptions::drop_zeros)
      .def_rw("fill_a", &SparseOptions::fill_a)
      .def_rw("fill_b", &SparseOptions::fill_b)
      .def_prop_rw("promotion", &promotion_of, &set_promotion);

  // Every entry point: device operands run on `stream` (the producer's current stream, chosen
  // by the Python layer), host operands on the CPU backend; `stream_owner` is kept alive with
  // a device result (see DeviceResult). Each form takes COO operands, and under the name
  // compressed_<form> compressed ones (the result then compressed too, in a's format).
  bind_forms<Coo>(m, kCooNames);
  bind_forms<Compressed>(m, kCompressedNames);
  m.def("multiply_values", [](const Coo& a, const InArray& dense, const OutArray& out_vals,
                              const SparseOptions& o, std::uintptr_t stream) {
    const CooView va = a.view();
    const ConstTensorView vd = const_view(dense);
    const TensorView vo = view(out_vals);
    nb::gil_scoped_release release;
    multiply_values(va, vd, vo, o, as_stream(stream));
  }, nb::arg("a"), nb::arg("dense"), nb::arg("out_vals"), nb::arg("options"), nb::arg("stream"),
     "out_vals = a.vals ⊙ dense at a's coordinates, in a's storage order (a's pattern kept)");
  m.def("accumulate_rows", [](const std::string& op, const OutArray& dense, const InArray& rows,
                              const InArray& vals, std::int64_t nrows, bool canonical,
                              const SparseOptions& o, std::uintptr_t stream) {
    const BinaryOp parsed = parse_op(op);
    const TensorView vd = view(dense);
    const RowSparseView va = row_sparse_view(const_view(rows), const_view(vals), nrows, canonical);
    nb::gil_scoped_release release;
    accumulate(parsed, vd, va, o, as_stream(stream));
  }, nb::arg("op"), nb::arg("dense"), nb::arg("rows"), nb::arg("vals"), nb::arg("nrows"),
     nb::arg("canonical"), nb::arg("options"), nb::arg("stream"),
     "dense[rows[k], :] = op(dense[rows[k], :], vals[k, :]) per row index (duplicates summed "
     "first), in place");
  m.def("combine_rows", [](const std::string& op, const Rows& a, const Rows& b,
                           const SparseOptions& o, std::uintptr_t stream, nb::object stream_owner) {
    const BinaryOp parsed = parse_op(op);
    const RowSparseView va = a.view(), vb = b.view();
    return sparse_result<HostRowSparse, DeviceRowSparse>(
        va.memory, stream, std::move(stream_owner),
        [&](auto tag, cudaStream_t s) { return combine<decltype(tag)>(parsed, va, vb, o, s); });
  }, nb::arg("op"), nb::arg("a"), nb::arg("b"), nb::arg("options"), nb::arg("stream"),
     nb::arg("stream_owner").none(),
     "a op b of row-sparse operands over the union of their rows: the canonical result's (rows, "
     "vals), vals flat");
  m.def("coalesce_rows", [](const Rows& a, const SparseOptions& o, std::uintptr_t stream,
                            nb::object stream_owner) {
    const RowSparseView va = a.view();
    return sparse_result<HostRowSparse, DeviceRowSparse>(
        va.memory, stream, std::move(stream_owner),
        [&](auto tag, cudaStream_t s) { return coalesce<decltype(tag)>(va, o, s); });
  }, nb::arg("a"), nb::arg("options"), nb::arg("stream"), nb::arg("stream_owner").none(),
     "a row-sparse operand's canonical form: (rows, vals), vals flat");
  m.def("multiply_rows", [](const Rows& a, const InArray& dense, const SparseOptions& o,
                            std::uintptr_t stream, nb::object stream_owner) {
    const RowSparseView va = a.view();
    const ConstTensorView vd = const_view(dense);
    return sparse_result<HostRowSparse, DeviceRowSparse>(
        va.memory, stream, std::move(stream_owner),
        [&](auto tag, cudaStream_t s) { return multiply<decltype(tag)>(va, vd, o, s); });
  }, nb::arg("a"), nb::arg("dense"), nb::arg("options"), nb::arg("stream"),
     nb::arg("stream_owner").none(),
     "a ⊙ dense of a row-sparse operand (dense (nrows, width) or broadcasting to it), in a's "
     "coalesced pattern: (rows, vals), vals flat");
  m.def("multiply_rows_scalar", [](const Rows& a, nb::handle value, const SparseOptions& o,
                                   std::uintptr_t stream, nb::object stream_owner) {
    const RowSparseView va = a.view();
    const Scalar s = python_scalar(value);
    return sparse_result<HostRowSparse, DeviceRowSparse>(
        va.memory, stream, std::move(stream_owner),
        [&](auto tag, cudaStream_t st) { return multiply<decltype(tag)>(va, s, o, st); });
  }, nb::arg("a"), nb::arg("value"), nb::arg("options"), nb::arg("stream"),
     nb::arg("stream_owner").none(),
     "a ⊙ a Python scalar (weak) of a row-sparse operand, in a's coalesced pattern: (rows, "
     "vals)");
  m.def("rows_to_coo", [](const Rows& a, const SparseOptions& o, std::uintptr_t stream,
                          nb::object stream_owner) {
    const RowSparseView va = a.view();
    return sparse_result<HostCoo, DeviceCoo>(
        va.memory, stream, std::move(stream_owner),
        [&](auto tag, cudaStream_t s) { return to_coo<decltype(tag)>(va, o, s); });
  }, nb::arg("a"), nb::arg("options"), nb::arg("stream"), nb::arg("stream_owner").none(),
     "a row-sparse operand as a canonical 2-D COO matrix (ewise::to_coo): (rows, cols, vals)");
  m.def("coo_to_rows", [](const Coo& a, const SparseOptions& o, std::uintptr_t stream,
                          nb::object stream_owner) {
    const CooView va = a.view();
    return sparse_result<HostRowSparse, DeviceRowSparse>(
        va.memory, stream, std::move(stream_owner),
        [&](auto tag, cudaStream_t s) { return to_row_sparse<decltype(tag)>(va, o, s); });
  }, nb::arg("a"), nb::arg("options"), nb::arg("stream"), nb::arg("stream_owner").none(),
     "a COO matrix grouped by row (ewise::to_row_sparse): (rows, vals), vals flat");
  m.def("compare", [](std::int64_t nrows, std::int64_t ncols, const std::string& dtype,
                      const std::string& op, std::vector<double> densities, bool gpu,
                      std::uint64_t seed, const Coo* a, const Coo* b) {
    CompareSpec spec;
    spec.nrows = nrows;
    spec.ncols = ncols;
    spec.dtype = parse_dtype(dtype);
    spec.op = parse_op(op);
    spec.densities = std::move(densities);
    spec.memory = gpu ? Memory::device : Memory::host;
    spec.seed = seed;
    CooView va, vb;
    if (a) spec.a = &(va = a->view());
    if (b) spec.b = &(vb = b->view());
    nb::gil_scoped_release release;
    return compare(spec).json();
  }, nb::arg("nrows"), nb::arg("ncols"), nb::arg("dtype"), nb::arg("op"), nb::arg("densities"),
     nb::arg("gpu"), nb::arg("seed"), nb::arg("a").none(), nb::arg("b").none(),
     "ewise::compare (ewise/compare.hpp) on the GPU or the CPU backend: its result as JSON");
}

}  // namespace ewise::python
