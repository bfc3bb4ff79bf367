// fuzz/entries_plan.cpp — the plan fuzz entry (see entries.hpp): decodes three operands,
// checks plan_binary's plan, executes small plans with reference_binary, then hands the
// operands to the dense planner's checks (entries_dense.cpp). Host code only.
#include <algorithm>
#include <array>
#include <cstring>
#include <iterator>
#include <utility>
#include <vector>

#include "byte_reader.hpp"
#include "element.hpp"
#include "entries.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/detail/compute.hpp"
#include "ewise/dense.hpp"
#include "ewise/error.hpp"
#include "ewise/reference.hpp"
#include "internal.hpp"

namespace ewise::fuzz {
namespace {

std::int64_t decode_extent(ByteReader& in) {
  static constexpr std::int64_t kSmall[8] = {1, 2, 3, 4, 1, 5, 7, 0};
  const std::uint8_t e = in.u8();
  if (e < 232) return kSmall[e % 8];
  if (e < 248) return 8 + (e - 232) * 7;                     // 8 .. 113
  if (e < 252) return std::int64_t{1} << (in.u8() % 63);     // powers of two up to 2^62
  if (e < 254) return (std::int64_t{1} << (in.u8() % 63)) + 1;
  return in.i64();                                           // anything, negative included
}

Dims decode_shape(ByteReader& in) {
  const int rank = in.u8() % (kMaxRank + 1);
  Dims shape = Dims::of_rank(rank, 1);
  for (int d = 0; d < rank; ++d) shape[d] = decode_extent(in);
  return shape;
}

/// Row-major strides of `shape` (saturating instead of overflowing: validation rejects them).
Dims contiguous_strides(const Dims& shape) {
  Dims s = Dims::of_rank(shape.size(), 1);
  std::int64_t step = 1;
  for (int d = shape.size() - 1; d >= 0; --d) {
    s[d] = step;
    if (__builtin_mul_overflow(step, std::max<std::int64_t>(shape[d], 1), &step))
      step = INT64_MAX / 2;
  }
  return s;
}

Dims decode_strides(ByteReader& in, const Dims& shape) {
  const std::uint8_t mode = in.u8() % 8;
  Dims s = contiguous_strides(shape);
  const int r = shape.size();
  switch (mode) {
    case 0:
    case 1:
    case 2: break;  // contiguous
    case 3:         // reversed along every dim
      for (int d = 0; d < r; ++d) s[d] = -s[d];
      break;
    case 4:  // two dims swapped: a transposed view
      if (r >= 2) {
        const int i = in.u8() % r, j = in.u8() % r;
        std::swap(s[i], s[j]);
      }
      break;
    case 5:  // padded rows: the innermost stride 1, the others scaled (saturating)
      for (int d = 0; d + 1 < r; ++d) {
        const int scale = 1 + in.u8() % 3, pad = in.u8() % 2;
        if (__builtin_mul_overflow(s[d], scale, &s[d]) || __builtin_add_overflow(s[d], pad, &s[d]))
          s[d] = INT64_MAX / 2;
      }
      break;
    case 6:  // small arbitrary strides, zero and negative included
      for (int d = 0; d < r; ++d) s[d] = static_cast<std::int64_t>(in.u8() % 17) - 8;
      break;
    default:  // anything
      for (int d = 0; d < r; ++d) s[d] = in.i64();
      break;
  }
  return s;
}

constexpr std::uintptr_t kOutBase = std::uintptr_t{1} << 40;

/// A data address for an input, relative to the output's.
std::uintptr_t decode_address(ByteReader& in, std::size_t elem) {
  const std::uint8_t mode = in.u8() % 8;
  switch (mode) {
    case 0:
    case 1:
    case 2: return kOutBase + (std::uintptr_t{1} << 36) * (mode + 1);  // disjoint
    case 3: return kOutBase;                                          // in place or overlap
    case 4:
    case 5:  // near the output: overlapping or adjacent, possibly misaligned
      return kOutBase + static_cast<std::uintptr_t>(static_cast<std::int64_t>(in.u8()) - 128) *
                            (mode == 4 ? elem : 1);
    case 6: return 0;  // null
    default: return in.u64() & ((std::uintptr_t{1} << 47) - 1);  // any user-space address
  }
}
Dims coord_of(const Dims& shape, std::int64_t i) {
  Dims c = Dims::of_rank(shape.size(), 0);
  for (int d = shape.size() - 1; d >= 0; --d) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

/// Output indices to check: all of a small plan, else the ends, the middle and random ones.
std::vector<std::int64_t> sample_indices(std::int64_t numel, std::uint64_t seed) {
  constexpr std::int64_t kAll = 1024;
  std::vector<std::int64_t> idx;
  if (numel <= kAll) {
    for (std::int64_t i = 0; i < numel; ++i) idx.push_back(i);
    return idx;
  }
  for (std::int64_t i = 0; i < 16; ++i) {
    idx.push_back(i);
    idx.push_back(numel - 1 - i);
    idx.push_back(numel / 2 + i);
  }
  for (int i = 0; i < 64; ++i)
    idx.push_back(static_cast<std::int64_t>(splitmix64(seed) % static_cast<std::uint64_t>(numel)));
  return idx;
}

bool exactly_in_place(const Operand& out, const Operand& in) {
  return out.address == in.address && out.desc.shape == in.desc.shape &&
         out.desc.strides == in.desc.strides && out.desc.dtype == in.desc.dtype &&
         out.memory == in.memory;
}

/// Addresses with room for any byte offset a valid descriptor reaches (< 2^63) added to any
/// address, so the harness's own arithmetic cannot overflow.
__extension__ typedef __int128 Address;
using ByteRanges = std::vector<std::pair<Address, Address>>;

Address element_address(const Operand& op, std::int64_t offset) {
  return static_cast<Address>(op.address) +
         static_cast<Address>(offset) * static_cast<Address>(dtype_size(op.desc.dtype));
}

/// Byte ranges [lo, hi) of every element a tensor reaches at the given offsets, sorted.
ByteRanges element_bytes(const Operand& op, const std::vector<std::int64_t>& offsets) {
  const auto elem = static_cast<Address>(dtype_size(op.desc.dtype));
  ByteRanges r;
  for (const std::int64_t o : offsets) {
    const Address lo = element_address(op, o);
    r.emplace_back(lo, lo + elem);
  }
  std::sort(r.begin(), r.end());
  return r;
}

bool ranges_intersect(const ByteRanges& x, const ByteRanges& y) {
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    if (x[i].second <= y[j].first) ++i;
    else if (y[j].second <= x[i].first) ++j;
    else return true;
  }
  return false;
}

/// Memory for the operands at their decoded relative addresses: byte ranges that overlap share
/// one block, so in-place and overlapping layouts are reproduced exactly.
class Arena {
 public:
  static constexpr std::int64_t kMaxBytes = std::int64_t{1} << 16;

