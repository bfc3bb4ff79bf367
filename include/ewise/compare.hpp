// ewise/compare.hpp — dense or COO? For a shape, value dtype, operation and densities (or the
// user's own matrices): the dense operation on the densified operands against the sparse forms
// and the conversions a pipeline holding dense data pays, every result checked against the dense
// one, with the crossover density and a verdict. The CLI's `ewise compare` and Python's
// ewise.compare print and return what this computes (src/compare.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ewise/coo.hpp"
#include "ewise/ops.hpp"
#include "ewise/tensor.hpp"

namespace ewise {

/// What compare() measures.
struct CompareSpec {
  std::int64_t nrows = 0, ncols = 0;  ///< the shape (taken from `a` when it is given)
  DType dtype = DType::f32;           ///< the values' dtype (a COO value dtype; `a`'s when given)
  /// multiply (COO ⊙ COO, COO ⊙ dense) or add, subtract, minimum, maximum (COO ⊕ COO, COO ⊕ dense).
  BinaryOp op = BinaryOp::multiply;
  /// Densities in (0, 1]: operands drawn at each (sorted, repeats dropped). Ignored when `a` is
  /// given: its own density is the one row.
  std::vector<double> densities{0.001, 0.01, 0.1};
  /// Memory::device: on the current GPU (on a stream compare() creates); Memory::host: the CPU
  /// backend.
  Memory memory = Memory::device;
  /// Seed of the drawn operands (random_coo with seed + 1, + 2, ... for A and B per density).
  std::uint64_t seed = 0;
  /// The user's matrices (host COO; made canonical first, as a pipeline holds them): A alone
  /// (then B is drawn at A's density), or A and B of one shape and dtype. Null: drawn operands.
  const CooView* a = nullptr;
  const CooView* b = nullptr;
};

/// One density's measurements: medians in milliseconds (10 runs on the GPU, 3 on the CPU, after
/// a warm-up run).
struct CompareRow {
  double density = 0;
  std::int64_t nnz_a = 0, nnz_b = 0, nnz_c = 0;
  double dense_ms = 0;      ///< the operation on the dense forms
  double coo_ms = 0;        ///< COO op COO, to a canonical result
  double coo_dense_ms = 0;  ///< COO op dense (B's dense form)
  double to_coo_ms = 0;     ///< dense -> COO of A and of B
  double to_dense_ms = 0;   ///< COO -> dense of the COO op COO result
  /// "" when every form agreed with the dense result bit for bit; else what differed.
  std::string problem;
  double speedup() const { return dense_ms / coo_ms; }
  double speedup_converting() const { return dense_ms / (to_coo_ms + coo_ms + to_dense_ms); }
};

/// compare()'s result.
struct CompareResult {
  std::string device;  ///< the GPU's name, or "CPU"
  std::int64_t nrows = 0, ncols = 0;
  DType dtype = DType::f32;
  BinaryOp op = BinaryOp::multiply;
  std::uint64_t seed = 0;
  std::vector<CompareRow> rows;  ///< by density, ascending

  /// The sparse form's name: "COO*COO" or "COO+COO" (whatever the ⊕ operation).
  std::string form() const;
  /// The density where CompareRow::speedup (or speedup_converting) crosses 1, interpolated in
  /// log-log between the rows that bracket it; nothing when it does not cross in the range.
  std::optional<double> crossover() const;
  std::optional<double> crossover_converting() const;
  /// One line on where the sparse form beats dense ("COO*COO is faster than dense below 2.1%
  /// density (crossover interpolated)"), without and with the conversions.
  std::string verdict() const;
  std::string verdict_converting() const;
  /// Rows whose forms did not agree with the dense result.
  int failures() const;
  /// Everything above as one JSON object (the CLI's --json file).
  std::string json() const;
};

/// A density as compare's tables and verdicts print it, in percent: "0.1%", "2.33%".
std::string density_text(double density);

/// Checks spec (throws InvalidArgument naming the bad value, before anything is allocated): a
/// positive shape, a COO value dtype, an operation COO runs, densities in (0, 1], A and B of
/// one shape and dtype, and room for the dense forms (four nrows x ncols arrays) in free device
/// memory or available host memory.
void check_compare(const CompareSpec& spec);

/// check_compare, then measures each density in turn; on_row (when set) is called with each row
/// as it is measured (the CLI prints it).
CompareResult compare(const CompareSpec& spec,
                      const std::function<void(const CompareRow&)>& on_row = {});

}  // namespace ewise
