#include "kind_data.hpp"

#include <cstdio>
#include <filesystem>
#include <utility>

#include "ewise/error.hpp"
#include "ewise/io.hpp"

namespace ewise::bench {
namespace {

void write_array(const std::string& path, const void* p, DType t, std::int64_t n,
                 cudaStream_t stream) {
  io::write_npy(path, ConstTensorView(p, TensorDesc::contiguous(t, {n}), Memory::device), {},
                stream);
}

}  // namespace

KindData make_kind(Bench& bench, const std::string& suite, Kind kind, KindSize size,
                   std::uint64_t seed, const std::vector<std::string>& dense) {
  const cudaStream_t stream = bench.stream();
  KindPair p = generate_kind(kind, size, seed, stream);
  KindData d;
  d.suite = suite;
  d.kind = kind;
  d.description = p.description;
  d.oa = oracle_coalesce(p.a.view(), stream);
  d.ob = oracle_coalesce(p.b.view(), stream);
  const bool canonical = p.a.desc().canonical;
  const std::int64_t nrows = p.a.desc().nrows, ncols = p.a.desc().ncols;
  d.forms.push_back({canonical ? "canonical" : "natural", std::move(p.a), std::move(p.b)});
  if (!canonical)
    d.forms.push_back({"canonical", oracle_to_coo(d.oa, stream), oracle_to_coo(d.ob, stream)});
  for (const std::string& name : dense) {
    EWISE_EXPECTS(name == "row" || name == "full", "unknown dense operand '", name, "'");
    DeviceTensor t(DType::f32, name == "row" ? Dims{1, ncols} : Dims{nrows, ncols}, stream);
    verify::fill_random(t.view(), bench.next_seed(), {}, stream);
    d.dense.push_back({name, std::move(t)});
  }
  EWISE_CUDA_CHECK(cudaStreamSynchronize(stream));
  return d;
}

void require_match(const verify::CooCompareReport& r, const char* what) {
  if (!r.ok() || !r.got_canonical || r.got_nnz != r.want_nnz)
    throw VerifyError(detail::concat(what, ": ", r.str()));
}

std::string form_name(const KindData& d, std::size_t form) {
  return detail::concat(kind_name(d.kind), "_", d.forms[form].name);
}

std::string stem(const KindData& d, std::size_t form) {
  return detail::concat(d.suite, "_", form_name(d, form));
}

std::string dense_stem(const KindData& d, std::size_t dense) {
  return detail::concat(d.suite, "_", kind_name(d.kind), "_", d.dense[dense].name);
}

void write_inputs(const std::string& dir, const KindData& d, cudaStream_t stream) {
  const double t0 = now_s();
  std::filesystem::create_directories(dir);
  double bytes = 0;
  for (std::size_t k = 0; k < d.forms.size(); ++k)
    for (const auto& [which, m] : {std::pair<const char*, const DeviceCoo*>{"a", &d.forms[k].a},
                                   std::pair<const char*, const DeviceCoo*>{"b", &d.forms[k].b}}) {
      const std::string base = dir + "/" + stem(d, k) + "_" + which;
      write_array(base + "_rows.npy", m->rows(), DType::i32, m->nnz(), stream);
      write_array(base + "_cols.npy", m->cols(), DType::i32, m->nnz(), stream);
      write_array(base + "_vals.npy", m->vals(), DType::f32, m->nnz(), stream);
      bytes += static_cast<double>(m->nnz()) * kEntryBytes;
    }
  for (std::size_t k = 0; k < d.dense.size(); ++k) {
    io::write_npy(dir + "/" + dense_stem(d, k) + ".npy", d.dense[k].t.view(), {}, stream);
    bytes += static_cast<double>(d.dense[k].t.numel()) * 4;
  }
  std::printf("  inputs of %s %s written to %s (%.0f MB, %.1f s)\n", d.suite.c_str(),
              kind_name(d.kind), dir.c_str(), bytes / 1e6, now_s() - t0);
  std::fflush(stdout);
}

Record form_record(const KindData& d, std::size_t form, const char* op, std::string impl,
                   bool validate) {
  const CooView a = d.forms[form].a.view(), b = d.forms[form].b.view();
  Record r;
  r.suite = d.suite;
  r.name = form_name(d, form);
  r.impl = std::move(impl);
  r.dtype = "f32";
  r.params = {param("op", op),
              param("kind", kind_name(d.kind)),
              param("form", d.forms[form].name),
              param("input", a.desc.canonical ? "canonical" : "unsorted"),
              param("rows", a.desc.nrows),
              param("cols", a.desc.ncols),
              param("nnz_a", a.desc.nnz),
              param("nnz_b", b.desc.nnz),
              param("unique_a", d.oa.nnz),
              param("unique_b", d.ob.nnz),
              param("inputs", stem(d, form)),
              param("generator", d.description),
              param("validate_indices", validate)};
  return r;
}

void add_dense_params(Record& r, const KindData& d, std::size_t dense) {
  r.params.push_back(param("dense", d.dense[dense].name));
  r.params.push_back(param("dense_shape", d.dense[dense].t.shape()));
  r.params.push_back(param("dense_input", dense_stem(d, dense)));
}

void print_kind(const KindData& d) {
  std::printf("  %s: %s; a %lld entries (%lld distinct), b %lld (%lld)\n", kind_name(d.kind),
              d.description.c_str(), static_cast<long long>(d.forms[0].a.nnz()),
              static_cast<long long>(d.oa.nnz), static_cast<long long>(d.forms[0].b.nnz()),
              static_cast<long long>(d.ob.nnz));
  std::fflush(stdout);
}

std::vector<Case> kind_cases(Bench& bench, std::initializer_list<Kind> kinds,
                             void (*run)(Bench&, Kind, KindSize)) {
  const KindSize size = bench.quick() ? KindSize::quick : KindSize::full;
  std::vector<Case> cases;
  for (const Kind kind : kinds)
    cases.push_back({detail::concat(kind_name(kind), bench.quick() ? " (quick size)" : ""),
                     [&bench, kind, size, run] { run(bench, kind, size); }});
  return cases;
}

}  // namespace ewise::bench
