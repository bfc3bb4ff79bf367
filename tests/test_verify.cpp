// Host tests of the verification harness: generators, poisoning, comparison, COO tools.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <set>

#include "element.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"

namespace ewise {
namespace {

using verify::compare;

double at(const HostTensor& t, std::int64_t i) {
  return detail::load_double(t.dtype(), detail::element_at(t.data(), t.dtype(), i));
}

TEST(Generators, SeededNoZerosInRangeEveryDtype) {
  for (DType t : kAllDTypes) {
    // The whole nonzero values of [-4, 4] the dtype holds: 8 (signed), 4 (unsigned), 1 (bool).
    const std::size_t choices =
        t == DType::b8 ? 1 : dtype_kind(t) == DTypeKind::unsigned_int ? 4 : 8;
    const HostTensor a = verify::random_tensor(t, {1000}, 42);
    const HostTensor b = verify::random_tensor(t, {1000}, 42);
    const HostTensor c = verify::random_tensor(t, {1000}, 43);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0) << dtype_name(t) << ": not seeded";
    if (choices > 1) {
      EXPECT_NE(std::memcmp(a.data(), c.data(), a.bytes()), 0) << dtype_name(t);
    }
    std::set<double> distinct;
    for (std::int64_t i = 0; i < 1000; ++i) {
      const double v = at(a, i);
      ASSERT_NE(v, 0.0) << dtype_name(t) << " produced a zero at " << i;
      ASSERT_GE(v, -4.0) << dtype_name(t);
      ASSERT_LE(v, 4.0) << dtype_name(t);
      if (is_floating(t)) {
        ASSERT_GE(std::fabs(v), 0.0625);
      } else {
        ASSERT_EQ(v, std::round(v));
      }
      distinct.insert(v);
    }
    EXPECT_GT(distinct.size(), is_floating(t) ? 200u : choices - 1) << dtype_name(t);
  }
}

TEST(Generators, ZerosOnlyWhenAsked) {
  verify::GenOptions o;
  o.lo = -1;
  o.hi = 1;
  o.allow_zero = true;
  const HostTensor t = verify::random_tensor(DType::i32, {2000}, 7, o);
  int zeros = 0;
  for (std::int64_t i = 0; i < 2000; ++i) zeros += at(t, i) == 0.0;
  EXPECT_GT(zeros, 400);
  o.allow_zero = false;
  o.min_magnitude = 2;  // nothing in [-1,1] has magnitude >= 2
  EXPECT_THROW(verify::random_tensor(DType::f32, {4}, 7, o), InvalidArgument);
}

TEST(Poison, FloatingIsNaNIntegersSentinelAndCompareCountsUnwritten) {
  for (DType t : kAllDTypes) {
    HostTensor out(t, {3, 5});
    verify::poison(out.view());
    for (std::int64_t i = 0; i < 15; ++i)
      EXPECT_TRUE(verify::is_poison(t, static_cast<std::byte*>(out.data()) + i * dtype_size(t)));
    const HostTensor want = verify::random_tensor(t, {3, 5}, 1);
    const verify::CompareReport r = compare(out, want);
    EXPECT_EQ(r.mismatches, 15) << dtype_name(t);
    EXPECT_EQ(r.poisoned, 15) << dtype_name(t);
    EXPECT_FALSE(r.ok());
  }
}

TEST(Compare, ReportsCountWorstErrorAndFirstCoordinate) {
  HostTensor want = verify::random_tensor(DType::f32, {4, 6}, 3);
  HostTensor got(DType::f32, {4, 6});
  std::memcpy(got.data(), want.data(), want.bytes());
  auto* g = got.data_as<float>();
  const float w13 = want.data_as<float>()[1 * 6 + 3];
  g[1 * 6 + 3] += 0.5f;
  g[3 * 6 + 0] *= 1.0f + 1e-7f;  // within f32 tolerance
  const verify::CompareReport r = compare(got, want);
  EXPECT_EQ(r.checked, 24);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.first_coord, Dims({1, 3}));
  EXPECT_EQ(r.first_want, w13);
  EXPECT_NEAR(r.max_abs_error, 0.5, 1e-6);
  EXPECT_NE(r.str().find("first at (1,3)"), std::string::npos) << r.str();
  // NaN only matches NaN
  HostTensor n1(DType::f64, {1}), n2(DType::f64, {1});
  n1.data_as<double>()[0] = std::nan("");
  n2.data_as<double>()[0] = 1.0;
  EXPECT_FALSE(compare(n1, n2).ok());
  n2.data_as<double>()[0] = std::nan("");
  EXPECT_TRUE(compare(n1, n2).ok());
  // ... of the same bits: ewise writes every NaN canonical (ops.hpp), so another NaN is a bug
  // (or the poison of an unwritten element)
  const std::uint64_t canonical = 0x7FFFFFFFFFFFFFFF, other = 0xFFF8000000000001;
  std::memcpy(n1.data(), &canonical, 8);
  std::memcpy(n2.data(), &other, 8);
  const verify::CompareReport nan_bits = compare(n1, n2);
  EXPECT_FALSE(nan_bits.ok());
  EXPECT_NE(nan_bits.str().find("bits 0x7fffffffffffffff"), std::string::npos) << nan_bits.str();
  std::memcpy(n2.data(), &canonical, 8);
  EXPECT_TRUE(compare(n1, n2).ok());
  EXPECT_THROW(compare(n1, want), InvalidArgument);  // dtype/shape mismatch
}

