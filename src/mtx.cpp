// Matrix Market coordinate reader and writer (see ewise/io.hpp for the supported subset).
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <string_view>
#include <vector>

#include "checked.hpp"
#include "element.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "io_file.hpp"

namespace ewise::io {
namespace {

enum class Field { real, integer, pattern };
enum class Symmetry { general, symmetric, skew };

/// Splits text into lines (without '\n' and a trailing '\r') and counts them from 1.
class Lines {
 public:
  explicit Lines(std::string_view text) : s_(text) {}
  bool next(std::string_view& line) {
    if (pos_ >= s_.size()) return false;
    const std::size_t nl = s_.find('\n', pos_);
    const std::size_t end = nl == std::string_view::npos ? s_.size() : nl;
    line = s_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = nl == std::string_view::npos ? s_.size() : nl + 1;
    ++number_;
    return true;
  }
  std::int64_t number() const noexcept { return number_; }
  std::size_t pos() const noexcept { return pos_; }
  std::size_t remaining() const noexcept { return s_.size() - pos_; }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
  std::int64_t number_ = 0;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

/// Next whitespace-separated token of `rest` ("" when none), consumed from `rest`.
std::string_view next_token(std::string_view& rest) {
  std::size_t i = 0;
  while (i < rest.size() && is_space(rest[i])) ++i;
  std::size_t j = i;
  while (j < rest.size() && !is_space(rest[j])) ++j;
  const std::string_view tok = rest.substr(i, j - i);
  rest.remove_prefix(j);
  return tok;
}

bool is_blank_or_comment(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && is_space(line[i])) ++i;
  return i == line.size() || line[i] == '%';
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// Quoted token for messages, shortened so that a huge token cannot make a huge message.
std::string quoted(std::string_view tok) {
  constexpr std::size_t kMax = 40;
  std::string s = "'";
  for (std::size_t i = 0; i < tok.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(tok[i]);
    s += (c >= 0x20 && c < 0x7F) ? static_cast<char>(c) : '?';
  }
  return s + (tok.size() > kMax ? "...'" : "'");
}

enum class Parse { ok, invalid, out_of_range };

Parse parse_int(std::string_view tok, std::int64_t& v) {
  if (tok.size() > 1 && tok[0] == '+' && tok[1] != '-') tok.remove_prefix(1);
  const auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (r.ec == std::errc::result_out_of_range && r.ptr == tok.data() + tok.size())
    return Parse::out_of_range;
  return r.ec == std::errc() && r.ptr == tok.data() + tok.size() && !tok.empty() ? Parse::ok
                                                                                 : Parse::invalid;
}

Parse parse_real(std::string_view tok, double& v) {
  if (tok.size() > 1 && tok[0] == '+' && tok[1] != '-') tok.remove_prefix(1);
  const auto r = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (r.ptr != tok.data() + tok.size() || tok.empty()) return Parse::invalid;
  if (r.ec == std::errc()) return Parse::ok;
  if (r.ec != std::errc::result_out_of_range) return Parse::invalid;
  // Out of range: an underflow reads as the nearest subnormal or zero, an overflow is an error.
  const std::string copy(tok);
  errno = 0;
  v = std::strtod(copy.c_str(), nullptr);
  return std::abs(v) > std::numeric_limits<double>::max() ? Parse::out_of_range : Parse::ok;
}

class MtxParser {
 public:
  MtxParser(std::string_view text, const std::string& name, const MtxReadOptions& options)
      : lines_(text), name_(name), options_(options), total_(static_cast<std::int64_t>(text.size())) {}

  HostCoo parse() {
    parse_banner();
    parse_size();
    parse_entries();
    return build();
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    detail::throw_invalid(__FILE__, __LINE__,
                          detail::concat(name_, ":", std::max<std::int64_t>(lines_.number(), 1),
                                         ": ", what));
  }
  void check(bool ok, const char* what) const {
    if (!ok) fail(what);
  }

