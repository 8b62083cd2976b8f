// Small file helpers for run directories.
#pragma once

#include <stdexcept>
#include <string>

namespace rlt {

// A write that failed (disk full, file-size limit, permissions, an unwritable stdout): the input
// was fine, the machine said no. `rltrain` exits with 5 for it (and for running out of memory),
// apart from bad input (2).
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writes text to path atomically (temp file, fsync, rename); throws IoError naming the path on
// failure, leaving any previous file intact. A path that exists and is not a regular file
// (/dev/stdout, a FIFO, a device) is written in place, every write checked.
void write_text_atomic(const std::string& path, const std::string& text);
// The whole file; throws std::runtime_error naming the path when it cannot be read.
std::string read_text(const std::string& path);

}  // namespace rlt
