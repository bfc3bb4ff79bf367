// End-to-end tests of `ewise compare` (see test_cli.hpp), on the CPU backend.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_cli.hpp"

namespace ewise::test {
namespace {

/// The lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

/// How many times `what` occurs in `text`.
std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(CliTest, CompareTableJsonAndVerdictForAShape) {
  struct Case {
    std::string op, dtype, form;
  };
  for (const Case& c : {Case{"multiply", "f32", "COO*COO"}, Case{"add", "f16", "COO+COO"},
                        Case{"minimum", "i32", "COO+COO"}, Case{"sub", "bf16", "COO+COO"}}) {
    const Result r = run({"compare", "--shape", "64x48", "--op", c.op, "--dtype", c.dtype,
                          "--density", "0.5,0.01,0.1", "--device", "cpu", "--json", "r.json"});
    ASSERT_EQ(r.status, 0) << c.op << ": " << r.err << r.out;
    const std::vector<std::string> lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 7u) << r.out;  // the header, the column names, 3 rows, 2 verdicts
    EXPECT_NE(lines[0].find("CPU reference"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(c.dtype + " 64x48"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("EWISE_SEED="), std::string::npos) << lines[0];
    // Densities ascending, each verified against the dense result.
    EXPECT_EQ(lines[2].rfind("1%", 0), 0u) << lines[2];
    EXPECT_EQ(lines[3].rfind("10%", 0), 0u) << lines[3];
    EXPECT_EQ(lines[4].rfind("50%", 0), 0u) << lines[4];
    EXPECT_EQ(count_of(r.out, "ok (= dense)"), 3u) << r.out;
    EXPECT_EQ(lines[5].rfind(c.form + " is ", 0), 0u) << lines[5];
    EXPECT_EQ(lines[6].rfind(c.form + " with the conversions is ", 0), 0u) << lines[6];
    const std::string json = slurp(dir_ / "r.json");
    EXPECT_EQ(count_of(json, "\"density\": "), 3u) << json;
    EXPECT_EQ(count_of(json, "\"verified\": true"), 3u) << json;
    EXPECT_NE(json.find("\"shape\": [64, 48]"), std::string::npos) << json;
    EXPECT_NE(json.find("\"dtype\": \"" + c.dtype + "\""), std::string::npos) << json;
    EXPECT_NE(json.find("\"crossover\": "), std::string::npos) << json;
    EXPECT_NE(json.find("\"verdict\": \"" + c.form), std::string::npos) << json;
  }
  // Replayed with the printed seed: the same nnz in every row.
  const Result a = run({"compare", "--shape", "40x40", "--density", "0.2", "--device", "cpu"});
  const std::string line0 = lines_of(a.out).at(0);
  const std::string seed = line0.substr(line0.find("EWISE_SEED=") + 11);
  ASSERT_EQ(a.status, 0) << a.err;
  const std::string replay = "EWISE_SEED=" + seed.substr(0, seed.find(' ')) + " ";
  const int raw = std::system(("cd " + shell_quote(dir_.string()) + " && " + replay +
                               shell_quote(EWISE_CLI_PATH) +
                               " compare --shape 40x40 --density 0.2 --device cpu > replay.txt")
                                  .c_str());
  ASSERT_EQ(raw, 0);
  const std::vector<std::string> again = lines_of(slurp(dir_ / "replay.txt"));
  ASSERT_GE(again.size(), 3u);
  EXPECT_EQ(again[2].substr(0, 43), lines_of(a.out).at(2).substr(0, 43));  // density and nnz
}

TEST_F(CliTest, CompareAMatrixFile) {
  const HostCoo a = write_random_mtx("a.mtx", 30, 41, 0.1, DType::f64);
  write_random_mtx("b.mtx", 30, 41, 0.3, DType::f64);
  write_random_mtx("t.mtx", 41, 30, 0.3, DType::f64);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"compare", "a.mtx", "--device", "cpu"},
        std::vector<std::string>{"compare", "a.mtx", "b.mtx", "--op", "max", "--device", "cpu"}}) {
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << r.err << r.out;
    const std::vector<std::string> lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 5u) << r.out;  // the header, the column names, 1 row, 2 verdicts
    EXPECT_NE(lines[0].find("A = a.mtx"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find("f64 30x41"), std::string::npos) << lines[0];
    EXPECT_NE(lines[2].find(" " + std::to_string(a.nnz()) + " "), std::string::npos) << lines[2];
    EXPECT_NE(lines[2].find("ok (= dense)"), std::string::npos) << lines[2];
    EXPECT_NE(lines[3].find("than dense at "), std::string::npos) << lines[3];
  }
  expect_error(run({"compare", "a.mtx", "t.mtx", "--device", "cpu", "--json", "r.json"}), 1,
               "a.mtx is 30x41 but t.mtx is 41x30", "r.json");
  expect_error(run({"compare", "missing.mtx", "--device", "cpu", "--json", "r.json"}), 1,
               "missing.mtx: cannot open", "r.json");
}

