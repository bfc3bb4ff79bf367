// tests/testing/tool_options.hpp — the command lines of the reliability tools (tools/): pairs
// of "--name value".
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ewise::tools {

/// Prints "<program>: <why>" and the usage line to stderr and exits with status 2.
[[noreturn]] inline void exit_usage(const char* program, const char* usage, const std::string& why) {
  std::fprintf(stderr, "%s: %s\nusage: %s %s\n", program, why.c_str(), program, usage);
  std::exit(2);
}

/// Reads argv as "--name value" pairs, calling take(name, value) for each; take returns false
/// for a name it does not know. A missing value or an unknown name exits through exit_usage.
template <class Take>
void parse_options(int argc, char** argv, const char* program, const char* usage, Take&& take) {
  for (int i = 1; i < argc; ++i) {
    const std::string name = argv[i];
    if (i + 1 >= argc) exit_usage(program, usage, "missing value after " + name);
    if (!take(name, argv[++i])) exit_usage(program, usage, "unknown option " + name);
  }
}

}  // namespace ewise::tools
