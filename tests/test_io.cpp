// Host tests of the file formats: .npy and .mtx readers and writers (ewise/io.hpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "element.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "ewise/verify.hpp"
#include "testing/expect_invalid.hpp"
#include "testing/temp_dir_test.hpp"

namespace ewise {
namespace {

namespace fs = std::filesystem;

/// File round trips in a fresh temporary directory per test.
class IoTest : public test::TempDirTest {
 protected:
  void write_bytes(const std::string& name, const std::string& bytes) const {
    std::ofstream(path(name), std::ios::binary) << bytes;
  }
  std::string read_bytes(const std::string& name) const {
    std::ifstream f(path(name), std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
  }
  /// Names of the files in the directory (to see that no temporary file stayed behind).
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
};

using test::expect_invalid;

HostTensor random_bytes_tensor(DType dtype, const Dims& shape, std::uint64_t seed) {
  HostTensor t(dtype, shape);
  std::mt19937_64 rng(seed);
  auto* p = static_cast<unsigned char*>(t.data());
  for (std::size_t i = 0; i < t.bytes(); ++i)
    p[i] = static_cast<unsigned char>(dtype == DType::b8 ? rng() & 1 : rng());  // bool: 0 or 1
  return t;
}

/// Byte equality of two tensors' data (memcmp must not see the null data of empty tensors).
bool same_bytes(const HostTensor& a, const HostTensor& b) {
  return a.bytes() == b.bytes() && (a.bytes() == 0 || std::memcmp(a.data(), b.data(), a.bytes()) == 0);
}

std::string le(std::uint64_t v, int bytes) {
  std::string s;
  for (int i = 0; i < bytes; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

/// A .npy file from parts: version, header text (used as is) and data bytes.
std::string npy_bytes(int major, const std::string& header, const std::string& data) {
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  s += le(header.size(), major == 1 ? 2 : 4);
  return s + header + data;
}

std::string f32_bytes(std::initializer_list<float> values) {
  std::string s;
  for (float v : values) s.append(reinterpret_cast<const char*>(&v), sizeof v);
  return s;
}

// ---- .npy ----------------------------------------------------------------------------------

TEST_F(IoTest, NpyRoundTripEveryDtypeVersionOrderAndShape) {
  const std::vector<Dims> shapes = {{},        {0},       {1},          {5},
                                    {3, 4},    {2, 3, 4}, {1, 7, 1},    {2, 0, 3},
                                    {3, 1, 5}, {2, 1, 2, 1, 2, 1, 2, 3}};
  std::uint64_t seed = seed_;
  for (DType t : kAllDTypes)
    for (int version : {0, 1, 2, 3})
      for (bool fortran : {false, true})
        for (const Dims& shape : shapes) {
          const std::string ctx = std::string(dtype_name(t)) + " v" + std::to_string(version) +
                                  (fortran ? " F " : " C ") + shape.str();
          const HostTensor a = random_bytes_tensor(t, shape, ++seed);
          io::NpyWriteOptions o;
          o.version = version;
          o.fortran_order = fortran;
          io::write_npy(path("a.npy"), a.view(), o);
          const std::string bytes = read_bytes("a.npy");
          ASSERT_GE(bytes.size(), 10u) << ctx;
          EXPECT_EQ(bytes[6], static_cast<char>(version == 0 ? 1 : version)) << ctx;
          const std::size_t data_offset = bytes.size() - a.bytes();
          EXPECT_EQ(data_offset % 64, 0u) << ctx << ": data not 64-byte aligned";
          EXPECT_EQ(bytes[data_offset - 1], '\n') << ctx;
          const HostTensor b = io::read_npy(path("a.npy"));
          ASSERT_EQ(b.dtype(), t) << ctx;
          ASSERT_EQ(b.shape(), shape) << ctx;
          EXPECT_TRUE(same_bytes(a, b)) << ctx;
          // The in-memory parser gives the same.
          const HostTensor c = io::parse_npy(bytes.data(), bytes.size(), "mem");
          EXPECT_TRUE(same_bytes(a, c)) << ctx;
          // Fortran order really stores the data column-major.
          if (fortran && shape == Dims{3, 4}) {
            const std::size_t e = dtype_size(t);
            const auto* src = static_cast<const char*>(a.data());
            for (int i = 0; i < 3; ++i)
              for (int j = 0; j < 4; ++j)
                ASSERT_EQ(std::memcmp(bytes.data() + data_offset + (j * 3 + i) * e,
                                      src + (i * 4 + j) * e, e),
                          0)
                    << ctx << " element (" << i << "," << j << ")";
          }
        }
  EXPECT_EQ(listing(), std::vector<std::string>{"a.npy"});
}

TEST_F(IoTest, NpyWritesExactlyWhatNumpyWrites) {
  // np.save(f, np.array([1, 2, 3], dtype='<f4')) produces this header (128-byte prefix).
  HostTensor a(DType::f32, {3});
  float* p = a.data_as<float>();
  p[0] = 1;
  p[1] = 2;
  p[2] = 3;
  io::write_npy(path("a.npy"), a.view());
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  header += std::string(128 - 10 - header.size() - 1, ' ') + "\n";
  EXPECT_EQ(read_bytes("a.npy"), npy_bytes(1, header, f32_bytes({1, 2, 3})));

  HostTensor s(DType::i64, {});
  *s.data_as<std::int64_t>() = -7;
  io::write_npy(path("s.npy"), s.view());
  EXPECT_NE(read_bytes("s.npy").find("'descr': '<i8', 'fortran_order': False, 'shape': (), }"),
            std::string::npos);
  EXPECT_STREQ(io::npy_descr(DType::bf16), "<V2");
  EXPECT_STREQ(io::npy_descr(DType::f16), "<f2");
  // np.save of np.array([True, False, True]): '|b1', one byte an element.
  HostTensor m(DType::b8, {3});
  const bool bits[3] = {true, false, true};
  std::memcpy(m.data(), bits, 3);
  io::write_npy(path("m.npy"), m.view());
  header = "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }";
  header += std::string(128 - 10 - header.size() - 1, ' ') + "\n";
  EXPECT_EQ(read_bytes("m.npy"), npy_bytes(1, header, std::string("\x01\x00\x01", 3)));
  // NumPy's descrs of the other new dtypes (np.dtype(t).str for int8, uint8, int16, uint16,
  // uint32, uint64).
  const std::vector<std::pair<DType, std::string>> descrs = {
      {DType::i8, "|i1"},  {DType::u8, "|u1"},  {DType::i16, "<i2"},
      {DType::u16, "<u2"}, {DType::u32, "<u4"}, {DType::u64, "<u8"}};
  for (const auto& [t, descr] : descrs) {
    EXPECT_EQ(io::npy_descr(t), descr);
    const std::string file =
        npy_bytes(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }\n",
                  std::string(2 * dtype_size(t), '\x7f'));
    EXPECT_EQ(io::parse_npy(file.data(), file.size(), "d.npy").dtype(), t) << descr;
  }
}

TEST_F(IoTest, NpyRefusesBoolBytesOtherThanZeroAndOne) {
  for (bool fortran : {false, true}) {
    const std::string file = npy_bytes(
        1,
        std::string("{'descr': '|b1', 'fortran_order': ") + (fortran ? "True" : "False") +
            ", 'shape': (2, 2), }\n",
        std::string("\x01\x00\x02\x01", 4));
    expect_invalid([&] { io::parse_npy(file.data(), file.size(), "m.npy"); },
                   {"m.npy: bool element 2 holds the byte 2 (a bool is 0 or 1)"});
  }
  // NumPy writes '|' for 1-byte types; '<' is not what it writes.
  const std::string lt = npy_bytes(1, "{'descr': '<i1', 'fortran_order': False, 'shape': (1,), }",
                                   std::string(1, '\x05'));
  expect_invalid([&] { io::parse_npy(lt.data(), lt.size(), "l.npy"); },
                 {"unsupported descr '<i1'"});
}

TEST_F(IoTest, NpyReadsFortranOrderIntoCOrder) {
  // Column-major (2,3): memory 0 3 1 4 2 5 holds the matrix [[0,1,2],[3,4,5]].
  const std::string file =
      npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n",
                f32_bytes({0, 3, 1, 4, 2, 5}));
  const HostTensor t = io::parse_npy(file.data(), file.size(), "f.npy");
  ASSERT_EQ(t.shape(), (Dims{2, 3}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t.data_as<float>()[i], static_cast<float>(i));
}

TEST_F(IoTest, NpyAcceptsHeaderVariants) {
  const std::string data = f32_bytes({1.5f, -2.5f});
  const std::vector<std::string> headers = {
      "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",   // any key order, no comma
      "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2,)}",  // double quotes
      "  {  'descr' : '<f4' ,'fortran_order':False,'shape':( 2 , ) , }  \n",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }\n",  // Python 2 long
  };
  for (const auto& h : headers) {
    for (int major : {1, 2, 3}) {
      const std::string file = npy_bytes(major, h, data);
      const HostTensor t = io::parse_npy(file.data(), file.size(), "v.npy");
      ASSERT_EQ(t.shape(), Dims{2}) << h;
      EXPECT_EQ(t.data_as<float>()[0], 1.5f) << h;
      EXPECT_EQ(t.data_as<float>()[1], -2.5f) << h;
    }
  }
  // '|V2' (what np.save writes for ml_dtypes.bfloat16 on some versions) reads as bf16.
  const std::string bf = npy_bytes(1, "{'descr': '|V2', 'fortran_order': False, 'shape': (1,), }",
                                   std::string("\x80\x3f", 2));
  const HostTensor b = io::parse_npy(bf.data(), bf.size(), "b.npy");
  EXPECT_EQ(b.dtype(), DType::bf16);
  EXPECT_EQ(b.data_as<std::uint16_t>()[0], 0x3f80);  // 1.0
}

TEST_F(IoTest, NpyWritesStridedViews) {
  const HostTensor base = verify::random_tensor(DType::f64, {4, 6}, seed_);
  // Transposed and reversed along the new first axis: shape (6,4), strides (-1, 6).
  ConstTensorView v(static_cast<const double*>(base.data()) + 5,
                    TensorDesc::strided(DType::f64, {6, 4}, {-1, 6}), Memory::host);
  io::write_npy(path("t.npy"), v);
  const HostTensor got = io::read_npy(path("t.npy"));
  const HostTensor want = to_host(v);
  ASSERT_EQ(got.shape(), (Dims{6, 4}));
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.bytes()), 0);
  EXPECT_EQ(got.data_as<double>()[0], base.data_as<double>()[5]);
  // A broadcast view (stride 0) writes every logical element.
  ConstTensorView bc(base.data(), TensorDesc::strided(DType::f64, {3, 6}, {0, 1}), Memory::host);
  io::write_npy(path("b.npy"), bc);
  const HostTensor b = io::read_npy(path("b.npy"));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 6; ++j)
      EXPECT_EQ(b.data_as<double>()[i * 6 + j], base.data_as<double>()[j]);
}