  void parse_banner() {
    std::string_view line;
    if (!lines_.next(line)) fail("empty file; expected the %%MatrixMarket banner");
    std::string_view rest = line;
    const std::string_view banner = next_token(rest);
    check(banner == "%%MatrixMarket", "expected the banner '%%MatrixMarket matrix coordinate "
                                      "<field> <symmetry>'");
    const std::string object = lower(next_token(rest)), format = lower(next_token(rest));
    const std::string field = lower(next_token(rest)), symmetry = lower(next_token(rest));
    if (object != "matrix") fail("unsupported object " + quoted(object) + " (expected matrix)");
    if (format == "array")
      fail("the dense 'array' format is not supported; only 'coordinate'");
    if (format != "coordinate")
      fail("unsupported format " + quoted(format) + " (expected coordinate)");
    if (field == "real") field_ = Field::real;
    else if (field == "integer") field_ = Field::integer;
    else if (field == "pattern") field_ = Field::pattern;
    else if (field == "complex") fail("complex matrices are not supported");
    else fail("unsupported field " + quoted(field) + " (expected real, integer or pattern)");
    if (symmetry == "general") symmetry_ = Symmetry::general;
    else if (symmetry == "symmetric") symmetry_ = Symmetry::symmetric;
    else if (symmetry == "skew-symmetric") symmetry_ = Symmetry::skew;
    else if (symmetry == "hermitian") fail("hermitian matrices are not supported");
    else
      fail("unsupported symmetry " + quoted(symmetry) +
           " (expected general, symmetric or skew-symmetric)");
    check(next_token(rest).empty(), "unexpected text after the banner's five words");
    check(!(field_ == Field::pattern && symmetry_ == Symmetry::skew),
          "a pattern matrix cannot be skew-symmetric");
  }

  std::int64_t parse_count(std::string_view tok, const char* what) const {
    if (tok.empty()) fail(detail::concat("size line: missing ", what));
    std::int64_t v = 0;
    const Parse p = parse_int(tok, v);
    if (p == Parse::out_of_range) fail(detail::concat("size line: ", what, " ", quoted(tok),
                                                      " out of range"));
    if (p != Parse::ok) fail(detail::concat("size line: ", what, " ", quoted(tok),
                                            " is not an integer"));
    if (v < 0) fail(detail::concat("size line: negative ", what, " ", v));
    return v;
  }

  void parse_size() {
    std::string_view line;
    do {
      if (!lines_.next(line)) fail("file ends before the size line 'rows columns entries'");
    } while (is_blank_or_comment(line));
    std::string_view rest = line;
    nrows_ = parse_count(next_token(rest), "row count");
    ncols_ = parse_count(next_token(rest), "column count");
    nnz_ = parse_count(next_token(rest), "entry count");
    check(next_token(rest).empty(),
          "size line has more than three numbers (only 'coordinate' files are supported)");
    std::int64_t cells = 0;
    if (detail::mul_overflows(nrows_, ncols_, &cells))
      fail(detail::concat("size ", nrows_, "x", ncols_, " is too large (rows*columns overflows "
                          "int64)"));
    if (symmetry_ != Symmetry::general && nrows_ != ncols_)
      fail(detail::concat("a ", symmetry_ == Symmetry::symmetric ? "symmetric" : "skew-symmetric",
                          " matrix must be square, not ", nrows_, "x", ncols_));
  }

  std::int64_t parse_index(std::string_view tok, const char* what, std::int64_t extent) const {
    if (tok.empty()) fail(detail::concat("missing ", what, " index", expected_fields()));
    std::int64_t v = 0;
    const Parse p = parse_int(tok, v);
    if (p == Parse::invalid)
      fail(detail::concat(what, " index ", quoted(tok), " is not an integer"));
    if (p == Parse::out_of_range || v < 1 || v > extent) {
      const std::string shown = p == Parse::ok ? std::to_string(v) : quoted(tok);
      fail(extent == 0 ? detail::concat(what, " index ", shown, " out of range: the matrix has no ",
                                        what, "s")
                       : detail::concat(what, " index ", shown, " out of range 1..", extent));
    }
    return v - 1;
  }

  std::string expected_fields() const {
    return field_ == Field::pattern ? " (expected 'row column')"
                                    : " (expected 'row column value')";
  }

  void add(std::int64_t r, std::int64_t c, double v, std::int64_t iv) {
    rows_.push_back(r);
    cols_.push_back(c);
    if (field_ == Field::integer) ivals_.push_back(iv);
    else vals_.push_back(v);
  }

