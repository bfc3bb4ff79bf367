// The union suite (issue 14): combine and accumulate with BinaryOp::add on structure kinds of
// coo_kinds.hpp, >= 10M entries each, f32 values, i32 indices:
//   mask       uniform: a 10% mask over 8192 x 12288 (canonical), its dense 400 MB
//   embedding  power law: the gradient of a 2^20 x 64 embedding table, Zipf rows (natural and
//              canonical), its dense table 256 MiB
//   words      power law: 1M documents x 2^17 words, Zipf columns (natural and canonical); no
//              dense form (488 GiB)
//   graph      power law: R-MAT on 2^20 nodes (natural and canonical); no dense form (4 TiB),
//              and too large a shape for PyTorch's CUDA sparse (bench/peers.py skips it there)
// Forms as in the structures suite (kind_data.hpp). Operations, each on every form:
//   coo+coo     combine(add, a, b): the canonical COO of the structural union, b the kind's
//               partner matrix (PyTorch (A + B).coalesce(), CuPy A + B on CSR)
//   dense+=coo  accumulate(add, dense, a) in place into the (nrows, ncols) f32 table (PyTorch
//               dense.add_(A)), where the dense fits: mask, embedding. The timed calls keep
//               adding into one working copy of the table.
//   coo+dense   combine(add, a, dense): a new dense (nrows, ncols) result (CuPy A + D, PyTorch
//               D + A), same kinds.
// Every call with default options (index validation on, fills 0); dense+=coo on a canonical form
// also without validate_indices (impl accumulate_novalidate: the one in-place pass alone, which
// is what PyTorch's add_, checking nothing, does), so the record shows what the check costs.
// Each is timed in both call patterns (harness.hpp): back to back and synchronizing after each
// call.
//
// Bytes moved (the roofline's numerator): coo+coo: both inputs' entries read once and the
// output's written once (12 bytes an entry); dense+=coo: a's entries read (12 bytes) and the
// dense element of each distinct coordinate read and written (8 bytes); coo+dense: a's entries
// read, the dense read and the result written (8 bytes an element). The roofline fraction is
// bytes / time over the same-run device-to-device copy of the same bytes.
//
// Verification before timing, every case: (1) the full-size result against the device oracle of
// coo_kinds.hpp, bit for bit (coo+coo: every coordinate, every value, nnz; the dense forms: every
// element of the table); (2) the same operation on a small instance of the same kind and form
// (KindSize::check) against the CPU reference in full; and, once per kind, the oracle itself
// against the CPU reference on that small instance. Operands are not rotated: one set of every
// case is larger than 2x an H100's L2 (50 MiB) and an H200's (60 MiB).
//
// With --inputs DIR every input is written to DIR as .npy (union_<kind>_<form>_{a,b}_*.npy,
// union_<kind>_full.npy; kind_data.hpp) after its cases are timed, for bench/peers.py.
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

constexpr std::uint64_t kCheckSalt = 0xC4EC4C0000000022ull;

enum class Op { coo_coo, accumulate, coo_dense };

const char* op_name(Op op) {
  switch (op) {
    case Op::coo_coo: return "coo+coo";
    case Op::accumulate: return "dense+=coo";
    case Op::coo_dense: return "coo+dense";
  }
  return "?";
}

const char* impl_name(Op op) {
  switch (op) {
    case Op::coo_coo: return "combine";
    case Op::accumulate: return "accumulate";
    case Op::coo_dense: return "combine_dense";
  }
  return "?";
}

// Kinds whose dense (nrows, ncols) f32 table fits in device memory.
bool dense_fits(Kind kind) { return kind == Kind::mask || kind == Kind::embedding; }

void require_equal(const verify::CompareReport& r, const char* what) {
  if (!r.ok()) throw VerifyError(detail::concat(what, ": ", r.str()));
}

// The CPU reference of a dense form on the small instance's a and dense.
HostTensor reference_dense(Op op, const HostCoo& a, const HostTensor& dense) {
  if (op == Op::accumulate) {
    HostTensor want = to_host(dense.view());
    reference_accumulate(BinaryOp::add, want.view(), a.view());
    return want;
  }
  HostTensor want(DType::f32, dense.shape());
  reference_combine(BinaryOp::add, a.view(), dense.view(), want.view());
  return want;
}

// The oracle of the small instance against the CPU reference (once per kind).
std::string check_oracle(const KindData& s, cudaStream_t stream) {
  const Form& f = s.forms.front();
  const HostCoo ha = to_host(f.a.view(), stream), hb = to_host(f.b.view(), stream);
  const DeviceCoo mine = oracle_to_coo(oracle_union(s.oa, s.ob, stream), stream);
  require_match(verify::compare_coo(mine.view(),
                                    reference_combine(BinaryOp::add, ha.view(), hb.view()).view(),
                                    verify::Tolerance{}, stream),
                "oracle a+b vs CPU reference");
  for (const Dense& d : s.dense) {
    const HostTensor hd = to_host(d.t.view(), stream);
    for (const Op op : {Op::accumulate, Op::coo_dense}) {
      const DeviceTensor mine_dense =
          oracle_add_dense(s.oa, d.t.view(), op == Op::accumulate, stream);
      require_equal(verify::compare(mine_dense.view(), reference_dense(op, ha, hd).view(),
                                    verify::Tolerance{}, stream),
                    "oracle dense+a vs CPU reference");
    }
  }
  return "oracle = CPU reference on it";
}

