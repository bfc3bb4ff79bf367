// End-to-end tests of `ewise info`, `ewise dense` and `ewise demo` (see test_cli.hpp).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "test_cli.hpp"

namespace ewise::test {
namespace {

// ---- general -----------------------------------------------------------------------------

TEST_F(CliTest, HelpVersionAndUsageErrors) {
  Result r = run({"--help"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: ewise <command>"), std::string::npos);
  EXPECT_NE(r.out.find("sparse multiply A.mtx (B.mtx | D.npy | NUMBER)"), std::string::npos);
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
  expect_error(run({"info", "--promotion", "numpy"}), 2,
               "--promotion is not an option of 'info'", "x");
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
  for (const char* w : {"bool i8 u8 i16 u16 u32 u64", "floor_divide", "bitwise_xor",
                        "aliases: sub mul div min max", "promotion:  numpy torch",
                        "values f16 bf16 f32 f64 i32 i64"})
    EXPECT_NE(r.out.find(w), std::string::npos) << "no '" << w << "' in\n" << r.out;
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
        expect_same(io::read_npy(path("c.npy")), reference(op, a.view(), b.view()), ctx);
      }
}

TEST_F(CliTest, DenseReadsFortranOrderAndEveryVersion) {
  const HostTensor a = write_random_npy("a.npy", DType::f64, {5, 6}, {3, true});
  const HostTensor b = write_random_npy("b.npy", DType::f64, {5, 1}, {1, true});
  const Result r = run({"dense", "sub", "a.npy", "b.npy", "-o", "c.npy", "--device", "cpu"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("c.npy: f64 (5,6) = subtract(a.npy, b.npy) on the CPU reference"),
            std::string::npos)
      << r.out;
  expect_same(io::read_npy(path("c.npy")), reference(BinaryOp::sub, a.view(), b.view()),
              "fortran");
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
  expect_same(io::read_npy(path("c.npy")), reference(BinaryOp::mul, a.view(), b.view()),
              "default device");
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
      expect_same(io::read_npy(path("c.npy")), reference(BinaryOp::min, a.view(), b.view()), ctx);
      r = run({"dense", "min", "a.npy", "b.npy", "-o", "g.npy", "--device", "gpu", "--kernel",
               "general"});
      ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
      EXPECT_NE(r.out.find("(kernel general)"), std::string::npos) << r.out;
      expect_same(io::read_npy(path("g.npy")), reference(BinaryOp::min, a.view(), b.view()),
                  ctx + " general");
    }
}

TEST_F(CliTest, DenseMixedDtypesGiveTheRulesResultDtypeAndValues) {
  // The result dtypes of NumPy 2 (np.result_type of the two arrays) and of PyTorch
  // (torch.result_type); nullopt where PyTorch refuses the pair (u32, u64 with another dtype).
  struct Case {
    BinaryOp op;
    DType a, b, numpy;
    std::optional<DType> torch;
  };
  const std::vector<Case> cases = {
      {BinaryOp::add, DType::i32, DType::f32, DType::f64, DType::f32},
      {BinaryOp::add, DType::u8, DType::i8, DType::i16, DType::i16},
      {BinaryOp::multiply, DType::f16, DType::bf16, DType::f32, DType::f32},
      {BinaryOp::add, DType::b8, DType::b8, DType::b8, DType::b8},
      {BinaryOp::subtract, DType::u8, DType::f16, DType::f16, DType::f16},
      {BinaryOp::divide, DType::i16, DType::i16, DType::f64, DType::f32},
      {BinaryOp::less, DType::i32, DType::f64, DType::b8, DType::b8},
      {BinaryOp::maximum, DType::u32, DType::i32, DType::i64, std::nullopt},
      {BinaryOp::add, DType::i64, DType::u64, DType::f64, std::nullopt},
      {BinaryOp::floor_divide, DType::bf16, DType::f32, DType::f32, DType::f32},
  };
  for (const Case& c : cases) {
    const HostTensor a = write_random_npy("a.npy", c.a, {5, 6});
    const HostTensor b = write_random_npy("b.npy", c.b, {6});
    for (Promotion rule : {Promotion::numpy, Promotion::torch}) {
      const std::string ctx = std::string(op_name(c.op)) + " " + dtype_name(c.a) + " " +
                              dtype_name(c.b) + " " + promotion_name(rule);
      fs::remove(dir_ / "c.npy");  // a refused call must leave none
      const Result r = run({"dense", op_name(c.op), "a.npy", "b.npy", "-o", "c.npy", "--device",
                            "cpu", "--promotion", promotion_name(rule)});
      const std::optional<DType> want = rule == Promotion::numpy ? c.numpy : c.torch;
      if (!want) {
        expect_error(r, 1, dtype_name(c.a), "c.npy");
        continue;
      }
      ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
      const HostTensor got = io::read_npy(path("c.npy"));
      EXPECT_EQ(got.dtype(), *want) << ctx;
      expect_same(got, reference(c.op, a.view(), b.view(), rule), ctx);
    }
  }
}

TEST_F(CliTest, DenseTakesANumberAsAPythonScalar) {
  const HostTensor x = write_random_npy("x.npy", DType::f16, {4, 5});
  const HostTensor y = write_random_npy("y.npy", DType::i32, {7});
  write_random_npy("z.npy", DType::u8, {3});
  struct Case {
    std::vector<std::string> args;  // op, A, B
    Operand a, b;
    DType numpy;
  };
  const std::vector<Case> cases = {
      {{"multiply", "x.npy", "0.5"}, x.view(), Scalar::weak_float(0.5), DType::f16},
      {{"add", "y.npy", "-3"}, y.view(), Scalar::weak_int(-3), DType::i32},
      {{"divide", "7", "y.npy"}, Scalar::weak_int(7), y.view(), DType::f64},
      {{"less", "y.npy", "2.5"}, y.view(), Scalar::weak_float(2.5), DType::b8},
      {{"multiply", "True", "y.npy"}, Scalar::weak_bool(true), y.view(), DType::i32},
      {{"maximum", "x.npy", "-inf"}, x.view(), Scalar::weak_float(-INFINITY), DType::f16},
      {{"power", "y.npy", "2"}, y.view(), Scalar::weak_int(2), DType::i32},
  };
  for (const Case& c : cases) {
    const std::string ctx = c.args[0] + "(" + c.args[1] + ", " + c.args[2] + ")";
    const Result r = run({"dense", c.args[0], c.args[1], c.args[2], "-o", "c.npy", "--device",
                          "cpu"});
    ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
    EXPECT_NE(r.out.find(" = " + ctx + " on "), std::string::npos) << r.out;
    const HostTensor got = io::read_npy(path("c.npy"));
    EXPECT_EQ(got.dtype(), c.numpy) << ctx;
    expect_same(got, reference(parse_op(c.args[0]), c.a, c.b), ctx);
  }
  // PyTorch: an integer tensor divided is the default float f32.
  const Result r = run({"dense", "divide", "7", "y.npy", "-o", "t.npy", "--device", "cpu",
                        "--promotion", "torch"});
  ASSERT_EQ(r.status, 0) << r.err;
  expect_same(io::read_npy(path("t.npy")),
              reference(BinaryOp::divide, Scalar::weak_int(7), y.view(), Promotion::torch),
              "torch divide");
  // NumPy 2 refuses a Python integer the array's dtype cannot hold (OverflowError).
  expect_error(run({"dense", "add", "z.npy", "300", "-o", "e.npy", "--device", "cpu"}), 1, "300",
               "e.npy");
}

TEST_F(CliTest, DenseRunsEveryOperationByNumpysNameAndTheOldNames) {
  for (DType t : {DType::i16, DType::f32})
    for (BinaryOp op : kAllOps) {
      if (is_floating(t) && op_family(op) == OpFamily::bitwise) continue;  // NumPy refuses
      const std::string ctx = std::string(op_name(op)) + " " + dtype_name(t);
      const HostTensor a = write_random_npy("a.npy", t, {3, 9});
      const HostTensor b = write_random_npy("b.npy", t, {9});
      const Result r = run({"dense", op_name(op), "a.npy", "b.npy", "-o", "c.npy", "--device",
                            "cpu", "--quiet"});
      ASSERT_EQ(r.status, 0) << ctx << ": " << r.err;
      expect_same(io::read_npy(path("c.npy")), reference(op, a.view(), b.view()), ctx);
    }
  const HostTensor a = write_random_npy("a.npy", DType::f64, {8});
  for (const char* alias : {"sub", "mul", "div", "min", "max"}) {
    const Result r =
        run({"dense", alias, "a.npy", "a.npy", "-o", "c.npy", "--device", "cpu", "--quiet"});
    ASSERT_EQ(r.status, 0) << alias << ": " << r.err;
    expect_same(io::read_npy(path("c.npy")), reference(parse_op(alias), a.view(), a.view()),
                alias);
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
  write_random_npy("m.npy", DType::b8, {4});
  expect_error(dense({"subtract", "m.npy", "m.npy", "-o", "c.npy"}), 1,
               "subtract(m.npy, m.npy): ", "c.npy");
  expect_error(dense({"bitwise_or", "a.npy", "d.npy", "-o", "c.npy"}), 1,
               "bitwise_or(a.npy, d.npy): ", "c.npy");
  expect_error(dense({"add", "a.npy", "d.npy", "-o", "c.npy", "--promotion", "jax"}), 2,
               "unknown promotion rule 'jax' (expected numpy or torch)", "c.npy");
  expect_error(dense({"add", "2", "-1.5", "-o", "c.npy"}), 2,
               "2 and -1.5 are numbers", "c.npy");
  expect_error(dense({"add", "a.npy", "99999999999999999999", "-o", "c.npy"}), 1,
               "99999999999999999999 does not fit int64", "c.npy");
  expect_error(dense({"pow", "a.npy", "v.npy", "-o", "c.npy"}), 2, "unknown operation 'pow'",
               "c.npy");
  expect_error(dense({"add", "a.npy", "missing.npy", "-o", "c.npy"}), 1,
               "missing.npy: cannot open", "c.npy");
  expect_error(dense({"add", "a.npy", "v.npy", "-o", "c.npy", "--kernel", "warp"}), 2,
               "unknown kernel 'warp'", "c.npy");
  expect_error(dense({"add", "a.npy", "v.npy", "-o", "c.npy", "--kernel", "general"}), 1,
               "--kernel general applies to the GPU", "c.npy");
  expect_error(run({"dense", "add", "a.npy", "v.npy", "-o", "c.npy", "--device", "tpu"}), 2,
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
}  // namespace ewise::test