  /// False when the operands' ranges need more than kMaxBytes in all (nothing is allocated).
  bool place(const std::array<const Operand*, 3>& ops) {
    ByteRanges ranges;
    for (const Operand* op : ops)
      ranges.emplace_back(element_address(*op, op->desc.min_offset()),
                          element_address(*op, op->desc.max_offset() + 1));
    std::sort(ranges.begin(), ranges.end());
    Address total = 0;
    for (const auto& [lo, hi] : ranges) {
      if (!blocks_.empty() && lo <= blocks_.back().hi) {
        total += std::max<Address>(hi - blocks_.back().hi, 0);
        blocks_.back().hi = std::max(blocks_.back().hi, hi);
      } else {
        total += hi - lo;
        blocks_.push_back({lo, hi, {}});
      }
      if (total > kMaxBytes) return false;
    }
    for (auto& b : blocks_) b.bytes.resize(static_cast<std::size_t>(b.hi - b.lo));
    return true;
  }
  void fill(std::uint64_t seed) {
    for (auto& b : blocks_)
      for (std::size_t i = 0; i < b.bytes.size(); i += 8) {
        const std::uint64_t r = splitmix64(seed);
        std::memcpy(b.bytes.data() + i, &r, std::min<std::size_t>(8, b.bytes.size() - i));
      }
  }
  /// Clears all but the lowest bit of every byte a bool operand spans (a bool is 0 or 1).
  void make_bool(const Operand& op) {
    const Address lo = element_address(op, op.desc.min_offset()),
                  hi = element_address(op, op.desc.max_offset() + 1);
    for (auto& b : blocks_)
      for (Address a = std::max(lo, b.lo); a < std::min(hi, b.hi); ++a)
        b.bytes[static_cast<std::size_t>(a - b.lo)] &= 1;
  }
  /// The host memory standing for an operand's element (0,...,0).
  void* base(const Operand& op) {
    const Address first = element_address(op, op.desc.min_offset());
    const auto back = static_cast<std::ptrdiff_t>(element_address(op, 0) - first);
    for (auto& b : blocks_)
      if (first >= b.lo && first < b.hi)
        return b.bytes.data() + static_cast<std::ptrdiff_t>(first - b.lo) + back;
    throw Violation("an operand lies outside the arena");
  }
  std::vector<std::vector<std::uint8_t>> snapshot() const {
    std::vector<std::vector<std::uint8_t>> s;
    for (const auto& b : blocks_) s.push_back(b.bytes);
    return s;
  }
  /// Whether any byte outside `keep` (address ranges inside the arena) differs from `before`.
  bool changed_outside(std::vector<std::vector<std::uint8_t>> before,
                       const ByteRanges& keep) const {
    for (const auto& [lo, hi] : keep)
      for (std::size_t k = 0; k < blocks_.size(); ++k)
        if (lo >= blocks_[k].lo && hi <= blocks_[k].hi) {
          const auto at = static_cast<std::size_t>(lo - blocks_[k].lo);
          std::memcpy(before[k].data() + at, blocks_[k].bytes.data() + at,
                      static_cast<std::size_t>(hi - lo));
        }
    for (std::size_t k = 0; k < blocks_.size(); ++k)
      if (before[k] != blocks_[k].bytes) return true;
    return false;
  }

