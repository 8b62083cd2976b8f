// libFuzzer target: the MJCF compiler (sim/mjcf.h) on arbitrary XML, and, when it compiles, the
// model's host copy (HostModel checks every array). MjcfError is the expected answer to bad input.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/mjcf.h"
#include "sim/model_view.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const rlt::Model model = rlt::parse_mjcf(text, "fuzz.xml");
    const rlt::HostModel<double> host(model);
    (void)host.view();
  } catch (const rlt::MjcfError&) {
  }
  return 0;
}
