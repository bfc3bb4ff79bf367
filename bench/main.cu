// ewise_bench — benchmarks of ewise's dense and sparse operations (method and results:
// docs/benchmarks.md). Every case is verified against the CPU reference before it is timed.
//
//   ewise_bench [--suite NAME[,NAME...]] [--quick] [--runs N] [--json FILE] [--csv FILE]
//               [--inputs DIR]
//
// Suites: paper, schedules, patterns, ml_shapes, small, sparse, crossover, structures, union,
// mixed, rows
// (default: all, in that order).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ewise/device.hpp"
#include "ewise/error.hpp"
#include "ewise/verify.hpp"
#include "harness.hpp"
#include "suites.hpp"

namespace {

using ewise::bench::Bench;
using ewise::bench::Case;
using SuiteFn = std::vector<Case> (*)(Bench&);

const std::pair<const char*, SuiteFn> kSuites[] = {
    {"paper", ewise::bench::paper_suite},       {"schedules", ewise::bench::schedules_suite},
    {"patterns", ewise::bench::patterns_suite}, {"ml_shapes", ewise::bench::ml_shapes_suite},
    {"small", ewise::bench::small_suite},
    {"sparse", ewise::bench::sparse_suite},     {"crossover", ewise::bench::crossover_suite},
    {"structures", ewise::bench::structures_suite}, {"union", ewise::bench::union_suite},
    {"mixed", ewise::bench::mixed_suite},       {"rows", ewise::bench::rows_suite},
};

void usage(FILE* f) {
  std::fprintf(f,
               "usage: ewise_bench [--suite NAME[,NAME...]] [--quick] [--runs N] [--json FILE] "
               "[--csv FILE] [--inputs DIR] [--case TEXT]\n"
               "  --suite   suites to run (default all):");
  for (const auto& s : kSuites) std::fprintf(f, " %s", s.first);
  std::fprintf(f,
               "\n  --quick   reduced sizes and sweeps (under a minute)\n"
               "  --runs N  timed samples per case, median reported (default 25, at least 20)\n"
               "  --json F  write all records and the run's facts as JSON\n"
               "  --csv F   write all records as CSV\n"
               "  --inputs D  structures, union suites: write their inputs as .npy files into D (for\n"
               "            bench/peers.py, which reads D from the JSON's meta)\n"
               "  --case T  run only the cases whose label contains T (one case under a profiler)\n"
               "  EWISE_SEED=<n> replays a run's inputs; EWISE_COMMIT=<sha> overrides the commit "
               "printed\n");
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = s.find(',', start);
    out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  ewise::bench::Options options;
  std::vector<std::string> suites;
  std::vector<std::pair<std::string, SuiteFn>> chosen;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto value = [&]() -> std::string {
        EWISE_EXPECTS(i + 1 < argc, arg, " needs a value");
        return argv[++i];
      };
      if (arg == "--suite") {
        for (const std::string& s : split(value())) suites.push_back(s);
      } else if (arg == "--quick") {
        options.quick = true;
      } else if (arg == "--runs") {
        options.runs = std::stoi(value());
        EWISE_EXPECTS(options.runs >= 20, "--runs ", options.runs, " is below 20");
      } else if (arg == "--json") {
        options.json_path = value();
      } else if (arg == "--csv") {
        options.csv_path = value();
      } else if (arg == "--inputs") {
        options.inputs_dir = std::filesystem::absolute(value()).string();
      } else if (arg == "--case") {
        options.case_filter = value();
      } else if (arg == "--help" || arg == "-h") {
        usage(stdout);
        return 0;
      } else {
        EWISE_EXPECTS(false, "unknown argument '", arg, "'");
      }
    }
    if (suites.empty() || (suites.size() == 1 && suites[0] == "all"))
      for (const auto& s : kSuites) suites.push_back(s.first);
    for (const std::string& name : suites) {
      SuiteFn fn = nullptr;
      for (const auto& s : kSuites)
        if (name == s.first) fn = s.second;
      EWISE_EXPECTS(fn != nullptr, "unknown suite '", name, "'");
      chosen.emplace_back(name, fn);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ewise_bench: %s\n", e.what());
    usage(stderr);
    return 2;
  }
  try {
    EWISE_EXPECTS(ewise::gpu_available(), "no GPU: ", ewise::gpu_unavailable_reason());
    options.seed = ewise::verify::seed_from_env_or_random();

    Bench bench(options);
    bench.print_header();
    for (const auto& [name, fn] : chosen) {
      bench.run_suite(name, fn(bench));
      bench.write_outputs();  // after every suite, so a crash later keeps what was measured
    }
    std::printf("\n%d failure(s)\n", bench.failures());
    return bench.failures() == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ewise_bench: %s\n", e.what());
    return 2;
  }
}
