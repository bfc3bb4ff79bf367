// fuzz/entries_api.cpp — the api fuzz entry (see entries.hpp): one decoded public call
// (api_call.hpp) on host views, checked bit for bit against the oracle (api_oracle.hpp).
#include <algorithm>
#include <cstring>
#include <string>
#include <tuple>

#include "api_call.hpp"
#include "api_oracle.hpp"
#include "entries.hpp"
#include "internal.hpp"

namespace ewise::fuzz {
namespace {

std::string first_difference(const Bytes& got, const Bytes& want, std::size_t elem) {
  if (got.size() != want.size())
    return detail::concat(got.size(), " bytes, want ", want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      const std::size_t k = i / elem, n = std::min(elem, got.size() - k * elem);
      std::uint64_t g = 0, w = 0;
      std::memcpy(&g, got.data() + k * elem, n);
      std::memcpy(&w, want.data() + k * elem, n);
      return detail::concat("element ", k, ": got bits 0x", std::hex, g, ", want 0x", w);
    }
  return {};
}

Bytes bytes_of(const void* p, std::size_t n) {
  Bytes b(n);
  if (n) std::memcpy(b.data(), p, n);
  return b;
}

void check(const ApiCall& c, const Expected& e, const ApiResult& r) {
  const std::string call = c.str();
  EWISE_FUZZ_REQUIRE(r.rejected == !e.valid, "ewise ", r.rejected ? "rejected" : "accepted",
                     " a call the oracle says is ", e.valid ? "valid" : "invalid",
                     r.rejected ? " (" + r.error + ")" : std::string(), "\n", call);
  const std::size_t elem = dtype_size(c.dtype);
  const std::string arena = first_difference(r.arena, e.arena, elem);
  EWISE_FUZZ_REQUIRE(arena.empty(), "dense arena after the call: ", arena, "\n", call);
  if (!e.out_vals.empty() || !r.out_vals.empty()) {
    const std::string d = first_difference(r.out_vals, e.out_vals, dtype_size(c.out_vals_dtype));
    EWISE_FUZZ_REQUIRE(d.empty(), "out_vals after the call: ", d, "\n", call);
  }
  if (r.rejected) return;
  EWISE_FUZZ_REQUIRE(r.has_coo == e.has_coo && r.has_tensor == e.has_tensor, "result kind\n", call);
  if (e.has_coo) {
    const CooDesc& g = r.coo.desc();
    EWISE_FUZZ_REQUIRE(g.nrows == e.coo.nrows && g.ncols == e.coo.ncols && g.nnz == e.coo.nnz &&
                           g.index == e.coo.index && g.dtype == e.coo.dtype && g.canonical,
                       "result ", g.str(), ", want ", e.coo.str(), "\n", call);
    const std::size_t n = static_cast<std::size_t>(g.nnz), is = index_size(g.index);
    for (const auto& [got, want, size, what] :
         {std::tuple{r.coo.rows(), &e.rows, is, "rows"}, std::tuple{r.coo.cols(), &e.cols, is, "cols"},
          std::tuple{r.coo.vals(), &e.vals, dtype_size(g.dtype), "vals"}}) {
      const std::string d = first_difference(bytes_of(got, n * size), *want, size);
      EWISE_FUZZ_REQUIRE(d.empty(), "result ", what, ": ", d, "\n", call);
    }
  }
  if (e.has_tensor) {
    const TensorDesc& g = r.tensor.desc();
    EWISE_FUZZ_REQUIRE(g.dtype == e.tensor_dtype && g.shape == e.tensor_shape && g.is_contiguous(),
                       "result tensor ", g.str(), ", want ", dtype_name(e.tensor_dtype),
                       e.tensor_shape.str(), "\n", call);
    const std::string d = first_difference(bytes_of(r.tensor.data(), e.tensor.size()), e.tensor,
                                           dtype_size(g.dtype));
    EWISE_FUZZ_REQUIRE(d.empty(), "result tensor: ", d, "\n", call);
  }
}

}  // namespace

Outcome api_entry(const std::uint8_t* data, std::size_t size) {
  const ApiCall c = decode_api_call(data, size);
  const Expected want = api_oracle(c);
  const ApiResult got = run_api_call(c, Memory::host);
  check(c, want, got);
  return got.rejected ? Outcome::rejected : Outcome::accepted;
}

}  // namespace ewise::fuzz
