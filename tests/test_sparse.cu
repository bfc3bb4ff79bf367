// GPU tests of the sparse half against the CPU reference (ewise/sparse_reference.hpp). The
// GPU and the reference sum duplicates in storage order in the compute type and round once, so
// results must match bit for bit: every comparison uses a zero tolerance.
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "element.hpp"
#include "ewise/detail/device_props.hpp"
#include "ewise/detail/launch.cuh"
#include "ewise/half.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "sparse/policy.hpp"
#include "testing/expect_invalid.hpp"
#include "testing/gpu_test.hpp"
#include "testing/nan_bits.hpp"

namespace ewise {
namespace {

constexpr CooAlgorithm kAlgorithms[] = {CooAlgorithm::automatic,    CooAlgorithm::sort_search,
                                        CooAlgorithm::merge,        CooAlgorithm::bitmap_merge,
                                        CooAlgorithm::linear_search, CooAlgorithm::hash_merge};

/// True when select_coo_algorithm refuses `alg` for (a, b) (linear_search on large inputs,
/// bitmap_merge on huge shapes).
bool refused(const CooView& a, const CooView& b, CooAlgorithm alg) {
  try {
    (void)select_coo_algorithm(a, b, alg);
    return false;
  } catch (const InvalidArgument&) {
    return true;
  }
}
constexpr verify::Tolerance kExact{0.0, 0.0};

std::int64_t index_at(const void* p, IndexType t, std::int64_t k) {
  return t == IndexType::i32 ? static_cast<const std::int32_t*>(p)[k]
                             : static_cast<const std::int64_t*>(p)[k];
}
void set_index(void* p, IndexType t, std::int64_t k, std::int64_t v) {
  if (t == IndexType::i32) static_cast<std::int32_t*>(p)[k] = static_cast<std::int32_t>(v);
  else static_cast<std::int64_t*>(p)[k] = v;
}

/// One stored entry with its value's bytes, for assembling test matrices.
struct Raw {
  std::int64_t r = 0, c = 0;
  std::array<std::byte, 8> v{};
};

std::vector<Raw> raw_entries(const HostCoo& m) {
  const std::size_t vs = dtype_size(m.desc().dtype);
  std::vector<Raw> out(static_cast<std::size_t>(m.nnz()));
  for (std::int64_t k = 0; k < m.nnz(); ++k) {
    Raw& e = out[static_cast<std::size_t>(k)];
    e.r = index_at(m.rows(), m.desc().index, k);
    e.c = index_at(m.cols(), m.desc().index, k);
    std::memcpy(e.v.data(), static_cast<const std::byte*>(m.vals()) + k * static_cast<std::int64_t>(vs), vs);
  }
  return out;
}

HostCoo assemble(const CooDesc& like, const std::vector<Raw>& entries, bool canonical) {
  CooDesc d = like;
  d.nnz = static_cast<std::int64_t>(entries.size());
  d.canonical = canonical;
  HostCoo m(d);
  const std::size_t vs = dtype_size(d.dtype);
  for (std::size_t k = 0; k < entries.size(); ++k) {
    set_index(m.rows(), d.index, static_cast<std::int64_t>(k), entries[k].r);
    set_index(m.cols(), d.index, static_cast<std::int64_t>(k), entries[k].c);
    std::memcpy(static_cast<std::byte*>(m.vals()) + k * vs, entries[k].v.data(), vs);
  }
  return m;
}

/// A partner for `a`: a fresh random matrix plus about `share` of a's coordinates (with fresh
/// values), ordered and duplicated as `o` asks.
HostCoo partner(const HostCoo& a, double density, double share, std::uint64_t seed,
                const verify::CooGenOptions& o) {
  verify::CooGenOptions plain = o;
  plain.unsorted = false;
  plain.duplicate_fraction = 0;
  std::vector<Raw> mine = raw_entries(verify::random_coo(a.desc().nrows, a.desc().ncols, density, seed, plain));
  verify::CooGenOptions value_opts;
  value_opts.dtype = o.dtype;
  value_opts.values = o.values;
  const std::vector<Raw> pool = raw_entries(verify::random_coo(1, a.nnz() + 1, 1.0, seed + 7, value_opts));
  std::mt19937_64 rng(seed);
  const std::vector<Raw> ea = raw_entries(a);
  for (std::size_t k = 0; k < ea.size(); ++k)
    if (std::uniform_real_distribution<double>(0, 1)(rng) < share) {
      Raw x = pool[k];
      x.r = ea[k].r;
      x.c = ea[k].c;
      mine.push_back(x);
    }
  const auto key = [&](const Raw& e) { return e.r * a.desc().ncols + e.c; };
  const auto by_key = [&](const Raw& x, const Raw& y) { return key(x) < key(y); };
  std::stable_sort(mine.begin(), mine.end(), by_key);
  if (o.duplicate_fraction == 0) {
    mine.erase(std::unique(mine.begin(), mine.end(), [&](const Raw& x, const Raw& y) { return key(x) == key(y); }),
               mine.end());
  } else if (!mine.empty()) {
    const std::size_t n = mine.size();
    for (std::size_t k = 0; k < static_cast<std::size_t>(o.duplicate_fraction * static_cast<double>(n)); ++k) {
      Raw x = pool[rng() % pool.size()];
      const Raw& at = mine[rng() % n];
      x.r = at.r;
      x.c = at.c;
      mine.push_back(x);
    }
    std::stable_sort(mine.begin(), mine.end(), by_key);
  }
  bool unique = true;
  for (std::size_t k = 1; k < mine.size(); ++k) unique = unique && key(mine[k - 1]) != key(mine[k]);
  if (o.unsorted) std::shuffle(mine.begin(), mine.end(), rng);
  return assemble(a.desc(), mine, !o.unsorted && unique);
}

/// got (device) equals want (the reference) exactly: same coordinates, bit-equal values,
/// canonical, marked canonical.
void expect_same(const DeviceCoo& got, const HostCoo& want, const std::string& what,
                 cudaStream_t stream = nullptr) {
  const verify::CooCompareReport r = verify::compare_coo(got, want, kExact, stream);
  EXPECT_TRUE(r.ok()) << what << ": " << r.str();
  EXPECT_TRUE(r.got_canonical) << what << ": result is not canonical";
  EXPECT_TRUE(got.desc().canonical) << what;
  EXPECT_EQ(got.nnz(), want.nnz()) << what;
  EXPECT_EQ(got.desc().index, want.desc().index) << what;
  EXPECT_EQ(got.desc().dtype, want.desc().dtype) << what;
}

/// Host tensors equal bit for bit.
void expect_bits(const HostTensor& got, const HostTensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.bytes())) << what;
}

/// Every algorithm that accepts (a, b), both operand orders, against the reference.
void check_multiply_all(const HostCoo& a, const HostCoo& b, const std::string& what,
                        cudaStream_t stream = nullptr) {
  const HostCoo want = reference_multiply(a, b);
  const DeviceCoo da = to_device(a, stream), db = to_device(b, stream);
  for (const CooAlgorithm alg : kAlgorithms) {
    SparseOptions o;
    o.algorithm = alg;
    if (refused(da, db, alg)) {
      EXPECT_THROW(multiply(da, db, o, stream), InvalidArgument) << what;
      continue;
    }
    const std::string tag = what + " " + coo_algorithm_name(alg);
    expect_same(multiply(da, db, o, stream), want, tag + " a*b", stream);
    expect_same(multiply(db, da, o, stream), want, tag + " b*a", stream);
  }
}

/// multiply_values(a, dense) on the device, checked and unchecked, into a poisoned buffer:
/// bit-equal to the CPU backend, and for a canonical a (no duplicates) to multiply(a, dense)'s
/// values, an independent oracle.
void check_multiply_values(const HostCoo& a, const DeviceCoo& da, const ConstTensorView& hv,
                           const ConstTensorView& dv, const std::string& what) {
  const DType t = a.desc().dtype;
  const Dims n{a.nnz()};
  HostTensor want(t, n);
  multiply_values(a, hv, want.view());
  if (a.desc().canonical) {
    const HostCoo product = reference_multiply(a, hv);
    ASSERT_EQ(product.nnz(), a.nnz()) << what;
    EXPECT_EQ(0, std::memcmp(product.vals(), want.data(), want.bytes())) << what << " values";
  }
  for (const bool checked : {true, false}) {
    SparseOptions o;
    o.validate_indices = checked;
    DeviceTensor got(t, n);
    verify::poison(got.view());
    multiply_values(da, dv, got.view(), o);
    expect_bits(to_host(got.view()), want, what + " multiply_values" + (checked ? "" : " unchecked"));
  }
}

/// multiply(a, dense) against the reference for every form of dense operand (full, its
/// transpose, a pitched view, row (1, n) and (n,), a reversed row, column, scalar, (1, 1);
/// operands over 2^22 elements are left out), keeping and dropping zeros, and a trusted call
/// (validate_indices off) on the first form. `values` draws the dense elements.
void check_dense_factors(const HostCoo& a, std::uint64_t seed, const std::string& what,
                         const verify::GenOptions& values = {}) {
  const DType t = a.desc().dtype;
  const std::int64_t nr = a.desc().nrows, nc = a.desc().ncols;
  const auto es = static_cast<std::int64_t>(dtype_size(t));
  const DeviceCoo da = to_device(a);
  struct Form {
    const char* name;
    Dims alloc;       // the tensor allocated
    TensorDesc view;  // the operand: a view of it
    std::int64_t at;  // element of the allocation at the view's (0, 0)
  };
  const Form forms[] = {
      {"full", Dims{nr, nc}, TensorDesc::contiguous(t, Dims{nr, nc}), 0},
      {"transposed", Dims{nc, nr}, TensorDesc::strided(t, Dims{nr, nc}, Dims{1, nr}), 0},
      {"pitched", Dims{nr, nc + 3}, TensorDesc::strided(t, Dims{nr, nc}, Dims{nc + 3, 1}), 0},
      {"row", Dims{1, nc}, TensorDesc::contiguous(t, Dims{1, nc}), 0},
      {"flat row", Dims{nc}, TensorDesc::contiguous(t, Dims{nc}), 0},
      {"reversed row", Dims{nc}, TensorDesc::strided(t, Dims{nc}, Dims{-1}), nc - 1},
      {"column", Dims{nr, 1}, TensorDesc::contiguous(t, Dims{nr, 1}), 0},
      {"scalar", Dims{}, TensorDesc::contiguous(t, Dims{}), 0},
      {"(1,1)", Dims{1, 1}, TensorDesc::contiguous(t, Dims{1, 1}), 0}};
  bool trusted_done = false;
  for (const Form& f : forms) {
    if (f.alloc.product() > (1 << 22)) continue;
    const HostTensor h = verify::random_tensor(t, f.alloc, ++seed, values);
    const DeviceTensor d = to_device(h.view());
    const ConstTensorView hv{static_cast<const std::byte*>(h.data()) + f.at * es, f.view, Memory::host};
    const ConstTensorView dv{static_cast<const std::byte*>(d.data()) + f.at * es, f.view, Memory::device};
    const std::string tag = what + " times " + f.name + " " + f.view.str();
    for (const bool drop : {false, true}) {
      SparseOptions o;
      o.drop_zeros = drop;
      expect_same(multiply(da, dv, o), reference_multiply(a, hv, o), tag + (drop ? " drop_zeros" : ""));
    }
    if (!trusted_done) {
      SparseOptions trusted;
      trusted.validate_indices = false;
      expect_same(multiply(da, dv, trusted), reference_multiply(a, hv), tag + " unchecked");
      trusted_done = true;
    }
    check_multiply_values(a, da, hv, dv, tag);
  }
}

/// coalesce(a) against the reference, keeping and dropping zeros.
void check_coalesce(const HostCoo& a, const std::string& what) {
  const DeviceCoo da = to_device(a);
  for (const bool drop : {false, true}) {
    SparseOptions o;
    o.drop_zeros = drop;
    expect_same(coalesce(da, o), reference_coalesce(a, o), what + " coalesce" + (drop ? " drop_zeros" : ""));
  }
}

/// The test's seed (EWISE_SEED or random), printed so that a failure can be rerun.
std::uint64_t printed_seed() {
  const std::uint64_t seed = verify::seed_from_env_or_random();
  std::cout << "[ seed ] EWISE_SEED=" << seed << "\n";
  return seed;
}

/// Random matrices of dtype and index type, stored unsorted or in order, with
/// duplicate_fraction of their entries stored again.
verify::CooGenOptions coo_options(DType dtype, IndexType index, bool unsorted,
                                  double duplicate_fraction) {
  verify::CooGenOptions o;
  o.dtype = dtype;
  o.index = index;
  o.unsorted = unsorted;
  o.duplicate_fraction = duplicate_fraction;
  return o;
}

class SparseGpu : public ::testing::Test {
 protected:
  void SetUp() override { seed_ = printed_seed(); }
  std::uint64_t seed_ = 0;
};

// ---- multiply: the sweep --------------------------------------------------------------------

struct Case {
  std::int64_t nrows, ncols;
  double density;
};
constexpr Case kCases[] = {{1, 1, 1.0},      {1, 1000, 0.01},  {1000, 1, 0.5},   {7, 13, 0.5},
                           {300, 200, 0.05}, {2049, 1023, 1e-3}, {1000, 1000, 1e-5},
                           {4096, 4096, 1e-4}, {256, 256, 0.5}};

/// The sweeps' cases: all of kCases, or under the sanitizers (gpu_test.hpp) a single entry, a
/// single row and column, a small odd shape, several merge tiles and a dense-ish matrix.
std::vector<Case> sweep_cases() {
  if (!test::sanitizer_sizes()) return {std::begin(kCases), std::end(kCases)};
  return {{1, 1, 1.0}, {1000, 1, 0.5}, {7, 13, 0.5}, {2049, 1023, 1e-3}, {256, 256, 0.5}};
}

// dtype × index type × sorted × duplicates
using SweepParam = std::tuple<DType, IndexType, bool, bool>;

