// tests/testing/temp_dir_test.hpp — a test fixture with a fresh temporary directory and a
// printed seed.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <iostream>
#include <string>

#include "ewise/verify.hpp"

namespace ewise::test {

/// Each test gets its own directory (removed afterwards) and a seed printed for replay
/// (EWISE_SEED=<seed>).
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ewise_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    seed_ = verify::seed_from_env_or_random();
    std::cout << "EWISE_SEED=" << seed_ << "\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
  std::uint64_t seed_ = 0;
};

}  // namespace ewise::test