// The operation on the small instance against the CPU reference, in full.
std::string check_small(const KindData& s, std::size_t form, Op op, cudaStream_t stream) {
  const Form& f = s.forms[form];
  const HostCoo ha = to_host(f.a.view(), stream);
  const SparseOptions options;
  if (op == Op::coo_coo) {
    const DeviceCoo got = combine(BinaryOp::add, f.a.view(), f.b.view(), options, stream);
    const HostCoo hb = to_host(f.b.view(), stream);
    const HostCoo want = reference_combine(BinaryOp::add, ha.view(), hb.view());
    require_match(verify::compare_coo(got.view(), want.view(), verify::Tolerance{}, stream),
                  "CPU reference on the small instance");
    return detail::concat("CPU reference in full on a small instance of the kind (", f.a.nnz(),
                          " + ", f.b.nnz(), " entries, result nnz ", want.nnz(), ")");
  }
  const DeviceTensor& d = s.dense.front().t;
  DeviceTensor got;
  if (op == Op::accumulate) {
    got = to_device(d.view(), stream);
    accumulate(BinaryOp::add, got.view(), f.a.view(), options, stream);
  } else {
    got = combine(BinaryOp::add, f.a.view(), d.view(), options, stream);
  }
  const HostTensor want = reference_dense(op, ha, to_host(d.view(), stream));
  require_equal(verify::compare(got.view(), want.view(), verify::Tolerance{}, stream),
                "CPU reference on the small instance");
  return detail::concat("CPU reference in full on a small instance of the kind (", f.a.nnz(),
                        " entries, ", d.numel(), " dense elements)");
}

// Verifies and times one operation on one form of the full-size kind, with or without the
// index check.
void run_case(Bench& bench, const KindData& full, const KindData& small,
              const std::string& oracle_note, std::size_t form, Op op, bool validate = true) {
  const cudaStream_t stream = bench.stream();
  const Form& f = full.forms[form];
  const CooView a = f.a.view(), b = f.b.view();
  SparseOptions options;
  options.validate_indices = validate;
  Record r = form_record(full, form, op_name(op),
                         std::string(impl_name(op)) + (validate ? "" : "_novalidate"), validate);
  const DeviceTensor* d = nullptr;
  if (op != Op::coo_coo) {
    d = &full.dense.front().t;
    add_dense_params(r, full, 0);
  }
  DeviceTensor work;  // accumulate: the working copy of the table the timed calls add into
  std::int64_t nnz_out = 0;
  const bool ok = verify_case(bench, r, [&] {
    std::string device;
    if (op == Op::coo_coo) {
      const DeviceCoo got = combine(BinaryOp::add, a, b, options, stream);
      device = check_equal(got.view(), oracle_union(full.oa, full.ob, stream), stream);
      nnz_out = got.nnz();
    } else if (op == Op::accumulate) {
      work = to_device(d->view(), stream);
      accumulate(BinaryOp::add, work.view(), a, options, stream);
      device = check_dense_equal(work.view(), oracle_add_dense(full.oa, d->view(), true, stream),
                                 stream);
    } else {
      const DeviceTensor got = combine(BinaryOp::add, a, d->view(), options, stream);
      device = check_dense_equal(got.view(), oracle_add_dense(full.oa, d->view(), false, stream),
                                 stream);
    }
    return detail::concat(device, "; ", check_small(small, form, op, stream), "; ", oracle_note);
  });
  if (!ok) return;
  const auto nnz_a = static_cast<double>(a.desc.nnz);
  if (op == Op::coo_coo) {
    r.params.push_back(param("nnz_out", nnz_out));
    r.bytes = (nnz_a + static_cast<double>(b.desc.nnz + nnz_out)) * kEntryBytes;
    r.stats = bench.time(
        [&](std::int64_t) { const DeviceCoo c = combine(BinaryOp::add, a, b, options, stream); },
        1);
  } else if (op == Op::accumulate) {
    r.bytes = nnz_a * kEntryBytes + static_cast<double>(full.oa.nnz) * 8;
    r.stats = bench.time(
        [&](std::int64_t) { accumulate(BinaryOp::add, work.view(), a, options, stream); }, 1);
  } else {
    r.bytes = nnz_a * kEntryBytes + static_cast<double>(d->numel()) * 8;
    r.stats = bench.time(
        [&](std::int64_t) {
          const DeviceTensor c = combine(BinaryOp::add, a, d->view(), options, stream);
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
  const std::vector<std::string> dense =
      dense_fits(kind) ? std::vector<std::string>{"full"} : std::vector<std::string>{};
  const KindData small = make_kind(bench, "union", kind, KindSize::check, seed ^ kCheckSalt, dense);
  const std::string oracle_note = check_oracle(small, stream);  // VerifyError: a failure
  const KindData full = make_kind(bench, "union", kind, size, seed, dense);
  print_kind(full);
  for (std::size_t f = 0; f < full.forms.size(); ++f) {
    run_case(bench, full, small, oracle_note, f, Op::coo_coo);
    if (!full.dense.empty()) {
      run_case(bench, full, small, oracle_note, f, Op::accumulate);
      if (full.forms[f].a.view().desc.canonical)
        run_case(bench, full, small, oracle_note, f, Op::accumulate, false);
      run_case(bench, full, small, oracle_note, f, Op::coo_dense);
    }
  }
  if (!bench.options().inputs_dir.empty()) write_inputs(bench.options().inputs_dir, full, stream);
}

}  // namespace

std::vector<Case> union_suite(Bench& bench) {
  return kind_cases(bench, {Kind::mask, Kind::embedding, Kind::words, Kind::graph}, run_kind);
}

}  // namespace ewise::bench
