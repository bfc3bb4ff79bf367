// fuzz/byte_reader.hpp — the fuzz input read as a stream of bytes (zeros once it is exhausted),
// and the splitmix64 step the entries draw their bulk values from. Shared by the plan entry
// (entries_plan.cpp) and the api decoder (api_decode.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace ewise::fuzz {

class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size) : d_(data), n_(size) {}
  std::uint8_t u8() { return pos_ < n_ ? d_[pos_++] : 0; }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= std::uint64_t{u8()} << (8 * i);
    return v;
  }
  std::int64_t i64() { return static_cast<std::int64_t>(u64()); }

 private:
  const std::uint8_t* d_;
  std::size_t n_, pos_ = 0;
};

/// One splitmix64 step: advances `state` and returns the next 64 random bits.
inline std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace ewise::fuzz
