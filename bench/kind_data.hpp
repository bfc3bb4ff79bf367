// bench/kind_data.hpp — one structure kind of coo_kinds.hpp drawn for a suite (structures,
// union): its forms, its oracle matrices, its dense operands, and the .npy copies of all of them
// that bench/peers.py reads.
//
// Forms: graph, words and embedding come as they naturally are ("natural": not sorted by absolute
// index, with duplicates) and canonical (their coalesced form, made by the oracle); wide and mask
// are canonical by nature. Dense operands, f32 random values: "row" (1, ncols) and "full"
// (nrows, ncols), as the suite asks.
//
// Files (write_inputs): <stem>_{a,b}_{rows,cols,vals}.npy for each form, <dense stem>.npy for each
// dense operand, where stem = <suite>_<kind>_<form> and dense stem = <suite>_<kind>_<dense>, so
// that two suites drawing the same kind in one run write different files.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "check.hpp"
#include "coo_kinds.hpp"
#include "coo_oracle.hpp"
#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"
#include "harness.hpp"

namespace ewise::bench {

/// Bytes of one entry: i32 row, i32 column, f32 value.
inline constexpr double kEntryBytes = 12;

struct Form {
  std::string name;  ///< "natural" (not canonical, duplicates) or "canonical"
  DeviceCoo a, b;
};

struct Dense {
  std::string name;  ///< "row" or "full"
  DeviceTensor t;
};

/// One kind at one size: its forms, the oracle's canonical a and b, the dense operands.
struct KindData {
  std::string suite;
  Kind kind = Kind::graph;
  std::string description;
  std::vector<Form> forms;
  OracleCoo oa, ob;
  std::vector<Dense> dense;
};

/// Draws the kind with `seed`, its forms and the dense operands named in `dense` ("row",
/// "full"), each filled from the bench's next seed.
KindData make_kind(Bench& bench, const std::string& suite, Kind kind, KindSize size,
                   std::uint64_t seed, const std::vector<std::string>& dense);

/// Throws VerifyError (prefixed by `what`) unless the comparison found the same entries and
/// got is canonical with the exact nnz.
void require_match(const verify::CooCompareReport& r, const char* what);

std::string form_name(const KindData& d, std::size_t form);  ///< <kind>_<form>: a record's name
std::string stem(const KindData& d, std::size_t form);       ///< <suite>_<kind>_<form>
std::string dense_stem(const KindData& d, std::size_t dense);  ///< <suite>_<kind>_<dense>

/// Writes every input of the kind to dir as .npy (see the file comment), with a progress line.
void write_inputs(const std::string& dir, const KindData& d, cudaStream_t stream);

/// A record of d's suite for one form: named form_name, f32, and the parameters every case of
/// the kind reports (op, kind, form, input order, shape, entries and distinct entries of a and
/// b, the inputs' stem, the generator, validate_indices).
Record form_record(const KindData& d, std::size_t form, const char* op, std::string impl,
                   bool validate);
/// Adds the parameters of d's dense operand `dense` to r: its name, shape and .npy stem.
void add_dense_params(Record& r, const KindData& d, std::size_t dense);

/// r.verified = verify() (how the case was checked before timing); when verify throws
/// VerifyError or InvalidArgument, r is added untimed as "failed" or "refused" and the case
/// is not timed (false).
template <class Verify>
bool verify_case(Bench& bench, Record& r, Verify&& verify) {
  try {
    r.verified = verify();
    return true;
  } catch (const VerifyError& e) {
    bench.add_untimed(std::move(r), "failed", e.what());
  } catch (const InvalidArgument& e) {
    bench.add_untimed(std::move(r), "refused", e.what());
  }
  return false;
}

/// The progress line of a drawn kind: its generator, a's and b's entries (distinct entries).
void print_kind(const KindData& d);

/// A suite's cases: one per kind, each run(bench, kind, size) at the bench's size (--quick or
/// full).
std::vector<Case> kind_cases(Bench& bench, std::initializer_list<Kind> kinds,
                             void (*run)(Bench&, Kind, KindSize));

}  // namespace ewise::bench
