// End-to-end tests of the `ewise` tool: they write input files, run the built binary, and check
// its outputs against the CPU reference, and that bad inputs give a one-line error, a non-zero
// exit status and no output file. Without a GPU everything runs with --device cpu; the GPU
// cases use EWISE_REQUIRE_GPU().
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "element.hpp"
#include "ewise/broadcast.hpp"
#include "ewise/error.hpp"
#include "ewise/io.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "testing/gpu_test.hpp"
#include "testing/temp_dir_test.hpp"

namespace ewise {
namespace {

namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class CliTest : public test::TempDirTest {
 protected:
  bool exists(const std::string& name) const { return fs::exists(dir_ / name); }

  /// Runs `ewise args...` in the test directory.
  Result run(const std::vector<std::string>& args) const {
    std::string cmd = "cd " + shell_quote(dir_.string()) + " && " + shell_quote(EWISE_CLI_PATH);
    for (const auto& a : args) cmd += " " + shell_quote(a);
    cmd += " >" + shell_quote(path(".stdout")) + " 2>" + shell_quote(path(".stderr"));
    const int raw = std::system(cmd.c_str());
    Result r;
    r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128;
    r.out = slurp(dir_ / ".stdout");
    r.err = slurp(dir_ / ".stderr");
    fs::remove(dir_ / ".stdout");
    fs::remove(dir_ / ".stderr");
    return r;
  }

  /// Expects a failure: the given exit status, one stderr line "ewise: ..." containing `what`,
  /// and no file `output` left in the directory.
  void expect_error(const Result& r, int status, const std::string& what,
                    const std::string& output) const {
    EXPECT_EQ(r.status, status) << r.err;
    EXPECT_EQ(r.err.rfind("ewise: ", 0), 0u) << r.err;
    ASSERT_FALSE(r.err.empty());
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << "'" << r.err << "' lacks '" << what << "'";
    EXPECT_FALSE(exists(output)) << output << " was left behind";
    for (const auto& e : fs::directory_iterator(dir_))
      EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos)
          << "temporary file left: " << e.path();
  }

  HostTensor write_random_npy(const std::string& name, DType t, const Dims& shape,
                              const io::NpyWriteOptions& o = {}) {
    HostTensor x = verify::random_tensor(t, shape, ++seed_);
    io::write_npy(path(name), x.view(), o);
    return x;
  }

  HostCoo write_random_mtx(const std::string& name, std::int64_t r, std::int64_t c,
                           double density, DType t) {
    verify::CooGenOptions o;
    o.dtype = t;
    o.values.lo = -100;
    o.values.hi = 100;
    HostCoo m = verify::random_coo(r, c, density, ++seed_, o);
    io::write_mtx(path(name), m.view());
    return io::read_mtx(path(name));  // what the CLI sees: f64 or i64 values
  }

