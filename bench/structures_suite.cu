// The structures suite (issue 13, "sparse that wins where users call it"): the four structure
// kinds of coo_kinds.hpp (power-law graph with duplicate edges, wide matrix, bag of words with
// Zipf columns, 10% pruning mask), >= 10M entries each, f32 values, i32 indices.
//
// Forms: graph and words come as they naturally are (an edge list / token stream: not sorted
// by absolute index, with duplicates; "natural") and canonical (their coalesced form, made by
// the oracle); wide and mask are canonical by nature. Operations, each on every form:
//   coo*coo       multiply(a, b), b the kind's partner matrix: the automatic algorithm, and
//                 every algorithm that can run the shape (merge, sort_search, bitmap_merge,
//                 hash_merge) as impl = its name, the figures behind the automatic rule
//   coo*dense     multiply(a, dense): dense a row vector (1, ncols) for every kind (per-column
//                 scale: inverse degree, idf, feature scale) and, for the mask, the full
//                 (nrows, ncols) weight. A full dense operand of the other kinds would take
//                 64 TiB (graph), 256 GiB (wide) or 488 GiB (words): not run.
//   values*dense  multiply_values(a, dense, out_vals) into a buffer allocated once, same dense
//                 operands: the pattern-preserving form.
// Every call with default options (index validation on); values*dense also without
// validate_indices (impl multiply_values_novalidate: its one pass alone, as the peers' gathers,
// which check nothing), so the record shows what the check and its synchronization cost. Each is
// timed in both call patterns (harness.hpp): back to back and synchronizing after each call.
//
// Bytes moved (the roofline's numerator): each input's indices and values read once (12 bytes
// an entry), the dense operand read once (at most one element per entry), the output written
// once (12 bytes an entry; 4 for multiply_values). The roofline fraction is bytes / time over
// the same-run device-to-device copy of the same bytes (Record::copy_fraction).
//
// Verification before timing, every case: (1) the full-size result against the device oracle
// of coo_kinds.hpp, bit for bit (every coordinate, every value, nnz); (2) the same operation on
// a small instance of the same kind and form (~100k entries, KindSize::check) against the CPU
// reference in full; and, once per kind, the oracle itself against the CPU reference on that
// small instance. Operands are not rotated: one set of every case is larger than 2x an H100's
// L2 (50 MiB) and an H200's (60 MiB).
//
// With --inputs DIR (bench/run_all.sh passes one), every input is written to DIR as .npy
// (structures_<kind>_<form>_{a,b}_{rows,cols,vals}.npy, structures_<kind>_{row,full}.npy;
// kind_data.hpp) after its cases are timed, so that bench/peers.py times PyTorch and CuPy on
// identical inputs; the records name the files (params "inputs", "dense_input").
#include <algorithm>
#include <string>
#include <vector>

#include "check.hpp"
#include "coo_kinds.hpp"
#include "coo_oracle.hpp"
#include "ewise/error.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "kind_data.hpp"
#include "suites.hpp"

