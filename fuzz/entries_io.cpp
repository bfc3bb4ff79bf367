// fuzz/entries_io.cpp — the npy and mtx fuzz entries (see entries.hpp for what each checks).
// Host code only; compiled into the libFuzzer targets and the corpus regression test.
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <utility>
#include <vector>

#include "element.hpp"
#include "entries.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "internal.hpp"

namespace ewise::fuzz {
namespace {

/// A per-process scratch file for the write -> read round trips, removed on destruction.
class ScratchFile {
 public:
  explicit ScratchFile(const char* ext)
      : path_((std::filesystem::temp_directory_path() /
               ("ewise-fuzz-" + std::to_string(static_cast<long>(getpid())) + ext))
                  .string()) {}
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  ~ScratchFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

// ---- npy ------------------------------------------------------------------------------------

/// The C-order tensor whose column-major (Fortran) bytes are `src`.
std::vector<std::uint8_t> fortran_gather(const std::uint8_t* src, const Dims& shape,
                                         std::size_t elem) {
  const std::int64_t n = shape.product();
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n) * elem);
  Dims coord = Dims::of_rank(shape.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t off = 0, stride = 1;  // column-major offset of coord
    for (int d = 0; d < shape.size(); ++d) {
      off += coord[d] * stride;
      stride *= shape[d];
    }
    std::memcpy(out.data() + static_cast<std::size_t>(i) * elem,
                src + static_cast<std::size_t>(off) * elem, elem);
    for (int d = shape.size() - 1; d >= 0; --d) {  // next coordinate in row-major order
      if (++coord[d] < shape[d]) break;
      coord[d] = 0;
    }
  }
  return out;
}

void require_same_tensor(const HostTensor& got, const HostTensor& want, const char* what) {
  EWISE_FUZZ_REQUIRE(got.dtype() == want.dtype() && got.shape() == want.shape(), what, ": read back ",
          got.desc().str(), " for ", want.desc().str());
  EWISE_FUZZ_REQUIRE(got.bytes() == want.bytes() &&
              (got.bytes() == 0 || std::memcmp(got.data(), want.data(), got.bytes()) == 0),
          what, ": data differs after the round trip of ", want.desc().str());
}

void check_npy(const HostTensor& t, const std::uint8_t* data, std::size_t size) {
  EWISE_FUZZ_REQUIRE(t.desc().rank() <= kMaxRank, "rank ", t.desc().rank(), " over the maximum");
  EWISE_FUZZ_REQUIRE(t.desc().is_contiguous(), "result is not contiguous: ", t.desc().str());
  const auto nbytes = static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype());
  EWISE_FUZZ_REQUIRE(t.bytes() == nbytes, "tensor ", t.desc().str(), " holds ", t.bytes(), " bytes, expected ",
          nbytes);
  EWISE_FUZZ_REQUIRE(nbytes <= size, "tensor of ", nbytes, " bytes from an input of ", size, " bytes");
  if (nbytes == 0) return;
  const std::uint8_t* tail = data + (size - nbytes);
  if (std::memcmp(t.data(), tail, nbytes) == 0) return;  // C order
  const auto gathered = fortran_gather(tail, t.shape(), dtype_size(t.dtype()));
  EWISE_FUZZ_REQUIRE(std::memcmp(t.data(), gathered.data(), nbytes) == 0, "data of ", t.desc().str(),
          " is neither the file's last ", nbytes, " bytes nor their Fortran-order gather");
}

void roundtrip_npy(const HostTensor& t) {
  const ScratchFile file(".npy");
  const std::pair<io::NpyWriteOptions, const char*> variants[] = {
      {{}, "write_npy (default) -> read_npy"},
      {{3, true}, "write_npy (version 3, Fortran order) -> read_npy"}};
  for (const auto& [options, what] : variants) {
    try {
      io::write_npy(file.path(), t.view(), options);
      require_same_tensor(io::read_npy(file.path()), t, what);
    } catch (const Error& e) {
      EWISE_FUZZ_REQUIRE(false, what, " failed on a tensor the reader produced (", t.desc().str(),
              "): ", e.what());
    }
  }
}

// ---- mtx ------------------------------------------------------------------------------------

std::int64_t index_at(const HostCoo& m, const void* base, std::int64_t k) {
  const auto* p = static_cast<const std::byte*>(base) +
                  static_cast<std::size_t>(k) * index_size(m.desc().index);
  return m.desc().index == IndexType::i32 ? detail::load_raw<std::int32_t>(p)
                                          : detail::load_raw<std::int64_t>(p);
}

