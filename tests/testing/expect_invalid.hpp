// tests/testing/expect_invalid.hpp — the assertion for ewise's precondition errors.
#pragma once

#include <gtest/gtest.h>

#include <exception>
#include <initializer_list>
#include <string>

#include "ewise/error.hpp"

namespace ewise::test {

/// Runs f, which must throw ewise::InvalidArgument with a one-line message containing every one
/// of `parts`. `context` prefixes any failure.
template <class F>
void expect_invalid(F&& f, std::initializer_list<std::string> parts,
                    const std::string& context = "") {
  try {
    f();
    ADD_FAILURE() << context << ": no exception; expected one containing '" << *parts.begin()
                  << "'";
  } catch (const InvalidArgument& e) {
    const std::string msg = e.what();
    for (const auto& p : parts)
      EXPECT_NE(msg.find(p), std::string::npos) << context << ": message '" << msg
                                                << "' lacks '" << p << "'";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << context << ": message has several lines";
  } catch (const std::exception& e) {
    ADD_FAILURE() << context << ": wrong exception: " << e.what();
  }
}

}  // namespace ewise::test
