// fuzz/target.cpp — one libFuzzer target per entry of fuzz/entries.hpp, chosen at compile time
// with -DEWISE_FUZZ_ENTRY=npy_entry (or mtx_entry, plan_entry, api_entry). Built by scripts/fuzz.sh.
// A broken invariant (fuzz::Violation) aborts with its message; any exception other than
// ewise::Error escapes and aborts too; both are crashes to libFuzzer.
#include <cstdio>
#include <cstdlib>

#include "entries.hpp"

#ifndef EWISE_FUZZ_ENTRY
#error "define EWISE_FUZZ_ENTRY to npy_entry, mtx_entry, plan_entry or api_entry"
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)ewise::fuzz::EWISE_FUZZ_ENTRY(data, size);
  } catch (const ewise::fuzz::Violation& v) {
    std::fprintf(stderr, "ewise fuzz: invariant violated: %s\n", v.what());
    std::abort();
  }
  return 0;
}
