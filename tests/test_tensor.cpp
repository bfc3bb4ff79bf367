// Host tests of the tensor descriptor: dtypes, Dims, layouts, validation, overlap rules.
#include <gtest/gtest.h>

#include <limits>

#include "ewise/broadcast.hpp"
#include "ewise/error.hpp"
#include "ewise/tensor.hpp"

namespace ewise {
namespace {

TEST(DType, SizesNamesAndParsing) {
  EXPECT_EQ(dtype_size(DType::f16), 2u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  EXPECT_EQ(dtype_size(DType::i32), 4u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  for (DType t : kAllDTypes) EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  EXPECT_TRUE(is_floating(DType::bf16));
  EXPECT_FALSE(is_floating(DType::i64));
  try {
    parse_dtype("f8");
    FAIL() << "parse_dtype accepted f8";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'f8'"), std::string::npos) << e.what();
  }
}

TEST(Dims, RankLimitAndPrinting) {
  EXPECT_EQ(Dims({}).str(), "()");
  EXPECT_EQ(Dims({5}).str(), "(5,)");
  EXPECT_EQ(Dims({3, 4}).str(), "(3,4)");
  EXPECT_EQ(Dims({1, 2, 3, 4, 5, 6, 7, 8}).size(), 8);
  EXPECT_THROW(Dims({1, 2, 3, 4, 5, 6, 7, 8, 9}), InvalidArgument);
  EXPECT_THROW(Dims::of_rank(9, 1), InvalidArgument);
  Dims d = Dims::of_rank(8, 1);
  EXPECT_THROW(d.push_back(1), InvalidArgument);
  EXPECT_EQ(Dims({}).product(), 1);
  EXPECT_EQ(Dims({3, 0, 5}).product(), 0);
  EXPECT_THROW(Dims({std::int64_t{1} << 40, std::int64_t{1} << 40}).product(), InvalidArgument);
}

TEST(TensorDesc, ContiguousLayout) {
  const TensorDesc d = TensorDesc::contiguous(DType::f32, {2, 3, 4});
  EXPECT_EQ(d.strides, Dims({12, 4, 1}));
  EXPECT_EQ(d.numel(), 24);
  EXPECT_TRUE(d.is_contiguous());
  EXPECT_EQ(d.min_offset(), 0);
  EXPECT_EQ(d.max_offset(), 23);
  EXPECT_TRUE(d.is_non_overlapping());
  EXPECT_TRUE(TensorDesc::contiguous(DType::f32, {5, 0}).is_contiguous());
  EXPECT_TRUE(TensorDesc::contiguous(DType::f32, {3, 0, 4}).is_contiguous());
  const TensorDesc scalar = TensorDesc::contiguous(DType::f64, {});
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_TRUE(scalar.is_contiguous());
}

TEST(TensorDesc, StridedTransposedAndNegative) {
  const TensorDesc t = TensorDesc::strided(DType::f32, {4, 3}, {1, 4});  // transpose of (3,4)
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TRUE(t.is_non_overlapping());
  EXPECT_EQ(t.max_offset(), 11);
  const TensorDesc rev = TensorDesc::strided(DType::f32, {5}, {-1});  // reversed view
  EXPECT_EQ(rev.min_offset(), -4);
  EXPECT_EQ(rev.max_offset(), 0);
  EXPECT_TRUE(rev.is_non_overlapping());
  const TensorDesc bc = TensorDesc::strided(DType::f32, {4, 3}, {0, 1});  // broadcast rows
  EXPECT_FALSE(bc.is_non_overlapping());
  const TensorDesc overl = TensorDesc::strided(DType::f32, {4, 3}, {2, 1});  // rows overlap
  EXPECT_FALSE(overl.is_non_overlapping());
  const TensorDesc gaps = TensorDesc::strided(DType::f32, {4, 3}, {8, 2});  // every other
  EXPECT_TRUE(gaps.is_non_overlapping());
}

TEST(TensorDesc, ValidationNamesTheValues) {
  try {
    TensorDesc::contiguous(DType::f32, {3, -2});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("negative extent -2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(TensorDesc::strided(DType::f32, {3, 4}, {1}), InvalidArgument);
  const std::int64_t big = std::int64_t{1} << 62;
  EXPECT_THROW(TensorDesc::strided(DType::f64, {4, 2}, {big, 1}), InvalidArgument);
  EXPECT_NO_THROW(TensorDesc::strided(DType::f64, {0, 2}, {big, 1}));  // empty: nothing reached
}

TEST(TensorView, CheckViewRejectsNullDataWithElements) {
  float x = 0;
  EXPECT_NO_THROW(check_view(ConstTensorView(&x, TensorDesc::contiguous(DType::f32, {1}), Memory::host), "a"));
  EXPECT_NO_THROW(check_view(ConstTensorView(nullptr, TensorDesc::contiguous(DType::f32, {0, 3}), Memory::host), "a"));
  try {
    check_view(ConstTensorView(nullptr, TensorDesc::contiguous(DType::f32, {2, 3}), Memory::device), "input a");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("input a has null data but 6 elements"), std::string::npos)
        << e.what();
  }
}

TEST(Overlap, InPlaceAllowedPartialOverlapRejected) {
  std::vector<float> buf(64);
  const auto desc = TensorDesc::contiguous(DType::f32, {4, 8});
  const TensorView out{buf.data(), desc, Memory::host};
  EXPECT_NO_THROW(check_no_partial_overlap(out, out, "a"));  // exactly in place
  const ConstTensorView shifted(buf.data() + 1, desc, Memory::host);
  EXPECT_THROW(check_no_partial_overlap(out, shifted, "a"), InvalidArgument);
  const ConstTensorView row(buf.data(), TensorDesc::contiguous(DType::f32, {8}), Memory::host);
  EXPECT_THROW(check_no_partial_overlap(out, row, "b"), InvalidArgument);  // same start, other desc
  const ConstTensorView after(buf.data() + 32, desc, Memory::host);
  EXPECT_NO_THROW(check_no_partial_overlap(out, after, "b"));  // adjacent, disjoint
  const ConstTensorView rev(buf.data() + 31, TensorDesc::strided(DType::f32, {4, 8}, {-8, -1}), Memory::host);
  EXPECT_THROW(check_no_partial_overlap(out, rev, "a"), InvalidArgument);  // same span, reversed
}

}  // namespace
}  // namespace ewise
