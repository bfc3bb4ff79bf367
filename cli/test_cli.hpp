// cli/test_cli.hpp — what the end-to-end tests of the `ewise` tool share (test_cli_dense.cpp,
// test_cli_sparse.cpp): they write input files, run the built binary, and check its outputs
// against the CPU reference, and that bad inputs give a one-line error, a non-zero exit status
// and no output file. Without a GPU everything runs with --device cpu; the GPU cases use
// EWISE_REQUIRE_GPU().
#pragma once

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
#include "ewise/promotion.hpp"
#include "ewise/reference.hpp"
#include "ewise/sparse.hpp"
#include "ewise/sparse_reference.hpp"
#include "ewise/verify.hpp"
#include "testing/gpu_test.hpp"
#include "testing/temp_dir_test.hpp"

namespace ewise::test {


namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string out, err;
};

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class CliTest : public TempDirTest {
 protected:
  bool exists(const std::string& name) const { return fs::exists(dir_ / name); }

  /// Runs `ewise args...` in the test directory, with `env` ("NAME=value ...", shell-quoted by
  /// the caller) in its environment.
  Result run(const std::vector<std::string>& args, const std::string& env = "") const {
    std::string cmd = "cd " + shell_quote(dir_.string()) + " && " + env + (env.empty() ? "" : " ") +
                      shell_quote(EWISE_CLI_PATH);
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

  /// Runs `ewise args...`, which must succeed, and expects the file `output` to hold `text`.
  void expect_writes(const std::vector<std::string>& args, const std::string& output,
                     const std::string& text) const {
    const Result r = run(args);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(slurp(dir_ / output), text);
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

inline void expect_same(const HostTensor& got, const HostTensor& want, const std::string& ctx) {
  ASSERT_EQ(got.dtype(), want.dtype()) << ctx;
  ASSERT_EQ(got.shape(), want.shape()) << ctx;
  const verify::CompareReport r = verify::compare(got.view(), want.view(), verify::Tolerance{});
  EXPECT_TRUE(r.ok()) << ctx << ": " << r.str();
}

/// op(a, b) by the CPU reference, in the result dtype of `rule`.
inline HostTensor reference(BinaryOp op, const Operand& a, const Operand& b,
                            Promotion rule = Promotion::numpy) {
  const Dims shape = broadcast_shapes(a.is_scalar() ? Dims{} : a.view().desc.shape,
                                      b.is_scalar() ? Dims{} : b.view().desc.shape);
  HostTensor want(op_types(op, rule, a.type(rule), b.type(rule)).result, shape);
  reference_binary(op, a, b, want.view(), rule);
  return want;
}


}  // namespace ewise::test
