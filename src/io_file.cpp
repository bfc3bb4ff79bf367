#include "io_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "ewise/error.hpp"

namespace ewise::detail {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

std::string parent_directory(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

constexpr std::size_t kWriteBuffer = std::size_t{1} << 20;

}  // namespace

// ---- InputFile ----------------------------------------------------------------------------

InputFile::InputFile(const std::string& path) : path_(path) {
  f_ = std::fopen(path.c_str(), "rb");
  if (f_ == nullptr) {
    const int err = errno;
    EWISE_EXPECTS(false, path, ": cannot open: ", errno_text(err));
  }
  struct stat st {};
  if (fstat(fileno(f_), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(f_);
    f_ = nullptr;
    EWISE_EXPECTS(false, path, ": not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (f_ != nullptr) std::fclose(f_);
}

void InputFile::read_exact(void* dst, std::size_t n) {
  EWISE_EXPECTS(n <= size_ - pos_, path_, ": file is truncated: needs ", pos_ + n,
                " bytes but has ", size_);
  const std::size_t got = n == 0 ? 0 : std::fread(dst, 1, n, f_);
  if (got != n) {
    const int err = std::ferror(f_) ? errno : 0;
    EWISE_EXPECTS(false, path_, ": read failed after ", pos_ + got, " bytes",
                  err ? ": " + errno_text(err) : std::string(" (file shrank while reading)"));
  }
  pos_ += n;
}

std::string InputFile::read_all() {
  EWISE_EXPECTS(pos_ == 0, path_, ": read_all after a partial read");
  EWISE_EXPECTS(size_ <= static_cast<std::uint64_t>(std::string().max_size()), path_,
                ": file of ", size_, " bytes is too large to read");
  std::string s(static_cast<std::size_t>(size_), '\0');
  read_exact(s.data(), s.size());
  return s;
}

// ---- AtomicOutputFile ---------------------------------------------------------------------

AtomicOutputFile::AtomicOutputFile(const std::string& path) : path_(path) {
  EWISE_EXPECTS(!path.empty(), "output file name is empty");
  struct stat st {};
  EWISE_EXPECTS(!(stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)), path,
                ": cannot write: is a directory");
  static std::atomic<unsigned> counter{0};
  const std::string stem = parent_directory(path) + "/." + base_name(path) + ".tmp-" +
                           std::to_string(static_cast<long>(getpid())) + "-";
  // O_EXCL: never reuse a file someone else created; retry with the next number on a clash.
  for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
    temp_ = stem + std::to_string(counter.fetch_add(1));
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) {
      const int err = errno;
      EWISE_EXPECTS(false, path, ": cannot create file: ", errno_text(err));
    }
  }
  EWISE_EXPECTS(fd_ >= 0, path, ": cannot create a temporary file next to it");
  buf_.reserve(kWriteBuffer);
}

AtomicOutputFile::~AtomicOutputFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  ::unlink(temp_.c_str());
}

void AtomicOutputFile::fail(const char* what, int err) {
  throw_invalid(__FILE__, __LINE__, concat(path_, ": ", what, ": ", errno_text(err)));
}

void AtomicOutputFile::write(const void* data, std::size_t n) {
  const char* p = static_cast<const char*>(data);
  if (buf_.size() + n <= kWriteBuffer) {
    buf_.insert(buf_.end(), p, p + n);
    return;
  }
  flush();
  if (n < kWriteBuffer) {
    buf_.insert(buf_.end(), p, p + n);
    return;
  }
  while (n > 0) {  // large block: straight to the file
    const ssize_t w = ::write(fd_, p, n < (std::size_t{1} << 30) ? n : (std::size_t{1} << 30));
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write failed", errno);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void AtomicOutputFile::flush() {
  const char* p = buf_.data();
  std::size_t n = buf_.size();
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail("write failed", errno);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  buf_.clear();
}

void AtomicOutputFile::commit() {
  EWISE_EXPECTS(!committed_ && fd_ >= 0, path_, ": output committed twice");
  flush();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("write failed", errno);
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) fail("cannot write", errno);
  committed_ = true;
}

}  // namespace ewise::detail
