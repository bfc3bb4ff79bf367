// NumPy .npy reader and writer (see ewise/io.hpp for the supported subset).
// Format: "\x93NUMPY", major, minor, header length (uint16 LE for 1.0, uint32 LE for 2.0/3.0),
// then a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...), } padded with
// spaces and a newline, then the raw data.
#include <cstring>
#include <string>
#include <string_view>

#include "checked.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "io_file.hpp"

namespace ewise::io {
namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kPrefix = 8;                      // magic + major + minor
constexpr std::uint64_t kMaxHeader = std::uint64_t{1} << 20;  // far above any valid header
constexpr std::size_t kAlign = 64;                      // data offset alignment np.save uses

struct NpyHeader {
  DType dtype = DType::f32;
  Dims shape;
  bool fortran_order = false;
};

struct DescrEntry {
  const char* descr;
  DType dtype;
};
/// Every descr read; a dtype's first entry is the one written (npy_descr). '|' (no byte
/// order) is what NumPy writes for 1-byte types.
constexpr DescrEntry kDescrs[] = {
    {"<f2", DType::f16}, {"<V2", DType::bf16}, {"|V2", DType::bf16}, {"<f4", DType::f32},
    {"<f8", DType::f64}, {"<i4", DType::i32},  {"<i8", DType::i64},  {"|b1", DType::b8},
    {"|i1", DType::i8},  {"|u1", DType::u8},   {"<i2", DType::i16},  {"<u2", DType::u16},
    {"<u4", DType::u32}, {"<u8", DType::u64}};

DType dtype_of_descr(const std::string& descr, const std::string& name) {
  for (const auto& e : kDescrs)
    if (descr == e.descr) return e.dtype;
  EWISE_EXPECTS(descr.empty() || descr[0] != '>', name, ": big-endian data (descr '", descr,
                "') is not supported; convert with arr.astype(arr.dtype.newbyteorder('<'))");
  EWISE_EXPECTS(false, name, ": unsupported descr '", descr,
                "' (supported: '<f2', '<V2' for bf16, '<f4', '<f8', '|b1', '|i1', '|u1', '<i2', ",
                "'<u2', '<i4', '<u4', '<i8', '<u8')");
  return DType::f32;
}

/// Parser of the header's dict literal: the subset of Python syntax np.save produces (single or
/// double quoted strings without escapes, True/False, tuples of non-negative integers with an
/// optional Python 2 'L' suffix), keys in any order, a trailing comma, whitespace anywhere.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& name) : s_(text), name_(name) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    skip_ws();
    expect('{');
    skip_ws();
    while (!at('}')) {
      const std::string key = parse_string("a key");
      skip_ws();
      expect(':');
      skip_ws();
      if (key == "descr") {
        check(!have_descr, "key 'descr' appears twice");
        EWISE_EXPECTS(!at('['), name_, ": structured dtypes (a list descr) are not supported");
        h.dtype = dtype_of_descr(parse_string("the descr string"), name_);
        have_descr = true;
      } else if (key == "fortran_order") {
        check(!have_order, "key 'fortran_order' appears twice");
        h.fortran_order = parse_bool();
        have_order = true;
      } else if (key == "shape") {
        check(!have_shape, "key 'shape' appears twice");
        h.shape = parse_shape();
        have_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_ws();
      if (at(',')) {
        ++pos_;
        skip_ws();
      } else {
        check(at('}'), "expected ',' or '}'");
      }
    }
    ++pos_;
    skip_ws();
    check(pos_ == s_.size(), "unexpected text after the closing '}'");
    check(have_descr, "missing key 'descr'");
    check(have_order, "missing key 'fortran_order'");
    check(have_shape, "missing key 'shape'");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    detail::throw_invalid(__FILE__, __LINE__,
                          detail::concat(name_, ": malformed header at byte ", pos_, ": ", what));
  }
  void check(bool ok, const char* what) const {
    if (!ok) fail(what);
  }
  bool at(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' ||
                                s_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (!at(c)) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string parse_string(const char* what) {
    if (!at('\'') && !at('"')) fail(std::string("expected ") + what);
    const char quote = s_[pos_++];
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] != quote) {
      if (s_[pos_] == '\\' || s_[pos_] == '\n') fail("unsupported character in a string");
      ++pos_;
    }
    if (pos_ == s_.size()) fail("unterminated string");
    return std::string(s_.substr(start, pos_++ - start));
  }
  bool parse_bool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False for 'fortran_order'");
  }
  std::int64_t parse_extent() {
    if (at('-')) fail("negative extent in 'shape'");
    if (pos_ >= s_.size() || s_[pos_] < '0' || s_[pos_] > '9') fail("expected an integer in 'shape'");
    std::int64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      if (detail::mul_overflows(v, 10, &v) || detail::add_overflows(v, s_[pos_] - '0', &v))
        fail("extent in 'shape' overflows int64");
      ++pos_;
    }
    if (at('L')) ++pos_;  // Python 2 long literal, written by old NumPy versions
    return v;
  }
  Dims parse_shape() {
    expect('(');
    skip_ws();
    Dims shape;
    bool comma_after_last = false;
    while (!at(')')) {
      if (shape.size() == kMaxRank)
        fail(detail::concat("rank exceeds the maximum ", kMaxRank));
      shape.push_back(parse_extent());
      skip_ws();
      comma_after_last = at(',');
      if (comma_after_last) {
        ++pos_;
        skip_ws();
      } else {
        check(at(')'), "expected ',' or ')' in 'shape'");
      }
    }
    // Python needs the comma to make a one-element tuple: "(5)" is the integer 5.
    check(shape.size() != 1 || comma_after_last, "'shape' (n) is not a tuple; expected (n,)");
    ++pos_;
    return shape;
  }

  std::string_view s_;
  const std::string& name_;
  std::size_t pos_ = 0;
};