  void parse_entries() {
    // Never trust the declared count for memory: each entry takes at least `fields`
    // one-character numbers, each followed by a separator (but the last), so the bytes left
    // bound how many entries can follow. The arrays grow past the reservation as entries parse.
    const std::int64_t fields = field_ == Field::pattern ? 2 : 3;
    const std::int64_t room = (static_cast<std::int64_t>(lines_.remaining()) + 1) / (2 * fields);
    const std::size_t reserve = static_cast<std::size_t>(std::min(nnz_, room)) *
                                (symmetry_ == Symmetry::general ? 1 : 2);
    rows_.reserve(reserve);
    cols_.reserve(reserve);
    if (field_ == Field::integer) ivals_.reserve(reserve);
    else vals_.reserve(reserve);

    const std::int64_t step = std::max<std::int64_t>(total_ / 100, 1);
    std::int64_t next_report = step;
    std::int64_t seen = 0;
    std::string_view line;
    while (lines_.next(line)) {
      if (is_blank_or_comment(line)) continue;
      if (seen == nnz_) fail(detail::concat("more entries than the ", nnz_, " declared"));
      ++seen;
      std::string_view rest = line;
      const std::int64_t r = parse_index(next_token(rest), "row", nrows_);
      const std::int64_t c = parse_index(next_token(rest), "column", ncols_);
      double v = 1.0;
      std::int64_t iv = 0;
      if (field_ != Field::pattern) {
        const std::string_view tok = next_token(rest);
        if (tok.empty()) fail("missing value" + expected_fields());
        const Parse p = field_ == Field::integer ? parse_int(tok, iv) : parse_real(tok, v);
        if (p == Parse::invalid)
          fail(detail::concat("value ", quoted(tok), " is not ",
                              field_ == Field::integer ? "an integer" : "a real number"));
        if (p == Parse::out_of_range)
          fail(detail::concat("value ", quoted(tok), " out of the range of ",
                              field_ == Field::integer ? "int64" : "double"));
      }
      if (!next_token(rest).empty()) fail("too many fields" + expected_fields());
      add(r, c, v, iv);
      if (r != c && symmetry_ == Symmetry::symmetric) add(c, r, v, iv);
      if (symmetry_ == Symmetry::skew) {
        if (r == c)
          fail(detail::concat("diagonal entry (", r + 1, ",", c + 1,
                              ") in a skew-symmetric matrix"));
        if (field_ == Field::integer && iv == std::numeric_limits<std::int64_t>::min())
          fail(detail::concat("value ", iv, " cannot be negated for the mirrored entry"));
        add(c, r, -v, -iv);
      }
      const auto done = static_cast<std::int64_t>(lines_.pos());
      if (options_.progress && done >= next_report) {
        options_.progress(done, total_);
        next_report = done + step;
      }
    }
    if (seen < nnz_)
      fail(detail::concat("file ends after ", seen, " of the ", nnz_, " declared entries"));
    if (options_.progress) options_.progress(total_, total_);
  }

