// ewise/verify.hpp — the verification harness shared by tests, benchmarks and the CLI.
//
//  * Seeded generators for every dtype (no zeros unless asked for) and for COO matrices of a
//    given shape and density (no duplicate coordinates unless asked for; sorted or shuffled).
//  * Poisoning: fill an output with a pattern no operation produces from generated inputs
//    (NaN for floating types, 0x5A5A... for integers) before a checked run.
//  * Comparison with per-dtype tolerances and a report: mismatches, worst absolute and relative
//    error, the first mismatching coordinate with both values.
//
// Tolerances (an element passes when |got - want| <= abs + rel * |want|; NaN passes only
// against a NaN of the same bits (ops.hpp: written NaNs are canonical), infinities only against
// the same infinity):
//   f16  abs 1e-3  rel 1e-3   (one ulp is 2^-10 relative)
//   bf16 abs 1e-2  rel 8e-3   (one ulp is 2^-7 relative)
//   f32  abs 1e-6  rel 1e-6
//   f64  abs 1e-12 rel 1e-12
//   i32, i64 exact
// The built-in operations are bit-exact against the reference, so these only matter for user
// functors and for the CLI comparing files.
#pragma once

#include "ewise/detail/stream.hpp"

#include <cstdint>
#include <string>

#include "ewise/buffer.hpp"
#include "ewise/coo.hpp"
#include "ewise/tensor.hpp"

namespace ewise::verify {

/// A seed for one run: EWISE_SEED from the environment when set, else a fresh random one.
/// Print it with the test so that a failure can be replayed with EWISE_SEED=<seed>.
std::uint64_t seed_from_env_or_random();

struct GenOptions {
  double lo = -4.0;         ///< values are drawn uniformly from [lo, hi] ...
  double hi = 4.0;
  bool allow_zero = false;  ///< ... excluding |x| < min_magnitude unless allow_zero
  double min_magnitude = 0.0625;
};

/// Fills every element a view reaches (host or device; any strides) with seeded random values
/// exactly representable in its dtype. Integers are drawn from [lo, hi] as whole numbers, the
/// range cut to what the dtype holds (unsigned from 0; bool 0 and 1).
void fill_random(const TensorView& v, std::uint64_t seed, const GenOptions& options = {},
                 cudaStream_t stream = nullptr);

/// A new contiguous host tensor of random values.
HostTensor random_tensor(DType dtype, const Dims& shape, std::uint64_t seed,
                         const GenOptions& options = {});

/// Writes the poison pattern to every element a view reaches (host or device; any strides).
void poison(const TensorView& v, cudaStream_t stream = nullptr);
/// True when an element equals the poison pattern of its dtype (bitwise).
bool is_poison(DType dtype, const void* element);

struct Tolerance {
  double abs = 0.0;
  double rel = 0.0;
};
Tolerance default_tolerance(DType dtype);

struct CompareReport {
  std::int64_t checked = 0;
  std::int64_t mismatches = 0;
  std::int64_t poisoned = 0;  ///< mismatching elements that still hold the poison pattern
  double max_abs_error = 0.0;
  double max_rel_error = 0.0;
  bool has_first = false;
  Dims first_coord;   ///< first mismatching coordinate (row-major order)
  double first_got = 0.0, first_want = 0.0;
  std::uint64_t first_got_bits = 0, first_want_bits = 0;  ///< their stored bytes

  bool ok() const noexcept { return mismatches == 0; }
  std::string str() const;  ///< one line: "12 of 4096 differ (3 unwritten); worst abs ..."
};

/// Compares two views of the same shape and dtype (host or device; any strides).
CompareReport compare(const ConstTensorView& got, const ConstTensorView& want,
                      Tolerance tol, cudaStream_t stream = nullptr);
inline CompareReport compare(const ConstTensorView& got, const ConstTensorView& want,
                             cudaStream_t stream = nullptr) {
  return compare(got, want, default_tolerance(want.desc.dtype), stream);
}

// ---- COO ----------------------------------------------------------------------------------

struct CooGenOptions {
  IndexType index = IndexType::i32;
  DType dtype = DType::f32;
  bool unsorted = false;            ///< shuffle the entries (else sorted by absolute index)
  double duplicate_fraction = 0.0;  ///< extra entries repeating existing coordinates, as a
                                    ///< fraction of the distinct ones (0 = no duplicates)
  GenOptions values;
};

/// A random host COO matrix with round(density * nrows * ncols) distinct coordinates, plus
/// duplicates when asked. Marked canonical when it is sorted and has no duplicates.
HostCoo random_coo(std::int64_t nrows, std::int64_t ncols, double density, std::uint64_t seed,
                   const CooGenOptions& options = {});

struct CooCompareReport {
  std::int64_t got_nnz = 0, want_nnz = 0;
  bool got_canonical = false;   ///< got is sorted by absolute index with no duplicates
  std::int64_t missing = 0;     ///< coordinates in want but not in got
  std::int64_t extra = 0;       ///< coordinates in got but not in want
  std::int64_t value_mismatches = 0;
  double max_abs_error = 0.0;
  std::string first_problem;    ///< "(r,c): got x want y" or "(r,c) missing" ...

  bool ok() const noexcept {
    return missing == 0 && extra == 0 && value_mismatches == 0;
  }
  std::string str() const;
};

/// Compares two COO matrices (host or device) as sets of coordinates, after summing
/// duplicates in each; values within tolerance. Reports whether `got` is canonical.
CooCompareReport compare_coo(const CooView& got, const CooView& want, Tolerance tol,
                             cudaStream_t stream = nullptr);

}  // namespace ewise::verify
