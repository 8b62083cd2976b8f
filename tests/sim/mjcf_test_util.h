// Helpers of the MJCF compiler tests (tests/sim/test_mjcf*.cpp, test_noslip.cpp).
#pragma once

#include <string>

#include "sim/mjcf.h"

namespace rlt::testing_util {

// A file of tests/data/mjcf (RLT_MJCF_DATA_DIR, set by tests/CMakeLists.txt).
inline std::string mjcf_data(const std::string& name) { return std::string(RLT_MJCF_DATA_DIR) + "/" + name; }

// The message parse_mjcf throws for xml (an MjcfError naming `source`), or "" when it compiles.
inline std::string mjcf_error_of(const std::string& xml, const std::string& source = "t.xml") {
  try {
    parse_mjcf(xml, source);
  } catch (const MjcfError& e) {
    return e.what();
  }
  return "";
}

}  // namespace rlt::testing_util