namespace ewise::bench {
namespace {

constexpr std::uint64_t kCheckSalt = 0xC4EC4C0000000021ull;

enum class Op { coo_coo, coo_dense, values };

const char* op_name(Op op) {
  switch (op) {
    case Op::coo_coo: return "coo*coo";
    case Op::coo_dense: return "coo*dense";
    case Op::values: return "values*dense";
  }
  return "?";
}

const char* impl_name(Op op, CooAlgorithm algorithm) {
  switch (op) {
    case Op::coo_coo: return coo_algorithm_name(algorithm);
    case Op::coo_dense: return "coo_dense";
    case Op::values: return "multiply_values";
  }
  return "?";
}

// The oracle of the small instance against the CPU reference (once per kind).
std::string check_oracle(const KindData& s, cudaStream_t stream) {
  const Form& f = s.forms.front();
  const HostCoo ha = to_host(f.a.view(), stream), hb = to_host(f.b.view(), stream);
  const DeviceCoo mine = oracle_to_coo(oracle_intersect(s.oa, s.ob, stream), stream);
  require_match(verify::compare_coo(mine.view(), reference_multiply(ha.view(), hb.view()).view(),
                                    verify::default_tolerance(DType::f32), stream),
                "oracle a*b vs CPU reference");
  for (const Dense& d : s.dense) {
    const HostTensor hd = to_host(d.t.view(), stream);
    const DeviceCoo scaled = oracle_to_coo(oracle_scale(s.oa, d.t.view(), stream), stream);
    const HostCoo want = reference_multiply(ha.view(), hd.view());
    require_match(verify::compare_coo(scaled.view(), want.view(),
                                      verify::default_tolerance(DType::f32), stream),
                  "oracle a*dense vs CPU reference");
  }
  return detail::concat("oracle = CPU reference on it");
}

// The operation on the small instance against the CPU reference, in full.
std::string check_small(const KindData& s, std::size_t form, Op op, std::size_t dense,
                        const SparseOptions& options, cudaStream_t stream) {
  const Form& f = s.forms[form];
  const HostCoo ha = to_host(f.a.view(), stream);
  std::int64_t nnz = 0;
  if (op == Op::coo_coo) {
    const DeviceCoo got = multiply(f.a.view(), f.b.view(), options, stream);
    const HostCoo hb = to_host(f.b.view(), stream);
    const HostCoo want = reference_multiply(ha.view(), hb.view());
    require_match(verify::compare_coo(got.view(), want.view(),
                                      verify::default_tolerance(DType::f32), stream),
                  "CPU reference on the small instance");
    nnz = want.nnz();
  } else {
    const ConstTensorView dv = s.dense[dense].t.view();
    const HostTensor hd = to_host(dv, stream);
    if (op == Op::coo_dense) {
      const DeviceCoo got = multiply(f.a.view(), dv, {}, stream);
      const HostCoo want = reference_multiply(ha.view(), hd.view());
      require_match(verify::compare_coo(got.view(), want.view(),
                                        verify::default_tolerance(DType::f32), stream),
                    "CPU reference on the small instance");
      nnz = want.nnz();
    } else {
      DeviceTensor got(DType::f32, {f.a.nnz()}, stream);
      verify::poison(got.view(), stream);
      multiply_values(f.a.view(), dv, got.view(), {}, stream);
      HostTensor want(DType::f32, {f.a.nnz()});
      reference_multiply_values(ha.view(), hd.view(), want.view());
      const verify::CompareReport r = verify::compare(got.view(), want.view(), stream);
      if (!r.ok()) throw VerifyError("CPU reference on the small instance: " + r.str());
      nnz = f.a.nnz();
    }
  }
  return detail::concat("CPU reference in full on a small instance of the kind (", f.a.nnz(),
                        " + ", f.b.nnz(), " entries, result nnz ", nnz, ")");
}

// Verifies and times one operation on one form of the full-size kind.
void run_case(Bench& bench, const KindData& full, const KindData& small,
              const std::string& oracle_note, std::size_t form, Op op, std::size_t dense,
              CooAlgorithm algorithm = CooAlgorithm::automatic, bool validate = true) {
  const cudaStream_t stream = bench.stream();
  const Form& f = full.forms[form];
  const CooView a = f.a.view(), b = f.b.view();
  Record r = form_record(full, form, op_name(op),
                         std::string(impl_name(op, algorithm)) + (validate ? "" : "_novalidate"),
                         validate);
  SparseOptions options;
  options.algorithm = algorithm;
  SparseOptions values_options;  // values*dense: the default options, or unchecked
  values_options.validate_indices = validate;
  const DeviceTensor* d = nullptr;
  if (op != Op::coo_coo) {
    d = &full.dense[dense].t;
    add_dense_params(r, full, dense);
  }
  DeviceTensor out_vals;
  std::int64_t nnz_out = 0;
  const bool ok = verify_case(bench, r, [&] {
    if (op == Op::coo_coo)
      r.note = detail::concat("selected ",
                              coo_algorithm_name(select_coo_algorithm(a, b, algorithm)));
    std::string device;
    if (op == Op::coo_coo) {
      const DeviceCoo got = multiply(a, b, options, stream);
      device = check_equal(got.view(), oracle_intersect(full.oa, full.ob, stream), stream);
      nnz_out = got.nnz();
    } else if (op == Op::coo_dense) {
      const DeviceCoo got = multiply(a, d->view(), {}, stream);
      device = check_equal(got.view(), oracle_scale(full.oa, d->view(), stream), stream);
      nnz_out = got.nnz();
    } else {
      out_vals = DeviceTensor(DType::f32, {a.desc.nnz}, stream);
      verify::poison(out_vals.view(), stream);
      multiply_values(a, d->view(), out_vals.view(), values_options, stream);
      device = check_values(a, d->view(), out_vals.view(), stream);
      nnz_out = a.desc.nnz;
    }
    return detail::concat(device, "; ", check_small(small, form, op, dense, options, stream),
                          "; ", oracle_note);
  });
  if (!ok) return;
  r.params.push_back(param("nnz_out", nnz_out));
  const auto nnz_a = static_cast<double>(a.desc.nnz);
  if (op == Op::coo_coo) {
    r.bytes = (nnz_a + static_cast<double>(b.desc.nnz + nnz_out)) * kEntryBytes;
  } else {
    const double dense_read = static_cast<double>(std::min(a.desc.nnz, d->numel())) * 4;
    r.bytes = nnz_a * kEntryBytes + dense_read +
              (op == Op::coo_dense ? static_cast<double>(nnz_out) * kEntryBytes : nnz_a * 4);
  }
  if (op == Op::coo_coo) {
    r.stats = bench.time(
        [&](std::int64_t) { const DeviceCoo c = multiply(a, b, options, stream); }, 1);
  } else if (op == Op::coo_dense) {
    r.stats = bench.time(
        [&](std::int64_t) { const DeviceCoo c = multiply(a, d->view(), {}, stream); }, 1);
  } else {
    r.stats = bench.time(
        [&](std::int64_t) {
          multiply_values(a, d->view(), out_vals.view(), values_options, stream);
        },
        1);
  }
  bench.add(std::move(r), 0);
}

// One kind: the oracle checked on a small instance, the full-size kind drawn, every operation
// on every form verified and timed, the inputs written.
void run_kind(Bench& bench, Kind kind, KindSize size) {
  const cudaStream_t stream = bench.stream();
  const std::uint64_t seed = bench.next_seed();
  // Per-column scale for every kind; the mask's full weight too (the others' would not fit).
  std::vector<std::string> dense{"row"};
  if (kind == Kind::mask) dense.emplace_back("full");
  const KindData small =
      make_kind(bench, "structures", kind, KindSize::check, seed ^ kCheckSalt, dense);
  const std::string oracle_note = check_oracle(small, stream);  // VerifyError: a failure
  const KindData full = make_kind(bench, "structures", kind, size, seed, dense);
  print_kind(full);
  for (std::size_t f = 0; f < full.forms.size(); ++f) {
    for (const CooAlgorithm alg : {CooAlgorithm::automatic, CooAlgorithm::merge,
                                   CooAlgorithm::sort_search, CooAlgorithm::bitmap_merge,
                                   CooAlgorithm::hash_merge})
      run_case(bench, full, small, oracle_note, f, Op::coo_coo, 0, alg);
    for (std::size_t d = 0; d < full.dense.size(); ++d) {
      run_case(bench, full, small, oracle_note, f, Op::coo_dense, d);
      run_case(bench, full, small, oracle_note, f, Op::values, d);
      run_case(bench, full, small, oracle_note, f, Op::values, d, CooAlgorithm::automatic, false);
    }
  }
  if (!bench.options().inputs_dir.empty()) write_inputs(bench.options().inputs_dir, full, stream);
}

}  // namespace

std::vector<Case> structures_suite(Bench& bench) {
  return kind_cases(bench, {Kind::graph, Kind::wide, Kind::words, Kind::mask}, run_kind);
}

}  // namespace ewise::bench