std::uint64_t load_le(const unsigned char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

/// Throws unless every byte of bool data is 0 or 1 (the values an ewise bool holds; NumPy
/// writes nothing else).
void check_bools(DType t, const void* data, std::int64_t nbytes, const std::string& name) {
  if (t != DType::b8) return;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::int64_t i = 0; i < nbytes; ++i)
    EWISE_EXPECTS(p[i] <= 1, name, ": bool element ", i, " holds the byte ",
                  static_cast<int>(p[i]), " (a bool is 0 or 1)");
}

/// Parses a .npy stream of `size` bytes; read(dst, n) copies the next n bytes (the reader has
/// checked that they exist).
template <class Read>
HostTensor read_npy_stream(std::uint64_t size, Read&& read, const std::string& name) {
  unsigned char prefix[kPrefix + 4];
  EWISE_EXPECTS(size >= kPrefix + 2, name, ": not a .npy file (only ", size, " bytes)");
  read(prefix, kPrefix);
  EWISE_EXPECTS(std::memcmp(prefix, kMagic, sizeof kMagic) == 0, name,
                ": not a .npy file (no \\x93NUMPY magic string)");
  const int major = prefix[6], minor = prefix[7];
  EWISE_EXPECTS((major == 1 || major == 2 || major == 3) && minor == 0, name,
                ": unsupported .npy format version ", major, ".", minor,
                " (supported: 1.0, 2.0, 3.0)");
  const int len_bytes = major == 1 ? 2 : 4;
  EWISE_EXPECTS(size >= kPrefix + len_bytes, name, ": file is truncated in the header length");
  read(prefix + kPrefix, static_cast<std::size_t>(len_bytes));
  const std::uint64_t header_len = load_le(prefix + kPrefix, len_bytes);
  const std::uint64_t header_end = kPrefix + len_bytes + header_len;
  EWISE_EXPECTS(header_len <= kMaxHeader, name, ": header length ", header_len,
                " is implausibly large (limit ", kMaxHeader, ")");
  EWISE_EXPECTS(header_end <= size, name, ": file is truncated: header length ", header_len,
                " but the file has only ", size, " bytes");
  std::string text(static_cast<std::size_t>(header_len), '\0');
  read(text.data(), text.size());
  const NpyHeader h = HeaderParser(text, name).parse();

  std::int64_t numel = 1, nbytes = 0;
  for (const std::int64_t e : h.shape)
    EWISE_EXPECTS(!detail::mul_overflows(numel, e, &numel), name, ": shape ", h.shape.str(),
                  " has too many elements");
  EWISE_EXPECTS(!detail::mul_overflows(numel, static_cast<std::int64_t>(dtype_size(h.dtype)),
                                       &nbytes),
                name, ": shape ", h.shape.str(), " is too large");
  const std::uint64_t present = size - header_end;
  EWISE_EXPECTS(present >= static_cast<std::uint64_t>(nbytes), name,
                ": data is truncated: shape ", h.shape.str(), " of ", dtype_name(h.dtype),
                " needs ", nbytes, " bytes, the file has ", present);
  EWISE_EXPECTS(present == static_cast<std::uint64_t>(nbytes), name, ": ",
                present - static_cast<std::uint64_t>(nbytes),
                " unexpected bytes after the data of shape ", h.shape.str(), " of ",
                dtype_name(h.dtype));

  if (!h.fortran_order || numel == 0) {
    HostTensor t(h.dtype, h.shape);
    read(t.data(), static_cast<std::size_t>(nbytes));
    check_bools(h.dtype, t.data(), nbytes, name);
    return t;
  }
  // Fortran order: the bytes are a column-major layout of the shape; gather into C order.
  // (numel > 0, so every partial product of the extents below is at most numel.)
  HostBuffer raw(static_cast<std::size_t>(nbytes));
  read(raw.data(), static_cast<std::size_t>(nbytes));
  check_bools(h.dtype, raw.data(), nbytes, name);
  Dims strides = Dims::of_rank(h.shape.size(), 1);
  for (int d = 1; d < h.shape.size(); ++d) strides[d] = strides[d - 1] * h.shape[d - 1];
  return to_host(ConstTensorView(raw.data(), TensorDesc::strided(h.dtype, h.shape, strides),
                                 Memory::host));
}