  void write_text(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
  }

};

void expect_same(const HostTensor& got, const HostTensor& want, const std::string& ctx) {
  ASSERT_EQ(got.dtype(), want.dtype()) << ctx;
  ASSERT_EQ(got.shape(), want.shape()) << ctx;
  const verify::CompareReport r = verify::compare(got.view(), want.view(), verify::Tolerance{});
  EXPECT_TRUE(r.ok()) << ctx << ": " << r.str();
}

HostTensor reference(BinaryOp op, const HostTensor& a, const HostTensor& b) {
  HostTensor want(a.dtype(), broadcast_shapes(a.shape(), b.shape()));
  reference_binary(op, a.view(), b.view(), want.view());
  return want;
}

// ---- general -----------------------------------------------------------------------------

TEST_F(CliTest, HelpVersionAndUsageErrors) {
  Result r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: ewise <command>"), std::string::npos);
  EXPECT_NE(r.out.find("sparse mul A.mtx D.npy"), std::string::npos);
  r = run({"dense", "--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: ewise"), std::string::npos);
  r = run({"--version"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.rfind("ewise ", 0), 0u);
  expect_error(run({}), 2, "no command given", "x");
  expect_error(run({"transpose"}), 2, "unknown command 'transpose'", "x");
  expect_error(run({"dense", "add", "a.npy", "b.npy"}), 2, "needs an output file: -o FILE", "x");
  expect_error(run({"dense", "add", "a.npy", "-o", "c.npy"}), 2, "usage: ewise dense", "c.npy");
  expect_error(run({"dense", "add", "a.npy", "b.npy", "-o", "c.npy", "--fast"}), 2,
               "unknown option '--fast'", "c.npy");
  expect_error(run({"dense", "add", "a.npy", "b.npy", "-o", "c.npy", "--algorithm", "merge"}), 2,
               "--algorithm is not an option of 'dense'", "c.npy");
  expect_error(run({"dense", "add", "a.npy", "b.npy", "-o"}), 2, "-o needs a value", "x");
  expect_error(run({"sparse", "div", "a.mtx", "b.mtx", "-o", "c.mtx"}), 2,
               "unknown sparse operation 'div'", "c.mtx");
  expect_error(run({"sparse", "add", "a.mtx", "d.npy", "-o", "c.mtx"}), 2, "-o FILE.npy",
               "c.mtx");
  expect_error(run({"info", "--device", "cpu"}), 2, "--device is not an option of 'info'", "x");
}

TEST_F(CliTest, InfoDescribesTheGpuOrItsAbsence) {
  const Result r = run({"info"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("kernels:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sort_search"), std::string::npos) << r.out;
  if (gpu_available()) {
    EXPECT_NE(r.out.find("measured copy bandwidth"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" SMs"), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("GPU: none usable"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("CPU reference"), std::string::npos) << r.out;
  }
}

// ---- dense -------------------------------------------------------------------------------

struct DenseShapes {
  Dims a, b;
};
const std::vector<DenseShapes> kDenseShapes = {
    {{257}, {257}},              // same shape, not a multiple of a vector width
    {{64, 33}, {33}},            // bias add
    {{3, 8, 5, 7}, {8, 1, 1}},   // per-channel scale
    {{4, 1, 6, 1}, {1, 5, 1, 3}},  // N-D broadcast both ways
    {{6, 7}, {}},                // scalar
    {{0, 4}, {4}},               // empty
};

TEST_F(CliTest, DenseOnCpuMatchesTheReferenceForEveryOpAndDtype) {
  for (DType t : kAllDTypes)
    for (const auto& s : kDenseShapes)
      for (BinaryOp op : {BinaryOp::add, BinaryOp::div, BinaryOp::max}) {
        const std::string ctx = std::string(op_name(op)) + " " + dtype_name(t) + " " +
                                s.a.str() + " " + s.b.str();
        const HostTensor a = write_random_npy("a.npy", t, s.a);
        const HostTensor b = write_random_npy("b.npy", t, s.b, {2, false});
        const Result r = run({"dense", op_name(op), "a.npy", "b.npy", "-o", "c.npy", "--device",
                              "cpu", "--quiet"});
        ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
        EXPECT_EQ(r.out, "") << ctx << ": --quiet printed something";
        expect_same(io::read_npy(path("c.npy")), reference(op, a, b), ctx);
      }
}

TEST_F(CliTest, DenseReadsFortranOrderAndEveryVersion) {
  const HostTensor a = write_random_npy("a.npy", DType::f64, {5, 6}, {3, true});
  const HostTensor b = write_random_npy("b.npy", DType::f64, {5, 1}, {1, true});
  const Result r = run({"dense", "sub", "a.npy", "b.npy", "-o", "c.npy", "--device", "cpu"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("c.npy: f64 (5,6) = sub(a.npy, b.npy) on the CPU reference"),
            std::string::npos)
      << r.out;
  expect_same(io::read_npy(path("c.npy")), reference(BinaryOp::sub, a, b), "fortran");
}

TEST_F(CliTest, DenseDefaultsToTheGpuOrSaysItUsesTheCpu) {
  const HostTensor a = write_random_npy("a.npy", DType::i32, {40, 3});
  const HostTensor b = write_random_npy("b.npy", DType::i32, {3});
  const Result r = run({"dense", "mul", "a.npy", "b.npy", "-o", "c.npy"});
  ASSERT_EQ(r.status, 0) << r.err;
  if (gpu_available()) {
    EXPECT_NE(r.out.find("on the GPU (kernel "), std::string::npos) << r.out;
  } else {
    EXPECT_NE(r.out.find("on the CPU reference (no usable GPU: "), std::string::npos) << r.out;
    EXPECT_EQ(r.err, "");
  }
  expect_same(io::read_npy(path("c.npy")), reference(BinaryOp::mul, a, b), "default device");
}

TEST_F(CliTest, DenseOnGpuEveryKernelThatRunsMatchesTheReference) {
  EWISE_REQUIRE_GPU();
  for (DType t : kAllDTypes)
    for (const auto& s : kDenseShapes) {
      const HostTensor a = write_random_npy("a.npy", t, s.a);
      const HostTensor b = write_random_npy("b.npy", t, s.b);
      const std::string ctx = std::string(dtype_name(t)) + " " + s.a.str() + " " + s.b.str();
      Result r = run({"dense", "min", "a.npy", "b.npy", "-o", "c.npy", "--device", "gpu",
                      "--verify"});
      ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
      EXPECT_NE(r.out.find("verified against the CPU reference"), std::string::npos) << r.out;
      expect_same(io::read_npy(path("c.npy")), reference(BinaryOp::min, a, b), ctx);
      r = run({"dense", "min", "a.npy", "b.npy", "-o", "g.npy", "--device", "gpu", "--kernel",
               "general"});
      ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
      EXPECT_NE(r.out.find("(kernel general)"), std::string::npos) << r.out;
      expect_same(io::read_npy(path("g.npy")), reference(BinaryOp::min, a, b), ctx + " general");
    }
}

TEST_F(CliTest, DenseErrorsAreOneLineNameTheFileAndLeaveNoOutput) {
  write_random_npy("a.npy", DType::f32, {3, 4});
  write_random_npy("b.npy", DType::f32, {5});
  write_random_npy("d.npy", DType::f64, {4});
  write_random_npy("v.npy", DType::f32, {4});
  const std::vector<std::string> cpu = {"--device", "cpu"};
  const auto dense = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "dense");
    args.insert(args.end(), cpu.begin(), cpu.end());
    return run(args);
  };
  expect_error(dense({"add", "a.npy", "b.npy", "-o", "c.npy"}), 1,
               "a.npy (3,4) and b.npy (5,): cannot broadcast", "c.npy");
  // The default device (the GPU, or the CPU without one) also gives exactly one line.
  expect_error(run({"dense", "add", "a.npy", "b.npy", "-o", "c.npy"}), 1, "cannot broadcast",
               "c.npy");
  expect_error(dense({"add", "a.npy", "d.npy", "-o", "c.npy"}), 1,
               "a.npy holds f32 but d.npy holds f64", "c.npy");
  expect_error(dense({"pow", "a.npy", "v.npy", "-o", "c.npy"}), 1, "unknown operation 'pow'",
               "c.npy");
  expect_error(dense({"add", "a.npy", "missing.npy", "-o", "c.npy"}), 1,
               "missing.npy: cannot open", "c.npy");
  expect_error(dense({"add", "a.npy", "v.npy", "-o", "c.npy", "--kernel", "warp"}), 1,
               "unknown kernel 'warp'", "c.npy");
  expect_error(dense({"add", "a.npy", "v.npy", "-o", "c.npy", "--kernel", "general"}), 1,
               "--kernel general applies to the GPU", "c.npy");
  expect_error(run({"dense", "add", "a.npy", "v.npy", "-o", "c.npy", "--device", "tpu"}), 1,
               "unknown device 'tpu'", "c.npy");
  expect_error(dense({"add", "a.npy", "v.npy", "-o", "no/dir/c.npy"}), 1,
               "no/dir/c.npy: cannot create file", "no");
  // A truncated file: the message names it; an existing output is left as it was.
  const std::string good = slurp(dir_ / "v.npy");
  write_text("t.npy", good.substr(0, good.size() - 3));
  write_text("c.npy", "old");
  const Result r = dense({"add", "a.npy", "t.npy", "-o", "c.npy"});
  expect_error(r, 1, "t.npy: data is truncated", "x");
  EXPECT_EQ(slurp(dir_ / "c.npy"), "old");
  write_text("h.npy", std::string("\x93NUMPY\x01\x00\x10\x00", 10) + "{'descr': '<f4'}");
  expect_error(dense({"add", "h.npy", "v.npy", "-o", "e.npy"}), 1,
               "h.npy: malformed header", "e.npy");
  if (!gpu_available())
    expect_error(run({"dense", "add", "a.npy", "v.npy", "-o", "c2.npy", "--device", "gpu"}), 1,
                 "--device gpu: no usable GPU", "c2.npy");
}

// ---- sparse ------------------------------------------------------------------------------

void expect_same_coo(const HostCoo& got, const HostCoo& want, const std::string& ctx) {
  ASSERT_EQ(got.desc().dtype, want.desc().dtype) << ctx;
  const verify::CooCompareReport r =
      verify::compare_coo(got.view(), want.view(), verify::Tolerance{});
  EXPECT_TRUE(r.ok()) << ctx << ": " << r.str();
  EXPECT_TRUE(r.got_canonical) << ctx;
}

TEST_F(CliTest, SparseCooTimesCooMatchesTheReference) {
  for (double density : {0.0, 0.05, 0.5}) {
    const HostCoo a = write_random_mtx("a.mtx", 30, 41, density, DType::f64);
    const HostCoo b = write_random_mtx("b.mtx", 30, 41, 0.5, DType::f32);
    const Result r = run({"sparse", "mul", "a.mtx", "b.mtx", "-o", "c.mtx", "--device", "cpu"});
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string text = slurp(dir_ / "c.mtx");
    EXPECT_EQ(text.rfind("%%MatrixMarket matrix coordinate real general\n30 41 ", 0), 0u) << text;
    const HostCoo c = io::read_mtx(path("c.mtx"));
    EXPECT_TRUE(c.desc().canonical);
    expect_same_coo(c, reference_multiply(a.view(), b.view()), "density " + std::to_string(density));
  }
}

TEST_F(CliTest, SparseExpandsSymmetricInputAndPromotesIntegerTimesReal) {
  write_text("s.mtx",
             "%%MatrixMarket matrix coordinate integer symmetric\n% comment\n3 3 3\n1 1 2\n"
             "3 1 -3\n3 2 4\n");
  write_text("g.mtx",
             "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 3 0.5\n3 1 2\n2 3 1.5\n"
             "2 2 7\n");
  Result r = run({"sparse", "mul", "s.mtx", "g.mtx", "-o", "c.mtx", "--device", "cpu"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "c.mtx"),
            "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 3 -1.5\n2 3 6\n3 1 -6\n");
  // integer * integer stays integer.
  r = run({"sparse", "mul", "s.mtx", "s.mtx", "-o", "i.mtx", "--device", "cpu"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "i.mtx"),
            "%%MatrixMarket matrix coordinate integer general\n3 3 5\n1 1 4\n1 3 9\n2 3 16\n"
            "3 1 9\n3 2 16\n");
}

TEST_F(CliTest, SparseCooTimesDenseBroadcasts) {
  const HostCoo a = write_random_mtx("a.mtx", 20, 9, 0.3, DType::f64);
  const std::vector<Dims> dense_shapes = {{20, 9}, {9}, {1, 9}, {20, 1}, {}, {1, 1}};
  for (DType t : {DType::f32, DType::f64, DType::i32}) {
    for (const Dims& s : dense_shapes) {
      const std::string ctx = std::string(dtype_name(t)) + " " + s.str();
      const HostTensor d = write_random_npy("d.npy", t, s);
      const Result r = run({"sparse", "mul", "a.mtx", "d.npy", "-o", "c.mtx", "--device", "cpu"});
      ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
      // The CLI computes in f64 here (a real operand); so does the expectation.
      HostTensor d64(DType::f64, s);
      for (std::int64_t i = 0; i < d.numel(); ++i)
        d64.data_as<double>()[i] =
            detail::load_double(t, detail::element_at(d.data(), t, i));
      expect_same_coo(io::read_mtx(path("c.mtx")), reference_multiply(a.view(), d64.view()), ctx);
    }
  }
}

TEST_F(CliTest, SparseOnGpuEveryAlgorithmMatchesTheReference) {
  EWISE_REQUIRE_GPU();
  const HostCoo a = write_random_mtx("a.mtx", 300, 200, 0.05, DType::f64);
  const HostCoo b = write_random_mtx("b.mtx", 300, 200, 0.2, DType::f64);
  const HostCoo want = reference_multiply(a.view(), b.view());
  for (int k = 0; k <= static_cast<int>(CooAlgorithm::hash_merge); ++k) {
    const char* alg = coo_algorithm_name(static_cast<CooAlgorithm>(k));
    const Result r = run({"sparse", "mul", "a.mtx", "b.mtx", "-o", "c.mtx", "--device", "gpu",
                          "--algorithm", alg});
    ASSERT_EQ(r.status, 0) << alg << ": " << r.err;
    EXPECT_NE(r.out.find("on the GPU (algorithm "), std::string::npos) << r.out;
    expect_same_coo(io::read_mtx(path("c.mtx")), want, alg);
  }
  const HostTensor row = write_random_npy("r.npy", DType::f64, {200});
  const Result r = run({"sparse", "mul", "a.mtx", "r.npy", "-o", "s.mtx", "--device", "gpu"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_same_coo(io::read_mtx(path("s.mtx")), reference_multiply(a.view(), row.view()), "row");
}

TEST_F(CliTest, SparseErrorsAreOneLineNameFileAndLineAndLeaveNoOutput) {
  write_random_mtx("a.mtx", 3, 5, 0.5, DType::f64);
  write_random_mtx("t.mtx", 5, 3, 0.5, DType::f64);
  write_random_npy("d.npy", DType::f64, {4});
  write_text("bad.mtx",
             "%%MatrixMarket matrix coordinate real general\n% comments\n%\n3 5 3\n1 1 1.0\n"
             "2 2 2.0\n1 0 3.0\n");
  write_text("short.mtx", "%%MatrixMarket matrix coordinate real general\n3 5 3\n1 1 1.0\n");
  write_text("word.mtx", "%%MatrixMarket matrix coordinate real general\n3 5 1\n1 1 one\n");
  write_text("arr.mtx", "%%MatrixMarket matrix array real general\n3 5\n");
  const auto sparse = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"sparse", "mul"});
    args.insert(args.end(), {"--device", "cpu"});
    return run(args);
  };
  expect_error(sparse({"bad.mtx", "a.mtx", "-o", "c.mtx"}), 1,
               "ewise: bad.mtx:7: column index 0 out of range 1..5", "c.mtx");
  expect_error(sparse({"a.mtx", "short.mtx", "-o", "c.mtx"}), 1,
               "short.mtx:3: file ends after 1 of the 3 declared entries", "c.mtx");
  expect_error(sparse({"word.mtx", "a.mtx", "-o", "c.mtx"}), 1,
               "word.mtx:3: value 'one' is not a real number", "c.mtx");
  expect_error(sparse({"arr.mtx", "a.mtx", "-o", "c.mtx"}), 1, "arr.mtx:1: the dense 'array'",
               "c.mtx");
  expect_error(sparse({"a.mtx", "t.mtx", "-o", "c.mtx"}), 1,
               "a.mtx is 3x5 but t.mtx is 5x3", "c.mtx");
  expect_error(sparse({"a.mtx", "d.npy", "-o", "c.mtx"}), 1, "mul(a.mtx 3x5, d.npy (4,))",
               "c.mtx");
  expect_error(sparse({"a.mtx", "d.npy", "-o", "c.mtx", "--algorithm", "merge"}), 1,
               "--algorithm applies to COO * COO", "c.mtx");
  expect_error(sparse({"a.mtx", "a.mtx", "-o", "c.mtx", "--algorithm", "bogus"}), 1,
               "bogus", "c.mtx");
  expect_error(sparse({"a.mtx", "a.mtx", "-o", "c.mtx", "--algorithm", "merge"}), 1,
               "--algorithm merge applies to the GPU", "c.mtx");
  expect_error(sparse({"nothere.mtx", "a.mtx", "-o", "c.mtx"}), 1, "nothere.mtx: cannot open",
               "c.mtx");
}

TEST_F(CliTest, SparseUnionMatchesTheReference) {
  const HostCoo a = write_random_mtx("a.mtx", 30, 41, 0.2, DType::f64);
  const HostCoo b = write_random_mtx("b.mtx", 30, 41, 0.3, DType::f64);
  const std::vector<Dims> dense_shapes = {{30, 41}, {41}, {30, 1}, {}};
  for (const BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max}) {
    const std::string name = op_name(op);
    Result r = run({"sparse", name, "a.mtx", "b.mtx", "-o", "c.mtx", "--device", "cpu"});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    EXPECT_NE(r.out.find("= " + name + "(a.mtx, b.mtx)"), std::string::npos) << r.out;
    expect_same_coo(io::read_mtx(path("c.mtx")), reference_combine(op, a.view(), b.view()), name);
    for (const Dims& shape : dense_shapes) {
      const HostTensor d = write_random_npy("d.npy", DType::f64, shape);
      r = run({"sparse", name, "a.mtx", "d.npy", "-o", "e.npy", "--device", "cpu"});
      ASSERT_EQ(r.status, 0) << name << " " << shape.str() << ": " << r.err;
      const HostTensor got = io::read_npy(path("e.npy"));
      const HostTensor want = combine<HostTensor>(op, a.view(), d.view());
      ASSERT_EQ(got.shape(), (Dims{30, 41}));
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.bytes()))
          << name << " " << shape.str();
    }
  }
  // A - B where A stores nothing is -B (SciPy), not B.
  write_text("x.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 5\n");
  write_text("y.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 2\n2 2 7\n");
  const Result r = run({"sparse", "sub", "x.mtx", "y.mtx", "-o", "z.mtx", "--device", "cpu"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(dir_ / "z.mtx"),
            "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 3\n2 2 -7\n");
  write_random_mtx("t.mtx", 41, 30, 0.5, DType::f64);
  expect_error(run({"sparse", "add", "a.mtx", "t.mtx", "-o", "f.mtx", "--device", "cpu"}), 1,
               "a.mtx is 30x41 but t.mtx is 41x30", "f.mtx");
  write_random_npy("w.npy", DType::f64, {7});
  expect_error(run({"sparse", "max", "a.mtx", "w.npy", "-o", "f.npy", "--device", "cpu"}), 1,
               "max(a.mtx 30x41, w.npy (7,))", "f.npy");
  expect_error(run({"sparse", "add", "a.mtx", "b.mtx", "-o", "f.mtx", "--algorithm", "merge"}), 1,
               "--algorithm applies to COO * COO", "f.mtx");
}