void check_mtx(const HostCoo& m, std::size_t size) {
  const CooDesc& d = m.desc();
  EWISE_FUZZ_REQUIRE(d.dtype == DType::f64 || d.dtype == DType::i64, "dtype ", dtype_name(d.dtype),
          " from a .mtx file");
  const std::int64_t i32_limit = std::int64_t{1} << 31;
  const IndexType want_index =
      d.nrows <= i32_limit && d.ncols <= i32_limit ? IndexType::i32 : IndexType::i64;
  EWISE_FUZZ_REQUIRE(d.index == want_index, "index type ", index_name(d.index), " for ", d.str());
  EWISE_FUZZ_REQUIRE(d.nnz >= 0 && static_cast<std::uint64_t>(d.nnz) <= size, "nnz ", d.nnz,
          " from an input of ", size, " bytes");
  try {
    d.validate();
  } catch (const Error& e) {
    EWISE_FUZZ_REQUIRE(false, "the reader returned an invalid descriptor ", d.str(), ": ", e.what());
  }
  bool unique = true;
  std::int64_t prev = -1;
  for (std::int64_t k = 0; k < d.nnz; ++k) {
    const std::int64_t r = index_at(m, m.rows(), k), c = index_at(m, m.cols(), k);
    EWISE_FUZZ_REQUIRE(r >= 0 && r < d.nrows && c >= 0 && c < d.ncols, "entry ", k, " (", r, ",", c,
            ") outside ", d.str());
    const std::int64_t key = r * d.ncols + c;
    EWISE_FUZZ_REQUIRE(key >= prev, "entry ", k, " (", r, ",", c, ") is out of order in ", d.str());
    unique = unique && key != prev;
    prev = key;
  }
  EWISE_FUZZ_REQUIRE(d.canonical == unique, "canonical flag ", d.canonical, " but the entries ",
          unique ? "have no duplicates" : "have duplicates");
}

bool same_value(DType t, const void* a, const void* b) {
  if (t == DType::f64) {
    double x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  }
  return std::memcmp(a, b, dtype_size(t)) == 0;
}

void roundtrip_mtx(const HostCoo& m) {
  const ScratchFile file(".mtx");
  try {
    io::write_mtx(file.path(), m.view());
    const HostCoo back = io::read_mtx(file.path());
    const CooDesc &w = m.desc(), &g = back.desc();
    EWISE_FUZZ_REQUIRE(g.nrows == w.nrows && g.ncols == w.ncols && g.nnz == w.nnz && g.index == w.index &&
                g.dtype == w.dtype && g.canonical == w.canonical,
            "write_mtx -> read_mtx gave ", g.str(), " for ", w.str());
    const std::size_t vb = dtype_size(w.dtype);
    for (std::int64_t k = 0; k < w.nnz; ++k) {
      const auto o = static_cast<std::size_t>(k);
      EWISE_FUZZ_REQUIRE(index_at(back, back.rows(), k) == index_at(m, m.rows(), k) &&
                  index_at(back, back.cols(), k) == index_at(m, m.cols(), k),
              "write_mtx -> read_mtx moved entry ", k, " of ", w.str());
      EWISE_FUZZ_REQUIRE(same_value(w.dtype, static_cast<const std::byte*>(back.vals()) + o * vb,
                         static_cast<const std::byte*>(m.vals()) + o * vb),
              "write_mtx -> read_mtx changed the value of entry ", k, " of ", w.str());
    }
  } catch (const Error& e) {
    EWISE_FUZZ_REQUIRE(false, "write_mtx -> read_mtx failed on a matrix the reader produced (",
            m.desc().str(), "): ", e.what());
  }
}
}  // namespace

Outcome npy_entry(const std::uint8_t* data, std::size_t size) {
  HostTensor t;
  try {
    t = io::parse_npy(data, size, "fuzz.npy");
  } catch (const Error&) {
    return Outcome::rejected;
  }
  check_npy(t, data, size);
  roundtrip_npy(t);
  return Outcome::accepted;
}

Outcome mtx_entry(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::int64_t last = 0, calls = 0;
  io::MtxReadOptions options;
  options.progress = [&](std::int64_t done, std::int64_t total) {
    EWISE_FUZZ_REQUIRE(total == static_cast<std::int64_t>(size), "progress total ", total, " for ", size,
            " bytes");
    EWISE_FUZZ_REQUIRE(done >= last && done <= total, "progress went from ", last, " to ", done, " of ",
            total);
    last = done;
    ++calls;
  };
  HostCoo m;
  try {
    m = io::parse_mtx(text, "fuzz.mtx", options);
  } catch (const Error&) {
    return Outcome::rejected;
  }
  EWISE_FUZZ_REQUIRE(calls >= 1 && calls <= 110, "progress called ", calls, " times");
  EWISE_FUZZ_REQUIRE(last == static_cast<std::int64_t>(size), "progress ended at ", last, " of ", size);
  check_mtx(m, size);
  roundtrip_mtx(m);
  return Outcome::accepted;
}
}  // namespace ewise::fuzz
