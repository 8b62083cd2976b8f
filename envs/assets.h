// The robot models of envs/assets/, embedded in the binary at build time (envs/embed_assets.cmake
// writes them into a generated .cpp), so a robot env never looks a file up at run time.
#pragma once

#include <string>
#include <vector>

namespace rlt {

// The text of envs/assets/<file> ("ant.xml"), or null when no such file was embedded.
const char* embedded_asset(const std::string& file);
// The embedded file names, sorted.
std::vector<std::string> embedded_asset_names();

}  // namespace rlt
