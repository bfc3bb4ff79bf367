// ewise/ewise.hpp — the whole public host API in one include.
//
//   #include <ewise/ewise.hpp>
//
// Includes every public header that a host compiler can read (a .cpp file built by g++ or
// clang++ needs nothing else):
//   ewise/tensor.hpp            DType, Dims, TensorDesc and the non-owning tensor views
//   ewise/buffer.hpp            owning host and device buffers and tensors, to_host / to_device
//   ewise/memory.hpp            where device memory comes from: ewise's pool, your own resource
//   ewise/broadcast.hpp         NumPy broadcasting and the plan every dense backend executes
//   ewise/ops.hpp               the built-in binary operations (BinaryOp) and their semantics
//   ewise/dense.hpp             dense element-wise operations: binary, select_kernel, options
//   ewise/coo.hpp               sparse COO matrices: views and owning matrices
//   ewise/sparse.hpp            operations on COO matrices: multiply, coalesce, conversions
//   ewise/reference.hpp         the CPU reference backend of the dense operations
//   ewise/sparse_reference.hpp  the CPU reference backend of the sparse operations
//   ewise/io.hpp                .npy and .mtx files
//   ewise/verify.hpp            seeded generators, poisoning and result comparison
//   ewise/device.hpp            which GPU, if any, ewise runs on
//   ewise/error.hpp             the exceptions ewise throws
//   ewise/half.hpp              float <-> f16 / bf16 conversions on the host
// Not included: ewise/dense.cuh, the entry for a user's own functor. It is CUDA code: include it
// in the .cu file (compiled by nvcc) that calls ewise::binary with the functor. ewise/detail/
// is internal.
#pragma once

#include "ewise/broadcast.hpp"
#include "ewise/buffer.hpp"
#include "ewise/compare.hpp"
#include "ewise/coo.hpp"
#include "ewise/dense.hpp"
#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/half.hpp"
#include "ewise/io.hpp"
#include "ewise/memory.hpp"
#include "ewise/ops.hpp"
#include "ewise/promotion.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/tensor.hpp"
#include "ewise/verify.hpp"
