// Host regression test of the fuzz corpus: every file in fuzz/corpus/<target>/ goes through the
// same entry function as the libFuzzer target (fuzz/entries.hpp, linked from ewise_testing) and
// must give a valid result or a clean ewise::Error — never a broken invariant or another
// exception.
// Hand-made seeds state what they expect in their name: seed-*_rejected.* must be rejected,
// every other seed-* must be accepted; inputs found by fuzzing may go either way.
// Under scripts/asan_host.sh the same replay also runs with AddressSanitizer and
// UndefinedBehaviorSanitizer. EWISE_FUZZ_CORPUS overrides the corpus directory (default: the
// source tree's fuzz/corpus, given by the build as EWISE_FUZZ_CORPUS_DIR).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "entries.hpp"

namespace ewise::fuzz {
namespace {

namespace fs = std::filesystem;

fs::path corpus_root() {
  if (const char* dir = std::getenv("EWISE_FUZZ_CORPUS")) return dir;
  return EWISE_FUZZ_CORPUS_DIR;
}

std::vector<fs::path> corpus_files(const std::string& target) {
  std::vector<fs::path> files;
  const fs::path dir = corpus_root() / target;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

struct Target {
  const char* name;
  Outcome (*entry)(const std::uint8_t*, std::size_t);
};

void PrintTo(const Target& t, std::ostream* os) { *os << t.name; }

class FuzzCorpus : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzCorpus, EveryInputGivesAValidResultOrACleanError) {
  const Target t = GetParam();
  const auto files = corpus_files(t.name);
  // The hand-made seeds alone are more than this; fewer means the corpus went missing.
  ASSERT_GE(files.size(), 10u) << "corpus " << (corpus_root() / t.name) << " is missing";
  int accepted = 0, rejected = 0;
  for (const fs::path& p : files) {
    const std::string name = p.filename().string();
    const auto bytes = read_bytes(p);
    Outcome got = Outcome::rejected;
    try {
      got = t.entry(bytes.data(), bytes.size());
    } catch (const Violation& v) {
      ADD_FAILURE() << name << ": invariant violated: " << v.what();
      continue;
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": escaped with a non-ewise exception: " << e.what();
      continue;
    }
    (got == Outcome::accepted ? accepted : rejected)++;
    if (name.rfind("seed-", 0) == 0) {
      const bool want_rejected = name.find("_rejected.") != std::string::npos;
      EXPECT_EQ(got, want_rejected ? Outcome::rejected : Outcome::accepted)
          << name << " was " << (got == Outcome::accepted ? "accepted" : "rejected");
    }
  }
  std::cout << "[ corpus   ] " << t.name << ": " << files.size() << " inputs, " << accepted
            << " accepted, " << rejected << " rejected\n";
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzCorpus,
                         ::testing::Values(Target{"npy", &npy_entry}, Target{"mtx", &mtx_entry},
                                           Target{"plan", &plan_entry},
                                           Target{"api", &api_entry}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace ewise::fuzz