/// One case of a sweep: a drawn as the parameter says, and two partners sharing about half of
/// its coordinates, one ordered and duplicated alike, one canonical.
struct SweepCase {
  const Case& shape;
  HostCoo a, b_alike, b_canonical;
  std::string what;  ///< dtype, index type, shape, density, order, duplicates
};

/// The sweep of one parameter: prints its seed, then calls check(c, s) for every case of
/// sweep_cases(), s the seed counter the case's matrices were drawn with (++s draws more).
void for_each_sweep_case(const SweepParam& param,
                         const std::function<void(const SweepCase&, std::uint64_t&)>& check) {
  const auto [dtype, index, sorted, dups] = param;
  std::uint64_t s = printed_seed();
  const verify::CooGenOptions o = coo_options(dtype, index, !sorted, dups ? 0.25 : 0.0);
  const verify::CooGenOptions canonical = coo_options(dtype, index, false, 0);
  for (const Case& c : sweep_cases()) {
    HostCoo a = verify::random_coo(c.nrows, c.ncols, c.density, ++s, o);
    HostCoo alike = partner(a, c.density, 0.5, ++s, o);
    HostCoo canon = partner(a, c.density, 0.5, ++s, canonical);
    std::string what = std::string(dtype_name(dtype)) + " " + index_name(index) + " " +
                       std::to_string(c.nrows) + "x" + std::to_string(c.ncols) + " density " +
                       std::to_string(c.density) + (sorted ? " sorted" : " unsorted") +
                       (dups ? " dups" : "");
    check(SweepCase{c, std::move(a), std::move(alike), std::move(canon), std::move(what)}, s);
  }
}

class SparseMultiplySweep : public ::testing::TestWithParam<SweepParam> {};

TEST_P(SparseMultiplySweep, EveryAlgorithmMatchesTheReference) {
  EWISE_REQUIRE_GPU();
  for_each_sweep_case(GetParam(), [](const SweepCase& c, std::uint64_t&) {
    check_multiply_all(c.a, c.b_alike, c.what + " (b alike)");
    check_multiply_all(c.a, c.b_canonical, c.what + " (b canonical)");
  });
}

std::string sweep_name(const ::testing::TestParamInfo<SweepParam>& info) {
  const auto& [dtype, index, sorted, dups] = info.param;
  return std::string(dtype_name(dtype)) + "_" + index_name(index) +
         (sorted ? "_sorted" : "_unsorted") + (dups ? "_dups" : "");
}

/// Every dtype × index type × sorted × duplicates; under the sanitizers (gpu_test.hpp) each
/// index type × sorted × duplicates once, the dtypes taken in turn.
std::vector<SweepParam> sweep_params() {
  const std::vector<DType> dtypes = test::sweep_dtypes();
  std::vector<SweepParam> p;
  std::size_t combo = 0;
  for (const IndexType index : {IndexType::i32, IndexType::i64})
    for (const bool sorted : {false, true})
      for (const bool dups : {false, true}) {
        for (std::size_t k = 0; k < dtypes.size(); ++k)
          if (!test::sanitizer_sizes() || k == combo % dtypes.size())
            p.emplace_back(dtypes[k], index, sorted, dups);
        ++combo;
      }
  return p;
}

INSTANTIATE_TEST_SUITE_P(All, SparseMultiplySweep, ::testing::ValuesIn(sweep_params()), sweep_name);

// ---- multiply: sizes and shapes of note ------------------------------------------------------

TEST_F(SparseGpu, LargerMatrices) {
  EWISE_REQUIRE_GPU();
  verify::CooGenOptions unsorted = coo_options(DType::f32, IndexType::i32, true, 0.1);
  verify::CooGenOptions canonical;
  // 16384^2 at 1e-3 (268k entries each), unsorted with duplicates and canonical.
  const HostCoo a = verify::random_coo(16384, 16384, 1e-3, seed_, unsorted);
  check_multiply_all(a, partner(a, 1e-3, 0.3, seed_ + 1, unsorted), "16384^2 1e-3 unsorted");
  const HostCoo c = verify::random_coo(16384, 16384, 1e-3, seed_ + 2, canonical);
  check_multiply_all(c, partner(c, 1e-3, 0.3, seed_ + 3, canonical), "16384^2 1e-3 canonical");
  // Dense-ish: 1024^2 at 0.5 (524k entries), across several merge tiles per row.
  const HostCoo d = verify::random_coo(1024, 1024, 0.5, seed_ + 4, canonical);
  check_multiply_all(d, partner(d, 0.5, 0.5, seed_ + 5, unsorted), "1024^2 0.5 vs unsorted");
}

TEST_F(SparseGpu, OneOperandMuchLarger) {
  EWISE_REQUIRE_GPU();
  for (const bool unsorted : {false, true}) {
    verify::CooGenOptions o;
    o.unsorted = unsorted;
    const HostCoo big = verify::random_coo(1024, 1024, 0.4, seed_, o);
    const HostCoo tiny = partner(big, 1e-5, 2e-4, seed_ + 1, o);  // ~80 shared coordinates
    check_multiply_all(big, tiny, unsorted ? "big vs tiny unsorted" : "big vs tiny canonical");
  }
}