TEST(Compare, StridedViews) {
  const HostTensor base = verify::random_tensor(DType::i64, {3, 4}, 9);
  HostTensor t(DType::i64, {4, 3});  // explicit transpose
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) t.data_as<std::int64_t>()[j * 3 + i] = base.data_as<std::int64_t>()[i * 4 + j];
  const ConstTensorView tv(t.data(), TensorDesc::strided(DType::i64, {3, 4}, {1, 3}), Memory::host);
  EXPECT_TRUE(compare(tv, base).ok());
}

TEST(Tolerances, Documented) {
  EXPECT_EQ(verify::default_tolerance(DType::i32).abs, 0);
  EXPECT_EQ(verify::default_tolerance(DType::f16).rel, 1e-3);
  EXPECT_EQ(verify::default_tolerance(DType::bf16).rel, 8e-3);
}

std::vector<std::pair<std::int64_t, std::int64_t>> coords(const HostCoo& m) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t k = 0; k < m.nnz(); ++k) {
    if (m.desc().index == IndexType::i32)
      out.emplace_back(static_cast<const std::int32_t*>(m.rows())[k], static_cast<const std::int32_t*>(m.cols())[k]);
    else
      out.emplace_back(static_cast<const std::int64_t*>(m.rows())[k], static_cast<const std::int64_t*>(m.cols())[k]);
  }
  return out;
}

TEST(RandomCoo, DensityNoDuplicatesSortedInRange) {
  for (double density : {1e-4, 1e-2, 0.3, 1.0}) {
    const HostCoo m = verify::random_coo(200, 300, density, 11);
    EXPECT_EQ(m.nnz(), std::llround(density * 200 * 300)) << density;
    EXPECT_TRUE(m.desc().canonical);
    const auto c = coords(m);
    for (std::size_t k = 0; k < c.size(); ++k) {
      ASSERT_GE(c[k].first, 0);
      ASSERT_LT(c[k].first, 200);
      ASSERT_GE(c[k].second, 0);
      ASSERT_LT(c[k].second, 300);
      if (k) ASSERT_LT(c[k - 1], c[k]) << "not sorted or duplicate at " << k;
    }
  }
}

TEST(RandomCoo, DuplicatesAndUnsortedOnRequest) {
  verify::CooGenOptions o;
  o.index = IndexType::i64;
  o.unsorted = true;
  o.duplicate_fraction = 0.5;
  const HostCoo m = verify::random_coo(100, 100, 0.1, 5, o);
  EXPECT_EQ(m.nnz(), 1500);
  EXPECT_FALSE(m.desc().canonical);
  const auto c = coords(m);
  const std::set<std::pair<std::int64_t, std::int64_t>> distinct(c.begin(), c.end());
  EXPECT_EQ(distinct.size(), 1000u);
  EXPECT_FALSE(std::is_sorted(c.begin(), c.end()));
}

TEST(CompareCoo, SetsAfterSummingDuplicates) {
  verify::CooGenOptions o;
  o.unsorted = true;
  const HostCoo a = verify::random_coo(50, 40, 0.2, 8, o);
  const HostCoo b = verify::random_coo(50, 40, 0.2, 8, o);
  verify::CooCompareReport r = verify::compare_coo(a, b, verify::default_tolerance(DType::f32));
  EXPECT_TRUE(r.ok()) << r.str();
  EXPECT_FALSE(r.got_canonical);
  const HostCoo c = verify::random_coo(50, 40, 0.2, 9);
  r = verify::compare_coo(c, a, verify::default_tolerance(DType::f32));
  EXPECT_FALSE(r.ok());
  EXPECT_GT(r.missing + r.extra + r.value_mismatches, 0);
  EXPECT_TRUE(r.got_canonical);
  EXPECT_FALSE(r.first_problem.empty());
}

TEST(CompareCoo, NaNMatchesOnlyTheSameBits) {
  HostCoo a(CooDesc{2, 2, 1, IndexType::i32, DType::f32, true}), b(a.desc());
  for (HostCoo* m : {&a, &b}) {
    static_cast<std::int32_t*>(m->rows())[0] = 1;
    static_cast<std::int32_t*>(m->cols())[0] = 0;
  }
  const std::uint32_t canonical = 0x7FFFFFFF, other = 0xFFC00001;
  std::memcpy(a.vals(), &canonical, 4);
  std::memcpy(b.vals(), &other, 4);
  const verify::CooCompareReport r = verify::compare_coo(a, b, verify::default_tolerance(DType::f32));
  EXPECT_EQ(r.value_mismatches, 1) << r.str();
  EXPECT_NE(r.first_problem.find("bits 0xffc00001"), std::string::npos) << r.str();
  std::memcpy(b.vals(), &canonical, 4);
  EXPECT_TRUE(verify::compare_coo(a, b, verify::default_tolerance(DType::f32)).ok());
}

}  // namespace
}  // namespace ewise