 private:
  struct Block {
    Address lo, hi;
    std::vector<std::uint8_t> bytes;
  };
  std::vector<Block> blocks_;
};

/// out = a op b element by element through `offsets`, from a snapshot: the expected bytes of
/// each output element (or the refusal of the call's dtypes), then reference_binary on the
/// arena, then the comparison; a refused call must write nothing.
void execute_plan(BinaryOp op, const Operand& out, const Operand& a, const Operand& b,
                  const std::array<std::vector<std::int64_t>, 3>& offsets, std::uint64_t seed) {
  Arena arena;
  if (!arena.place({&out, &a, &b})) return;
  arena.fill(seed);
  for (const Operand* o : {&a, &b})
    if (o->desc.dtype == DType::b8) arena.make_bool(*o);
  const DType t = out.desc.dtype;
  const std::size_t elem = dtype_size(t);
  void* po = arena.base(out);
  const void* pa = arena.base(a);
  const void* pb = arena.base(b);
  const ConstTensorView av(pa, a.desc, Memory::host), bv(pb, b.desc, Memory::host);
  const TensorView ov{po, out.desc, Memory::host};
  const auto before = arena.snapshot();
  detail::CallTypes types;
  try {
    types = detail::check_types(op, av, bv, t, Promotion::numpy);
  } catch (const InvalidArgument&) {
    bool refused = false;
    try {
      reference_binary(op, av, bv, ov);
    } catch (const InvalidArgument&) {
      refused = true;
    }
    EWISE_FUZZ_REQUIRE(refused, "reference_binary ", op_name(op), " accepted dtypes check_types refuses: a ",
                       a.desc.str(), ", b ", b.desc.str(), ", out ", out.desc.str());
    EWISE_FUZZ_REQUIRE(!arena.changed_outside(before, {}), "a refused reference_binary wrote");
    return;
  }
  const std::size_t n = offsets[0].size();
  std::vector<std::uint8_t> want(n * elem);
  for (std::size_t i = 0; i < n; ++i) {
    const std::byte* x = detail::element_at(pa, a.desc.dtype, offsets[1][i]);
    const std::byte* y = detail::element_at(pb, b.desc.dtype, offsets[2][i]);
    // One element in the reference's arithmetic: a rank-0 plan, every offset 0.
    reference_binary(types, BroadcastPlan{}, want.data() + i * elem, x, y);
  }
  reference_binary(op, av, bv, ov);
  for (std::size_t i = 0; i < n; ++i)
    EWISE_FUZZ_REQUIRE(std::memcmp(detail::element_at(po, t, offsets[0][i]), want.data() + i * elem, elem) ==
                0,
            "reference_binary ", op_name(op), " wrote a wrong value at output index ", i, " of ",
            out.desc.str(), " (a ", a.desc.str(), ", b ", b.desc.str(), ")");
  EWISE_FUZZ_REQUIRE(!arena.changed_outside(before, element_bytes(out, offsets[0])),
          "reference_binary wrote outside the output ", out.desc.str());
}

void check_plan(const BroadcastPlan& plan, BinaryOp op, const Operand& out, const Operand& a,
                const Operand& b, std::uint64_t seed) {
  const std::array<const Operand*, 3> ops = {&out, &a, &b};
  EWISE_FUZZ_REQUIRE(plan.shape == out.desc.shape, "plan shape ", plan.shape.str(), " is not the output's ",
          out.desc.shape.str());
  const BroadcastPlan co = coalesce(plan);
  const std::int64_t numel = plan.numel();
  EWISE_FUZZ_REQUIRE(co.numel() == numel, "coalesce changed numel from ", numel, " to ", co.numel());
  EWISE_FUZZ_REQUIRE(co.rank() <= std::max(plan.rank(), 1), "coalesce raised the rank from ", plan.rank(),
          " to ", co.rank());
  const std::vector<std::int64_t> idx = sample_indices(numel, seed);
  std::array<std::vector<std::int64_t>, 3> offsets;
  for (const std::int64_t i : idx) {
    const Dims c = coord_of(plan.shape, i);
    for (int k = 0; k < 3; ++k) {
      const TensorDesc& d = ops[static_cast<std::size_t>(k)]->desc;
      const std::int64_t want = offset_at(d, c), got = plan.offset(k, i),
                         merged = co.offset(k, i);
      EWISE_FUZZ_REQUIRE(got == want, "plan offset of operand ", k, " at index ", i, " is ", got,
              ", the descriptor gives ", want, " (", d.str(), ")");
      EWISE_FUZZ_REQUIRE(merged == want, "coalesced plan offset of operand ", k, " at index ", i, " is ",
              merged, ", expected ", want, " (", d.str(), ")");
      EWISE_FUZZ_REQUIRE(want >= d.min_offset() && want <= d.max_offset(), "offset ", want, " of operand ",
              k, " outside its range [", d.min_offset(), ", ", d.max_offset(), "]");
      offsets[static_cast<std::size_t>(k)].push_back(want);
    }
  }
  // The rest needs every index (and at least one).
  if (numel == 0 || numel != static_cast<std::int64_t>(idx.size())) return;
  auto sorted = offsets[0];
  std::sort(sorted.begin(), sorted.end());
  EWISE_FUZZ_REQUIRE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
          "output ", out.desc.str(), " accepted as non-overlapping revisits an element");
  const auto out_bytes = element_bytes(out, offsets[0]);
  for (int k = 1; k < 3; ++k) {
    const Operand& in = *ops[static_cast<std::size_t>(k)];
    if (exactly_in_place(out, in)) continue;
    EWISE_FUZZ_REQUIRE(!ranges_intersect(out_bytes, element_bytes(in, offsets[static_cast<std::size_t>(k)])),
            "output ", out.desc.str(), " shares bytes with input ", k, " ", in.desc.str(),
            " but was accepted");
  }
  execute_plan(op, out, a, b, offsets, seed);
}

}  // namespace