TEST_F(SparseGpu, KeyWidths) {
  EWISE_REQUIRE_GPU();
  verify::CooGenOptions o = coo_options(DType::f32, IndexType::i64, true, 0.2);
  // nrows * ncols = 9e9 > 2^32: 64-bit keys, 34 key bits.
  const HostCoo w = verify::random_coo(3'000'000'000, 3, 1e-6, seed_, o);
  check_multiply_all(w, partner(w, 1e-6, 0.5, seed_ + 1, o), "64-bit keys");
  // nrows * ncols = 2^32 exactly: 32-bit keys using all 32 bits.
  o.index = IndexType::i32;
  const HostCoo e = verify::random_coo(65536, 65536, 1e-6, seed_ + 2, o);
  check_multiply_all(e, partner(e, 1e-6, 0.5, seed_ + 3, o), "32 key bits");
  // One row of 2^32 columns: 32-bit keys, a column count past 32 bits (the indices of a sorted
  // copy come from its keys by a 64-bit division there).
  o.index = IndexType::i64;
  const HostCoo r = verify::random_coo(1, std::int64_t{1} << 32, 1e-6, seed_ + 5, o);
  check_multiply_all(r, partner(r, 1e-6, 0.5, seed_ + 6, o), "one row of 2^32 columns");
  // An entry at the last row and column.
  std::vector<Raw> ce = raw_entries(verify::random_coo(1, 1, 1.0, seed_ + 4));
  ce[0].r = ce[0].c = 65535;
  const HostCoo last = assemble(CooDesc{65536, 65536, 0, IndexType::i32, DType::f32, true}, ce, true);
  check_multiply_all(last, last, "last coordinate");
}

// Merge tiles hold kTile entries of both operands together (the two-pass kernels; the single
// pass, for two canonical operands, kBlock * kSinglePassItems<I>): overlaps whose merged length
// falls just before, on and after tile edges, matches at the last position of a tile (looked up
// in the next tile's first S entry), runs of duplicates across tile edges.
/// Entries per operand around one and two merge tiles of each size (sparse/policy.hpp), for
/// the tile-edge tests of the intersection and the union, ascending: n + n merged entries
/// around one tile and around two, and four tiles and two; under the sanitizers one tile
/// exactly, one tile and two, and two tiles and two.
std::vector<std::int64_t> merge_tile_sizes() {
  using namespace sparse_detail;
  std::vector<std::int64_t> sizes{1};
  for (const std::int64_t tile :
       {kTile, std::int64_t{kBlock} * kSinglePassItems<std::int32_t>,
        std::int64_t{kBlock} * kSinglePassItems<std::int64_t>}) {
    const std::int64_t half = tile / 2;
    if (test::sanitizer_sizes()) sizes.insert(sizes.end(), {half, half + 1, tile + 1});
    else
      sizes.insert(sizes.end(), {half - 1, half, half + 1, tile - 1, tile, tile + 1, 2 * tile + 1});
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// The operands of the merge tile-edge tests: 64 x 4096 f32 matrices (i32 indices) whose
/// values come in turn from one random draw.
class Bands {
 public:
  explicit Bands(std::uint64_t seed)
      : vals_(raw_entries(verify::random_coo(1, 20000, 1.0, seed))) {}
  /// Entries at keys first, first + step, ... (n of them), each stored `copies` times in a row,
  /// values from draw v0 on; shuffled when `unsorted`. Marked canonical when it is.
  HostCoo operator()(std::int64_t n, std::int64_t first, std::int64_t step, int copies,
                     std::size_t v0, bool unsorted = false) const {
    std::vector<Raw> e;
    for (std::int64_t k = 0; k < n; ++k)
      for (int c = 0; c < copies; ++c) {
        Raw x = vals_[(v0 + e.size()) % vals_.size()];
        const std::int64_t key = first + k * step;
        x.r = key / kShape.ncols;
        x.c = key % kShape.ncols;
        e.push_back(x);
      }
    if (unsorted) std::shuffle(e.begin(), e.end(), std::mt19937_64(v0 + n));
    return assemble(kShape, e, copies == 1 && !unsorted);
  }

  struct Pair {
    HostCoo a, b;
    std::string what;
  };
  /// The cases of two operands around n entries each that the intersection and the union
  /// share: the same keys, interleaved keys (none shared), one key shared at the end, every
  /// other key (b twice as long), runs of duplicates on both sides.
  std::vector<Pair> tile_edge_pairs(std::int64_t n) const {
    const Bands& band = *this;
    const std::string at = " n=" + std::to_string(n);
    std::vector<Pair> p;
    p.push_back({band(n, 0, 1, 1, 0), band(n, 0, 1, 1, 7), "same keys" + at});
    p.push_back({band(n, 0, 2, 1, 0), band(n, 1, 2, 1, 7), "interleaved, none shared" + at});
    p.push_back({band(n, 0, 1, 1, 0), band(n, n - 1, 1, 1, 7), "one shared key at the end" + at});
    p.push_back({band(n, 0, 2, 1, 0), band(2 * n, 0, 1, 1, 7), "every other key" + at});
    p.push_back({band(n, 5, 3, 3, 0), band(n, 5, 1, 2, 7), "duplicate runs" + at});
    return p;
  }

 private:
  static constexpr CooDesc kShape{64, 4096, 0, IndexType::i32, DType::f32, true};
  std::vector<Raw> vals_;
};

TEST_F(SparseGpu, MergeTileEdges) {
  EWISE_REQUIRE_GPU();
  const Bands band(seed_);
  for (const std::int64_t n : merge_tile_sizes())
    for (const Bands::Pair& p : band.tile_edge_pairs(n)) check_multiply_all(p.a, p.b, p.what);
}

TEST_F(SparseGpu, EmptyAndDegenerate) {
  EWISE_REQUIRE_GPU();
  const HostCoo some = verify::random_coo(50, 40, 0.1, seed_);
  const HostCoo none = verify::random_coo(50, 40, 0.0, seed_);
  ASSERT_EQ(none.nnz(), 0);
  check_multiply_all(none, some, "nnz 0");
  check_multiply_all(none, none, "both nnz 0");
  for (const auto& [r, c] : {std::pair<std::int64_t, std::int64_t>{0, 5}, {5, 0}, {0, 0}}) {
    const HostCoo e = verify::random_coo(r, c, 0.5, seed_);
    check_multiply_all(e, e, "empty shape");
    expect_same(coalesce(to_device(e)), e, "coalesce of empty");
    const HostTensor d = to_host(coo_to_dense(to_device(e)).view());
    EXPECT_EQ(d.numel(), 0);
  }
}

TEST_F(SparseGpu, AllDuplicates) {
  EWISE_REQUIRE_GPU();
  for (const bool unsorted : {false, true}) {
    // a: 5000 entries, all at (3, 4); b: (3, 4) a few times among others. And the reverse,
    // so the long run is on the sorted side as well as on the searching side.
    const HostCoo src = verify::random_coo(1, 5000, 1.0, seed_);
    std::vector<Raw> ea = raw_entries(src);
    for (Raw& e : ea) e.r = 3, e.c = 4;
    const HostCoo a = assemble(CooDesc{10, 10, 0, IndexType::i32, DType::f32, false}, ea, false);
    verify::CooGenOptions o = coo_options(DType::f32, IndexType::i32, unsorted, 0.5);
    const HostCoo b = partner(a, 0.3, 1.0, seed_ + 1, o);
    check_multiply_all(a, b, unsorted ? "all duplicates, b unsorted" : "all duplicates");
    check_multiply_all(a, a, "all duplicates, squared");
  }
  // Against b's single entry: a's matching entries (5000) far outnumber b's (the set a's keys
  // go into, in bitmap_merge and hash_merge, holds a's distinct keys, not its entries).
  const HostCoo src = verify::random_coo(1, 5000, 1.0, seed_);
  std::vector<Raw> ea = raw_entries(src);
  for (Raw& e : ea) e.r = 3, e.c = 4;
  const CooDesc shape{10, 10, 0, IndexType::i32, DType::f32, false};
  const HostCoo a = assemble(shape, ea, false);
  const HostCoo one = assemble(shape, {ea.front()}, true);
  check_multiply_all(a, one, "all duplicates against one entry");
}

TEST_F(SparseGpu, NoMatchesAndFullOverlap) {
  EWISE_REQUIRE_GPU();
  const HostCoo base = verify::random_coo(200, 300, 0.2, seed_);
  std::vector<Raw> even, odd;
  for (const Raw& e : raw_entries(base)) ((e.r * 300 + e.c) % 2 ? odd : even).push_back(e);
  const HostCoo a = assemble(base.desc(), even, true), b = assemble(base.desc(), odd, true);
  ASSERT_TRUE(reference_multiply(a, b).nnz() == 0);
  check_multiply_all(a, b, "no matches");
  // Full overlap: same coordinates, other values; and a matrix times itself.
  std::vector<Raw> other = raw_entries(verify::random_coo(200, 300, 0.2, seed_ + 9));
  std::vector<Raw> same = raw_entries(base);
  for (std::size_t k = 0; k < same.size(); ++k) same[k].v = other[k % other.size()].v;
  const HostCoo b2 = assemble(base.desc(), same, true);
  check_multiply_all(base, b2, "full overlap");
  check_multiply_all(base, base, "squared");
  const DeviceCoo d = to_device(base);
  expect_same(multiply(d, d), reference_multiply(base, base), "same view twice");
}

TEST_F(SparseGpu, MisalignedArraysAndStreams) {
  EWISE_REQUIRE_GPU();
  verify::CooGenOptions o = coo_options(DType::f16, IndexType::i32, true, 0.2);
  const HostCoo a = verify::random_coo(333, 257, 0.05, seed_, o);
  const HostCoo b = partner(a, 0.05, 0.5, seed_ + 1, o);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  // Copies whose arrays start one element past an aligned address.
  struct Shifted {
    DeviceBuffer rows, cols, vals;
    CooView view;
  };
  const auto shifted = [&](const HostCoo& m) {
    const std::size_t n = static_cast<std::size_t>(m.nnz()), is = index_size(m.desc().index),
                      vs = dtype_size(m.desc().dtype);
    Shifted s{DeviceBuffer((n + 1) * is, stream), DeviceBuffer((n + 1) * is, stream),
              DeviceBuffer((n + 1) * vs, stream), {}};
    auto* rows = static_cast<std::byte*>(s.rows.data()) + is;
    auto* cols = static_cast<std::byte*>(s.cols.data()) + is;
    auto* vals = static_cast<std::byte*>(s.vals.data()) + vs;
    EXPECT_EQ(cudaMemcpyAsync(rows, m.rows(), n * is, cudaMemcpyHostToDevice, stream), cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(cols, m.cols(), n * is, cudaMemcpyHostToDevice, stream), cudaSuccess);
    EXPECT_EQ(cudaMemcpyAsync(vals, m.vals(), n * vs, cudaMemcpyHostToDevice, stream), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    s.view = CooView{rows, cols, vals, m.desc(), Memory::device};
    return s;
  };
  Shifted sa = shifted(a), sb = shifted(b);
  const CooView va = sa.view, vb = sb.view;
  EXPECT_NE(reinterpret_cast<std::uintptr_t>(va.rows) % 8, 0u);
  const HostCoo want = reference_multiply(a, b);
  for (const CooAlgorithm alg : kAlgorithms) {
    SparseOptions opt;
    opt.algorithm = alg;
    // The result is complete in stream order: compare on the same stream.
    expect_same(multiply(va, vb, opt, stream), want, std::string("misaligned ") + coo_algorithm_name(alg), stream);
  }
  expect_same(coalesce(va, {}, stream), reference_coalesce(a), "misaligned coalesce", stream);
  check_multiply_all(a, b, "on a stream", stream);
  sa = Shifted{};
  sb = Shifted{};
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST_F(SparseGpu, DropZeros) {
  EWISE_REQUIRE_GPU();
  // Integers: duplicates that cancel, explicit zeros, and random values from {-2..2}.
  verify::CooGenOptions o = coo_options(DType::i32, IndexType::i32, true, 0.5);
  o.values.lo = -2;
  o.values.hi = 2;
  o.values.allow_zero = true;
  const HostCoo a = verify::random_coo(100, 100, 0.3, seed_, o);
  const HostCoo b = partner(a, 0.3, 0.8, seed_ + 1, o);
  SparseOptions drop;
  drop.drop_zeros = true;
  const HostCoo keep_want = reference_multiply(a, b), drop_want = reference_multiply(a, b, drop);
  ASSERT_LT(drop_want.nnz(), keep_want.nnz()) << "the inputs should produce some zero products";
  const DeviceCoo da = to_device(a), db = to_device(b);
  for (const CooAlgorithm alg : {CooAlgorithm::sort_search, CooAlgorithm::merge,
                                 CooAlgorithm::bitmap_merge, CooAlgorithm::linear_search}) {
    drop.algorithm = alg;
    expect_same(multiply(da, db, drop), drop_want, std::string("drop_zeros ") + coo_algorithm_name(alg));
  }
  expect_same(multiply(da, db), keep_want, "zeros kept by default");
  expect_same(coalesce(da, drop), reference_coalesce(a, drop), "coalesce drop_zeros");
  expect_same(coalesce(da), reference_coalesce(a), "coalesce keeps zeros");
}

// ---- conversions ------------------------------------------------------------------------------

using ConvParam = std::tuple<DType, IndexType, bool>;  // dtype, index, canonical input
class SparseConversions : public ::testing::TestWithParam<ConvParam> {};

TEST_P(SparseConversions, MatchTheReference) {
  EWISE_REQUIRE_GPU();
  const auto [dtype, index, canon] = GetParam();
  const std::uint64_t seed = printed_seed();
  const verify::CooGenOptions o = coo_options(dtype, index, !canon, canon ? 0 : 0.3);
  for (const Case& c : sweep_cases()) {
    const std::string what = std::string(dtype_name(dtype)) + " " + std::to_string(c.nrows) + "x" +
                             std::to_string(c.ncols) + " " + std::to_string(c.density);
    const HostCoo a = verify::random_coo(c.nrows, c.ncols, c.density, seed + c.nrows, o);
    const DeviceCoo da = to_device(a);
    // coalesce
    const DeviceCoo co = coalesce(da);
    expect_same(co, reference_coalesce(a), what + " coalesce");
    // COO → dense, exact bits (duplicates summed once, +0 elsewhere)
    if (c.nrows * c.ncols <= (1 << 22))
      expect_bits(to_host(coo_to_dense(da).view()), reference_coo_to_dense(a), what + " coo_to_dense");
    // CSR row offsets of the canonical form
    expect_bits(to_host(coo_to_csr_row_offsets(co).view()), reference_coo_to_csr_row_offsets(to_host(co)),
                what + " csr offsets");
    // COO ⊙ dense for every form of dense operand
    check_dense_factors(a, seed + 1, what);
  }
}

std::string conversions_name(const ::testing::TestParamInfo<ConvParam>& info) {
  const auto& [dtype, index, canonical] = info.param;
  return std::string(dtype_name(dtype)) + "_" + index_name(index) +
         (canonical ? "_canonical" : "_unsorted_dups");
}

/// Every dtype × index type × input order; under the sanitizers each index type × order once,
/// the dtypes taken in turn.
std::vector<ConvParam> conversions_params() {
  const std::vector<DType> dtypes = test::sweep_dtypes();
  std::vector<ConvParam> p;
  std::size_t combo = 0;
  for (const IndexType index : {IndexType::i32, IndexType::i64})
    for (const bool canonical : {false, true}) {
      for (std::size_t k = 0; k < dtypes.size(); ++k)
        if (!test::sanitizer_sizes() || k == combo % dtypes.size())
          p.emplace_back(dtypes[k], index, canonical);
      ++combo;
    }
  return p;
}

INSTANTIATE_TEST_SUITE_P(All, SparseConversions, ::testing::ValuesIn(conversions_params()),
                         conversions_name);

using test::expect_invalid;

// COO ⊙ dense and coalesce: canonical input in one pass (entry i gives output i, or the
// tiles compact with drop_zeros), other input sorted and reduced in one pass whose tiles find
// their output offsets from their predecessors. Entry counts around warps (32) and tiles (2048),
// none at all, and both orders with duplicates, for several dtypes and both index types.
TEST_F(SparseGpu, DenseFactorAndCoalesceAtTileEdges) {
  EWISE_REQUIRE_GPU();
  std::uint64_t s = seed_;
  // Under the sanitizers each dtype with one index type (taken in turn) and fewer sizes: one
  // warp and a bit, one tile exactly and one over, three tiles and one over.
  const bool small = test::sanitizer_sizes();
  const std::vector<std::int64_t> sizes =
      small ? std::vector<std::int64_t>{0, 1, 33, 2048, 2049, 6145}
            : std::vector<std::int64_t>{0, 1, 31, 33, 2047, 2048, 2049, 4096, 6145};
  const DType dtypes[] = {DType::f32, DType::f16, DType::i64};
  for (int d = 0; d < 3; ++d) {
    const DType dtype = dtypes[d];
    for (const IndexType index : {IndexType::i32, IndexType::i64}) {
      if (small && index != (d % 2 ? IndexType::i64 : IndexType::i32)) continue;
      for (const std::int64_t n : sizes) {
        for (const bool unsorted : {false, true}) {
          verify::CooGenOptions o = coo_options(dtype, index, unsorted, unsorted ? 0.3 : 0.0);
          const HostCoo a = verify::random_coo(97, 131, static_cast<double>(n) / (97 * 131), ++s, o);
          const std::string what = std::string(dtype_name(dtype)) + " " + index_name(index) + " n=" +
                                   std::to_string(n) + (unsorted ? " unsorted" : " canonical");
          check_dense_factors(a, ++s, what);
          check_coalesce(a, what);
        }
      }
    }
  }
}

// Many tiles (the look-back crosses several 32-tile windows), values and dense elements in
// {-2, ..., 2} so that products, and duplicates summing to zero, are dropped by drop_zeros;
// and keys of 64 bits, and 32-bit keys over a row of 2^32 columns.
TEST_F(SparseGpu, DenseFactorManyTilesZerosAndKeyWidths) {
  EWISE_REQUIRE_GPU();
  verify::GenOptions small;
  small.lo = -2;
  small.hi = 2;
  small.allow_zero = true;
  for (const DType dtype : {DType::i32, DType::f32}) {
    for (const bool unsorted : {false, true}) {
      verify::CooGenOptions o =
          coo_options(dtype, IndexType::i32, unsorted, unsorted ? 0.5 : 0.0);
      o.values = small;
      // 154+ tiles of 2048 entries (38+ under the sanitizers)
      const std::int64_t n = test::sanitizer_sizes() ? 512 : 1024;
      const HostCoo a = verify::random_coo(n, n, 0.3, seed_ + 1, o);
      const std::string what = std::string(dtype_name(dtype)) + (unsorted ? " unsorted" : " canonical") +
                               " " + std::to_string(n) + "^2 0.3";
      check_dense_factors(a, seed_ + 2, what, small);
      check_coalesce(a, what);
      if (dtype == DType::i32) {  // whole numbers: zeros are drawn
        SparseOptions drop;
        drop.drop_zeros = true;
        const HostTensor z = verify::random_tensor(dtype, Dims{n, n}, seed_ + 3, small);
        ASSERT_LT(reference_multiply(a, z.view(), drop).nnz() + 1000, reference_coalesce(a).nnz())
            << "zero products should be dropped";
      }
    }
  }
  // Floats: products +0 and -0 are dropped, NaN is kept.
  for (const bool unsorted : {false, true}) {
    const verify::CooGenOptions o =
        coo_options(DType::f32, IndexType::i32, unsorted, unsorted ? 0.2 : 0.0);
    const HostCoo f = verify::random_coo(300, 200, 0.3, seed_ + 9, o);
    HostTensor z = verify::random_tensor(DType::f32, Dims{300, 200}, seed_ + 10);
    auto* zp = z.data_as<float>();
    for (std::int64_t i = 0; i < z.numel(); i += 3) zp[i] = i % 2 ? -0.0f : 0.0f;
    for (std::int64_t i = 1; i < z.numel(); i += 301) zp[i] = std::nanf("");
    const DeviceTensor dz = to_device(z.view());
    SparseOptions drop;
    drop.drop_zeros = true;
    const HostCoo want = reference_multiply(f, z.view(), drop);
    ASSERT_LT(want.nnz() + 1000, f.nnz()) << "zero products should be dropped";
    const std::string what = unsorted ? "f32 +-0 and NaN, unsorted" : "f32 +-0 and NaN, canonical";
    expect_same(multiply(to_device(f), dz.view(), drop), want, what);
    expect_same(multiply(to_device(f), dz.view()), reference_multiply(f, z.view()), what + " kept");
  }
  verify::CooGenOptions o = coo_options(DType::f32, IndexType::i64, true, 0.2);
  const HostCoo w = verify::random_coo(3'000'000'000, 3, 1e-6, seed_ + 3, o);  // 64-bit keys
  check_dense_factors(w, seed_ + 4, "64-bit keys");
  check_coalesce(w, "64-bit keys");
  const HostCoo r = verify::random_coo(1, std::int64_t{1} << 32, 1e-6, seed_ + 5, o);  // key < 2^32 = ncols
  check_dense_factors(r, seed_ + 6, "one row of 2^32 columns");
  check_coalesce(r, "one row of 2^32 columns");
  if (test::sanitizer_sizes()) return;  // 28-bit keys: SparseGpu.LargerMatrices has them too
  const HostCoo big = verify::random_coo(16384, 16384, 1e-3, seed_ + 7, o);  // 28-bit keys
  check_dense_factors(big, seed_ + 8, "16384^2 1e-3 unsorted");
}

// A matrix marked canonical that is not: the one-pass check names the first entry not after
// its predecessor (also when that predecessor is in another warp or tile), an index out of
// range before any order failure; unchecked, such input stays inside its buffers (memcheck).
TEST_F(SparseGpu, DenseFactorBrokenCanonicalPromise) {
  EWISE_REQUIRE_GPU();
  for (const IndexType index : {IndexType::i32, IndexType::i64}) {
    verify::CooGenOptions o;
    o.index = index;
    const HostCoo good = verify::random_coo(200, 200, 0.2, seed_, o);  // 8000 entries, 4 tiles
    const std::vector<Raw> e = raw_entries(good);
    const DeviceTensor dense = to_device(verify::random_tensor(DType::f32, Dims{200, 200}, seed_ + 1).view());
    const DeviceTensor scalar = to_device(verify::random_tensor(DType::f32, Dims{}, seed_ + 2).view());
    SparseOptions drop;
    drop.drop_zeros = true;
    const auto expect_named = [&](const std::vector<Raw>& entries, bool canonical,
                                  std::initializer_list<std::string> parts) {
      const DeviceCoo m = to_device(assemble(good.desc(), entries, canonical));
      expect_invalid([&] { multiply(m, dense.view()); }, parts);
      expect_invalid([&] { multiply(m, scalar.view(), drop); }, parts);
      expect_invalid([&] { coalesce(m); }, parts);
      DeviceTensor vals(DType::f32, Dims{m.nnz()});  // bad input: nothing written
      verify::poison(vals.view());
      expect_invalid([&] { multiply_values(m, dense.view(), vals.view()); }, parts);
      const HostTensor after = to_host(vals.view());
      for (std::int64_t k = 0; k < m.nnz(); ++k)
        ASSERT_TRUE(verify::is_poison(DType::f32, static_cast<const float*>(after.data()) + k)) << k;
    };
    std::vector<Raw> back = e;
    std::reverse(back.begin(), back.end());
    expect_named(back, true, {"a is marked canonical", "entry 1 "});
    for (const std::size_t k : {30, 31, 255, 2047, 4095}) {  // entry k + 1 goes before entry k
      std::vector<Raw> swapped = e;
      std::swap(swapped[k], swapped[k + 1]);
      const std::string at = "entry " + std::to_string(k + 1) + " ";
      expect_named(swapped, true, {"a is marked canonical", at.c_str()});
    }
    std::vector<Raw> dup = e;
    dup[3000].r = dup[2999].r;
    dup[3000].c = dup[2999].c;
    expect_named(dup, true, {"a is marked canonical", "entry 3000 "});
    std::vector<Raw> out = e;
    std::swap(out[100], out[101]);
    out[5000].c = 200;
    expect_named(out, true, {"a: entry 5000", ", 200)", "200x200"});
    // Unchecked: any result, nothing outside the buffers; then good input still works.
    SparseOptions trusted;
    trusted.validate_indices = false;
    for (const bool canonical : {true, false}) {
      const DeviceCoo b = to_device(assemble(good.desc(), back, canonical));
      std::vector<Raw> wild = back;
      wild[7].c = 1000;
      wild[8].r = -3;
      wild[7999].r = 199;
      wild[7999].c = 200;
      const DeviceCoo w = to_device(assemble(good.desc(), wild, canonical));
      for (const CooView& m : {CooView(b), CooView(w)}) {
        for (const bool d : {false, true}) {
          trusted.drop_zeros = d;
          EXPECT_NO_THROW(multiply(m, dense.view(), trusted));
          EXPECT_NO_THROW(multiply(m, scalar.view(), trusted));
          EXPECT_NO_THROW(coalesce(m, trusted));
        }
        trusted.drop_zeros = false;
        DeviceTensor vals(DType::f32, Dims{m.desc.nnz});
        EXPECT_NO_THROW(multiply_values(m, dense.view(), vals.view(), trusted));
      }
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    expect_same(multiply(to_device(good), dense.view()),
                reference_multiply(good, to_host(dense.view()).view()), "good input after");
  }
}

// A row vector over 44% of the L2 is gathered in column bands of at most a third of it
// (kColumnBands in sparse/policy.hpp): each entry is visited by one band's blocks, also at the
// bands' edges and out of range, so results, checks and the untouched output of bad input are
// as without bands. Vectors of 1.5 and 2.5 thirds (two and three bands), of 5 thirds at f64
// (three bands of twice the width), a reversed row, and a row with 64 bytes between elements
// (a sector a column).
TEST_F(SparseGpu, RowVectorsLargerThanTheL2InColumnBands) {
  EWISE_REQUIRE_GPU();
  const std::int64_t third = detail::current_device_props().l2_bytes / sparse_detail::kColumnBands.l2_divisor;
  ASSERT_GT(third, 1 << 20) << "L2 of " << detail::current_device_props().l2_bytes << " bytes";
  struct Case {
    DType dtype;
    IndexType index;
    double thirds;       // the vector's footprint in thirds of the L2
    std::int64_t step;   // elements between the row's elements
  };
  const Case cases[] = {{DType::f32, IndexType::i32, 1.5, 1},
                        {DType::f16, IndexType::i64, 2.5, -1},
                        {DType::f64, IndexType::i64, 5.0, 1},
                        {DType::f32, IndexType::i32, 1.5, 16}};
  const std::int64_t n = test::sanitizer_sizes() ? 20000 : 200000;
  std::uint64_t s = seed_;
  for (const Case& k : cases) {
    const auto es = static_cast<std::int64_t>(dtype_size(k.dtype));
    const std::int64_t column_bytes = std::min<std::int64_t>(std::abs(k.step) * es, 32);
    const auto ncols = static_cast<std::int64_t>(k.thirds * static_cast<double>(third)) / column_bytes;
    const std::int64_t nrows = 8;
    verify::CooGenOptions o = coo_options(k.dtype, k.index, false, 0.0);
    std::vector<Raw> e = raw_entries(verify::random_coo(nrows, ncols, static_cast<double>(n) / (nrows * ncols), ++s, o));
    // Entries on both sides of every multiple of 2^17 columns (every band edge) and at the ends.
    std::mt19937_64 rng(++s);
    const std::size_t drawn = e.size();
    const auto edge = [&](std::int64_t c) {
      Raw x = e[rng() % drawn];
      x.r = static_cast<std::int64_t>(rng() % nrows);
      x.c = c;
      e.push_back(x);
    };
    for (std::int64_t m = std::int64_t{1} << 17; m < ncols; m += std::int64_t{1} << 17) {
      edge(m - 1);
      edge(m);
    }
    edge(0);
    edge(ncols - 1);
    std::sort(e.begin(), e.end(), [](const Raw& x, const Raw& y) { return x.r != y.r ? x.r < y.r : x.c < y.c; });
    e.erase(std::unique(e.begin(), e.end(), [](const Raw& x, const Raw& y) { return x.r == y.r && x.c == y.c; }), e.end());
    const CooDesc desc{nrows, ncols, 0, k.index, k.dtype, true};
    const HostCoo a = assemble(desc, e, true);
    const DeviceCoo da = to_device(a);
    const std::int64_t span = ncols * std::abs(k.step);
    const HostTensor h = verify::random_tensor(k.dtype, Dims{span}, ++s);
    const DeviceTensor d = to_device(h.view());
    const std::int64_t at = k.step < 0 ? span - 1 : 0;
    const TensorDesc row = TensorDesc::strided(k.dtype, Dims{1, ncols}, Dims{0, k.step});
    const ConstTensorView hv{static_cast<const std::byte*>(h.data()) + at * es, row, Memory::host};
    const ConstTensorView dv{static_cast<const std::byte*>(d.data()) + at * es, row, Memory::device};
    const std::string what = std::string(dtype_name(k.dtype)) + " " + index_name(k.index) + " " +
                             std::to_string(ncols) + " columns, step " + std::to_string(k.step);
    expect_same(multiply(da, dv), reference_multiply(a, hv), what);
    SparseOptions trusted;
    trusted.validate_indices = false;
    expect_same(multiply(da, dv, trusted), reference_multiply(a, hv), what + " unchecked");
    check_multiply_values(a, da, hv, dv, what);
    // multiply_values on the same entries out of order: shuffled (a stretch's first and last
    // entries then say nothing of the bands between them), and sorted but for the middle entry
    // of each stretch of kBlock * kEntryItems, swapped with the one half the matrix away (so a
    // stretch holds one entry outside the bands its first and last entries bound).
    std::vector<Raw> shuffled = e;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    std::vector<Raw> swapped = e;
    const auto stretch = static_cast<std::size_t>(sparse_detail::kBlock * sparse_detail::kEntryItems);
    const std::size_t half = swapped.size() / stretch / 2 * stretch;
    for (std::size_t j = stretch / 2; j + half < swapped.size() && j < half; j += stretch)
      std::swap(swapped[j], swapped[j + half]);
    for (const auto& [order, entries] : {std::pair{"shuffled", &shuffled}, std::pair{"one swapped a stretch", &swapped}}) {
      const HostCoo u = assemble(desc, *entries, false);
      check_multiply_values(u, to_device(u), hv, dv, what + " " + order);
    }

    // Bad input: the first index out of range is named before any order failure, whichever
    // band holds the entries; multiply_values writes nothing.
    const std::size_t mid = e.size() / 2, late = e.size() - 3;
    const auto expect_named = [&](const std::vector<Raw>& bad, const std::string& at_entry) {
      const DeviceCoo m = to_device(assemble(desc, bad, true));
      expect_invalid([&] { multiply(m, dv); }, {at_entry});
      DeviceTensor vals(k.dtype, Dims{m.nnz()});
      verify::poison(vals.view());
      expect_invalid([&] { multiply_values(m, dv, vals.view()); }, {at_entry});
      const HostTensor after = to_host(vals.view());
      for (std::int64_t j = 0; j < m.nnz(); ++j)
        ASSERT_TRUE(verify::is_poison(k.dtype, static_cast<const std::byte*>(after.data()) + j * es)) << what << " " << j;
    };
    std::vector<Raw> bad = e;
    std::swap(bad[3], bad[4]);
    bad[late].c = ncols;  // past the last band
    bad[mid].r = nrows;   // in whichever band its column is
    expect_named(bad, "a: entry " + std::to_string(mid) + " is at");
    bad = e;
    bad[late].c = -1;
    expect_named(bad, "a: entry " + std::to_string(late) + " is at");
    bad = e;
    std::swap(bad[late], bad[mid]);  // entry mid + 1 is not after entry mid
    expect_named(bad, "but entry " + std::to_string(mid + 1) + " at (");
    expect_named(swapped, "but entry " + std::to_string(stretch / 2 + 1) + " at (");
    // Unchecked, such input stays inside its buffers (memcheck) and good input still works.
    bad[3].c = ncols + 5;
    bad[5].r = -2;
    bad[late].c = -7;
    const DeviceCoo w = to_device(assemble(desc, bad, true));
    EXPECT_NO_THROW(multiply(w, dv, trusted));
    DeviceTensor vals(k.dtype, Dims{w.nnz()});
    EXPECT_NO_THROW(multiply_values(w, dv, vals.view(), trusted));
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
}

/// multiply_values in place (out_vals = a.vals), on a misaligned or foreign out_vals, and with
/// drop_zeros: the in-place result equals the out-of-place one; the others throw before any
/// launch and leave the context usable.
TEST_F(SparseGpu, MultiplyValuesInPlaceAndArgumentChecks) {
  EWISE_REQUIRE_GPU();
  verify::CooGenOptions o = coo_options(DType::f32, IndexType::i32, true, 0.2);
  for (const DType t : {DType::f16, DType::f32, DType::i64}) {
    o.dtype = t;
    const HostCoo ha = verify::random_coo(300, 500, 0.05, seed_, o);
    const HostTensor hrow = verify::random_tensor(t, Dims{500}, seed_ + 1);
    HostTensor want(t, Dims{ha.nnz()});
    multiply_values(ha, hrow.view(), want.view());
    const DeviceTensor row = to_device(hrow.view());
    DeviceCoo da = to_device(ha);
    const TensorView in_place{da.vals(), TensorDesc::contiguous(t, Dims{da.nnz()}), Memory::device};
    multiply_values(da, row.view(), in_place);
    expect_bits(to_host(ConstTensorView(in_place)), want, std::string("in place ") + dtype_name(t));
    const auto es = static_cast<std::int64_t>(dtype_size(t));
    DeviceTensor spare(t, Dims{da.nnz() + 1});
    const TensorView misaligned{static_cast<std::byte*>(spare.data()) + 1,
                                TensorDesc::contiguous(t, Dims{da.nnz()}), Memory::device};
    test::expect_invalid([&] { multiply_values(da, row.view(), misaligned); },
                         {"out_vals data", "not aligned"});
    const TensorView shifted{static_cast<std::byte*>(da.vals()) + es,
                             TensorDesc::contiguous(t, Dims{da.nnz()}), Memory::device};
    test::expect_invalid([&] { multiply_values(da, row.view(), shifted); },
                         {"partially overlaps", "a.vals"});
    SparseOptions drop;
    drop.drop_zeros = true;
    test::expect_invalid([&] { multiply_values(da, row.view(), spare.view(), drop); },
                         {"drop_zeros must be false"});
    test::expect_invalid([&] { multiply_values(da, row.view(), spare.view()); },
                         {"a.nnz = " + std::to_string(da.nnz())});
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
}

TEST_F(SparseGpu, DenseToCooAndRoundTrips) {
  EWISE_REQUIRE_GPU();
  for (const DType dtype : test::sweep_dtypes()) {
    for (const IndexType index : {IndexType::i32, IndexType::i64}) {
      HostTensor d = verify::random_tensor(dtype, Dims{123, 77}, seed_);
      // Zero out about 80% (and, for floats, write some -0, which counts as zero).
      std::mt19937_64 rng(seed_);
      const std::size_t es = dtype_size(dtype);
      for (std::int64_t i = 0; i < d.numel(); ++i) {
        const auto roll = rng() % 10;
        auto* p = static_cast<std::byte*>(d.data()) + i * static_cast<std::int64_t>(es);
        if (roll < 8) std::memset(p, 0, es);
        if (roll == 0 && is_floating(dtype)) p[es - 1] = std::byte{0x80};  // -0
      }
      const std::string what = std::string(dtype_name(dtype)) + " " + index_name(index);
      const DeviceTensor dd = to_device(d.view());
      const DeviceCoo c = dense_to_coo(dd.view(), index);
      expect_same(c, reference_dense_to_coo(d.view(), index), what + " dense_to_coo");
      // Strided view: the transpose.
      const TensorDesc td = TensorDesc::strided(dtype, {77, 123}, {1, 77});
      expect_same(dense_to_coo(ConstTensorView{dd.data(), td, Memory::device}, index),
                  reference_dense_to_coo(ConstTensorView{d.data(), td, Memory::host}, index),
                  what + " dense_to_coo transposed");
      // dense → COO → dense gives back the tensor, with -0 turned into +0.
      HostTensor plus = to_host(d.view());
      for (std::int64_t i = 0; i < plus.numel(); ++i) {
        auto* p = static_cast<std::byte*>(plus.data()) + i * static_cast<std::int64_t>(es);
        bool zero = true;
        for (std::size_t k = 0; k + 1 < es; ++k) zero = zero && p[k] == std::byte{0};
        if (zero && p[es - 1] == std::byte{0x80} && is_floating(dtype)) p[es - 1] = std::byte{0};
      }
      expect_bits(to_host(coo_to_dense(c).view()), plus, what + " round trip");
    }
  }
}

// ---- NaN ------------------------------------------------------------------------------------------

/// Whether any of the n elements of dtype t at p is NaN.
bool holds_nan(DType t, const void* p, std::int64_t n) {
  const auto es = static_cast<std::int64_t>(dtype_size(t));
  for (std::int64_t i = 0; i < n; ++i)
    if (test::is_nan_bits(t, static_cast<const std::byte*>(p) + i * es)) return true;
  return false;
}

// ops.hpp's NaN rule on the GPU: operands holding NaNs of random sign and payload (and infinities
// and zeros, so that operations make NaNs too) give the CPU backend's bits, canonical NaNs
// included, in every operation: COO ⊙ COO by every algorithm, coalesce (canonical input: one
// entry per coordinate, copied; unsorted: sums), COO ⊙ dense with NaNs on both sides,
// multiply_values, coo_to_dense and dense_to_coo. expect_same and expect_bits compare bits.
TEST_F(SparseGpu, NaNValuesLeaveCanonical) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(seed_);
  const std::vector<DType> floats = test::sanitizer_sizes()
                                       ? std::vector<DType>{DType::f16, DType::f64}
                                       : std::vector<DType>{DType::f16, DType::bf16, DType::f32, DType::f64};
  for (const DType t : floats) {
    for (const bool unsorted : {false, true}) {
      verify::CooGenOptions o = coo_options(t, IndexType::i32, unsorted, unsorted ? 0.3 : 0.0);
      HostCoo a = verify::random_coo(300, 200, 0.2, seed_ + 1, o);
      test::sprinkle_nans(t, a.vals(), a.nnz(), 0.1, rng);
      HostCoo b = partner(a, 0.1, 0.6, seed_ + 2, o);
      test::sprinkle_nans(t, b.vals(), b.nnz(), 0.1, rng);
      const std::string what = std::string(dtype_name(t)) + (unsorted ? " unsorted" : " canonical");
      const HostCoo product = reference_multiply(a, b);
      ASSERT_TRUE(holds_nan(t, product.vals(), product.nnz())) << what << ": no NaN to check";
      check_multiply_all(a, b, what);
      check_coalesce(a, what);
      HostTensor d = verify::random_tensor(t, Dims{300, 200}, seed_ + 3);
      test::sprinkle_nans(t, d.data(), d.numel(), 0.1, rng);
      const DeviceCoo da = to_device(a);
      const DeviceTensor dd = to_device(d.view());
      expect_same(multiply(da, dd.view()), reference_multiply(a, d.view()), what + " times dense");
      check_multiply_values(a, da, d.view(), dd.view(), what);
      expect_bits(to_host(coo_to_dense(da).view()), reference_coo_to_dense(a), what + " coo_to_dense");
      expect_same(dense_to_coo(dd.view()), reference_dense_to_coo(d.view()), what + " dense_to_coo");
    }
  }
}

// ---- multiply: two canonical operands (the single pass) ----------------------------------------

/// multiply(a, b) of two canonical operands against the reference bit for bit: merge (the single
/// pass) and bitmap_merge (the single pass over the entries its filters keep; up to 2^32 cells,
/// a bitmap of 512 MiB), both operand orders, keeping and dropping zeros, and unchecked.
void check_canonical_multiply(const HostCoo& a, const HostCoo& b, const std::string& what) {
  ASSERT_TRUE(a.desc().canonical && b.desc().canonical) << what;
  const DeviceCoo da = to_device(a), db = to_device(b);
  const bool bitmap = a.desc().nrows * a.desc().ncols <= (std::int64_t{1} << 32);
  for (const CooAlgorithm alg : {CooAlgorithm::merge, CooAlgorithm::bitmap_merge}) {
    if (alg == CooAlgorithm::bitmap_merge && !bitmap) continue;
    const std::string tag = what + " " + coo_algorithm_name(alg);
    for (const bool drop : {false, true}) {
      SparseOptions o;
      o.algorithm = alg;
      o.drop_zeros = drop;
      const HostCoo want = reference_multiply(a, b, o);
      const std::string how = drop ? " drop_zeros" : "";
      expect_same(multiply(da, db, o), want, tag + " a*b" + how);
      expect_same(multiply(db, da, o), want, tag + " b*a" + how);
    }
    SparseOptions trusted;
    trusted.algorithm = alg;
    trusted.validate_indices = false;
    expect_same(multiply(da, db, trusted), reference_multiply(a, b), tag + " unchecked");
  }
}

// Two canonical operands around merge-tile edges (merge_tile_sizes: n + n and n + 2n merged
// entries fall before, on and after the single pass's tile edges) for every dtype, i32 and
// i64 indices, 32- and 64-bit keys: identical patterns, disjoint ones (empty results), one match
// at the end, every other key (operands of unequal size), random subsets. Values in [-2, 2] with
// zeros (integer products of 0 for drop_zeros) and for floats NaNs, infinities and +-0.
TEST_F(SparseGpu, CanonicalMultiplyTileEdgesDTypesAndKeyWidths) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(seed_);
  struct Shape {
    std::int64_t nrows, ncols, stride;  // key k of a pattern is stored at cell k * stride
    const char* name;
  };
  const Shape shapes[] = {{64, 4096, 1, "32-bit keys"},
                          {std::int64_t{1} << 17, std::int64_t{1} << 17, (1 << 20) + 7, "64-bit keys"}};
  std::uint64_t s = seed_;
  for (const IndexType index : {IndexType::i32, IndexType::i64})
    for (const Shape& sh : shapes)
      for (const DType t : test::sweep_dtypes()) {
        const bool floating = t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
        verify::CooGenOptions vo;
        vo.dtype = t;
        vo.values.lo = -2;
        vo.values.hi = 2;
        vo.values.allow_zero = true;
        HostCoo pool_m = verify::random_coo(1, 20000, 1.0, ++s, vo);
        if (floating) test::sprinkle_nans(t, pool_m.vals(), pool_m.nnz(), 0.05, rng);
        const std::vector<Raw> pool = raw_entries(pool_m);
        const CooDesc shape{sh.nrows, sh.ncols, 0, index, t, true};
        // Entries at pattern keys `keys`, values from the pool from v0 on.
        const auto at_keys = [&](const std::vector<std::int64_t>& keys, std::size_t v0) {
          std::vector<Raw> e;
          for (const std::int64_t k : keys) {
            Raw x = pool[(v0 + e.size()) % pool.size()];
            x.r = k * sh.stride / sh.ncols;
            x.c = k * sh.stride % sh.ncols;
            e.push_back(x);
          }
          return assemble(shape, e, true);
        };
        const auto band = [&](std::int64_t n, std::int64_t first, std::int64_t step, std::size_t v0) {
          std::vector<std::int64_t> keys;
          for (std::int64_t k = 0; k < n; ++k) keys.push_back(first + k * step);
          return at_keys(keys, v0);
        };
        const auto subset = [&](std::int64_t n, std::size_t v0) {
          std::vector<std::int64_t> keys;
          for (std::int64_t k = 0; k < 3 * n; ++k)
            if (rng() % 3 != 0) keys.push_back(k);
          return at_keys(keys, v0);
        };
        const std::string kind = std::string(dtype_name(t)) + " " + index_name(index) + " " + sh.name;
        for (const std::int64_t n : merge_tile_sizes()) {
          const std::string what = kind + " n=" + std::to_string(n);
          const HostCoo a = band(n, 0, 1, 0), same = band(n, 0, 1, 7);
          if (n == merge_tile_sizes().back()) {
            // The values reach what the checks are for.
            const HostCoo product = reference_multiply(a, same);
            if (floating) ASSERT_TRUE(holds_nan(t, product.vals(), product.nnz())) << what;
            SparseOptions drop;
            drop.drop_zeros = true;
            ASSERT_LT(reference_multiply(a, same, drop).nnz(), product.nnz()) << what;
          }
          check_canonical_multiply(a, same, what + " identical patterns");
          const HostCoo odd = band(n, 1, 2, 7), even = band(n, 0, 2, 0);
          ASSERT_EQ(reference_multiply(even, odd).nnz(), 0) << what;
          check_canonical_multiply(even, odd, what + " disjoint");
          check_canonical_multiply(a, band(n, n - 1, 1, 7), what + " one match at the end");
          check_canonical_multiply(even, band(2 * n, 0, 1, 7), what + " every other key");
          check_canonical_multiply(subset(n, 0), subset(n, 7), what + " random subsets");
        }
      }
}

// ---- validation --------------------------------------------------------------------------------


TEST_F(SparseGpu, BadIndicesThrowBeforeWriting) {
  EWISE_REQUIRE_GPU();
  for (const IndexType index : {IndexType::i32, IndexType::i64}) {
    verify::CooGenOptions o;
    o.index = index;
    const HostCoo good = verify::random_coo(100, 100, 0.3, seed_, o);
    std::vector<Raw> e = raw_entries(good);
    std::vector<Raw> out_of_range = e, negative = e, unordered = e;
    out_of_range[1234].c = 100;
    out_of_range[2000].r = 100;
    negative[777].r = -5;
    std::swap(unordered[500], unordered[501]);
    const DeviceCoo g = to_device(good);
    const DeviceCoo bad = to_device(assemble(good.desc(), out_of_range, false));
    const DeviceCoo neg = to_device(assemble(good.desc(), negative, false));
    const DeviceCoo lie = to_device(assemble(good.desc(), unordered, true));
    for (const CooAlgorithm alg : kAlgorithms) {
      if (alg == CooAlgorithm::linear_search) continue;  // 3000^2 entries: refused anyway
      SparseOptions opt;
      opt.algorithm = alg;
      expect_invalid([&] { multiply(g, bad, opt); }, {"b: entry 1234", "(", ", 100)", "100x100"});
      expect_invalid([&] { multiply(neg, g, opt); }, {"a: entry 777", "(-5, "});
      expect_invalid([&] { multiply(g, lie, opt); }, {"b is marked canonical", "entry 501"});
    }
    expect_invalid([&] { coalesce(bad); }, {"entry 1234"});
    expect_invalid([&] { coo_to_dense(neg); }, {"entry 777"});
    expect_invalid([&] { multiply(bad, to_device(verify::random_tensor(DType::f32, Dims{100, 100}, seed_)).view()); },
                   {"entry 1234"});
    expect_invalid([&] { coo_to_csr_row_offsets(lie); }, {"marked canonical", "entry 501"});
    expect_invalid([&] { check_indices(bad, "mine"); }, {"mine: entry 1234"});
    EXPECT_NO_THROW(check_indices(g));
    // After the failures the device is fine and skipping validation on good input agrees.
    SparseOptions trusted;
    trusted.validate_indices = false;
    expect_same(multiply(g, g, trusted), reference_multiply(good, good), "trusted input");
    expect_same(coalesce(g, trusted), reference_coalesce(good), "trusted coalesce");
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
}

// A matrix marked canonical whose entries go backwards: the merge's partition of the two
// operands cannot be consistent, and the check still names the first entry out of order.
TEST_F(SparseGpu, BrokenCanonicalPromiseInMerge) {
  EWISE_REQUIRE_GPU();
  const HostCoo good = verify::random_coo(200, 200, 0.2, seed_);
  std::vector<Raw> e = raw_entries(good);
  std::reverse(e.begin(), e.end());
  const DeviceCoo g = to_device(good), back = to_device(assemble(good.desc(), e, true));
  SparseOptions o;
  o.algorithm = CooAlgorithm::merge;
  expect_invalid([&] { multiply(g, back, o); }, {"b is marked canonical", "entry 1 "});
  expect_invalid([&] { multiply(back, g, o); }, {"a is marked canonical", "entry 1 "});
  expect_invalid([&] { multiply(back, back, o); }, {"a is marked canonical", "entry 1 "});
  // Operands of unequal size (the result has room for the smaller one's entries), reversed, and
  // one whose 3000 entries share one coordinate of `good` (not strictly increasing).
  const HostCoo few = verify::random_coo(200, 200, 0.05, seed_ + 1);
  std::vector<Raw> ef = raw_entries(few);
  std::reverse(ef.begin(), ef.end());
  const DeviceCoo f = to_device(few), few_back = to_device(assemble(few.desc(), ef, true));
  std::vector<Raw> ed(3000, e[e.size() / 2]);
  const DeviceCoo same = to_device(assemble(good.desc(), ed, true));
  expect_invalid([&] { multiply(f, back, o); }, {"b is marked canonical", "entry 1 "});
  expect_invalid([&] { multiply(back, f, o); }, {"a is marked canonical", "entry 1 "});
  expect_invalid([&] { multiply(few_back, g, o); }, {"a is marked canonical", "entry 1 "});
  expect_invalid([&] { multiply(g, same, o); }, {"b is marked canonical", "entry 1 "});
  // Unchecked, broken input gives some result but stays inside its buffers (memcheck).
  o.validate_indices = false;
  for (const auto& [x, y] : {std::pair{&g, &back}, std::pair{&back, &back}, std::pair{&f, &back},
                             std::pair{&back, &few_back}, std::pair{&few_back, &back},
                             std::pair{&same, &g}, std::pair{&same, &same}}) {
    EXPECT_NO_THROW({
      const DeviceCoo r = multiply(*x, *y, o);
      EXPECT_LE(r.nnz(), std::min(x->nnz(), y->nnz()));
    });
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(SparseGpu, ArgumentChecks) {
  EWISE_REQUIRE_GPU();
  const DeviceCoo a = to_device(verify::random_coo(10, 20, 0.3, seed_));
  const DeviceCoo b = to_device(verify::random_coo(20, 10, 0.3, seed_));
  expect_invalid([&] { multiply(a, b); }, {"shapes differ", "10x20", "20x10"});
  const HostCoo h = verify::random_coo(10, 20, 0.3, seed_);
  expect_invalid([&] { multiply(a, CooView(h)); }, {"device memory", "host memory"});
  expect_invalid([&] { multiply<HostCoo>(a, a); }, {"device memory", "result type"});
  SparseOptions lin;
  lin.algorithm = CooAlgorithm::linear_search;
  const DeviceCoo big = to_device(verify::random_coo(1000, 1000, 0.1, seed_));
  expect_invalid([&] { multiply(big, big, lin); }, {"linear_search", "100000 * 100000"});
  const DeviceCoo not_canonical = to_device(verify::random_coo(10, 20, 0.3, seed_, {IndexType::i32, DType::f32, true}));
  expect_invalid([&] { coo_to_csr_row_offsets(not_canonical); }, {"not marked canonical"});
}

// ---- nnz over 2^31 -------------------------------------------------------------------------------

// A canonical 65536 x 65536 matrix with n entries: entry k at absolute index 17m + r for
// k = 16m + r (every 17th cell skipped), value (k % 7 + 1) / 4 in f16.
__global__ void fill_big(std::int64_t n, std::int32_t* rows, std::int32_t* cols, __half* vals) {
  for (std::int64_t k = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; k < n;
       k += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t key = (k / 16) * 17 + k % 16;
    rows[k] = static_cast<std::int32_t>(key >> 16);
    cols[k] = static_cast<std::int32_t>(key & 0xFFFF);
    vals[k] = __float2half(static_cast<float>(k % 7 + 1) * 0.25f);
  }
}

TEST_F(SparseGpu, MoreThan2To31Entries) {
  EWISE_REQUIRE_GPU();
  const std::int64_t n = (std::int64_t{1} << 31) + (std::int64_t{1} << 24);
  std::size_t free_bytes = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  const std::size_t matrix = static_cast<std::size_t>(n) * 10;  // i32 rows, cols, f16 vals
  if (free_bytes < matrix + (std::size_t{4} << 30))
    GTEST_SKIP() << "needs " << (matrix >> 30) + 4 << " GiB free, have " << (free_bytes >> 30);
  DeviceCoo big(CooDesc{65536, 65536, n, IndexType::i32, DType::f16, true});
  detail::launch("fill_big", fill_big, dim3(65536), dim3(256), 0, nullptr, n,
                 static_cast<std::int32_t*>(big.rows()), static_cast<std::int32_t*>(big.cols()),
                 static_cast<__half*>(big.vals()));
  // b: 2^20 random distinct cells, values 2; expected: the cells the big matrix stores.
  std::mt19937_64 rng(seed_);
  std::vector<std::int64_t> keys(1 << 20);
  for (auto& k : keys) k = static_cast<std::int64_t>(rng() >> 32);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  HostCoo b(CooDesc{65536, 65536, static_cast<std::int64_t>(keys.size()), IndexType::i32, DType::f16, true});
  std::vector<Raw> want;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    set_index(b.rows(), IndexType::i32, static_cast<std::int64_t>(i), keys[i] >> 16);
    set_index(b.cols(), IndexType::i32, static_cast<std::int64_t>(i), keys[i] & 0xFFFF);
    static_cast<std::uint16_t*>(b.vals())[i] = float_to_f16_bits(2.0f);
    const std::int64_t m = keys[i] / 17, r = keys[i] % 17, k = 16 * m + r;
    if (r == 16 || k >= n) continue;
    Raw e;
    e.r = keys[i] >> 16;
    e.c = keys[i] & 0xFFFF;
    const std::uint16_t bits = float_to_f16_bits(static_cast<float>(k % 7 + 1) * 0.25f * 2.0f);
    std::memcpy(e.v.data(), &bits, 2);
    want.push_back(e);
  }
  const HostCoo expected = assemble(b.desc(), want, true);
  ASSERT_GT(expected.nnz(), 100000);
  const DeviceCoo db = to_device(b);
  EXPECT_NO_THROW(check_indices(big, "big"));
  for (const CooAlgorithm alg : {CooAlgorithm::automatic, CooAlgorithm::sort_search,
                                 CooAlgorithm::merge, CooAlgorithm::bitmap_merge}) {
    SparseOptions o;
    o.algorithm = alg;
    expect_same(multiply(big, db, o), expected, std::string("nnz > 2^31 ") + coo_algorithm_name(alg));
  }
  // The same entries not marked canonical: every one of them searches b, and its matches are
  // sorted afterwards (needs 8 bytes per entry more).
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  if (free_bytes < static_cast<std::size_t>(n) * 8 + (std::size_t{4} << 30)) {
    std::cout << "skipping the non-canonical part: " << (free_bytes >> 30) << " GiB free\n";
    return;
  }
  CooView unmarked = big;
  unmarked.desc.canonical = false;
  SparseOptions o;
  o.algorithm = CooAlgorithm::sort_search;
  expect_same(multiply(unmarked, db, o), expected, "nnz > 2^31 searching side");
}


// ---- union: combine and accumulate ------------------------------------------------------------

constexpr BinaryOp kUnionOps[] = {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max};

/// The union ops a check runs: all four, or under the sanitizers (gpu_test.hpp) one, picked by
/// the check's name so that a rerun takes the same. The ops run the same kernels with another
/// functor, so one keeps every code path; under racecheck a union call costs 0.1-0.5 s.
std::vector<BinaryOp> union_ops(const std::string& what) {
  if (!test::sanitizer_sizes()) return {std::begin(kUnionOps), std::end(kUnionOps)};
  return {kUnionOps[std::hash<std::string>{}(what) % std::size(kUnionOps)]};
}

/// combine(op, a, b) on the device against the reference, every op, both operand orders,
/// with fills 0 (keeping and dropping zeros) and fills 2 and -3, and one trusted call.
void check_union_all(const HostCoo& a, const HostCoo& b, const std::string& what,
                     cudaStream_t stream = nullptr) {
  const DeviceCoo da = to_device(a, stream), db = to_device(b, stream);
  for (const BinaryOp op : union_ops(what)) {
    SparseOptions plain, drop, fills, trusted;
    drop.drop_zeros = true;
    fills.fill_a = 2;
    fills.fill_b = -3;
    trusted.validate_indices = false;
    const std::string tag = what + " " + op_name(op);
    for (const auto& [o, name] : {std::pair{plain, ""}, std::pair{drop, " drop_zeros"},
                                  std::pair{fills, " fills 2, -3"}}) {
      expect_same(combine(op, da, db, o, stream), reference_combine(op, a, b, o),
                  tag + " a,b" + name, stream);
      expect_same(combine(op, db, da, o, stream), reference_combine(op, b, a, o),
                  tag + " b,a" + name, stream);
    }
    expect_same(combine(op, da, db, trusted, stream), reference_combine(op, a, b),
                tag + " unchecked", stream);
  }
}

/// The dense forms against the reference for every op and every form of dense operand (full,
/// transposed, pitched, row (1, n) and (n,), reversed row, column, scalar, (1, 1)): the
/// allocating combine, combine into a poisoned out (contiguous and transposed), combine in place
/// over dense, and accumulate into every writable form; fill_a 0 and 2; checked and not.
/// Operands over 2^22 elements are left out.
void check_union_dense(const HostCoo& a, std::uint64_t seed, const std::string& what,
                       const verify::GenOptions& values = {}) {
  const DType t = a.desc().dtype;
  const std::int64_t nr = a.desc().nrows, nc = a.desc().ncols;
  if (nr * nc > (1 << 22)) return;
  const auto es = static_cast<std::int64_t>(dtype_size(t));
  const DeviceCoo da = to_device(a);
  struct Form {
    const char* name;
    Dims alloc;
    TensorDesc view;
    std::int64_t at;
    bool writable;  // a full-shape view that does not revisit elements
  };
  const Form forms[] = {
      {"full", Dims{nr, nc}, TensorDesc::contiguous(t, Dims{nr, nc}), 0, true},
      {"transposed", Dims{nc, nr}, TensorDesc::strided(t, Dims{nr, nc}, Dims{1, nr}), 0, true},
      {"pitched", Dims{nr, nc + 3}, TensorDesc::strided(t, Dims{nr, nc}, Dims{nc + 3, 1}), 0, true},
      {"row", Dims{1, nc}, TensorDesc::contiguous(t, Dims{1, nc}), 0, false},
      {"flat row", Dims{nc}, TensorDesc::contiguous(t, Dims{nc}), 0, false},
      {"reversed row", Dims{nc}, TensorDesc::strided(t, Dims{nc}, Dims{-1}), nc - 1, false},
      {"column", Dims{nr, 1}, TensorDesc::contiguous(t, Dims{nr, 1}), 0, false},
      {"scalar", Dims{}, TensorDesc::contiguous(t, Dims{}), 0, false},
      {"(1,1)", Dims{1, 1}, TensorDesc::contiguous(t, Dims{1, 1}), 0, false}};
  const Dims shape{nr, nc};
  for (const Form& f : forms) {
    const HostTensor h = verify::random_tensor(t, f.alloc, ++seed, values);
    const DeviceTensor d = to_device(h.view());
    const auto hv = [&](const HostTensor& x) {
      return TensorView{static_cast<std::byte*>(const_cast<void*>(x.data())) + f.at * es, f.view,
                        Memory::host};
    };
    const auto dv = [&](const DeviceTensor& x) {
      return TensorView{static_cast<std::byte*>(const_cast<void*>(x.data())) + f.at * es, f.view,
                        Memory::device};
    };
    for (const BinaryOp op : union_ops(what + f.name))
      for (const double fill : {0.0, 2.0}) {
        SparseOptions o;
        o.fill_a = fill;
        const std::string tag = what + " " + op_name(op) + " with " + f.name + " " +
                                f.view.str() + " fill " + std::to_string(fill);
        const HostTensor want = combine<HostTensor>(op, a, hv(h), o);
        expect_bits(to_host(combine(op, da, dv(d), o).view()), want, tag + " allocating");
        DeviceTensor out(t, shape);
        verify::poison(out.view());
        combine(op, da, dv(d), out.view(), o);
        expect_bits(to_host(out.view()), want, tag + " into out");
        // A transposed out: compare the whole allocation with the reference's.
        DeviceTensor tout(t, Dims{nc, nr});
        verify::poison(tout.view());
        HostTensor twant = to_host(tout.view());
        const TensorDesc tdesc = TensorDesc::strided(t, shape, Dims{1, nr});
        combine(op, da, dv(d), TensorView{tout.data(), tdesc, Memory::device}, o);
        combine(op, a, hv(h), TensorView{twant.data(), tdesc, Memory::host}, o);
        expect_bits(to_host(tout.view()), twant, tag + " into a transposed out");
        if (!f.writable || fill != 0.0) continue;
        // In place over dense, and accumulate into dense (the whole allocation compared: a
        // pitched view's padding must stay untouched).
        for (const bool checked : {true, false}) {
          SparseOptions io;
          io.validate_indices = checked;
          const std::string how = checked ? "" : " unchecked";
          HostTensor hw = to_host(h.view());
          DeviceTensor dw = to_device(h.view());
          combine(op, a, hv(hw), hv(hw));
          combine(op, da, dv(dw), dv(dw), io);
          expect_bits(to_host(dw.view()), hw, tag + " in place" + how);
          HostTensor ha = to_host(h.view());
          DeviceTensor dacc = to_device(h.view());
          accumulate(op, hv(ha), a);
          accumulate(op, dv(dacc), da, io);
          expect_bits(to_host(dacc.view()), ha, tag + " accumulate" + how);
        }
      }
  }
}

class SparseUnionSweep : public ::testing::TestWithParam<SweepParam> {};

TEST_P(SparseUnionSweep, EveryFormMatchesTheReference) {
  EWISE_REQUIRE_GPU();
  for_each_sweep_case(GetParam(), [](const SweepCase& c, std::uint64_t& s) {
    check_union_all(c.a, c.b_alike, c.what + " (b alike)");
    check_union_all(c.a, c.b_canonical, c.what + " (b canonical)");
    // The dense forms on the small shapes only: each check makes 72 host references over every
    // cell and some 500 transfers (on an H100 a sweep instance took 7-12 s with shapes up to
    // 2^17 cells); LongDuplicateRunsSumInStorageOrder and UnionLargerMatricesAndKeyWidths check
    // them on larger matrices once.
    if (c.shape.nrows * c.shape.ncols <= (1 << 12)) check_union_dense(c.a, ++s, c.what);
  });
}

INSTANTIATE_TEST_SUITE_P(All, SparseUnionSweep, ::testing::ValuesIn(sweep_params()), sweep_name);

TEST_F(SparseGpu, UnionMergeTileEdges) {
  EWISE_REQUIRE_GPU();
  const Bands band(seed_);
  for (const std::int64_t n : merge_tile_sizes()) {
    const std::string at = " n=" + std::to_string(n);
    for (const Bands::Pair& p : band.tile_edge_pairs(n)) check_union_all(p.a, p.b, p.what);
    check_union_all(band(n, 5, 1, 4, 0, true), band(n, 6, 1, 3, 7, true),
                    "unsorted duplicate runs" + at);
    check_union_all(band(n, 0, 1, 1, 0), band(0, 0, 1, 1, 7), "b empty" + at);
  }
  // Runs of one key longer than a tile, on either side.
  check_union_all(band(1, 77, 1, 5000, 0), band(3000, 0, 1, 1, 7), "a run over tiles");
  check_union_all(band(3000, 0, 1, 1, 0), band(1, 77, 1, 5000, 7), "b run over tiles");
  check_union_all(band(1, 77, 1, 5000, 0, true), band(1, 77, 1, 3000, 7), "both runs");
}

/// An (nrows, ncols) matrix storing each of `keys` (absolute indices, ascending, distinct) with
/// a random value; when `unsorted`, about a third of them stored a second time with another
/// value, shuffled and not marked canonical (the dense forms coalesce it first).
HostCoo at_keys(std::int64_t nrows, std::int64_t ncols, DType t, IndexType index,
                const std::vector<std::int64_t>& keys, bool unsorted, std::uint64_t seed) {
  verify::CooGenOptions values;
  values.dtype = t;
  const auto pool_size = 2 * static_cast<std::int64_t>(keys.size()) + 1;
  const std::vector<Raw> pool = raw_entries(verify::random_coo(1, pool_size, 1.0, seed, values));
  std::mt19937_64 rng(seed);
  std::vector<Raw> e;
  for (const std::int64_t key : keys) {
    const int copies = unsorted && rng() % 3 == 0 ? 2 : 1;
    for (int copy = 0; copy < copies; ++copy) {
      Raw x = pool[e.size()];
      x.r = key / ncols;
      x.c = key % ncols;
      e.push_back(x);
    }
  }
  if (unsorted) std::shuffle(e.begin(), e.end(), rng);
  return assemble(CooDesc{nrows, ncols, 0, index, t, true}, e, !unsorted);
}

// combine(op, a, dense[, out]) writes the table in tiles of 4096 cells (kCellTile in
// sparse/policy.hpp) whose entries it finds from a table of tile starts: tables of one cell
// less than a tile (every cell stored), one tile (its first and last cells and about 10%), one
// tile and a cell (the last cell of the first tile and the only cell of the second), two tiles
// and a cell without entries, and five tiles and 20 cells with a full tile, an empty one, one
// with only its first and last cells, one at about 10%, one with every other cell and the
// partial last tile's first and last cells; that one also unsorted with duplicates. Columns
// below the block's 256 threads (steps of whole rows), and above. Every dtype and index type;
// under the sanitizers each dtype with one index type, the tile patterns canonical, unsorted
// for f16 (its sums stay in f32), and one tile and a cell for f32.
TEST_F(SparseGpu, UnionDenseTileEdges) {
  EWISE_REQUIRE_GPU();
  constexpr std::int64_t kTileCells = 4096;
  const bool small = test::sanitizer_sizes();
  const auto range = [](std::int64_t from, std::int64_t to, std::int64_t step) {
    std::vector<std::int64_t> k;
    for (std::int64_t i = from; i < to; i += step) k.push_back(i);
    return k;
  };
  std::mt19937_64 rng(seed_);
  const auto some = [&](std::vector<std::int64_t> k, std::int64_t from, std::int64_t to) {
    for (std::int64_t i = from; i < to; ++i)
      if (rng() % 10 == 0) k.push_back(i);
    std::sort(k.begin(), k.end());
    k.erase(std::unique(k.begin(), k.end()), k.end());
    return k;
  };
  const std::int64_t T = kTileCells, pr = 41, pc = 500;  // 5 tiles and 20 cells
  std::vector<std::int64_t> patterns = range(0, T, 1);
  for (const std::int64_t k : {2 * T, 3 * T - 1}) patterns.push_back(k);
  patterns = some(patterns, 3 * T, 4 * T);
  for (const std::int64_t k : range(4 * T, 5 * T, 2)) patterns.push_back(k);
  for (const std::int64_t k : {5 * T, pr * pc - 1}) patterns.push_back(k);
  const std::vector<std::int64_t> one_tile = some({0, T - 1}, 0, T);
  const std::vector<std::int64_t> tile_and_cell = some({T - 1, T}, 0, T + 1);
  const std::vector<DType> dtypes = test::sweep_dtypes();
  std::uint64_t s = seed_;
  for (std::size_t d = 0; d < dtypes.size(); ++d)
    for (const IndexType index : {IndexType::i32, IndexType::i64}) {
      if (small && index != (d % 2 ? IndexType::i64 : IndexType::i32)) continue;
      const DType t = dtypes[d];
      const std::string at = std::string(dtype_name(t)) + " " + index_name(index) + " ";
      const auto check = [&](std::int64_t nr, std::int64_t nc, const std::vector<std::int64_t>& k,
                             bool unsorted, const std::string& what) {
        check_union_dense(at_keys(nr, nc, t, index, k, unsorted, ++s), ++s,
                          at + std::to_string(nr) + "x" + std::to_string(nc) + " " + what);
      };
      check(pr, pc, patterns, false, "tile patterns");
      if (!small || t == DType::f16) check(pr, pc, patterns, true, "tile patterns unsorted");
      if (!small || t == DType::f32) check(T + 1, 1, tile_and_cell, false, "a tile and a cell");
      if (small) continue;
      check(63, 65, range(0, T - 1, 1), false, "a cell short of a tile, all stored");
      check(64, 64, one_tile, false, "one tile");
      check(3, 2731, {}, false, "two tiles and a cell, no entries");
    }
}

// The single pass (two canonical operands, the union and the intersection) at the ends of the
// merge partition: merged lengths of 1 and 2 (one tile), a tile less one, a tile, a tile and
// one, and the same around two tiles (kBlock * kSinglePassItems<I> merged entries), split
// between the operands as 0 + all (one operand empty), 1 + the rest, half and half, and the
// rest + 1; the operands one wholly before the other (every split at an end of its range: all
// of one operand, none of the other), the same sharing the key at the seam, and interleaved. Both
// operand orders (the checks swap them), so the operand with fewer entries, the intersection's
// Q, comes first and last. i32 indices with 32-bit keys (f32), i64 with 64-bit keys (f64);
// under the sanitizers the first, around one tile.
TEST_F(SparseGpu, CanonicalSplitsAtTileEdgesAndEnds) {
  EWISE_REQUIRE_GPU();
  struct Config {
    IndexType index;
    DType dtype;
    std::int64_t nrows, ncols, stride;  // key k of a pattern is stored at cell k * stride
    const char* name;
  };
  const Config configs[] = {
      {IndexType::i32, DType::f32, 64, 4096, 1, "i32 32-bit keys"},
      {IndexType::i64, DType::f64, std::int64_t{1} << 17, std::int64_t{1} << 17, (1 << 20) + 7,
       "i64 64-bit keys"}};
  const bool small = test::sanitizer_sizes();
  std::uint64_t s = seed_;
  for (const Config& c : configs) {
    if (small && c.index == IndexType::i64) continue;
    const std::int64_t tile =
        sparse_detail::kBlock * (c.index == IndexType::i32
                                     ? sparse_detail::kSinglePassItems<std::int32_t>
                                     : sparse_detail::kSinglePassItems<std::int64_t>);
    std::vector<std::int64_t> totals{tile - 1, tile, tile + 1};
    if (!small)
      for (const std::int64_t n : {std::int64_t{1}, std::int64_t{2}, 2 * tile - 1, 2 * tile,
                                   2 * tile + 1})
        totals.push_back(n);
    // Pattern keys k, k + step, ... (n of them).
    const auto band = [&](std::int64_t n, std::int64_t first, std::int64_t step) {
      std::vector<std::int64_t> keys;
      for (std::int64_t k = 0; k < n; ++k) keys.push_back((first + k * step) * c.stride);
      return at_keys(c.nrows, c.ncols, c.dtype, c.index, keys, false, ++s);
    };
    for (const std::int64_t total : totals) {
      std::vector<std::int64_t> splits{0, 1, total / 2, total - 1};
      std::sort(splits.begin(), splits.end());
      splits.erase(std::unique(splits.begin(), splits.end()), splits.end());
      for (const std::int64_t na : splits) {
        const std::int64_t nb = total - na;
        const std::string what = std::string(c.name) + " " + std::to_string(na) + " + " +
                                 std::to_string(nb) + " entries";
        const auto check = [&](const HostCoo& a, const HostCoo& b, const std::string& how) {
          check_union_all(a, b, what + " " + how);
          check_canonical_multiply(a, b, what + " " + how);
        };
        check(band(na, 0, 1), band(nb, na, 1), "a wholly before b");
        if (na == 0) continue;  // a empty: the other patterns are the same
        check(band(na, 0, 1), band(nb, na - 1, 1), "a before b, the seam's key shared");
        check(band(na, 0, 2), band(nb, 1, 2), "interleaved until one ends");
      }
    }
  }
}

TEST_F(SparseGpu, UnionEmptyDisjointAndIdentical) {
  EWISE_REQUIRE_GPU();
  const HostCoo some = verify::random_coo(50, 40, 0.1, seed_);
  const HostCoo none = verify::random_coo(50, 40, 0.0, seed_);
  ASSERT_EQ(none.nnz(), 0);
  check_union_all(none, some, "a nnz 0");
  check_union_all(none, none, "both nnz 0");
  check_union_dense(none, seed_, "nnz 0");
  for (const auto& [r, c] : {std::pair<std::int64_t, std::int64_t>{0, 5}, {5, 0}, {0, 0}}) {
    const HostCoo e = verify::random_coo(r, c, 0.5, seed_);
    check_union_all(e, e, "empty shape");
    const DeviceTensor dense(DType::f32, Dims{r, c});
    const DeviceTensor d = combine(BinaryOp::add, to_device(e), dense.view());
    EXPECT_EQ(d.numel(), 0);
  }
  const HostCoo base = verify::random_coo(200, 300, 0.2, seed_);
  std::vector<Raw> even, odd;
  for (const Raw& e : raw_entries(base)) ((e.r * 300 + e.c) % 2 ? odd : even).push_back(e);
  const HostCoo a = assemble(base.desc(), even, true), b = assemble(base.desc(), odd, true);
  ASSERT_EQ(reference_combine(BinaryOp::add, a, b).nnz(), a.nnz() + b.nnz());
  check_union_all(a, b, "disjoint");
  std::vector<Raw> other = raw_entries(verify::random_coo(200, 300, 0.2, seed_ + 9));
  std::vector<Raw> same = raw_entries(base);
  for (std::size_t k = 0; k < same.size(); ++k) same[k].v = other[k % other.size()].v;
  check_union_all(base, assemble(base.desc(), same, true), "identical patterns");
  check_union_all(base, base, "itself");
  const DeviceCoo d = to_device(base);
  SparseOptions drop;
  drop.drop_zeros = true;
  EXPECT_EQ(combine(BinaryOp::sub, d, d, drop).nnz(), 0);
}

TEST_F(SparseGpu, UnionLargerMatricesAndKeyWidths) {
  EWISE_REQUIRE_GPU();
  verify::CooGenOptions unsorted = coo_options(DType::f32, IndexType::i32, true, 0.1);
  // 268k entries an operand; under the sanitizers 4096^2 at 4e-3, 67k.
  const std::int64_t n = test::sanitizer_sizes() ? 4096 : 16384;
  const double density = test::sanitizer_sizes() ? 4e-3 : 1e-3;
  const std::string at = std::to_string(n) + "^2 " + std::to_string(density);
  const HostCoo a = verify::random_coo(n, n, density, seed_, unsorted);
  check_union_all(a, partner(a, density, 0.5, seed_ + 1, verify::CooGenOptions{}), at);
  // Both canonical (the single pass) over some 300 tiles (under the sanitizers some 50).
  const HostCoo c = verify::random_coo(n, n, density, seed_ + 6);
  check_union_all(c, partner(c, density, 0.5, seed_ + 7, verify::CooGenOptions{}),
                  at + " canonical");
  // Keys over 32 bits: 2^17 x 2^17 cells, with i32 and i64 indices.
  for (const IndexType index : {IndexType::i32, IndexType::i64}) {
    verify::CooGenOptions o = coo_options(DType::f64, index, false, 0.0);
    const HostCoo w = verify::random_coo(1 << 17, 1 << 17, 1e-6, seed_ + 2, o);
    check_union_all(w, partner(w, 1e-6, 0.5, seed_ + 8, o),
                    std::string("wide keys canonical ") + index_name(index));
    o.unsorted = true;
    o.duplicate_fraction = 0.3;
    check_union_all(w, partner(w, 1e-6, 0.5, seed_ + 3, o),
                    std::string("wide keys ") + index_name(index));
  }
  // One row of 2^32 columns: 32-bit keys, a column count past 32 bits.
  verify::CooGenOptions row = coo_options(DType::f32, IndexType::i64, true, 0.3);
  const HostCoo r = verify::random_coo(1, std::int64_t{1} << 32, 1e-6, seed_ + 9, row);
  check_union_all(r, partner(r, 1e-6, 0.5, seed_ + 10, row), "one row of 2^32 columns");
  // accumulate and combine into dense over a larger matrix with many duplicates.
  verify::CooGenOptions dups = coo_options(DType::f32, IndexType::i32, true, 0.5);
  const HostCoo g = verify::random_coo(512, 384, 0.1, seed_ + 4, dups);
  check_union_dense(g, seed_ + 5, "512x384 unsorted dups");
}

/// The stored bytes of x in dtype t (x exactly representable there; integers whole).
std::array<std::byte, 8> value_bytes(DType t, double x) {
  std::array<std::byte, 8> out{};
  detail::store_double(t, out.data(), x);
  return out;
}

/// A value whose sums depend on the order of the adds: for floats +-(1 + m / 2^p) * 2^e with
/// as many fraction bits p as the dtype holds and exponents e spread wide enough that every
/// add rounds; integers (whose sums are exact) in [-1000, 1000].
double order_sensitive_value(DType t, std::mt19937_64& rng) {
  int bits = 0, e_max = 0;
  switch (t) {
    case DType::f16: bits = 10; e_max = 8; break;
    case DType::bf16: bits = 7; e_max = 20; break;
    case DType::f32: bits = 23; e_max = 20; break;
    case DType::f64: bits = 52; e_max = 40; break;
    case DType::i32:
    case DType::i64: return static_cast<double>(static_cast<std::int64_t>(rng() % 2001) - 1000);
  }
  const double m = static_cast<double>(rng() >> (64 - bits)) / std::ldexp(1.0, bits);
  const int e = static_cast<int>(rng() % static_cast<std::uint64_t>(2 * e_max + 1)) - e_max;
  return (rng() & 1 ? -1.0 : 1.0) * std::ldexp(1.0 + m, e);
}

/// A 64 x 96 matrix whose coordinates repeat in runs of the given lengths, for the long-run path
/// of the run sums (compaction.cuh: kShortRun, kRunStep): run k at the k-th coordinate in key
/// order, so that the sorted sequence holds the runs in the order given and the last ends it;
/// values from order_sensitive_value. Stored shuffled, or in key order (`shuffled` false; not
/// canonical: it has duplicates). Either way a run's entries keep the order they were drawn in,
/// which is the order they must be summed in.
HostCoo long_runs(DType t, const std::vector<std::int64_t>& lengths, std::uint64_t seed,
                  bool shuffled) {
  constexpr std::int64_t kRows = 64, kCols = 96;
  EXPECT_LE(static_cast<std::int64_t>(lengths.size()), kRows * kCols);
  std::mt19937_64 rng(seed);
  std::vector<Raw> out;
  for (std::size_t k = 0; k < lengths.size(); ++k)
    for (std::int64_t i = 0; i < lengths[k]; ++i) {
      Raw e;
      e.r = static_cast<std::int64_t>(k) / kCols;
      e.c = static_cast<std::int64_t>(k) % kCols;
      e.v = value_bytes(t, order_sensitive_value(t, rng));
      out.push_back(e);
    }
  if (shuffled) std::shuffle(out.begin(), out.end(), rng);
  CooDesc d{kRows, kCols, 0, IndexType::i32, t, false};
  return assemble(d, out, false);
}

/// Run lengths around the edges of the long-run path: a head's thread adds the first
/// kShortRun + 1 entries of a run (kShortRun 8, so runs of 10 or more are long), its warp the
/// rest, kRunStep (128) positions a step. Lengths 128k + 9 +- 1 put the run's end on either side
/// of a step's end, 128k +- 1 are 128k +- 1 entries past the head; runs of 32 start on one lane
/// in consecutive items (several rounds of long runs for one thread) and runs of 10-20 start
/// on several lanes of one warp; one run is 20k+ long; the last run ends the sequence.
std::vector<std::int64_t> long_run_lengths(bool small) {
  std::vector<std::int64_t> l{1, 2, 8, 9, 10, 11};
  for (std::int64_t k = 1; k <= (small ? 1 : 3); ++k)
    for (const std::int64_t d : {0, 1, 2, 8, 9, 10}) l.push_back(128 * k + d);
  for (int i = 0; i < (small ? 3 : 12); ++i) l.push_back(32);
  for (std::int64_t x = 10; x <= 20; x += small ? 5 : 1) l.push_back(x);
  l.push_back(20000 + 9 + 128 * 3 + 1);
  l.push_back(5);
  l.push_back(9 + 2 * 128);  // a whole last step ending at the sequence's end
  return l;
}

TEST_F(SparseGpu, LongDuplicateRunsSumInStorageOrder) {
  EWISE_REQUIRE_GPU();
  const bool small = test::sanitizer_sizes();
  const std::vector<std::int64_t> la = long_run_lengths(small);
  const std::vector<std::int64_t> lb{3, 9, 700, 129, 1, 8, 4000, 2, 137, 1, 1, 12000, 10, 265};
  // The values must catch a wrong order: the longest run's f32 sum has to change when each 128
  // of its entries are added in reverse. Most draws do; some do not (its sum is then set by a
  // few large values alone), so the first seed from seed_ on whose draw does is taken.
  const auto order_matters = [&](std::uint64_t seed) {
    const HostCoo a = long_runs(DType::f32, la, seed, false);  // runs in key order
    const auto longest = std::max_element(la.begin(), la.end());
    const std::int64_t begin = std::accumulate(la.begin(), longest, std::int64_t{0}), n = *longest;
    const auto* v = static_cast<const float*>(a.vals()) + begin;
    float forward = 0, blocked = 0;
    for (std::int64_t i = 0; i < n; ++i) forward += v[i];
    for (std::int64_t b0 = 0; b0 < n; b0 += 128)
      for (std::int64_t i = std::min<std::int64_t>(b0 + 128, n) - 1; i >= b0; --i) blocked += v[i];
    return forward != blocked;
  };
  std::uint64_t seed = seed_;
  for (int tries = 1; !order_matters(seed); ++tries, ++seed)
    ASSERT_LT(tries, 32) << "no seed in [" << seed_ << ", " << seed
                         << "] draws values whose long-run sum depends on the order";
  for (const DType t : test::sweep_dtypes())
    for (const bool shuffled : {true, false}) {
      const std::string what =
          std::string(dtype_name(t)) + (shuffled ? " shuffled" : " in key order") + " long runs";
      const HostCoo a = long_runs(t, la, seed, shuffled);
      const HostCoo b = long_runs(t, lb, seed_ + 1, shuffled);
      const DeviceCoo da = to_device(a), db = to_device(b);
      expect_same(coalesce(da), reference_coalesce(a), what + " coalesce");
      expect_same(coalesce(db), reference_coalesce(b), what + " coalesce b");
      check_union_all(a, b, what);
      if (shuffled || !small) check_union_dense(a, seed_ + 2, what);
      if (shuffled && !small) check_multiply_all(a, b, what);
      // A long run that ends the sequence, its end on either side of a step's.
      for (const std::int64_t end : {10, 136, 137, 138, 265}) {
        const HostCoo e = long_runs(t, {3, end}, seed_ + 3, shuffled);
        expect_same(coalesce(to_device(e)), reference_coalesce(e),
                    what + " ending with " + std::to_string(end));
      }
    }
}

TEST_F(SparseGpu, UnionNaNValuesLeaveCanonical) {
  EWISE_REQUIRE_GPU();
  std::mt19937_64 rng(seed_);
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64}) {
    verify::CooGenOptions o = coo_options(t, IndexType::i32, true, 0.3);
    o.values.allow_zero = true;
    HostCoo a = verify::random_coo(40, 30, 0.3, seed_, o);
    HostCoo b = partner(a, 0.3, 0.5, seed_ + 1, o);
    test::sprinkle_nans(t, a.vals(), a.nnz(), 0.2, rng);
    test::sprinkle_nans(t, b.vals(), b.nnz(), 0.2, rng);
    const std::string name = dtype_name(t);
    check_union_all(a, b, name + " NaNs");
    verify::GenOptions values;
    values.allow_zero = true;
    check_union_dense(a, seed_ + 2, name + " NaNs", values);
  }
}

TEST_F(SparseGpu, UnionBrokenCanonicalPromise) {
  EWISE_REQUIRE_GPU();
  // Entries in reverse order marked canonical, over several merge tiles: splits that sorted
  // operands cannot give.
  const HostCoo good = verify::random_coo(200, 200, 0.2, seed_);
  std::vector<Raw> e = raw_entries(good);
  std::reverse(e.begin(), e.end());
  const DeviceCoo g = to_device(good), back = to_device(assemble(good.desc(), e, true));
  SparseOptions unchecked;
  unchecked.validate_indices = false;
  for (const BinaryOp op : kUnionOps) {
    expect_invalid([&] { combine(op, g, back); }, {"b is marked canonical", "entry 1 "});
    expect_invalid([&] { combine(op, back, g); }, {"a is marked canonical", "entry 1 "});
    expect_invalid([&] { combine(op, back, back); }, {"a is marked canonical", "entry 1 "});
    // Unchecked, broken input gives some result but stays inside its buffers (memcheck).
    EXPECT_NO_THROW(combine(op, g, back, unchecked));
    EXPECT_NO_THROW(combine(op, back, back, unchecked));
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(SparseGpu, UnionBadInputThrowsBeforeWriting) {
  EWISE_REQUIRE_GPU();
  for (const IndexType index : {IndexType::i32, IndexType::i64}) {
    verify::CooGenOptions o;
    o.index = index;
    const HostCoo good = verify::random_coo(100, 100, 0.3, seed_, o);
    std::vector<Raw> e = raw_entries(good);
    std::vector<Raw> out_of_range = e, unordered = e;
    out_of_range[1234].c = 100;
    std::swap(unordered[500], unordered[501]);
    const DeviceCoo g = to_device(good);
    const DeviceCoo bad = to_device(assemble(good.desc(), out_of_range, false));
    const DeviceCoo bad_canonical = to_device(assemble(good.desc(), out_of_range, true));
    const DeviceCoo lie = to_device(assemble(good.desc(), unordered, true));
    for (const BinaryOp op : kUnionOps) {
      expect_invalid([&] { combine(op, g, bad); }, {"b: entry 1234", ", 100)", "100x100"});
      expect_invalid([&] { combine(op, bad_canonical, g); }, {"a: entry 1234"});
      expect_invalid([&] { combine(op, g, lie); }, {"b is marked canonical", "entry 501"});
      expect_invalid([&] { combine(op, lie, lie); }, {"a is marked canonical", "entry 501"});
      // Dense outputs: poisoned, and untouched after the throw.
      const DeviceTensor d = to_device(verify::random_tensor(DType::f32, Dims{100, 100}, seed_));
      for (const DeviceCoo* m : {&bad, &bad_canonical, &lie}) {
        DeviceTensor out(DType::f32, Dims{100, 100});
        verify::poison(out.view());
        const HostTensor before = to_host(out.view());
        expect_invalid([&] { combine(op, *m, d.view(), out.view()); }, {"entry"});
        expect_invalid([&] { accumulate(op, out.view(), *m); }, {"entry"});
        expect_bits(to_host(out.view()), before, std::string("untouched by ") + op_name(op));
      }
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    // After the failures the device is fine.
    expect_same(combine(BinaryOp::add, g, g), reference_combine(BinaryOp::add, good, good),
                "after bad input");
  }
  // Argument checks on device views, before anything runs.
  const HostCoo h = verify::random_coo(10, 20, 0.3, seed_);
  const DeviceCoo a = to_device(h);
  const DeviceCoo other_shape = to_device(verify::random_coo(20, 10, 0.3, seed_));
  expect_invalid([&] { combine(BinaryOp::add, a, other_shape); }, {"combine: shapes differ"});
  expect_invalid([&] { combine(BinaryOp::mul, a, a); }, {"combine", "mul"});
  expect_invalid([&] { combine(BinaryOp::add, a, CooView(h)); }, {"device memory", "host memory"});
  expect_invalid([&] { combine<HostCoo>(BinaryOp::add, a, a); }, {"device memory", "result type"});
  DeviceTensor row(DType::f32, Dims{20});
  const TensorView broadcast{row.data(), TensorDesc::strided(DType::f32, {10, 20}, {0, 1}),
                             Memory::device};
  expect_invalid([&] { accumulate(BinaryOp::add, broadcast, a); }, {"accumulate", "revisits"});
  // dense over a's own values.
  const DeviceCoo one = to_device(verify::random_coo(1, 1, 1.0, seed_));
  const TensorView over_vals{const_cast<void*>(one.vals()),
                             TensorDesc::contiguous(DType::f32, {1, 1}), Memory::device};
  expect_invalid([&] { accumulate(BinaryOp::add, over_vals, one); }, {"a.vals"});
  SparseOptions fill;
  fill.fill_a = 0.5;
  const DeviceCoo ints =
      to_device(verify::random_coo(10, 20, 0.3, seed_, {IndexType::i32, DType::i32}));
  expect_invalid([&] { combine(BinaryOp::add, ints, ints, fill); }, {"fill_a = 0.5"});
}

// ---- mixed value dtypes and scalar operands ------------------------------------------------------

/// Operands of different dtypes (converted to the result dtype, then the same-dtype kernels) and
/// scalar factors (by value) give the host forms' results bit for bit, under both rules.
TEST_F(SparseGpu, MixedDtypesAndScalarsMatchTheHostForms) {
  EWISE_REQUIRE_GPU();
  const std::pair<DType, DType> pairs[] = {{DType::f32, DType::f64}, {DType::bf16, DType::f32},
                                           {DType::f16, DType::bf16}, {DType::i32, DType::f32},
                                           {DType::i64, DType::f16}, {DType::i32, DType::i64}};
  for (Promotion rule : {Promotion::numpy, Promotion::torch})
    for (const auto& [ta, tb] : pairs)
      for (bool unsorted : {false, true}) {
        const std::string ctx = std::string(dtype_name(ta)) + " " + dtype_name(tb) + " " +
                                promotion_name(rule) + (unsorted ? " unsorted" : " sorted");
        verify::CooGenOptions oa, ob;
        oa.dtype = ta;
        ob.dtype = tb;
        oa.unsorted = ob.unsorted = unsorted;
        oa.duplicate_fraction = ob.duplicate_fraction = unsorted ? 0.2 : 0.0;
        const HostCoo a = verify::random_coo(300, 200, 0.05, seed_, oa);
        const HostCoo b = verify::random_coo(300, 200, 0.2, seed_ + 1, ob);
        const HostTensor row = verify::random_tensor(tb, {200}, seed_ + 2);
        SparseOptions o;
        o.promotion = rule;
        const DeviceCoo da = to_device(a), db = to_device(b);
        const DeviceTensor drow = to_device(row.view());
        expect_same(multiply(da, db, o), multiply<HostCoo>(a, b, o), ctx + " multiply");
        expect_same(combine(BinaryOp::subtract, da, db, o),
                    combine<HostCoo>(BinaryOp::subtract, a, b, o), ctx + " subtract");
        expect_same(multiply(da, drow.view(), o), multiply<HostCoo>(a, row.view(), o),
                    ctx + " multiply dense");
        // the row as a stride-0 view of the whole shape: converted as the 200 elements it holds
        const TensorDesc wide{tb, Dims{300, 200}, Dims{0, 1}};
        expect_same(multiply(da, ConstTensorView(drow.view().data, wide, Memory::device), o),
                    multiply<HostCoo>(a, ConstTensorView(row.data(), wide, Memory::host), o),
                    ctx + " multiply stride-0 dense");
        expect_bits(to_host(combine(BinaryOp::maximum, da, drow.view(), o).view()),
                    combine<HostTensor>(BinaryOp::maximum, a, row.view(), o), ctx + " maximum");
        for (const Scalar& s :
             {Scalar::weak_float(0.1), Scalar::weak_int(-3), Scalar::of(DType::f64, 0.25)})
          expect_same(multiply(da, s, o), multiply<HostCoo>(a, s, o), ctx + " * " + s.str());
        expect_same(combine(BinaryOp::add, da, Scalar::weak_int(0), o),
                    combine<HostCoo>(BinaryOp::add, a, Scalar::weak_int(0), o), ctx + " + 0");
      }
}

}  // namespace
}  // namespace ewise
