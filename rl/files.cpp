#include "rl/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rlt {

void write_text_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw IoError(path + ": cannot write (" + std::strerror(errno) + ")");
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0) {
      const int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw IoError(path + ": write failed (" + std::strerror(err) + ")");
    }
    done += static_cast<size_t>(w);
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