Outcome plan_entry(const std::uint8_t* data, std::size_t size) {
  ByteReader in(data, size);
  const std::uint8_t dtype_byte = in.u8();
  const BinaryOp op = kAllOps[in.u8() % std::size(kAllOps)];
  const bool mixed_dtypes = dtype_byte >= 0xC0;
  const auto dtype_of = [&] {
    return kAllDTypes[(mixed_dtypes ? in.u8() : dtype_byte) % std::size(kAllDTypes)];
  };

  Operand a, b, out;
  a.desc.dtype = dtype_of();
  b.desc.dtype = dtype_of();
  out.desc.dtype = dtype_of();
  a.desc.shape = decode_shape(in);
  b.desc.shape = decode_shape(in);
  const std::uint8_t out_shape_mode = in.u8() % 8;
  if (out_shape_mode == 7) {
    out.desc.shape = decode_shape(in);
  } else if (out_shape_mode == 6) {
    out.desc.shape = a.desc.shape;
  } else {
    try {
      out.desc.shape = broadcast_shapes(a.desc.shape, b.desc.shape);
    } catch (const Error&) {
      out.desc.shape = a.desc.shape;
    }
  }
  a.desc.strides = decode_strides(in, a.desc.shape);
  b.desc.strides = decode_strides(in, b.desc.shape);
  out.desc.strides = decode_strides(in, out.desc.shape);
  out.address = kOutBase;
  a.address = decode_address(in, dtype_size(a.desc.dtype));
  b.address = decode_address(in, dtype_size(b.desc.dtype));
  const std::uint8_t layout = in.u8();  // bits 0-2: in place; the rest: the dense kernel named
  if (layout % 8 == 1) a.desc = out.desc, a.address = out.address;  // exactly in place
  if (layout % 8 == 2) b.desc = out.desc, b.address = out.address;
  if (layout == 0xFF) a.memory = Memory::device;                     // mixed memories
  std::uint64_t seed = in.u64();
  for (std::size_t i = 0; i < size; ++i) seed = seed * 0x100000001B3ull ^ data[i];

  BroadcastPlan plan;
  try {
    plan = plan_binary(a.view(), b.view(), TensorView{reinterpret_cast<void*>(out.address),
                                                      out.desc, out.memory});
  } catch (const Error&) {
    return Outcome::rejected;
  }
  check_plan(plan, op, out, a, b, seed);
  check_dense_plan(plan, out, a, b, kAllKernels[(layout >> 3) % std::size(kAllKernels)], seed);
  return Outcome::accepted;
}

}  // namespace ewise::fuzz