  HostCoo build() {
    const auto n = static_cast<std::int64_t>(rows_.size());
    // Sort by absolute index row*ncols + col (fits int64: nrows*ncols was checked); stable so
    // that duplicates keep their file order.
    std::vector<std::int64_t> key(static_cast<std::size_t>(n));
    for (std::int64_t k = 0; k < n; ++k)
      key[static_cast<std::size_t>(k)] = rows_[static_cast<std::size_t>(k)] * ncols_ +
                                         cols_[static_cast<std::size_t>(k)];
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), std::int64_t{0});
    if (!std::is_sorted(key.begin(), key.end()))
      std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
        return key[static_cast<std::size_t>(a)] < key[static_cast<std::size_t>(b)];
      });
    bool unique = true;
    for (std::int64_t k = 1; k < n && unique; ++k)
      unique = key[static_cast<std::size_t>(order[static_cast<std::size_t>(k - 1)])] !=
               key[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])];

    CooDesc d;
    d.nrows = nrows_;
    d.ncols = ncols_;
    d.nnz = n;
    const std::int64_t i32_limit = std::int64_t{1} << 31;
    d.index = nrows_ <= i32_limit && ncols_ <= i32_limit ? IndexType::i32 : IndexType::i64;
    d.dtype = field_ == Field::integer ? DType::i64 : DType::f64;
    d.canonical = unique;
    HostCoo m(d);
    auto* rows = static_cast<std::byte*>(m.rows());
    auto* cols = static_cast<std::byte*>(m.cols());
    auto* vals = static_cast<std::byte*>(m.vals());
    const std::size_t isz = index_size(d.index);
    for (std::int64_t k = 0; k < n; ++k) {
      const auto src = static_cast<std::size_t>(order[static_cast<std::size_t>(k)]);
      const auto dst = static_cast<std::size_t>(k);
      if (d.index == IndexType::i32) {
        detail::store_raw(rows + dst * isz, static_cast<std::int32_t>(rows_[src]));
        detail::store_raw(cols + dst * isz, static_cast<std::int32_t>(cols_[src]));
      } else {
        detail::store_raw(rows + dst * isz, rows_[src]);
        detail::store_raw(cols + dst * isz, cols_[src]);
      }
      if (field_ == Field::integer) detail::store_raw(vals + dst * 8, ivals_[src]);
      else detail::store_raw(vals + dst * 8, vals_[src]);
    }
    return m;
  }

  Lines lines_;
  const std::string& name_;
  const MtxReadOptions& options_;
  std::int64_t total_;
  Field field_ = Field::real;
  Symmetry symmetry_ = Symmetry::general;
  std::int64_t nrows_ = 0, ncols_ = 0, nnz_ = 0;
  std::vector<std::int64_t> rows_, cols_, ivals_;
  std::vector<double> vals_;
};

}  // namespace

HostCoo parse_mtx(std::string_view text, const std::string& name, const MtxReadOptions& options) {
  return MtxParser(text, name, options).parse();
}

HostCoo read_mtx(const std::string& path, const MtxReadOptions& options) {
  detail::InputFile f(path);
  const std::string text = f.read_all();
  return parse_mtx(text, path, options);
}

void write_mtx(const std::string& path, const CooView& matrix, cudaStream_t stream) {
  check_view(matrix, "COO matrix");
  const HostCoo staged = matrix.memory == Memory::host ? HostCoo() : to_host(matrix, stream);
  const CooView m = matrix.memory == Memory::host ? matrix : staged.view();
  const CooDesc& d = m.desc;
  const bool integer = d.dtype == DType::i32 || d.dtype == DType::i64;
  const std::size_t isz = index_size(d.index), vsz = dtype_size(d.dtype);
  const auto index_at = [&](const void* base, std::int64_t k) -> std::int64_t {
    const auto* p = static_cast<const std::byte*>(base) + static_cast<std::size_t>(k) * isz;
    return d.index == IndexType::i32 ? detail::load_raw<std::int32_t>(p)
                                     : detail::load_raw<std::int64_t>(p);
  };

  detail::AtomicOutputFile out(path);
  out.write(detail::concat("%%MatrixMarket matrix coordinate ", integer ? "integer" : "real",
                           " general\n", d.nrows, " ", d.ncols, " ", d.nnz, "\n"));
  char line[96];  // two int64 (<= 20 chars each), a double (<= 24) and separators
  for (std::int64_t k = 0; k < d.nnz; ++k) {
    const std::int64_t r = index_at(m.rows, k), c = index_at(m.cols, k);
    EWISE_EXPECTS(r >= 0 && r < d.nrows && c >= 0 && c < d.ncols, path, ": entry ", k, " (", r,
                  ",", c, ") is outside the ", d.nrows, "x", d.ncols, " matrix");
    char* p = line;
    const auto put = [&](auto value, char sep) {  // leaves room for the separator
      p = std::to_chars(p, line + sizeof line - 1, value).ptr;
      *p++ = sep;
    };
    const auto* v = static_cast<const std::byte*>(m.vals) + static_cast<std::size_t>(k) * vsz;
    put(r + 1, ' ');
    put(c + 1, ' ');
    if (integer) put(detail::load_int(d.dtype, v), '\n');
    else put(detail::load_double(d.dtype, v), '\n');
    out.write(line, static_cast<std::size_t>(p - line));
  }
  out.commit();
}

}  // namespace ewise::io