std::string shape_literal(const Dims& shape) {
  std::string s = "(";
  for (int d = 0; d < shape.size(); ++d) {
    if (d) s += ", ";
    s += std::to_string(shape[d]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

const char* npy_descr(DType dtype) {
  for (const auto& e : kDescrs)
    if (e.dtype == dtype) return e.descr;
  detail::throw_unknown_dtype(dtype);
}

HostTensor parse_npy(const void* data, std::size_t size, const std::string& name) {
  EWISE_EXPECTS(data != nullptr || size == 0, name, ": null data");
  const auto* base = static_cast<const unsigned char*>(data);
  std::size_t pos = 0;
  return read_npy_stream(
      size,
      [&](void* dst, std::size_t n) {
        if (n) std::memcpy(dst, base + pos, n);
        pos += n;
      },
      name);
}

HostTensor read_npy(const std::string& path) {
  detail::InputFile f(path);
  return read_npy_stream(
      f.size(), [&](void* dst, std::size_t n) { f.read_exact(dst, n); }, path);
}

void write_npy(const std::string& path, const ConstTensorView& tensor,
               const NpyWriteOptions& options, cudaStream_t stream) {
  check_view(tensor, "tensor");
  EWISE_EXPECTS(options.version >= 0 && options.version <= 3, path, ": .npy version ",
                options.version, " does not exist (0 = automatic, 1, 2 or 3)");
  // The bytes to store: C order of the tensor, or C order of the reversed axes for Fortran.
  ConstTensorView order = tensor;
  if (options.fortran_order) {
    const int r = tensor.desc.rank();
    for (int d = 0; d < r; ++d) {
      order.desc.shape[d] = tensor.desc.shape[r - 1 - d];
      order.desc.strides[d] = tensor.desc.strides[r - 1 - d];
    }
  }
  HostTensor staged;
  const void* bytes = order.data;
  if (order.memory != Memory::host || !order.desc.is_contiguous()) {
    staged = to_host(order, stream);
    bytes = staged.data();
  }
  const auto nbytes =
      static_cast<std::size_t>(tensor.desc.numel()) * dtype_size(tensor.desc.dtype);

  std::string dict = std::string("{'descr': '") + npy_descr(tensor.desc.dtype) +
                     "', 'fortran_order': " + (options.fortran_order ? "True" : "False") +
                     ", 'shape': " + shape_literal(tensor.desc.shape) + ", }";
  // Header length after padding with spaces and a '\n' so that the data starts at a multiple
  // of kAlign, for a header-length field of len_bytes.
  const auto padded_len = [&](std::size_t len_bytes) {
    const std::size_t unpadded = kPrefix + len_bytes + dict.size() + 1;
    return dict.size() + 1 + (kAlign - unpadded % kAlign) % kAlign;
  };
  int version = options.version;
  if (version == 0) version = padded_len(2) <= 65535 ? 1 : 2;
  const std::size_t len_bytes = version == 1 ? 2 : 4;
  EWISE_EXPECTS(version != 1 || padded_len(2) <= 65535, path, ": header of ", padded_len(2),
                " bytes does not fit .npy version 1.0");
  dict.append(padded_len(len_bytes) - dict.size() - 1, ' ');
  dict += '\n';

  std::string head(reinterpret_cast<const char*>(kMagic), sizeof kMagic);
  head += static_cast<char>(version);
  head += '\0';
  for (std::size_t i = 0; i < len_bytes; ++i)
    head += static_cast<char>((dict.size() >> (8 * i)) & 0xFF);
  head += dict;

  detail::AtomicOutputFile out(path);
  out.write(head);
  out.write(bytes, nbytes);
  out.commit();
}

}  // namespace ewise::io
