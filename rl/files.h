// Small file helpers for run directories.
#pragma once

#include <string>

namespace rlt {

// Writes text to path atomically (temp file, fsync, rename); throws std::runtime_error naming
// the path on failure, leaving any previous file intact.
void write_text_atomic(const std::string& path, const std::string& text);
// The whole file; throws std::runtime_error naming the path when it cannot be read.
std::string read_text(const std::string& path);

}  // namespace rlt