TEST_F(CliTest, CompareRefusesBadCommandLinesBeforeAnything) {
  const auto compare = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "compare");
    args.insert(args.end(), {"--device", "cpu", "--json", "r.json"});
    return run(args);
  };
  write_random_mtx("a.mtx", 5, 5, 0.5, DType::f64);
  expect_error(compare({"--shape", "8x8", "--density", "0"}), 2, "'0' is not a density in (0, 1]",
               "r.json");
  expect_error(compare({"--shape", "8x8", "--density", "0.1,1.5"}), 2, "'1.5' is not a density",
               "r.json");
  expect_error(compare({"--shape", "8x8", "--density", "dense"}), 2, "'dense' is not a density",
               "r.json");
  expect_error(compare({"--shape", "8x8", "--density", "nan"}), 2, "'nan' is not a density",
               "r.json");
  expect_error(compare({"--shape", "8x0"}), 2, "--shape 8x0: expected ROWSxCOLS", "r.json");
  expect_error(compare({"--shape", "64"}), 2, "--shape 64: expected ROWSxCOLS", "r.json");
  expect_error(compare({"--shape", "8x8", "--dtype", "u8"}), 2,
               "--dtype u8: COO values are f16, bf16, f32, f64, i32 or i64", "r.json");
  expect_error(compare({"--shape", "8x8", "--dtype", "float7"}), 2, "float7", "r.json");
  expect_error(compare({"--shape", "8x8", "--op", "divide"}), 2,
               "unknown sparse operation 'divide'", "r.json");
  expect_error(compare({}), 2, "compare needs --shape RxC or a matrix file", "r.json");
  expect_error(compare({"a.mtx", "--shape", "8x8"}), 2, "exclude each other", "r.json");
  expect_error(compare({"a.mtx", "--density", "0.1"}), 2, "are those of the matrix file",
               "r.json");
  expect_error(run({"compare", "--shape", "8x8", "--device", "tpu", "--json", "r.json"}), 2,
               "unknown device 'tpu'", "r.json");
  // A dense form that does not fit: refused before anything is allocated, the library's
  // message quoted after the option (one "ewise: ", at the start).
  expect_error(compare({"--shape", "3000000x3000000", "--dtype", "f64"}), 2,
               "--shape 3000000x3000000: compare: 3000000x3000000 f64: the dense forms need",
               "r.json");
}

TEST_F(CliTest, ComparePlotsThroughPython) {
#ifndef EWISE_PYTHON_PATH
  GTEST_SKIP() << "the Python package is not built (EWISE_BUILD_PYTHON=OFF): --plot runs it";
#else
  const std::string python_path = EWISE_PYTHON_PATH;
  // A stand-in matplotlib that records what is drawn into the "PNG" it saves: the test checks the
  // CLI's hand-over to ewise._compare (the real plot is looked at in docs/benchmarks.md's runs).
  fs::create_directories(dir_ / "stub" / "matplotlib");
  std::ofstream(dir_ / "stub" / "matplotlib" / "__init__.py") << "def use(backend):\n    pass\n";
  std::ofstream(dir_ / "stub" / "matplotlib" / "pyplot.py")
      << "calls = []\n"
         "class Recorder:\n"
         "    def __getattr__(self, name):\n"
         "        return lambda *a, **k: calls.append((name, a, k)) or (0, 1)\n"
         "class Figure(Recorder):\n"
         "    def savefig(self, path, **k):\n"
         "        open(path, 'w').write(repr(calls))\n"
         "def subplots(**k):\n"
         "    return Figure(), Recorder()\n"
         "def close(fig):\n"
         "    pass\n";
  const std::string with_stub = "PYTHONPATH=" + shell_quote(path("stub") + ":" + python_path);
  const Result r = run({"compare", "--shape", "32x32", "--density", "0.1,0.5", "--device", "cpu",
                        "--op", "add", "--plot", "p.png"},
                       with_stub);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string drawn = slurp(dir_ / "p.png");
  EXPECT_NE(drawn.find("'dense'"), std::string::npos) << drawn;      // the dense line
  EXPECT_NE(drawn.find("COO\u2295COO"), std::string::npos) << drawn;  // the union's
  EXPECT_NE(drawn.find("set_xscale', ('log',)"), std::string::npos) << drawn;
  EXPECT_NE(drawn.find("COO+COO is "), std::string::npos) << drawn;  // the verdict as title
  EXPECT_FALSE(exists("p.png.rows.json"));
  // Where python3 cannot import matplotlib (none on PYTHONPATH), refused before anything runs.
  const bool real = std::system("python3 -c 'import matplotlib' >/dev/null 2>&1") == 0;
  if (!real)
    expect_error(run({"compare", "--shape", "32x32", "--device", "cpu", "--plot", "q.png"},
                     "PYTHONPATH=" + shell_quote(python_path)),
                 2, "--plot q.png needs python3 with the ewise package", "q.png");
#endif
}

}  // namespace
}  // namespace ewise::test
