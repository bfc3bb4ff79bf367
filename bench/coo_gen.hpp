// bench/coo_gen.hpp — random COO matrices drawn on the device, and checks of products against
// the generator itself (for inputs too large for the CPU reference).
//
// Every cell (absolute index c = row * ncols + col) is stored independently with probability
// `density`, decided by a hash of (seed, c); its value is the harness's random value (src/
// random.hpp: uniform in [-4, 4], |x| >= 1/16, never zero) for (seed ^ kValueSalt, c), rounded
// to the dtype. So entries are distinct, nnz is Binomial(nrows * ncols, density), and both
// membership and value of any cell can be recomputed on the device from the spec alone.
// Entries come sorted by absolute index (marked canonical) or shuffled by a random sort.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "ewise/coo.hpp"
#include "ewise/tensor.hpp"

namespace ewise::bench {

struct CooSpec {
  std::int64_t nrows = 0, ncols = 0;
  double density = 0;
  std::uint64_t seed = 0;
  IndexType index = IndexType::i32;
  DType dtype = DType::f32;
  bool unsorted = false;
};

/// Draws the matrix on the device (a count pass, a select pass, a shuffle when unsorted).
DeviceCoo generate_coo(const CooSpec& spec, cudaStream_t stream);

/// Checks out = a ⊙ b for generated a and b of one shape, on the device: out sorted strictly
/// by absolute index, every entry in range and stored in both a and b, every value bit-equal
/// to a(c) * b(c) in ewise's arithmetic, and nnz equal to the number of cells stored in both.
/// Returns a description; throws VerifyError naming the first bad entry.
std::string check_coo_product(const CooView& out, const CooSpec& a, const CooSpec& b,
                              cudaStream_t stream);

/// Checks out = a ⊙ dense for generated a (nnz_a entries) and a device tensor that broadcasts
/// to a's shape: out sorted strictly, every entry a cell of a, nnz = nnz_a, every value
/// bit-equal to a(c) * dense(row, col). Throws VerifyError.
std::string check_coo_dense_product(const CooView& out, const CooSpec& a, std::int64_t nnz_a,
                                    const ConstTensorView& dense, cudaStream_t stream);

}  // namespace ewise::bench