TEST_F(IoTest, NpyMalformedInputsNameTheFileAndTheProblem) {
  const std::string data = f32_bytes({1, 2});
  const std::string good_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
  const auto with_header = [&](const std::string& h) { return npy_bytes(1, h, data); };
  std::string bad_version = npy_bytes(1, good_header, data);
  bad_version[6] = 4;
  std::string bad_minor = npy_bytes(1, good_header, data);
  bad_minor[7] = 1;
  std::string long_header = npy_bytes(1, good_header, data);
  long_header[8] = '\xff';
  long_header[9] = '\x7f';
  struct Case {
    std::string bytes;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"", "not a .npy file"},
      {"\x93NUMPY", "not a .npy file"},
      {"PK\x03\x04 this is a zip file", "magic"},
      {bad_version, "unsupported .npy format version 4.0"},
      {bad_minor, "version 1.1"},
      {long_header, "file is truncated: header length 32767"},
      {npy_bytes(2, good_header, data).substr(0, 11), "truncated in the header length"},
      {npy_bytes(1, good_header, data.substr(0, 5)), "data is truncated: shape (2,) of f32 needs 8 bytes, the file has 5"},
      {npy_bytes(1, good_header, data + "x"), "1 unexpected bytes after the data"},
      {with_header("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }"), "unsupported descr '<c8'"},
      {with_header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }"), "big-endian"},
      {with_header("{'descr': '|f4', 'fortran_order': False, 'shape': (2,), }"), "unsupported descr '|f4'"},
      {with_header("{'descr': '<V4', 'fortran_order': False, 'shape': (2,), }"), "unsupported descr '<V4'"},
      {with_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }"), "structured"},
      {with_header("{'descr': '<f4', 'shape': (2,), }"), "missing key 'fortran_order'"},
      {with_header("{'fortran_order': False, 'shape': (2,), }"), "missing key 'descr'"},
      {with_header("{'descr': '<f4', 'fortran_order': False}"), "missing key 'shape'"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}"), "unexpected key 'x'"},
      {with_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}"), "'descr' appears twice"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}"), "not a tuple"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}"), "negative extent"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}"), "overflows int64"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}"), "rank exceeds the maximum 8"},
      {with_header("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}"), "expected True or False"},
      {with_header("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}"), "unsupported descr '<f4, '"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x"), "unexpected text after"},
      {with_header("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}"), "expected ',' or '}'"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}"), "expected ',' or ')'"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (a,)}"), "expected an integer"},
      {with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)"), "malformed header"},
      {with_header("['descr', '<f4']"), "expected '{'"},
      // A header that promises 2^40 doubles in a file of a few bytes: refused without allocating.
      {with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,)}"), "data is truncated"},
      {with_header("{'descr': '<f8', 'fortran_order': True, 'shape': (2147483648, 2147483648)}"), "is too large"},
      {with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4)}"), "too many elements"},
  };
  for (const auto& c : cases) {
    write_bytes("bad.npy", c.bytes);
    expect_invalid([&] { io::read_npy(path("bad.npy")); }, {path("bad.npy") + ": ", c.expect},
                   c.expect);
    expect_invalid([&] { io::parse_npy(c.bytes.data(), c.bytes.size(), "mem.npy"); },
                   {"ewise: mem.npy: ", c.expect}, c.expect);
  }
  expect_invalid([&] { io::read_npy(path("missing.npy")); },
                 {path("missing.npy"), "cannot open", "No such file"}, "missing file");
  expect_invalid([&] { io::read_npy(dir_.string()); }, {"not a regular file"}, "directory");
}

