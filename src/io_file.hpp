// src/io_file.hpp — file access shared by the .npy and .mtx readers and writers: reading a file
// whole or in exact pieces, and writing through a temporary file renamed over the output.
// Every failure throws InvalidArgument whose message starts with the file name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace ewise::detail {

/// A regular file opened for reading, with its size.
class InputFile {
 public:
  explicit InputFile(const std::string& path);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  std::uint64_t size() const noexcept { return size_; }
  /// Reads exactly n bytes at the current position or throws ("... ends after N bytes").
  void read_exact(void* dst, std::size_t n);
  /// Reads the whole file (from the start) into a string.
  std::string read_all();

 private:
  std::string path_;
  std::FILE* f_ = nullptr;
  std::uint64_t size_ = 0;
  std::uint64_t pos_ = 0;
};

/// Output that appears at `path` only on commit(): bytes go to a new temporary file in the same
/// directory, renamed over `path` by commit(). Destroying it uncommitted removes the temporary.
class AtomicOutputFile {
 public:
  explicit AtomicOutputFile(const std::string& path);
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
  ~AtomicOutputFile();

  void write(const void* data, std::size_t n);
  void write(const std::string& s) { write(s.data(), s.size()); }
  /// Flushes, closes and renames the temporary file over the output.
  void commit();

 private:
  void flush();
  [[noreturn]] void fail(const char* what, int err);

  std::string path_, temp_;
  int fd_ = -1;
  std::vector<char> buf_;
  bool committed_ = false;
};

}  // namespace ewise::detail
