// Host tests of NumPy broadcasting, plans and coalescing (including the property test: the
// coalesced plan gives every output index the same operand offsets as the original).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "ewise/broadcast.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"

namespace ewise {
namespace {

TEST(BroadcastShapes, NumPyRules) {
  EXPECT_EQ(broadcast_shapes({3, 4}, {4}), Dims({3, 4}));
  EXPECT_EQ(broadcast_shapes({3, 1}, {1, 4}), Dims({3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {2, 3}), Dims({2, 3}));
  EXPECT_EQ(broadcast_shapes({8, 1, 6, 1}, {7, 1, 5}), Dims({8, 7, 6, 5}));
  EXPECT_EQ(broadcast_shapes({0, 1}, {1, 5}), Dims({0, 5}));
  EXPECT_EQ(broadcast_shapes({1}, {0}), Dims({0}));
}

TEST(BroadcastShapes, MismatchMessageNamesShapesAndDim) {
  try {
    broadcast_shapes({3, 4}, {5, 4});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "ewise: cannot broadcast (3,4) with (5,4): dim 0 is 3 vs 5");
  }
  try {
    broadcast_shapes({2, 3, 4}, {3, 5});
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "ewise: cannot broadcast (2,3,4) with (3,5): dim 2 is 4 vs 5");
  }
}

TEST(MakePlan, OutputMustHaveExactlyTheBroadcastShape) {
  const auto a = TensorDesc::contiguous(DType::f32, {3, 1});
  const auto b = TensorDesc::contiguous(DType::f32, {1, 4});
  EXPECT_NO_THROW(make_plan(TensorDesc::contiguous(DType::f32, {3, 4}), a, b));
  EXPECT_THROW(make_plan(TensorDesc::contiguous(DType::f32, {1, 3, 4}), a, b), InvalidArgument);
  EXPECT_THROW(make_plan(TensorDesc::contiguous(DType::f32, {3, 1}), a, b), InvalidArgument);
  // The dtypes are the caller's (ewise/promotion.hpp): operands of other dtypes plan alike, in
  // their own elements.
  const BroadcastPlan mixed = make_plan(TensorDesc::contiguous(DType::u8, {3, 4}), a,
                                        TensorDesc::contiguous(DType::f64, {1, 4}));
  EXPECT_EQ(mixed.strides[0], Dims({4, 1}));
  EXPECT_EQ(mixed.strides[1], Dims({1, 0}));
  EXPECT_EQ(mixed.strides[2], Dims({0, 1}));
}

TEST(MakePlan, BroadcastDimsGetStrideZero) {
  const BroadcastPlan p = make_plan(TensorDesc::contiguous(DType::f32, {2, 3, 4}),
                                    TensorDesc::contiguous(DType::f32, {3, 1}),
                                    TensorDesc::contiguous(DType::f32, {2, 1, 4}));
  EXPECT_EQ(p.strides[0], Dims({12, 4, 1}));
  EXPECT_EQ(p.strides[1], Dims({0, 1, 0}));
  EXPECT_EQ(p.strides[2], Dims({4, 0, 1}));
}

TEST(Coalesce, KnownCases) {
  // contiguous same shape -> one dim
  BroadcastPlan p = coalesce(make_plan(TensorDesc::contiguous(DType::f32, {4, 5, 6}),
                                       TensorDesc::contiguous(DType::f32, {4, 5, 6}),
                                       TensorDesc::contiguous(DType::f32, {4, 5, 6})));
  EXPECT_EQ(p.shape, Dims({120}));
  // NCHW x (1,C,1,1) -> (N, C, H*W) with b strides (0,1,0)
  p = coalesce(make_plan(TensorDesc::contiguous(DType::f32, {64, 256, 64, 64}),
                         TensorDesc::contiguous(DType::f32, {64, 256, 64, 64}),
                         TensorDesc::contiguous(DType::f32, {1, 256, 1, 1})));
  EXPECT_EQ(p.shape, Dims({64, 256, 4096}));
  EXPECT_EQ(p.strides[2], Dims({0, 1, 0}));
  // scalar operand, size-1 dims dropped
  p = coalesce(make_plan(TensorDesc::contiguous(DType::f32, {1, 7, 1, 3}),
                         TensorDesc::contiguous(DType::f32, {1, 7, 1, 3}),
                         TensorDesc::contiguous(DType::f32, {})));
  EXPECT_EQ(p.shape, Dims({21}));
  EXPECT_EQ(p.strides[2], Dims({0}));
  // An inner stride whose product with its extent passes int64 (a valid u8 view: its largest
  // offset is 2^62 + 1) is no merge, computed without overflow (the plan fuzzer's reproducer
  // under UBSan: fuzz/corpus/plan/bug-coalesce_stride_product_overflow.bin).
  const TensorDesc u8 = TensorDesc::contiguous(DType::u8, {2, 2});
  p = coalesce(make_plan(u8, TensorDesc::strided(DType::u8, {2, 2}, {1, std::int64_t{1} << 62}),
                         u8));
  EXPECT_EQ(p.shape, Dims({2, 2}));
  EXPECT_EQ(p.strides[1], Dims({1, std::int64_t{1} << 62}));
  // rank 0 stays rank 0
  p = coalesce(make_plan(TensorDesc::contiguous(DType::f32, {}), TensorDesc::contiguous(DType::f32, {}),
                         TensorDesc::contiguous(DType::f32, {})));
  EXPECT_EQ(p.rank(), 0);
  EXPECT_EQ(p.numel(), 1);
}

// Random shape of rank 0..max_rank with 1s sprinkled in.
Dims random_shape(std::mt19937_64& rng, int max_rank) {
  const int rank = static_cast<int>(rng() % static_cast<unsigned>(max_rank + 1));
  Dims s;
  for (int i = 0; i < rank; ++i) s.push_back(rng() % 3 == 0 ? 1 : 1 + static_cast<std::int64_t>(rng() % 4));
  return s;
}

// A random layout of `shape`: contiguous, permuted, padded, reversed or broadcast-free strided.
Dims random_strides(std::mt19937_64& rng, const Dims& shape) {
  const int r = shape.size();
  int perm[kMaxRank];
  for (int i = 0; i < r; ++i) perm[i] = i;
  std::shuffle(perm, perm + r, rng);
  Dims strides = Dims::of_rank(r, 0);
  std::int64_t step = 1 + static_cast<std::int64_t>(rng() % 2);
  for (int k = r - 1; k >= 0; --k) {  // perm[r-1] is innermost
    const int d = perm[k];
    strides[d] = (rng() % 4 == 0) ? -step : step;
    step *= shape[d] + static_cast<std::int64_t>(rng() % 2);  // maybe padded
  }
  return strides;
}

/// A random plan out = a op b: random shapes (broadcast, extent-1 dims, fewer dims for b) and
/// layouts of each operand.
BroadcastPlan random_plan(std::mt19937_64& rng) {
  const Dims out_shape = random_shape(rng, kMaxRank);
  Dims a_shape = out_shape, b_shape = out_shape;
  for (int d = 0; d < out_shape.size(); ++d) {  // knock dims down to 1 for broadcasting
    if (rng() % 3 == 0) a_shape[d] = 1;
    if (rng() % 3 == 0) b_shape[d] = 1;
  }
  // drop leading dims of b sometimes (right alignment)
  const int drop = out_shape.size() ? static_cast<int>(rng() % static_cast<unsigned>(out_shape.size() + 1)) : 0;
  Dims b_short = Dims::from(b_shape.begin() + drop, b_shape.size() - drop);
  Dims full = broadcast_shapes(a_shape, b_short);
  // full may be smaller than out_shape where both operands were knocked to 1: use it
  const TensorDesc out = TensorDesc::strided(DType::f32, full, random_strides(rng, full));
  const TensorDesc a = TensorDesc::strided(DType::f32, a_shape, random_strides(rng, a_shape));
  const TensorDesc b = TensorDesc::strided(DType::f32, b_short, random_strides(rng, b_short));
  return make_plan(out, a, b);
}

std::string describe(const BroadcastPlan& p) {
  return "shape " + p.shape.str() + " strides out " + p.strides[0].str() + " a " +
         p.strides[1].str() + " b " + p.strides[2].str();
}

TEST(Coalesce, PropertySameOffsetsForEveryIndex) {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  SCOPED_TRACE("EWISE_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 3000; ++iter) {
    const BroadcastPlan plan = random_plan(rng);
    const BroadcastPlan c = coalesce(plan);
    ASSERT_EQ(c.numel(), plan.numel());
    ASSERT_LE(c.rank(), plan.rank() == 0 ? 0 : plan.rank());
    for (int d = 0; d < c.rank(); ++d) ASSERT_GT(c.shape[d], 1) << "extent-1 dim kept";
    for (std::int64_t i = 0; i < plan.numel(); ++i)
      for (int k = 0; k < BroadcastPlan::kOperands; ++k)
        ASSERT_EQ(c.offset(k, i), plan.offset(k, i))
            << "operand " << k << " index " << i << " " << describe(plan);
  }
}

/// coalesce(plan, order, out) is coalesce() of the plan with its dims permuted by order.
TEST(Coalesce, PermutedEqualsCoalesceOfThePermutedPlan) {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  SCOPED_TRACE("EWISE_SEED=" + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int iter = 0; iter < 3000; ++iter) {
    const BroadcastPlan plan = random_plan(rng);
    int order[kMaxRank];
    for (int d = 0; d < plan.rank(); ++d) order[d] = d;
    std::shuffle(order, order + plan.rank(), rng);
    BroadcastPlan permuted;
    for (int j = 0; j < plan.rank(); ++j) {
      permuted.shape.push_back(plan.shape[order[j]]);
      for (int k = 0; k < BroadcastPlan::kOperands; ++k)
        permuted.strides[k].push_back(plan.strides[k][order[j]]);
    }
    BroadcastPlan got;
    coalesce(plan, order, got);
    const BroadcastPlan want = coalesce(permuted);
    ASSERT_EQ(got.shape, want.shape) << describe(permuted);
    for (int k = 0; k < BroadcastPlan::kOperands; ++k)
      ASSERT_EQ(got.strides[k], want.strides[k]) << "operand " << k << " " << describe(permuted);
  }
}

}  // namespace
}  // namespace ewise
