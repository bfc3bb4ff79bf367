// End-to-end tests of `ewise sparse` (see test_cli.hpp).
#include <cstring>
#include <string>
#include <vector>

#include "element.hpp"
#include "test_cli.hpp"

namespace ewise::test {
namespace {

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
  expect_writes({"sparse", "mul", "s.mtx", "g.mtx", "-o", "c.mtx", "--device", "cpu"}, "c.mtx",
                "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 3 -1.5\n2 3 6\n3 1 -6\n");
  // integer * integer stays integer.
  expect_writes({"sparse", "mul", "s.mtx", "s.mtx", "-o", "i.mtx", "--device", "cpu"}, "i.mtx",
                "%%MatrixMarket matrix coordinate integer general\n3 3 5\n1 1 4\n1 3 9\n"
                "2 3 16\n3 1 9\n3 2 16\n");
}

TEST_F(CliTest, SparseCooTimesDenseBroadcasts) {
  const HostCoo a = write_random_mtx("a.mtx", 20, 9, 0.3, DType::f64);
  const std::vector<Dims> dense_shapes = {{20, 9}, {9}, {1, 9}, {20, 1}, {}, {1, 1}};
  for (DType t : {DType::f32, DType::f64, DType::i32, DType::u8, DType::b8}) {
    for (const Dims& s : dense_shapes) {
      const std::string ctx = std::string(dtype_name(t)) + " " + s.str();
      const HostTensor d = write_random_npy("d.npy", t, s);
      const Result r = run({"sparse", "mul", "a.mtx", "d.npy", "-o", "c.mtx", "--device", "cpu"});
      ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
      // NumPy's rule gives f64 for every such pair: the dense operand converted to f64.
      HostTensor d64(DType::f64, s);
      for (std::int64_t i = 0; i < d.numel(); ++i)
        d64.data_as<double>()[i] =
            detail::load_double(t, detail::element_at(d.data(), t, i));
      expect_same_coo(io::read_mtx(path("c.mtx")), reference_multiply(a.view(), d64.view()), ctx);
    }
  }
}

TEST_F(CliTest, SparsePromotesByTheRuleAndTakesScalars) {
  write_text("i.mtx", "%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 1 4\n"
                      "2 3 -6\n1 2 0\n");
  const HostCoo i = io::read_mtx(path("i.mtx"));
  const HostTensor d = write_random_npy("d.npy", DType::f32, {3});
  // NumPy: i64 with f32 is f64; PyTorch: f32.
  for (Promotion rule : {Promotion::numpy, Promotion::torch}) {
    const Result r = run({"sparse", "multiply", "i.mtx", "d.npy", "-o", "c.mtx", "--device",
                          "cpu", "--promotion", promotion_name(rule)});
    ASSERT_EQ(r.status, 0) << r.err;
    const char* want = rule == Promotion::numpy ? "c.mtx: f64 2x3 nnz 3" : "c.mtx: f32 2x3 nnz 3";
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
    SparseOptions o;
    o.promotion = rule;
    io::write_mtx(path("w.mtx"), multiply<HostCoo>(i.view(), d.view(), o).view());
    EXPECT_EQ(slurp(dir_ / "c.mtx"), slurp(dir_ / "w.mtx")) << promotion_name(rule);
  }
  // A number: multiply scales the values in the pattern (integer stays integer, a float scalar
  // makes it f64); add and subtract take 0 (the matrix itself), refuse anything else.
  expect_writes({"sparse", "mul", "i.mtx", "-2", "-o", "s.mtx", "--device", "cpu"}, "s.mtx",
                "%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 1 -8\n1 2 0\n"
                "2 3 12\n");
  expect_writes({"sparse", "multiply", "i.mtx", "0.5", "-o", "h.mtx", "--device", "cpu"}, "h.mtx",
                "%%MatrixMarket matrix coordinate real general\n2 3 3\n1 1 2\n1 2 0\n2 3 -3\n");
  expect_writes({"sparse", "subtract", "i.mtx", "0", "-o", "z.mtx", "--device", "cpu"}, "z.mtx",
                "%%MatrixMarket matrix coordinate integer general\n2 3 3\n1 1 4\n1 2 0\n"
                "2 3 -6\n");
  expect_error(run({"sparse", "add", "i.mtx", "2", "-o", "f.mtx", "--device", "cpu"}), 1,
               "add of a COO matrix and the nonzero scalar 2 (Python int)", "f.mtx");
  expect_error(run({"sparse", "max", "i.mtx", "0", "-o", "f.mtx", "--device", "cpu"}), 1,
               "maximum of a COO matrix and a scalar is not sparse", "f.mtx");
  expect_error(run({"sparse", "mul", "i.mtx", "2", "-o", "f.mtx", "--device", "cpu",
                    "--algorithm", "merge"}),
               1, "--algorithm applies to COO * COO", "f.mtx");
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
  expect_error(sparse({"a.mtx", "a.mtx", "-o", "c.mtx", "--algorithm", "bogus"}), 2,
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
  expect_writes({"sparse", "sub", "x.mtx", "y.mtx", "-o", "z.mtx", "--device", "cpu"}, "z.mtx",
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

}  // namespace
}  // namespace ewise::test
