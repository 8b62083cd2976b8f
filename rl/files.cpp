#include "rl/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rlt {

namespace {

// Writes all of text to fd; false with errno set when a write fails.
bool write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(w);
  }
  return true;
}

}  // namespace

void write_text_atomic(const std::string& path, const std::string& text) {
  // A path that names something other than a regular file (/dev/stdout, a FIFO, a device) is
  // written in place: renaming a temp file over it would replace the device node with a file.
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    if (S_ISDIR(st.st_mode)) throw IoError(path + ": cannot write (a directory)");
    const int fd = ::open(path.c_str(), O_WRONLY);
    if (fd < 0) throw IoError(path + ": cannot write (" + std::strerror(errno) + ")");
    const bool ok = write_all(fd, text);
    const int err = errno;
    if (::close(fd) != 0 || !ok) throw IoError(path + ": write failed (" + std::strerror(ok ? errno : err) + ")");
    return;
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw IoError(path + ": cannot write (" + std::strerror(errno) + ")");
  if (!write_all(fd, text)) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    throw IoError(path + ": write failed (" + std::strerror(err) + ")");
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw IoError(path + ": write failed (" + std::strerror(err) + ")");
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open (" + std::strerror(errno) + ")");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

}  // namespace rlt