TEST_F(IoTest, NpyEveryTruncationAndRandomCorruptionFailsCleanly) {
  const HostTensor a = verify::random_tensor(DType::f32, {3, 5}, seed_);
  io::write_npy(path("a.npy"), a.view(), {2, true});
  const std::string good = read_bytes("a.npy");
  for (std::size_t n = 0; n < good.size(); ++n)
    expect_invalid([&] { io::parse_npy(good.data(), n, "t.npy"); }, {"t.npy: "},
                   "prefix of " + std::to_string(n) + " bytes");
  // Random byte edits: each either parses or throws InvalidArgument (never anything else).
  std::mt19937_64 rng(seed_);
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = good;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e)
      s[rng() % std::min<std::size_t>(s.size(), 140)] = static_cast<char>(rng());
    try {
      io::parse_npy(s.data(), s.size(), "c.npy");
      ++parsed;
    } catch (const InvalidArgument& e) {
      ASSERT_EQ(std::string(e.what()).rfind("ewise: c.npy: ", 0), 0u) << e.what();
    }
  }
  std::cout << parsed << " of 3000 corrupted files still parsed\n";
}

TEST_F(IoTest, WriteFailuresLeaveNoFileBehind) {
  const HostTensor a = verify::random_tensor(DType::f32, {4}, seed_);
  expect_invalid([&] { io::write_npy(path("no/such/dir/a.npy"), a.view()); },
                 {path("no/such/dir/a.npy"), "cannot create file"}, "missing directory");
  fs::create_directory(path("sub"));
  expect_invalid([&] { io::write_npy(path("sub"), a.view()); }, {"is a directory"}, "dir");
  expect_invalid([&] { io::write_npy(path("v.npy"), a.view(), {7, false}); },
                 {"version 7 does not exist"}, "version");
  expect_invalid([&] { io::write_npy("", a.view()); }, {"output file name is empty"}, "empty");
  EXPECT_EQ(listing(), std::vector<std::string>{"sub"});
  if (geteuid() != 0) {  // root writes anywhere
    fs::permissions(path("sub"), fs::perms::owner_read | fs::perms::owner_exec);
    expect_invalid([&] { io::write_npy(path("sub/a.npy"), a.view()); },
                   {"cannot create file", "Permission denied"}, "read-only directory");
    fs::permissions(path("sub"), fs::perms::owner_all);
  }
  // A failure in the middle of writing (an entry found out of range after 1000 lines were
  // written) leaves the previous output untouched and no temporary file.
  write_bytes("m.mtx", "previous contents");
  HostCoo m = verify::random_coo(100, 100, 0.2, seed_);
  static_cast<std::int32_t*>(m.cols())[1500] = 100;
  expect_invalid([&] { io::write_mtx(path("m.mtx"), m.view()); },
                 {path("m.mtx"), "entry 1500", "is outside the 100x100 matrix"}, "bad entry");
  EXPECT_EQ(read_bytes("m.mtx"), "previous contents");
  EXPECT_EQ(listing(), (std::vector<std::string>{"m.mtx", "sub"}));
}