TEST_F(CliTest, SparseUnionOnGpuMatchesTheReference) {
  EWISE_REQUIRE_GPU();
  const HostCoo a = write_random_mtx("a.mtx", 300, 200, 0.05, DType::f64);
  const HostCoo b = write_random_mtx("b.mtx", 300, 200, 0.2, DType::f64);
  const HostTensor row = write_random_npy("r.npy", DType::f64, {200});
  for (const BinaryOp op : {BinaryOp::add, BinaryOp::sub, BinaryOp::min, BinaryOp::max}) {
    const std::string name = op_name(op);
    Result r = run({"sparse", name, "a.mtx", "b.mtx", "-o", "c.mtx", "--device", "gpu"});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    expect_same_coo(io::read_mtx(path("c.mtx")), reference_combine(op, a.view(), b.view()), name);
    r = run({"sparse", name, "a.mtx", "r.npy", "-o", "e.npy", "--device", "gpu"});
    ASSERT_EQ(r.status, 0) << name << ": " << r.err;
    const HostTensor got = io::read_npy(path("e.npy"));
    const HostTensor want = combine<HostTensor>(op, a.view(), row.view());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.bytes())) << name;
  }
}

TEST_F(CliTest, SparseShowsProgressWhenAsked) {
  write_random_mtx("a.mtx", 200, 200, 0.2, DType::f64);
  const Result r = run({"sparse", "mul", "a.mtx", "a.mtx", "-o", "c.mtx", "--device", "cpu",
                        "--progress"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("ewise: reading a.mtx: 50%"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ewise: reading a.mtx: 100%"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("ewise: writing c.mtx"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("c.mtx: f64 200x200 nnz 8000"), std::string::npos) << r.out;
}

// ---- demo --------------------------------------------------------------------------------

TEST_F(CliTest, DemoOnTheCpuVerifiesEverythingQuickly) {
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = run({"demo", "--device", "cpu"});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ewise demo on the CPU reference backend"), std::string::npos) << r.out;
  for (const char* w : {"bias add", "channel scale", "N-D", "same-shape", "0.1%", "10%",
                        "all 10 results verified"})
    EXPECT_NE(r.out.find(w), std::string::npos) << "no '" << w << "' in\n" << r.out;
  EXPECT_EQ(r.out.find("FAILED"), std::string::npos) << r.out;
  EXPECT_LT(s, 60.0) << r.out;
  std::cout << r.out;
}

TEST_F(CliTest, DemoOnTheGpu) {
  EWISE_REQUIRE_GPU();
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = run({"demo"});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("ewise demo on GPU"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all 13 results verified"), std::string::npos) << r.out;
  EXPECT_LT(s, 60.0) << r.out;
  std::cout << r.out;
}

}  // namespace
}  // namespace ewise
