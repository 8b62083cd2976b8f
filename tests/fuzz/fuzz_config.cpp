// libFuzzer target: the TOML config loader (rl/config.h) on arbitrary text. A ConfigError is the
// expected answer to bad input; anything else (a crash, a sanitizer report, another exception, a
// hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "rl/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    rlt::Config cfg = rlt::parse_config(text, "fuzz.toml");
    (void)rlt::to_toml(cfg);
  } catch (const rlt::ConfigError&) {
  }
  return 0;
}
