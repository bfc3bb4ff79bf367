// tests/testing/calls_work.hpp — "the next call works": after a failure a test checks that no
// CUDA error is left behind and that small dense and sparse calls still give the CPU
// reference's results (GPU tests; the current device).
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "ewise/buffer.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"

namespace ewise::test {

/// No error is pending, and the device synchronizes (the context is not broken).
inline void expect_no_error_left(const std::string& after) {
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "an error was left pending after " << after;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << "the context is broken after " << after;
}

/// out = a + b on small device tensors, checked against the reference.
inline void expect_dense_call_works(std::uint64_t seed, const std::string& after) {
  try {
    const HostTensor ha = verify::random_tensor(DType::f32, {37, 65}, seed);
    const HostTensor hb = verify::random_tensor(DType::f32, {65}, seed + 1);
    const DeviceTensor a = to_device(ha), b = to_device(hb);
    DeviceTensor out(DType::f32, {37, 65});
    verify::poison(out.view());
    binary(BinaryOp::add, a.view(), b.view(), out.view());
    HostTensor want(DType::f32, {37, 65});
    reference_binary(BinaryOp::add, ha.view(), hb.view(), want.view());
    const verify::CompareReport r = verify::compare(out.view(), want.view(), verify::Tolerance{});
    EXPECT_TRUE(r.ok()) << "dense call after " << after << ": " << r.str();
  } catch (const Error& e) {
    ADD_FAILURE() << "dense call after " << after << " threw: " << e.what();
  }
}

/// a ⊙ b of small random COO matrices, checked against the reference (canonical too).
inline void expect_sparse_call_works(std::uint64_t seed, const std::string& after) {
  try {
    const HostCoo ha = verify::random_coo(300, 200, 0.05, seed);
    const HostCoo hb = verify::random_coo(300, 200, 0.05, seed + 1);
    const DeviceCoo a = to_device(ha.view()), b = to_device(hb.view());
    const DeviceCoo c = multiply(a.view(), b.view());
    const verify::CooCompareReport r =
        verify::compare_coo(c.view(), reference_multiply(ha.view(), hb.view()).view(), {});
    EXPECT_TRUE(r.ok() && r.got_canonical) << "sparse call after " << after << ": " << r.str();
  } catch (const Error& e) {
    ADD_FAILURE() << "sparse call after " << after << " threw: " << e.what();
  }
}

}  // namespace ewise::test