// ---- .mtx ----------------------------------------------------------------------------------

struct Entry {
  std::int64_t r, c;
  double v;
  bool operator==(const Entry& o) const {
    return r == o.r && c == o.c && (v == o.v || (std::isnan(v) && std::isnan(o.v)));
  }
};
std::ostream& operator<<(std::ostream& os, const Entry& e) {
  return os << "(" << e.r << "," << e.c << ")=" << e.v;
}

std::vector<Entry> entries(const HostCoo& m) {
  std::vector<Entry> out;
  const CooDesc& d = m.desc();
  const std::size_t isz = index_size(d.index), vsz = dtype_size(d.dtype);
  for (std::int64_t k = 0; k < d.nnz; ++k) {
    const auto* rp = static_cast<const std::byte*>(m.rows()) + k * isz;
    const auto* cp = static_cast<const std::byte*>(m.cols()) + k * isz;
    const auto* vp = static_cast<const std::byte*>(m.vals()) + k * vsz;
    const std::int64_t r = d.index == IndexType::i32 ? detail::load_raw<std::int32_t>(rp)
                                                     : detail::load_raw<std::int64_t>(rp);
    const std::int64_t c = d.index == IndexType::i32 ? detail::load_raw<std::int32_t>(cp)
                                                     : detail::load_raw<std::int64_t>(cp);
    out.push_back({r, c, detail::load_double(d.dtype, vp)});
  }
  return out;
}

