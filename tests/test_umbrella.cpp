// The umbrella header on its own: <ewise/ewise.hpp> is the only ewise header this file includes,
// so a public host header missing from it fails this file's build. One dense and one sparse call
// on host views (the CPU backend), and one name from each header those calls do not need.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <ewise/ewise.hpp>

namespace ewise {
namespace {

ConstTensorView host_view(const std::vector<float>& v, const Dims& shape) {
  return {v.data(), TensorDesc::contiguous(DType::f32, shape), Memory::host};
}

TEST(Umbrella, DenseBinaryOnHostViews) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};  // (2,3)
  const std::vector<float> b = {10, 20, 30};        // (3,): added to every row
  HostTensor out(DType::f32, broadcast_shapes({2, 3}, {3}));
  binary(BinaryOp::add, host_view(a, {2, 3}), host_view(b, {3}), out);
  const std::vector<float> want = {11, 22, 33, 14, 25, 36};
  EXPECT_EQ(std::vector<float>(out.data_as<float>(), out.data_as<float>() + out.numel()), want);
}

TEST(Umbrella, SparseMultiplyOnHostViews) {
  // 2x3 matrices; they share the coordinates (0,2) and (1,1).
  const std::vector<std::int32_t> a_rows = {0, 0, 1}, a_cols = {0, 2, 1};
  const std::vector<std::int32_t> b_rows = {0, 1, 1}, b_cols = {2, 1, 2};
  const std::vector<float> a_vals = {2, 3, 4}, b_vals = {5, 6, 7};
  const CooDesc desc{2, 3, 3, IndexType::i32, DType::f32, /*canonical=*/true};
  const HostCoo c =
      multiply<HostCoo>(CooView{a_rows.data(), a_cols.data(), a_vals.data(), desc, Memory::host},
                        CooView{b_rows.data(), b_cols.data(), b_vals.data(), desc, Memory::host});
  ASSERT_EQ(c.nnz(), 2);
  const auto* rows = static_cast<const std::int32_t*>(c.rows());
  const auto* cols = static_cast<const std::int32_t*>(c.cols());
  const auto* vals = static_cast<const float*>(c.vals());
  EXPECT_EQ(std::vector<std::int32_t>(rows, rows + 2), (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(std::vector<std::int32_t>(cols, cols + 2), (std::vector<std::int32_t>{2, 1}));
  EXPECT_EQ(std::vector<float>(vals, vals + 2), (std::vector<float>{15, 24}));
}

TEST(Umbrella, IncludesTheOtherPublicHostHeaders) {
  double two = 2, three = 3, six = 0;
  const auto scalar = TensorDesc::contiguous(DType::f64, {});
  reference_binary(BinaryOp::multiply, ConstTensorView(&two, scalar, Memory::host),  // reference.hpp
                   ConstTensorView(&three, scalar, Memory::host), TensorView{&six, scalar, Memory::host});
  EXPECT_EQ(six, 6.0);
  EXPECT_EQ(result_type(Promotion::numpy, {DType::i32}, {DType::f32}), DType::f64);  // promotion.hpp
  EXPECT_EQ(f16_bits_to_float(float_to_f16_bits(1.5f)), 1.5f);           // half.hpp
  EXPECT_STREQ(io::npy_descr(DType::f32), "<f4");                        // io.hpp
  EXPECT_EQ(verify::default_tolerance(DType::i32).abs, 0.0);             // verify.hpp
  EXPECT_THROW(parse_dtype("f8"), InvalidArgument);                      // error.hpp
  EXPECT_EQ(reference_multiply(HostCoo().view(), HostCoo().view()).nnz(), 0);  // sparse_reference
  EXPECT_EQ(gpu_available(), gpu_unavailable_reason().empty());          // device.hpp
  CompareSpec spec;  // compare.hpp, on the CPU backend
  spec.nrows = 16;
  spec.ncols = 12;
  spec.densities = {0.5, 0.1};
  spec.memory = Memory::host;
  const CompareResult c = compare(spec);
  ASSERT_EQ(c.rows.size(), 2u);
  EXPECT_EQ(c.rows[0].density, 0.1);
  EXPECT_EQ(c.failures(), 0);
}

// Without a usable GPU (CI's machine, or a build without CUDA) a device view is refused with
// CudaError naming why, before anything runs; with one the GPU tests cover device views.
TEST(Umbrella, DeviceViewsWithoutAGpuThrowCudaErrorSayingWhy) {
  if (gpu_available()) GTEST_SKIP() << "a GPU is usable here: the GPU tests take device views";
  float a = 1, b = 2, c = 0;
  const auto scalar = TensorDesc::contiguous(DType::f32, {});
  try {
    binary(BinaryOp::add, ConstTensorView(&a, scalar, Memory::device),
           ConstTensorView(&b, scalar, Memory::device), TensorView{&c, scalar, Memory::device});
    FAIL() << "a device view ran without a GPU";
  } catch (const CudaError& e) {
    EXPECT_EQ(c, 0.0f);
#ifdef EWISE_NO_CUDA
    EXPECT_NE(std::string(e.what()).find("built without CUDA"), std::string::npos) << e.what();
    EXPECT_NE(gpu_unavailable_reason().find("built without CUDA"), std::string::npos);
#endif
  }
}

}  // namespace
}  // namespace ewise