TEST_F(IoTest, MtxReadsGeneralRealSorted) {
  const HostCoo m = io::parse_mtx(
      "%%MatrixMarket matrix coordinate real general\n"
      "% a comment\n"
      "%\n"
      "\n"
      "3 4 4\n"
      "3 4 -1.5e2\n"
      "1 2 0.25\n"
      "  2\t1   +7 \n"
      "% comment between entries\n"
      "1 1 -0\n");
  const CooDesc& d = m.desc();
  EXPECT_EQ(d.nrows, 3);
  EXPECT_EQ(d.ncols, 4);
  EXPECT_EQ(d.dtype, DType::f64);
  EXPECT_EQ(d.index, IndexType::i32);
  EXPECT_TRUE(d.canonical);
  EXPECT_EQ(entries(m), (std::vector<Entry>{{0, 0, -0.0}, {0, 1, 0.25}, {1, 0, 7}, {2, 3, -150}}));
  EXPECT_TRUE(std::signbit(entries(m)[0].v));
}

TEST_F(IoTest, MtxFieldsAndLayoutVariants) {
  // Keywords in any case, CRLF line ends, no final newline.
  const HostCoo i = io::parse_mtx(
      "%%MatrixMarket MATRIX Coordinate INTEGER General\r\n2 2 2\r\n1 1 9223372036854775807\r\n"
      "2 2 -9223372036854775808");
  EXPECT_EQ(i.desc().dtype, DType::i64);
  EXPECT_EQ(static_cast<const std::int64_t*>(i.vals())[0], std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(static_cast<const std::int64_t*>(i.vals())[1], std::numeric_limits<std::int64_t>::min());

  const HostCoo p = io::parse_mtx("%%MatrixMarket matrix coordinate pattern general\n2 3 2\n2 3\n1 2\n");
  EXPECT_EQ(p.desc().dtype, DType::f64);
  EXPECT_EQ(entries(p), (std::vector<Entry>{{0, 1, 1.0}, {1, 2, 1.0}}));

  // Underflow reads as zero or a subnormal; inf and nan are numbers.
  const HostCoo u = io::parse_mtx(
      "%%MatrixMarket matrix coordinate real general\n1 3 3\n1 1 1e-400\n1 2 inf\n1 3 nan\n");
  const auto ue = entries(u);
  EXPECT_EQ(ue[0].v, 0.0);
  EXPECT_TRUE(std::isinf(ue[1].v));
  EXPECT_TRUE(std::isnan(ue[2].v));

  // Empty matrices.
  const HostCoo e = io::parse_mtx("%%MatrixMarket matrix coordinate real general\n0 0 0\n");
  EXPECT_EQ(e.desc().nnz, 0);
  EXPECT_TRUE(e.desc().canonical);
}

TEST_F(IoTest, MtxSymmetricAndSkewSymmetricAreExpanded) {
  const HostCoo s = io::parse_mtx(
      "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 5\n2 1 2\n3 2 3\n1 3 4\n");
  EXPECT_EQ(entries(s), (std::vector<Entry>{{0, 0, 5}, {0, 1, 2}, {0, 2, 4}, {1, 0, 2},
                                            {1, 2, 3}, {2, 0, 4}, {2, 1, 3}}));
  EXPECT_TRUE(s.desc().canonical);
  const HostCoo ps = io::parse_mtx(
      "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n2 2\n2 1\n");
  EXPECT_EQ(entries(ps), (std::vector<Entry>{{0, 1, 1}, {1, 0, 1}, {1, 1, 1}}));
  const HostCoo k = io::parse_mtx(
      "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 7\n3 1 -4\n");
  EXPECT_EQ(entries(k), (std::vector<Entry>{{0, 1, -7}, {0, 2, 4}, {1, 0, 7}, {2, 0, -4}}));
  EXPECT_EQ(k.desc().dtype, DType::i64);
}

TEST_F(IoTest, MtxDuplicatesAreKeptAndNotCanonical) {
  const HostCoo m = io::parse_mtx(
      "%%MatrixMarket matrix coordinate real general\n2 2 3\n2 2 1\n1 1 2\n2 2 3\n");
  EXPECT_FALSE(m.desc().canonical);
  EXPECT_EQ(entries(m), (std::vector<Entry>{{0, 0, 2}, {1, 1, 1}, {1, 1, 3}}));  // file order kept
}

TEST_F(IoTest, MtxIndexTypeFollowsTheShape) {
  const HostCoo a = io::parse_mtx(
      "%%MatrixMarket matrix coordinate real general\n2147483648 1 1\n2147483648 1 3\n");
  EXPECT_EQ(a.desc().index, IndexType::i32);
  EXPECT_EQ(entries(a), (std::vector<Entry>{{2147483647, 0, 3}}));
  const HostCoo b = io::parse_mtx(
      "%%MatrixMarket matrix coordinate real general\n3000000000 2 2\n3000000000 1 5\n1 2 1\n");
  EXPECT_EQ(b.desc().index, IndexType::i64);
  EXPECT_EQ(entries(b), (std::vector<Entry>{{0, 1, 1}, {2999999999, 0, 5}}));
}

TEST_F(IoTest, MtxRoundTripEveryDtypeAndIndexType) {
  std::uint64_t seed = seed_;
  for (DType t : kSparseDTypes)
    for (IndexType ix : {IndexType::i32, IndexType::i64})
      for (double density : {0.0, 0.01, 0.3}) {
        const std::string ctx = std::string(dtype_name(t)) + " " + index_name(ix) + " " +
                                std::to_string(density);
        verify::CooGenOptions o;
        o.dtype = t;
        o.index = ix;
        o.values.lo = -1e4;
        o.values.hi = 1e4;
        const HostCoo a = verify::random_coo(37, 53, density, ++seed, o);
        io::write_mtx(path("a.mtx"), a.view());
        const std::string text = read_bytes("a.mtx");
        const bool integer = t == DType::i32 || t == DType::i64;
        EXPECT_EQ(text.rfind(std::string("%%MatrixMarket matrix coordinate ") +
                                 (integer ? "integer" : "real") + " general\n37 53 " +
                                 std::to_string(a.nnz()) + "\n",
                             0),
                  0u)
            << ctx;
        const HostCoo b = io::read_mtx(path("a.mtx"));
        EXPECT_EQ(b.desc().dtype, integer ? DType::i64 : DType::f64) << ctx;
        EXPECT_EQ(b.desc().index, IndexType::i32) << ctx;  // the shape fits int32
        EXPECT_TRUE(b.desc().canonical) << ctx;
        EXPECT_EQ(entries(b), entries(a)) << ctx;  // values exact: shortest round-trip decimals
      }
  EXPECT_EQ(listing(), std::vector<std::string>{"a.mtx"});
}

TEST_F(IoTest, MtxWriterOutputIsExact) {
  CooDesc d;
  d.nrows = 3;
  d.ncols = 4;
  d.nnz = 3;
  d.dtype = DType::f32;
  HostCoo m(d);
  const std::int32_t rows[] = {0, 1, 2}, cols[] = {3, 0, 2};
  const float vals[] = {0.1f, -2.0f, 1e-30f};
  std::memcpy(m.rows(), rows, sizeof rows);
  std::memcpy(m.cols(), cols, sizeof cols);
  std::memcpy(m.vals(), vals, sizeof vals);
  io::write_mtx(path("m.mtx"), m.view());
  EXPECT_EQ(read_bytes("m.mtx"),
            "%%MatrixMarket matrix coordinate real general\n3 4 3\n"
            "1 4 0.10000000149011612\n2 1 -2\n3 3 1.0000000031710769e-30\n");
}

TEST_F(IoTest, MtxReportsProgress) {
  std::string text = "%%MatrixMarket matrix coordinate real general\n1000 1000 5000\n";
  for (int k = 0; k < 5000; ++k)
    text += std::to_string(k % 1000 + 1) + " " + std::to_string(k / 5 + 1) + " 1.5\n";
  std::vector<std::int64_t> calls;
  io::MtxReadOptions o;
  o.progress = [&](std::int64_t done, std::int64_t total) {
    EXPECT_EQ(total, static_cast<std::int64_t>(text.size()));
    if (!calls.empty()) {
      EXPECT_GE(done, calls.back());
    }
    calls.push_back(done);
  };
  EXPECT_EQ(io::parse_mtx(text, "p.mtx", o).nnz(), 5000);
  EXPECT_GE(calls.size(), 50u);
  EXPECT_LE(calls.size(), 102u);
  EXPECT_EQ(calls.back(), static_cast<std::int64_t>(text.size()));
}

TEST_F(IoTest, MtxMalformedInputsNameFileAndLine) {
  const std::string hdr = "%%MatrixMarket matrix coordinate real general\n";
  struct Case {
    std::string text;
    std::string expect;  // after "A.mtx:"
  };
  const std::vector<Case> cases = {
      {"", "1: empty file"},
      {"%MatrixMarket matrix coordinate real general\n1 1 0\n", "1: expected the banner"},
      {"3 3 1\n1 1 1\n", "1: expected the banner"},
      {"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", "1: the dense 'array' format"},
      {"%%MatrixMarket tensor coordinate real general\n", "1: unsupported object 'tensor'"},
      {"%%MatrixMarket matrix coordinate complex general\n", "1: complex matrices"},
      {"%%MatrixMarket matrix coordinate real hermitian\n", "1: hermitian"},
      {"%%MatrixMarket matrix coordinate float general\n", "1: unsupported field 'float'"},
      {"%%MatrixMarket matrix coordinate real upper\n", "1: unsupported symmetry 'upper'"},
      {"%%MatrixMarket matrix coordinate real\n", "1: unsupported symmetry ''"},
      {"%%MatrixMarket matrix coordinate real general extra\n", "1: unexpected text after"},
      {"%%MatrixMarket matrix coordinate pattern skew-symmetric\n", "1: a pattern matrix cannot be skew"},
      {hdr, "1: file ends before the size line"},
      {hdr + "% only comments\n\n", "3: file ends before the size line"},
      {hdr + "3 x 1\n", "2: size line: column count 'x' is not an integer"},
      {hdr + "3 3\n", "2: size line: missing entry count"},
      {hdr + "-3 3 1\n1 1 1\n", "2: size line: negative row count -3"},
      {hdr + "3 3 1 1\n1 1 1\n", "2: size line has more than three numbers"},
      {hdr + "3 99999999999999999999 1\n", "2: size line: column count '99999999999999999999' out of range"},
      {hdr + "4294967296 4294967296 0\n", "2: size 4294967296x4294967296 is too large"},
      {"%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", "2: a symmetric matrix must be square, not 3x4"},
      {hdr + "5 5 1000000000000\n1 1 1\n", "3: file ends after 1 of the 1000000000000 declared entries"},
      {hdr + "3 5 2\n1 1 1\n% c\n\n%\n1 0 1\n", "7: column index 0 out of range 1..5"},
      {hdr + "3 5 1\n4 1 1\n", "3: row index 4 out of range 1..3"},
      {hdr + "3 5 1\n1 6 1\n", "3: column index 6 out of range 1..5"},
      {hdr + "3 5 1\n-1 1 1\n", "3: row index -1 out of range"},
      {hdr + "3 5 1\n1 99999999999999999999 1\n", "3: column index '99999999999999999999' out of range"},
      {hdr + "0 5 1\n1 1 1\n", "3: row index 1 out of range: the matrix has no rows"},
      {hdr + "3 5 1\nx 1 1\n", "3: row index 'x' is not an integer"},
      {hdr + "3 5 1\n1 1.5 1\n", "3: column index '1.5' is not an integer"},
      {hdr + "3 5 1\n1 1\n", "3: missing value (expected 'row column value')"},
      {hdr + "3 5 1\n1\n", "3: missing column index"},
      {hdr + "3 5 1\n1 1 1 1\n", "3: too many fields"},
      {hdr + "3 5 1\n1 1 abc\n", "3: value 'abc' is not a real number"},
      {hdr + "3 5 1\n1 1 1.5x\n", "3: value '1.5x' is not a real number"},
      {hdr + "3 5 1\n1 1 1e999\n", "3: value '1e999' out of the range of double"},
      {hdr + "3 5 1\n1 1 --1\n", "3: value '--1' is not a real number"},
      {"%%MatrixMarket matrix coordinate integer general\n3 5 1\n1 1 1.5\n", "3: value '1.5' is not an integer"},
      {"%%MatrixMarket matrix coordinate integer general\n3 5 1\n1 1 9223372036854775808\n", "3: value '9223372036854775808' out of the range of int64"},
      {"%%MatrixMarket matrix coordinate pattern general\n3 5 1\n1 1 1\n", "3: too many fields (expected 'row column')"},
      {hdr + "3 5 1\n1 1 1\n2 2 2\n", "4: more entries than the 1 declared"},
      {hdr + "3 5 3\n1 1 1\n2 2 2\n", "4: file ends after 2 of the 3 declared entries"},
      {"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 1\n2 2 1\n", "3: diagonal entry (2,2) in a skew-symmetric"},
      {"%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n2 1 -9223372036854775808\n", "3: value -9223372036854775808 cannot be negated"},
      {hdr + "3 5 1\n1 1 \x01\xff\n", "3: value '\?\?' is not a real number"},
  };
  for (const auto& c : cases) {
    expect_invalid([&] { io::parse_mtx(c.text, "A.mtx"); }, {"ewise: A.mtx:" + c.expect}, c.expect);
  }
  // Through a file, the message names the path.
  write_bytes("bad.mtx", hdr + "3 5 2\n1 1 1\n% c\n1 0 1\n");
  expect_invalid([&] { io::read_mtx(path("bad.mtx")); },
                 {"ewise: " + path("bad.mtx") + ":5: column index 0 out of range 1..5"}, "file");
  expect_invalid([&] { io::read_mtx(path("missing.mtx")); }, {"cannot open"}, "missing");
}

TEST_F(IoTest, MtxEveryTruncationAndRandomCorruptionFailsCleanly) {
  verify::CooGenOptions o;
  o.dtype = DType::f64;
  const HostCoo a = verify::random_coo(6, 7, 0.3, seed_, o);
  io::write_mtx(path("a.mtx"), a.view());
  const std::string good = read_bytes("a.mtx");
  std::string sym = good;
  sym.replace(sym.find("general"), 7, "symmetric");  // 6x7 symmetric: refused
  for (const std::string* text : {&good, static_cast<const std::string*>(&sym)})
    for (std::size_t n = 0; n < text->size(); ++n) {
      try {
        const HostCoo m = io::parse_mtx(std::string_view(*text).substr(0, n), "t.mtx");
        // Only a cut inside the last value or its newline can still parse.
        EXPECT_EQ(m.nnz(), a.nnz()) << "prefix " << n;
      } catch (const InvalidArgument& e) {
        ASSERT_EQ(std::string(e.what()).rfind("ewise: t.mtx:", 0), 0u) << e.what();
      }
    }
  std::mt19937_64 rng(seed_);
  const char alphabet[] = "0123456789 \n\t%-+.eE";
  int parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string s = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const std::size_t at = rng() % s.size();
      if (rng() % 2) s[at] = alphabet[rng() % (sizeof alphabet - 1)];
      else s[at] = static_cast<char>(rng());
    }
    try {
      io::parse_mtx(s, "c.mtx");
      ++parsed;
    } catch (const InvalidArgument& e) {
      ASSERT_EQ(std::string(e.what()).rfind("ewise: c.mtx:", 0), 0u) << e.what();
    }
  }
  std::cout << parsed << " of 3000 corrupted files still parsed\n";
}

}  // namespace
}  // namespace ewise
